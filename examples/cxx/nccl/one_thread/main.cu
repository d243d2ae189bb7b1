// One thread drives every GPU of the node, as nccl-tests does with -g N:
// the communicators are made by ncclCommInitRank calls between
// ncclGroupStart and ncclGroupEnd (cudaSetDevice before each), every
// collective is posted in a group, and the device side comes from a
// header (harness.h). It checks each result exactly:
//   - ncclAllReduce sum and ncclAvg of floats (NCCL's Avg on floats is a
//     sum of the inputs premultiplied by 1/n), ncclAvg of int32 (a sum
//     divided at the end), sums of halves, bfloat16 and E4M3 (each step
//     rounded to the type, as the host's loop rounds);
//   - ncclRedOpCreatePreMulSum with a host scalar (rank r's is r + 1) and
//     with a device scalar, then ncclRedOpDestroy;
//   - ncclGather to the last rank and ncclScatter back from it;
//   - a graph captured from the header's launch helper, instantiated
//     through the pre-CUDA-12 signature (error node and log buffer);
//   - dev comms made in a group and destroyed rank by rank outside one;
//   - ncclCommGetAsyncError, ncclGetLastError (declared again with a weak
//     fallback, as nccl-tests does: emud's wins), ncclMemFree after
//     ncclCommDestroy (NCCL's memory outlives the comm).
// argv[1] "forward" instead passes blocks two ranks on in two grouped
// steps; "grouped" puts both steps in one outer group (a planted bug,
// as nccl-tests' hypercube with one thread driving every GPU has).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "harness.h"

extern "C" const char* ncclGetLastError(ncclComm_t comm);
extern "C" __attribute__((weak)) const char* ncclGetLastError(ncclComm_t) { return "(the weak fallback)"; }

#define CHECK(cmd)                                                              \
  do {                                                                          \
    auto rc_ = (cmd);                                                           \
    if ((int)rc_ != 0) {                                                        \
      std::printf("%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #cmd, (int)rc_); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

constexpr size_t kCount = 1000;

// forward passes each rank's block two ranks on, in two steps: a send of
// its own block to the next rank, then a send of the block it received.
// The second step reads what the first one's receive wrote, so the steps
// need a group each; with grouped, both are in one outer group (a
// planted bug: NCCL runs a group's calls in no order it promises, and
// EMUD_RACE=1 reports the receive and the send that follows it).
static int forward(std::vector<ncclComm_t>& comms, std::vector<float*>& buf, std::vector<cudaStream_t>& streams, bool grouped) {
  const int n = (int)comms.size();
  const size_t b = 256;  // floats a block: [own | first step's | second step's]
  if (grouped) CHECK(ncclGroupStart());
  for (int step = 0; step < 2; step++) {
    CHECK(ncclGroupStart());
    for (int g = 0; g < n; g++) {
      CHECK(ncclSend(buf[g] + step * b, b, ncclFloat, (g + 1) % n, comms[g], streams[g]));
      CHECK(ncclRecv(buf[g] + (step + 1) * b, b, ncclFloat, (g + n - 1) % n, comms[g], streams[g]));
    }
    CHECK(ncclGroupEnd());
  }
  if (grouped) CHECK(ncclGroupEnd());
  int wrong = 0;
  std::vector<float> h(3 * b);
  for (int g = 0; g < n; g++) {
    cudaSetDevice(g);
    cudaStreamSynchronize(streams[g]);
    cudaMemcpy(h.data(), buf[g], h.size() * sizeof(float), cudaMemcpyDeviceToHost);
    int from = (g + n - 2) % n;  // the block two ranks back
    for (size_t i = 0; i < b; i++) wrong += h[2 * b + i] != (float)(from + 1) * (float)(i % 7 + 1);
  }
  std::printf("forward%s: %d wrong\n", grouped ? " (one group)" : "", wrong);
  return wrong != 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  std::vector<ncclComm_t> comms(n);
  std::vector<cudaStream_t> streams(n);
  ncclUniqueId id;
  CHECK(ncclGetUniqueId(&id));
  CHECK(ncclGroupStart());
  for (int g = 0; g < n; g++) {
    CHECK(cudaSetDevice(g));
    CHECK(ncclCommInitRank(&comms[g], n, id, g));
  }
  CHECK(ncclGroupEnd());

  std::vector<float*> fsend(n), frecv(n), scalars(n);
  std::vector<int32_t*> isend(n), irecv(n);
  std::vector<__half*> hsend(n), hrecv(n);
  for (int g = 0; g < n; g++) {
    int rank = -1;
    CHECK(ncclCommUserRank(comms[g], &rank));
    if (rank != g) return 2;
    CHECK(cudaSetDevice(g));
    CHECK(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
    CHECK(ncclMemAlloc((void**)&fsend[g], kCount * sizeof(float)));
    CHECK(ncclMemAlloc((void**)&frecv[g], kCount * sizeof(float)));
    CHECK(cudaMalloc((void**)&scalars[g], sizeof(float)));
    CHECK(cudaMalloc((void**)&isend[g], kCount * sizeof(int32_t)));
    CHECK(cudaMalloc((void**)&irecv[g], kCount * sizeof(int32_t)));
    CHECK(cudaMalloc((void**)&hsend[g], kCount * sizeof(__half)));
    CHECK(cudaMalloc((void**)&hrecv[g], kCount * sizeof(__half)));
    CHECK(launchFill(fsend[g], kCount, (float)(g + 1), streams[g]));
    CHECK(launchFill(isend[g], kCount, (float)(g + 1), streams[g]));
    CHECK(launchFill(hsend[g], kCount, (float)(g + 1), streams[g]));
    float s = 2.0f * (float)(g + 1);
    CHECK(cudaMemcpy(scalars[g], &s, sizeof s, cudaMemcpyHostToDevice));
  }
  if (!std::strcmp(mode, "forward") || !std::strcmp(mode, "grouped")) return forward(comms, fsend, streams, mode[0] == 'g');

  // Σ over ranks of (r+1) and of (r+1)^2 (host scalars premultiply by r+1).
  double sum1 = 0, sum2 = 0;
  for (int r = 0; r < n; r++) {
    sum1 += r + 1;
    sum2 += (r + 1) * (r + 1);
  }
  int wrong = 0;
  // perElem * (i % 7 + 1) is element i's result; with avg, NCCL's Avg
  // on floats instead: each input times float(1/n), summed in float (in
  // rank order, as emud adds).
  auto checkF = [&](const char* what, double perElem, bool avg = false) {
    std::vector<float> h(kCount);
    for (int g = 0; g < n; g++) {
      cudaSetDevice(g);
      cudaStreamSynchronize(streams[g]);
      cudaMemcpy(h.data(), frecv[g], kCount * sizeof(float), cudaMemcpyDeviceToHost);
      for (size_t i = 0; i < kCount; i++) {
        float want = (float)(perElem * (double)(i % 7 + 1));
        if (avg) {  // the inputs are avgFill's
          const float inv = (float)(1.0 / n);
          want = 0;
          for (int r = 0; r < n; r++) {
            float x = (float)(0.1 * (r + 1)) * (float)(i % 7 + 1);
            want += x * inv;
          }
        }
        if (h[i] != want && wrong++ < 5) std::printf("%s: GPU %d element %zu: %.9g, want %.9g\n", what, g, i, h[i], want);
      }
    }
  };
  auto allReduce = [&](ncclRedOp_t op, const std::vector<ncclRedOp_t>* ops) -> int {
    CHECK(ncclGroupStart());
    for (int g = 0; g < n; g++)
      CHECK(ncclAllReduce(fsend[g], frecv[g], kCount, ncclFloat, ops ? (*ops)[g] : op, comms[g], streams[g]));
    CHECK(ncclGroupEnd());
    return 0;
  };
  if (allReduce(ncclSum, nullptr)) return 1;
  checkF("sum", sum1);
  // Avg on inputs a tenth of the others': inexact, so the order of
  // NCCL's arithmetic shows (on 3 GPUs dividing the sum differs).
  for (int g = 0; g < n; g++) CHECK(launchFill(fsend[g], kCount, (float)(0.1 * (g + 1)), streams[g]));
  if (allReduce(ncclAvg, nullptr)) return 1;
  checkF("avg", 0, true);
  for (int g = 0; g < n; g++) CHECK(launchFill(fsend[g], kCount, (float)(g + 1), streams[g]));

  std::vector<ncclRedOp_t> host(n), dev(n);
  for (int g = 0; g < n; g++) {
    float s = (float)(g + 1);
    CHECK(ncclRedOpCreatePreMulSum(&host[g], &s, ncclFloat, ncclScalarHostImmediate, comms[g]));
    CHECK(ncclRedOpCreatePreMulSum(&dev[g], scalars[g], ncclFloat, ncclScalarDevice, comms[g]));
  }
  if (allReduce(ncclSum, &host)) return 1;
  checkF("premulsum (host scalar)", sum2);
  if (allReduce(ncclSum, &dev)) return 1;
  checkF("premulsum (device scalar)", 2 * sum2);
  for (int g = 0; g < n; g++) {
    CHECK(ncclRedOpDestroy(host[g], comms[g]));
    CHECK(ncclRedOpDestroy(dev[g], comms[g]));
  }

  // int32 Avg: the sum divided at the end, truncating.
  CHECK(ncclGroupStart());
  for (int g = 0; g < n; g++) CHECK(ncclAllReduce(isend[g], irecv[g], kCount, ncclInt32, ncclAvg, comms[g], streams[g]));
  for (int g = 0; g < n; g++) CHECK(ncclAllReduce(hsend[g], hrecv[g], kCount, ncclFloat16, ncclSum, comms[g], streams[g]));
  CHECK(ncclGroupEnd());
  for (int g = 0; g < n; g++) {
    std::vector<int32_t> hi(kCount);
    std::vector<__half> hh(kCount);
    cudaSetDevice(g);
    cudaStreamSynchronize(streams[g]);
    cudaMemcpy(hi.data(), irecv[g], kCount * sizeof(int32_t), cudaMemcpyDeviceToHost);
    cudaMemcpy(hh.data(), hrecv[g], kCount * sizeof(__half), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < kCount; i++) {
      int32_t want = (int32_t)(sum1 * (double)(i % 7 + 1)) / n;
      if (hi[i] != want && wrong++ < 5) std::printf("int avg: GPU %d element %zu: %d, want %d\n", g, i, hi[i], want);
      if (__half2float(hh[i]) != (float)(sum1 * (double)(i % 7 + 1)) && wrong++ < 5)
        std::printf("half sum: GPU %d element %zu: %g\n", g, i, __half2float(hh[i]));
    }
  }

  // bfloat16 and E4M3 sums: each step rounded once to the type (E4M3
  // saturating), in rank order, as this host loop rounds with
  // cuda_bf16.h's and cuda_fp8.h's conversions.
  {
    std::vector<__nv_bfloat16*> bs(n), br(n);
    std::vector<__nv_fp8_e4m3*> es(n), er(n);
    for (int g = 0; g < n; g++) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaMalloc((void**)&bs[g], kCount * 2));
      CHECK(cudaMalloc((void**)&br[g], kCount * 2));
      CHECK(cudaMalloc((void**)&es[g], kCount));
      CHECK(cudaMalloc((void**)&er[g], kCount));
      CHECK(launchFill(bs[g], kCount, (float)(g + 1), streams[g]));
      CHECK(launchFill(es[g], kCount, (float)(g + 1), streams[g]));
    }
    CHECK(ncclGroupStart());
    for (int g = 0; g < n; g++) {
      CHECK(ncclAllReduce(bs[g], br[g], kCount, ncclBfloat16, ncclSum, comms[g], streams[g]));
      CHECK(ncclAllReduce(es[g], er[g], kCount, ncclFloat8e4m3, ncclSum, comms[g], streams[g]));
    }
    CHECK(ncclGroupEnd());
    for (int g = 0; g < n; g++) {
      std::vector<__nv_bfloat16> hb(kCount);
      std::vector<__nv_fp8_e4m3> he(kCount);
      cudaSetDevice(g);
      cudaStreamSynchronize(streams[g]);
      cudaMemcpy(hb.data(), br[g], kCount * 2, cudaMemcpyDeviceToHost);
      cudaMemcpy(he.data(), er[g], kCount, cudaMemcpyDeviceToHost);
      for (size_t i = 0; i < kCount; i++) {
        __nv_bfloat16 wb = __float2bfloat16((float)(i % 7 + 1));
        __nv_fp8_e4m3 we((float)(i % 7 + 1));
        for (int r = 1; r < n; r++) {
          float x = (float)(r + 1) * (float)(i % 7 + 1);
          wb = __float2bfloat16(__bfloat162float(wb) + __bfloat162float(__float2bfloat16(x)));
          we = __nv_fp8_e4m3(float(we) + float(__nv_fp8_e4m3(x)));
        }
        if (__bfloat16_as_ushort(hb[i]) != __bfloat16_as_ushort(wb) && wrong++ < 5)
          std::printf("bfloat16 sum: GPU %d element %zu: %g, want %g\n", g, i, __bfloat162float(hb[i]), __bfloat162float(wb));
        if (he[i].__x != we.__x && wrong++ < 5)
          std::printf("e4m3 sum: GPU %d element %zu: %g, want %g\n", g, i, float(he[i]), float(we));
      }
    }
  }

  // ncclGather to rank n-1, then ncclScatter of it back from there: each
  // rank gets its own first 16 floats again.
  const int root = n - 1;
  const size_t k = 16;
  CHECK(ncclGroupStart());
  for (int g = 0; g < n; g++) CHECK(ncclGather(fsend[g], frecv[g], k, ncclFloat, root, comms[g], streams[g]));
  CHECK(ncclGroupEnd());
  CHECK(ncclGroupStart());
  for (int g = 0; g < n; g++) CHECK(ncclScatter(frecv[g], fsend[g] + 512, k, ncclFloat, root, comms[g], streams[g]));
  CHECK(ncclGroupEnd());
  for (int g = 0; g < n; g++) {
    float back[16], own[16];
    cudaSetDevice(g);
    cudaStreamSynchronize(streams[g]);
    cudaMemcpy(back, fsend[g] + 512, sizeof back, cudaMemcpyDeviceToHost);
    cudaMemcpy(own, fsend[g], sizeof own, cudaMemcpyDeviceToHost);
    if (std::memcmp(back, own, sizeof own) != 0 && wrong++ < 5) std::printf("gather then scatter: GPU %d got another rank's block\n", g);
  }

  // A graph of the header's launches, through the older instantiate.
  CHECK(cudaSetDevice(0));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeGlobal));
  CHECK(launchFill(fsend[0], 64 * 4, 1.0f, streams[0]));
  blockSum<<<4, 64, 0, streams[0]>>>(fsend[0], frecv[0]);
  CHECK(cudaStreamEndCapture(streams[0], &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, NULL, NULL, 0));
  CHECK(cudaGraphLaunch(exec, streams[0]));
  CHECK(cudaStreamSynchronize(streams[0]));
  float sums[4];
  CHECK(cudaMemcpy(sums, frecv[0], sizeof sums, cudaMemcpyDeviceToHost));
  for (int b = 0; b < 4; b++) {
    float want = 0;
    for (int i = b * 64; i < b * 64 + 64; i++) want += (float)(i % 7 + 1);
    if (sums[b] != want && wrong++ < 5) std::printf("graph block %d: %g, want %g\n", b, sums[b], want);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));

  for (int g = 0; g < n; g++) {
    ncclResult_t async = ncclInternalError;
    CHECK(ncclCommGetAsyncError(comms[g], &async));
    if (async != ncclSuccess) wrong++;
  }
  // A failed call leaves its words for ncclGetLastError.
  if (ncclRedOpDestroy(host[0], comms[0]) == ncclSuccess) wrong++;
  std::printf("last error: %s\n", std::strstr(ncclGetLastError(nullptr), "ncclRedOpDestroy") ? "names ncclRedOpDestroy" : ncclGetLastError(nullptr));

  // Dev comms made in a group and destroyed one rank after another,
  // outside any group, as nccl-tests' cleanup does: the thread drives
  // every rank, so no destroy waits for the others (the last destroys all).
  {
    std::vector<ncclDevComm> dcs(n);
    ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
    reqs.lsaBarrierCount = 1;
    CHECK(ncclGroupStart());
    for (int g = 0; g < n; g++) CHECK(ncclDevCommCreate(comms[g], &reqs, &dcs[g]));
    CHECK(ncclGroupEnd());
    for (int g = 0; g < n; g++) CHECK(ncclDevCommDestroy(comms[g], &dcs[g]));
  }

  for (int g = 0; g < n; g++) CHECK(ncclCommDestroy(comms[g]));
  for (int g = 0; g < n; g++) {
    CHECK(cudaSetDevice(g));
    CHECK(ncclMemFree(fsend[g]));
    CHECK(ncclMemFree(frecv[g]));
    CHECK(cudaStreamDestroy(streams[g]));
  }
  std::printf("one_thread %d ranks: %d wrong (%s)\n", n, wrong, wrong ? "FAIL" : "PASS");
  return wrong != 0;
}
