// ncclCommSplit and comms whose ranks are not GPUs 0..n-1 in rank order.
// argv[1] picks the shape:
//   threads  a thread per GPU: the world split three ways (odd and even
//            GPUs ranked in reverse by key, the two halves, every GPU but
//            the first, which passes NCCL_SPLIT_NOCOLOR), each sub-comm
//            checked by its queries, an all-reduce and a broadcast;
//   grouped  one thread splits every rank inside a group, then runs the
//            sub-comms' all-reduces as one group;
//   fork     ranks as processes, each splitting its own rank;
//   halves   two comms of ncclCommInitRank on the node's two halves;
//   missing  (planted) the last rank never calls ncclCommSplit: a hang;
//   window   a window on an odd/even sub-comm: refused, with the reason;
//   dup      (misuse) two ranks of one comm on GPU 0;
//   shrink   the world (made by ncclCommInitRankScalable) shrunk by its
//            last rank, which does not call, checked as a split's; a rank
//            that names itself among the excluded is refused.
// Each rank's value is its world rank + 1, so a sub-comm's sum names its
// members.
#include <cuda_runtime.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

static int nGpus;

// check runs an all-reduce and a broadcast on sub-comm c of world rank w,
// whose members are the world ranks in members (in sub-comm rank order);
// the number of failed checks.
static int check(const char* what, ncclComm_t c, int w, const std::vector<int>& members) {
  int bad = 0, n = -1, r = -1, dev = -1;
  ncclCommCount(c, &n);
  ncclCommUserRank(c, &r);
  ncclCommCuDevice(c, &dev);
  int want = -1;
  for (size_t i = 0; i < members.size(); i++)
    if (members[i] == w) want = (int)i;
  if (n != (int)members.size() || r != want || dev != w) {
    std::printf("%s: world rank %d: count %d rank %d device %d, want %zu %d %d\n", what, w, n, r, dev, members.size(), want, w);
    bad++;
  }
  float* d = nullptr;
  cudaMalloc((void**)&d, 3 * sizeof(float));
  float v[2] = {(float)(w + 1), (float)(w + 1)}, out[3] = {};
  cudaMemcpy(d, v, sizeof v, cudaMemcpyHostToDevice);
  ncclAllReduce(d, d + 2, 1, ncclFloat, ncclSum, c, nullptr);
  ncclBroadcast(d + 1, d + 1, 1, ncclFloat, 0, c, nullptr);
  cudaStreamSynchronize(nullptr);
  cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
  float sum = 0;
  for (int m : members) sum += (float)(m + 1);
  if (out[2] != sum || out[1] != (float)(members[0] + 1)) {
    std::printf("%s: world rank %d: sum %g want %g, broadcast %g want %d\n", what, w, out[2], sum, out[1], members[0] + 1);
    bad++;
  }
  cudaFree(d);
  return bad;
}

// The three splits of world rank w of n, as check wants them.
static std::vector<int> oddEven(int w, int n) {  // color w%2, key -w: reverse order
  std::vector<int> m;
  for (int x = n - 1; x >= 0; x--)
    if (x % 2 == w % 2) m.push_back(x);
  return m;
}
static std::vector<int> halfOf(int w, int n) {
  std::vector<int> m;
  for (int x = 0; x < n; x++)
    if (x / (n / 2) == w / (n / 2)) m.push_back(x);
  return m;
}
static std::vector<int> butFirst(int n) {
  std::vector<int> m;
  for (int x = 1; x < n; x++) m.push_back(x);
  return m;
}

static int splitRank(int w, ncclComm_t world, const char* mode) {
  int n = nGpus, bad = 0;
  ncclComm_t a = nullptr, b = nullptr, c = nullptr;
  if (!std::strcmp(mode, "shrink")) {
    int self[1] = {w};
    if (ncclCommShrink(world, self, 1, &a, nullptr, NCCL_SHRINK_DEFAULT) != ncclInvalidArgument) bad++;
    if (w == n - 1) return bad;
    int last[1] = {n - 1};
    if (ncclCommShrink(world, last, 1, &a, nullptr, NCCL_SHRINK_DEFAULT) != ncclSuccess) return 104;
    std::vector<int> m;
    for (int x = 0; x < n - 1; x++) m.push_back(x);
    bad += check("shrink", a, w, m);
    ncclCommDestroy(a);
    return bad;
  }
  if (ncclCommSplit(world, w % 2, -w, &a, nullptr) != ncclSuccess) return 100;
  if (!std::strcmp(mode, "window")) {
    void* buf = nullptr;
    ncclWindow_t win;
    if (ncclMemAlloc(&buf, 1 << 16) != ncclSuccess) return 101;
    ncclResult_t r = ncclCommWindowRegister(a, buf, 1 << 16, &win, NCCL_WIN_DEFAULT);
    std::printf("window on world rank %d: %s\n", w, ncclGetErrorString(r));
    return r == ncclSuccess;
  }
  if (!std::strcmp(mode, "missing") && w == n - 1) return 0;
  if (ncclCommSplit(world, w / (n / 2), 0, &b, nullptr) != ncclSuccess) return 102;
  if (ncclCommSplit(world, w == 0 ? NCCL_SPLIT_NOCOLOR : 7, 0, &c, nullptr) != ncclSuccess) return 103;
  bad += check("odd/even", a, w, oddEven(w, n));
  bad += check("halves", b, w, halfOf(w, n));
  if (w == 0) {
    bad += c != nullptr;
  } else {
    bad += check("all but the first", c, w, butFirst(n));
  }
  ncclCommDestroy(a);
  ncclCommDestroy(b);
  if (c) ncclCommDestroy(c);
  return bad;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "threads";
  cudaGetDeviceCount(&nGpus);
  int n = nGpus, bad = 0;
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  if (!std::strcmp(mode, "grouped")) {
    std::vector<ncclComm_t> world(n), sub(n);
    if (ncclCommInitAll(world.data(), n, nullptr) != ncclSuccess) return 1;
    ncclGroupStart();
    for (int w = 0; w < n; w++) ncclCommSplit(world[w], w % 2, -w, &sub[w], nullptr);
    if (ncclGroupEnd() != ncclSuccess) return 2;
    std::vector<float*> d(n);
    for (int w = 0; w < n; w++) {
      cudaSetDevice(w);
      cudaMalloc((void**)&d[w], 2 * sizeof(float));
      float v = (float)(w + 1);
      cudaMemcpy(d[w], &v, sizeof v, cudaMemcpyHostToDevice);
    }
    ncclGroupStart();
    for (int w = 0; w < n; w++) ncclAllReduce(d[w], d[w] + 1, 1, ncclFloat, ncclSum, sub[w], nullptr);
    ncclGroupEnd();
    for (int w = 0; w < n; w++) {
      cudaSetDevice(w);
      cudaDeviceSynchronize();
      float got = 0, want = 0;
      cudaMemcpy(&got, d[w] + 1, sizeof got, cudaMemcpyDeviceToHost);
      for (int m : oddEven(w, n)) want += (float)(m + 1);
      int r = -1;
      ncclCommUserRank(sub[w], &r);
      if (got != want || r != n / 2 - 1 - w / 2) {
        std::printf("grouped: world rank %d: sum %g want %g, rank %d\n", w, got, want, r);
        bad++;
      }
    }
    for (int w = 0; w < n; w++) ncclCommDestroy(sub[w]), ncclCommDestroy(world[w]);
  } else if (!std::strcmp(mode, "fork")) {
    for (int w = 0; w < n; w++)
      if (fork() == 0) {
        cudaSetDevice(w);
        ncclComm_t world;
        if (ncclCommInitRank(&world, n, id, w) != ncclSuccess) _exit(99);
        int b = splitRank(w, world, mode);
        ncclCommDestroy(world);
        _exit(b);
      }
    for (int w = 0; w < n; w++) {
      int st = 0;
      wait(&st);
      bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
  } else if (!std::strcmp(mode, "halves") || !std::strcmp(mode, "dup")) {
    ncclUniqueId other;
    ncclGetUniqueId(&other);
    std::vector<int> res(n);
    std::vector<std::thread> ts;
    const bool dup = !std::strcmp(mode, "dup");
    for (int w = 0; w < n; w++)
      ts.emplace_back([&, w] {
        cudaSetDevice(dup ? 0 : w);
        ncclComm_t c;
        ncclResult_t r = ncclCommInitRank(&c, n / 2, w < n / 2 ? id : other, w % (n / 2));
        if (r != ncclSuccess) {
          std::printf("world rank %d: ncclCommInitRank: %s\n", w, ncclGetErrorString(r));
          res[w] = 1;
          return;
        }
        res[w] = check("halves by init", c, w, halfOf(w, n));
        ncclCommDestroy(c);
      });
    for (auto& t : ts) t.join();
    for (int r : res) bad += r;
  } else {
    std::vector<int> res(n);
    std::vector<std::thread> ts;
    for (int w = 0; w < n; w++)
      ts.emplace_back([&, w] {
        cudaSetDevice(w);
        ncclComm_t world;
        ncclUniqueId ids[2] = {id, id};
        if ((!std::strcmp(mode, "shrink") ? ncclCommInitRankScalable(&world, n, w, 2, ids, nullptr)
                                          : ncclCommInitRank(&world, n, id, w)) != ncclSuccess) {
          res[w] = 99;
          return;
        }
        res[w] = splitRank(w, world, mode);
        ncclCommDestroy(world);
      });
    for (auto& t : ts) t.join();
    for (int r : res) bad += r;
  }
  std::printf("split %s on %d GPUs: %d failed\n", mode, n, bad);
  return bad != 0;
}
