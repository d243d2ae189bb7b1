// NCCL's host collectives and point-to-point calls over emud's node, as
// NCCL's own examples make them: one thread drives every device's comm
// (ncclCommInitAll) and makes each device's call inside ncclGroupStart
// and ncclGroupEnd, on each device's stream. Each result is checked on
// the host: ncclAllReduce (float sum, in place and out of place; int32
// max; half average; bfloat16 product), ncclBroadcast and ncclBcast,
// ncclReduce, ncclAllGather, ncclReduceScatter, ncclAlltoAll, and a ring
// of ncclSend and ncclRecv in one group. Prints PASS, or each mismatch.
//
// argv[1] plants a bug:
//   mismatch  rank 1 all-reduces half as many elements as the others:
//             the run fails naming both calls;
//   missing   rank 2 skips its all-to-all: a hang naming the ranks that
//             made it and rank 2;
//   skipped   rank 2 skips its broadcast, so its next collective meets
//             the others' broadcast: the run fails naming both calls;
//   nogroup   the ring's sends and receives outside a group: the first
//             send waits for its receive, which this thread would make
//             after it (with a thread a rank, each send would wait for a
//             receive queued behind the peer's own send): a hang;
//   ungrouped the first all-reduce's calls outside a group, all from
//             this one thread: NCCL may block in a call until every rank
//             has made its own, which here can only come after it
//             returns (NCCL's rule: group them): a hang naming the rule;
//   racy      a kernel on a second stream of rank 0 overwrites the
//             all-reduce's input while it runs (nothing orders them):
//             EMUD_RACE=1 reports the race.
#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"

#define CHECK(cmd)                                                               \
  do {                                                                           \
    if ((cmd) != 0) {                                                            \
      std::fprintf(stderr, "host_coll: %s:%d: %s failed\n", __FILE__, __LINE__, #cmd); \
      return 3;                                                                  \
    }                                                                            \
  } while (0)

static int wrong = 0;
#define EXPECT(cond)                                                             \
  do {                                                                           \
    if (!(cond)) {                                                               \
      if (wrong < 10) std::printf("host_coll: %s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      wrong++;                                                                   \
    }                                                                            \
  } while (0)

__global__ void scribble(float* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = -1.0f;
}

// IEEE half and bfloat16 from and to float, for the host's checks (the
// values here are normal numbers a half holds exactly).
static unsigned short toHalf(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  const unsigned sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, man = u & 0x7fffff;
  return (unsigned short)(sign | ((exp - 127 + 15) << 10) | (man >> 13));
}
static float fromHalf(unsigned short h) {
  const unsigned sign = (unsigned)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  const unsigned u = exp == 0 ? sign : sign | ((exp - 15 + 127) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
static unsigned short toBf16(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return (unsigned short)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
static float fromBf16(unsigned short b) {
  unsigned u = (unsigned)b << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  if (n > 4) n = 4;
  std::vector<ncclComm_t> comms(n);
  std::vector<int> devs(n);
  for (int i = 0; i < n; i++) devs[i] = i;
  CHECK(ncclCommInitAll(comms.data(), n, devs.data()));
  const size_t count = 1024;
  std::vector<cudaStream_t> st(n);
  std::vector<float*> fsend(n), frecv(n), fbig(n);
  std::vector<int*> isend(n), irecv(n);
  std::vector<unsigned short*> hsend(n), hrecv(n);
  for (int r = 0; r < n; r++) {
    CHECK(cudaSetDevice(r));
    CHECK(cudaStreamCreate(&st[r]));
    CHECK(cudaMalloc((void**)&fsend[r], count * n * sizeof(float)));
    CHECK(cudaMalloc((void**)&frecv[r], count * n * sizeof(float)));
    CHECK(cudaMalloc((void**)&fbig[r], count * n * sizeof(float)));
    CHECK(cudaMalloc((void**)&isend[r], count * sizeof(int)));
    CHECK(cudaMalloc((void**)&irecv[r], count * sizeof(int)));
    CHECK(cudaMalloc((void**)&hsend[r], count * sizeof(unsigned short)));
    CHECK(cudaMalloc((void**)&hrecv[r], count * sizeof(unsigned short)));
    std::vector<float> f(count * n);
    std::vector<int> iv(count);
    std::vector<unsigned short> hv(count);
    for (size_t i = 0; i < count * n; i++) f[i] = (float)(r * 1000 + i % 1000);
    for (size_t i = 0; i < count; i++) iv[i] = (int)((i * 7 + r * 13) % 101) - 50;
    for (size_t i = 0; i < count; i++) hv[i] = toHalf((float)(r + 1) * 0.5f);
    CHECK(cudaMemcpy(fsend[r], f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(isend[r], iv.data(), iv.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(hsend[r], hv.data(), hv.size() * 2, cudaMemcpyHostToDevice));
  }
  auto sync = [&]() -> int {
    for (int r = 0; r < n; r++) {
      if (cudaSetDevice(r) != cudaSuccess || cudaStreamSynchronize(st[r]) != cudaSuccess) return 1;
    }
    return 0;
  };
  auto get = [&](void* d, size_t bytes) {
    std::vector<unsigned char> h(bytes);
    cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost);
    return h;
  };

  // ncclAllReduce, float sum, out of place (rank 1 plants a mismatch).
  const bool ungrouped = !std::strcmp(mode, "ungrouped");
  if (!ungrouped) CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) {
    const size_t c = !std::strcmp(mode, "mismatch") && r == 1 ? count / 2 : count;
    CHECK(ncclAllReduce(fsend[r], frecv[r], c, ncclFloat, ncclSum, comms[r], st[r]));
  }
  if (!std::strcmp(mode, "racy")) {
    cudaStream_t other;
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamCreate(&other));
    scribble<<<(count + 255) / 256, 256, 0, other>>>(fsend[0], (int)count);
  }
  if (!ungrouped) CHECK(ncclGroupEnd());
  CHECK(sync());
  if (!std::strcmp(mode, "racy")) return 0;  // the race is the result
  for (int r = 0; r < n; r++) {
    auto h = get(frecv[r], count * sizeof(float));
    const float* v = (const float*)h.data();
    for (size_t i = 0; i < count; i++) {
      float want = 0;
      for (int k = 0; k < n; k++) want += (float)(k * 1000 + i % 1000);
      EXPECT(v[i] == want);
    }
  }

  // In place, int32 max, half average, bfloat16 product.
  CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) {
    CHECK(ncclAllReduce(fsend[r], fsend[r], count, ncclFloat, ncclSum, comms[r], st[r]));
    CHECK(ncclAllReduce(isend[r], irecv[r], count, ncclInt32, ncclMax, comms[r], st[r]));
    CHECK(ncclAllReduce(hsend[r], hrecv[r], count, ncclHalf, ncclAvg, comms[r], st[r]));
  }
  CHECK(ncclGroupEnd());
  CHECK(sync());
  float avg = 0;
  for (int k = 0; k < n; k++) avg += (k + 1) * 0.5f;
  avg /= n;
  for (int r = 0; r < n; r++) {
    auto f = get(fsend[r], count * sizeof(float));
    auto iv = get(irecv[r], count * sizeof(int));
    auto hv = get(hrecv[r], count * 2);
    for (size_t i = 0; i < count; i++) {
      float want = 0;
      int imax = -1000;
      for (int k = 0; k < n; k++) {
        want += (float)(k * 1000 + i % 1000);
        const int x = (int)((i * 7 + k * 13) % 101) - 50;
        imax = x > imax ? x : imax;
      }
      EXPECT(((const float*)f.data())[i] == want);
      EXPECT(((const int*)iv.data())[i] == imax);
      EXPECT(fromHalf(((const unsigned short*)hv.data())[i]) == avg);
    }
  }
  for (int r = 0; r < n; r++) {
    std::vector<unsigned short> b(count, toBf16(1.5f));
    CHECK(cudaMemcpy(hsend[r], b.data(), count * 2, cudaMemcpyHostToDevice));
  }
  CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) CHECK(ncclAllReduce(hsend[r], hrecv[r], count, ncclBfloat16, ncclProd, comms[r], st[r]));
  CHECK(ncclGroupEnd());
  CHECK(sync());
  float prod = 1;
  for (int k = 0; k < n; k++) prod *= 1.5f;
  for (int r = 0; r < n; r++) {
    auto hv = get(hrecv[r], count * 2);
    EXPECT(fromBf16(((const unsigned short*)hv.data())[7]) == prod);
  }

  // Broadcast from rank 1 (rank 2 may skip it), then ncclBcast in place
  // from rank 0, ncclReduce to rank 2.
  CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) {
    if (!std::strcmp(mode, "skipped") && r == 2) continue;
    CHECK(ncclBroadcast(r == 1 ? frecv[r] : nullptr, fbig[r], count, ncclFloat, 1, comms[r], st[r]));
  }
  CHECK(ncclGroupEnd());
  CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) CHECK(ncclBcast(irecv[r], count, ncclInt32, 0, comms[r], st[r]));
  for (int r = 0; r < n; r++)
    CHECK(ncclReduce(isend[r], r == 2 ? irecv[r] : nullptr, count, ncclInt32, ncclMin, 2, comms[r], st[r]));
  CHECK(ncclGroupEnd());
  CHECK(sync());
  auto rootSum = get(frecv[1], count * sizeof(float));
  for (int r = 0; r < n; r++) {
    auto b = get(fbig[r], count * sizeof(float));
    EXPECT(!std::memcmp(b.data(), rootSum.data(), b.size()));
  }

  // ncclAllGather, ncclReduceScatter, ncclAlltoAll.
  for (int r = 0; r < n; r++) {
    std::vector<float> f(count * n);
    for (size_t i = 0; i < count * n; i++) f[i] = (float)(r * 100000 + i);
    CHECK(cudaMemcpy(fsend[r], f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) CHECK(ncclAllGather(fsend[r], frecv[r], count, ncclFloat, comms[r], st[r]));
  CHECK(ncclGroupEnd());
  CHECK(sync());
  for (int r = 0; r < n; r++) {
    auto h = get(frecv[r], count * n * sizeof(float));
    const float* v = (const float*)h.data();
    for (int k = 0; k < n; k++) EXPECT(v[k * count + 5] == (float)(k * 100000 + 5));
  }
  CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) CHECK(ncclReduceScatter(fsend[r], frecv[r], count, ncclFloat, ncclSum, comms[r], st[r]));
  CHECK(ncclGroupEnd());
  CHECK(sync());
  for (int r = 0; r < n; r++) {
    auto h = get(frecv[r], count * sizeof(float));
    float want = 0;
    for (int k = 0; k < n; k++) want += (float)(k * 100000 + r * count + 9);
    EXPECT(((const float*)h.data())[9] == want);
  }
  CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) {
    if (!std::strcmp(mode, "missing") && r == 2) continue;
    CHECK(ncclAlltoAll(fsend[r], frecv[r], count, ncclFloat, comms[r], st[r]));
  }
  CHECK(ncclGroupEnd());
  CHECK(sync());
  for (int r = 0; r < n; r++) {
    auto h = get(frecv[r], count * n * sizeof(float));
    const float* v = (const float*)h.data();
    for (int k = 0; k < n; k++) EXPECT(v[k * count + 3] == (float)(k * 100000 + r * count + 3));
  }

  // A ring: each rank sends to the next and receives from the one before.
  const bool grouped = std::strcmp(mode, "nogroup") != 0;
  if (grouped) CHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) {
    CHECK(ncclSend(fsend[r], count, ncclFloat, (r + 1) % n, comms[r], st[r]));
    CHECK(ncclRecv(fbig[r], count, ncclFloat, (r + n - 1) % n, comms[r], st[r]));
  }
  if (grouped) CHECK(ncclGroupEnd());
  CHECK(sync());
  for (int r = 0; r < n; r++) {
    auto h = get(fbig[r], count * sizeof(float));
    const int from = (r + n - 1) % n;
    EXPECT(((const float*)h.data())[11] == (float)(from * 100000 + 11));
  }

  for (int r = 0; r < n; r++) {
    cudaSetDevice(r);
    cudaFree(fsend[r]), cudaFree(frecv[r]), cudaFree(fbig[r]), cudaFree(isend[r]), cudaFree(irecv[r]);
    cudaFree(hsend[r]), cudaFree(hrecv[r]);
    ncclCommDestroy(comms[r]);
  }
  std::printf("host_coll %d ranks: %d wrong (%s)\n", n, wrong, wrong ? "FAIL" : "PASS");
  return wrong != 0;
}
