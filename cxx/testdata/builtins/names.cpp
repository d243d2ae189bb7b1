// threadIdx, blockIdx, blockDim and gridDim are objects, as on a GPU: a
// host variable, a parameter, a struct member or a kernel's local may
// take one of their names and shadows them as C++ scopes say (cxx
// TestBuiltinNames builds this with -Wall -Werror). Every use of the
// built-ins keeps its meaning: threadIdx.x is an unsigned int through
// printf's varargs, std::min's deduction and auto. Prints PASS or what
// was wrong.
#include <emud/amdgcn.h>
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdio>
#include <type_traits>
#include <vector>

#include "launch_cfg.h"

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    hipError_t e_ = (x);                                                                           \
    if (e_ != hipSuccess) {                                                                        \
      std::printf("names: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static int failures;
#define EXPECT(cond, ...)                                         \
  do {                                                            \
    if (!(cond)) {                                                \
      std::printf("names: line %d: %s: ", __LINE__, #cond);      \
      std::printf(__VA_ARGS__);                                   \
      std::printf("\n");                                          \
      failures++;                                                 \
    }                                                             \
  } while (0)

// What the built-ins' members are, as HIP and CUDA give them.
static_assert(std::is_same<decltype(threadIdx.x), unsigned int>::value, "threadIdx.x is an unsigned int");
static_assert(std::is_same<decltype(gridDim.z), unsigned int>::value, "gridDim.z is an unsigned int");

unsigned firstLane(const LaunchCfg& cfg, unsigned blockIdx) { return blockIdx * cfg.blockDim.x * cfg.blockDim.y; }

// A 2-D grid: each cell gets row * 1000 + column.
__global__ void fill2d(unsigned* out, unsigned n, unsigned m) {
  unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < n && row < m) out[row * n + col] = row * 1000 + col;
}

// The built-ins read through varargs, template deduction, auto and the
// AMDGCN builtins: one word each per lane.
__global__ void reads(unsigned* out, unsigned lim) {
  auto i = blockDim.x * blockIdx.x + threadIdx.x;
  static_assert(std::is_same<decltype(i), unsigned int>::value, "auto from the built-ins is unsigned");
  auto t = threadIdx.x;
  out[4 * i] = std::min(threadIdx.x, lim);  // deduces std::min<unsigned>
  out[4 * i + 1] = t;
  out[4 * i + 2] = __builtin_amdgcn_workitem_id_x() == threadIdx.x && __builtin_amdgcn_workgroup_id_x() == blockIdx.x &&
                   __builtin_amdgcn_workgroup_size_x() == blockDim.x;
  out[4 * i + 3] = gridDim.x;
  if (blockIdx.x == 1 && threadIdx.x == 3)
    std::printf("names: lane %u of block %u (blockDim %u, gridDim %u)\n", threadIdx.x, blockIdx.x, blockDim.x, gridDim.x);
}

// A kernel's own constant named blockDim shadows the built-in, which ::
// still reaches; a lambda's parameter named gridDim likewise.
__global__ void shadowed(int* out) {
  const int blockDim = 256;
  auto scaled = [](int gridDim) { return gridDim * 2; };
  int i = (int)(::blockDim.x * blockIdx.x + threadIdx.x);
  out[i] = blockDim + scaled((int)::gridDim.x) * 1000 + (int)::blockDim.x * 100000;
}

// MORI's tests/cpp test_gda_flush_async shape: one lane per rank's warp.
__global__ void perRank(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = (int)(threadIdx.x / warpSize); }

// A launch helper whose parameters are named as the built-ins.
static hipError_t launchFill(dim3 gridDim, dim3 blockDim, unsigned* out, unsigned n, unsigned m) {
  fill2d<<<gridDim, blockDim>>>(out, n, m);
  return hipGetLastError();
}

static void checkFill(const std::vector<unsigned>& h, unsigned n, unsigned m, const char* how) {
  for (unsigned r = 0; r < m; r++)
    for (unsigned c = 0; c < n; c++)
      EXPECT(h[r * n + c] == r * 1000 + c, "%s: cell (%u, %u) is %u", how, r, c, h[r * n + c]);
}

int main() {
  const unsigned n = 20, m = 18;
  unsigned* d = nullptr;
  CHECK(hipMalloc(&d, n * m * sizeof(unsigned)));
  std::vector<unsigned> h(n * m);

  // Host variables of type dim3 named as the built-ins: <<<>>> and
  // hipLaunchKernelGGL.
  {
    dim3 blockDim(16, 16);
    dim3 gridDim((n + 15) / 16, (m + 15) / 16);
    EXPECT(gridDim.x == 2 && gridDim.y == 2 && blockDim.x == 16, "host dim3s %u %u %u", gridDim.x, gridDim.y, blockDim.x);
    CHECK(hipMemset(d, 0, n * m * sizeof(unsigned)));
    fill2d<<<gridDim, blockDim>>>(d, n, m);
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(h.data(), d, h.size() * sizeof(unsigned), hipMemcpyDeviceToHost));
    checkFill(h, n, m, "<<<gridDim, blockDim>>>");
    CHECK(hipMemset(d, 0, n * m * sizeof(unsigned)));
    hipLaunchKernelGGL(fill2d, gridDim, blockDim, 0, 0, d, n, m);
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(h.data(), d, h.size() * sizeof(unsigned), hipMemcpyDeviceToHost));
    checkFill(h, n, m, "hipLaunchKernelGGL");
  }
  // Parameters, and members of a user's header's struct (. and ->).
  {
    LaunchCfg cfg{dim3(2, 2), dim3(16, 16), 7};
    const LaunchCfg* p = &cfg;
    EXPECT(firstLane(cfg, 2) == 512 && p->threadIdx == 7, "firstLane %u, member threadIdx %d", firstLane(cfg, 2), p->threadIdx);
    CHECK(hipMemset(d, 0, n * m * sizeof(unsigned)));
    CHECK(launchFill(p->gridDim, cfg.blockDim, d, n, m));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(h.data(), d, h.size() * sizeof(unsigned), hipMemcpyDeviceToHost));
    checkFill(h, n, m, "launchFill(p->gridDim, cfg.blockDim)");
  }
  // A host int named blockDim (MORI's test_gda_flush_async).
  {
    const int nranks = 4;
    int blockDim = nranks * warpSize;
    int* r = nullptr;
    CHECK(hipMalloc(&r, blockDim * sizeof(int)));
    perRank<<<1, blockDim>>>(r);
    CHECK(hipDeviceSynchronize());
    std::vector<int> hr(blockDim);
    CHECK(hipMemcpy(hr.data(), r, hr.size() * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < blockDim; i++) EXPECT(hr[i] == i / warpSize, "perRank lane %d wrote %d", i, hr[i]);
    CHECK(hipFree(r));
  }
  // The built-ins in lane code, read every way.
  {
    const unsigned blocks = 2, threads = 64, lim = 40;
    unsigned* o = nullptr;
    CHECK(hipMalloc(&o, 4 * blocks * threads * sizeof(unsigned)));
    reads<<<blocks, threads>>>(o, lim);
    CHECK(hipDeviceSynchronize());
    std::vector<unsigned> ho(4 * blocks * threads);
    CHECK(hipMemcpy(ho.data(), o, ho.size() * sizeof(unsigned), hipMemcpyDeviceToHost));
    for (unsigned i = 0; i < blocks * threads; i++) {
      unsigned t = i % threads;
      EXPECT(ho[4 * i] == std::min(t, lim) && ho[4 * i + 1] == t && ho[4 * i + 2] == 1 && ho[4 * i + 3] == blocks,
             "reads lane %u: %u %u %u %u", i, ho[4 * i], ho[4 * i + 1], ho[4 * i + 2], ho[4 * i + 3]);
    }
    CHECK(hipFree(o));
  }
  // A kernel's local constant named blockDim.
  {
    int* o = nullptr;
    CHECK(hipMalloc(&o, 3 * 32 * sizeof(int)));
    shadowed<<<3, 32>>>(o);
    CHECK(hipDeviceSynchronize());
    std::vector<int> ho(3 * 32);
    CHECK(hipMemcpy(ho.data(), o, ho.size() * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < 3 * 32; i++) EXPECT(ho[i] == 256 + 6 * 1000 + 32 * 100000, "shadowed lane %d wrote %d", i, ho[i]);
    CHECK(hipFree(o));
  }
  // Host code between launches sees the host's values.
  EXPECT(threadIdx.x == 0 && blockIdx.y == 0 && blockDim.x == 1 && gridDim.z == 1, "host built-ins %u %u %u %u", threadIdx.x,
         blockIdx.y, blockDim.x, gridDim.z);
  CHECK(hipFree(d));
  if (failures) {
    std::printf("names: FAIL (%d)\n", failures);
    return 1;
  }
  std::printf("names: PASS\n");
  return 0;
}
