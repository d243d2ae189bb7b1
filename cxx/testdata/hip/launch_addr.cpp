// Kernels launched by address, as HIP code often launches them:
// hipLaunchKernel((const void*)kernel, grid, block, args, ...) and
// hipLaunchCooperativeKernel(reinterpret_cast<void*>(&kernel), ...),
// the kernel's arguments given as void** args. emud c++ registers each
// kernel the source casts to a void pointer (include/emud-forced/emud_kernel_addr.h),
// so these launch as <<<>>> would:
//   - arguments of several sizes and alignments, a 16-byte-aligned
//     struct by value among them, copied at the launch (the host changes
//     them before the kernel runs, and the kernel sees the launch's);
//   - the address kept in a variable, cast once, launched later;
//   - a template kernel's instance, and a cast inside a macro;
//   - a cooperative launch whose grid syncs.
// argv[1] "unknown" launches an address no cast made (a data word's):
// hipErrorInvalidDeviceFunction, said at its line.
#include <cstdio>
#include <cstring>
#include <string>

#include <hip/hip_cooperative_groups.h>
#include <hip/hip_runtime.h>

namespace cg = cooperative_groups;

struct alignas(16) Coeffs {
  double a;
  char tag;
  double b;
};

__global__ void affine(double* out, Coeffs c, short k, const double* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = c.a * in[i] + c.b + k + (c.tag == 'z');
}

template <class T>
__global__ void fill(T* out, T v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v + (T)i;
}

__global__ void rotate(int* buf, int* out) {
  cg::grid_group g = cg::this_grid();
  const unsigned i = g.thread_rank();
  buf[i] = (int)i * 3;
  g.sync();
  out[i] = buf[(i + 1) % g.size()];
}

// A host function whose parameter is a reference, and one taking a
// std::string by value, cast to void pointers as C callback tables hold
// them: not kernels emud can call from bytes, so not registered, and
// their casts compile as they do without emud.
static void bump(int& x) { x++; }
static void named(std::string s) { std::printf("%s\n", s.c_str()); }

#define LAUNCH_BY_ADDRESS(k, grid, block, args) hipLaunchKernel((const void*)k, dim3(grid), dim3(block), args, 0, nullptr)

int main(int argc, char** argv) {
  if (argc > 1 && !std::strcmp(argv[1], "unknown")) {
    static int word;
    void* none[] = {nullptr};
    const hipError_t e = hipLaunchKernel(&word, dim3(1), dim3(1), none, 0, nullptr);
    std::printf("launch_addr unknown: %s\n", hipGetErrorName(e));
    return e == hipErrorInvalidDeviceFunction ? 0 : 1;
  }
  constexpr int n = 256;
  double *in = nullptr, *out = nullptr;
  int *ints = nullptr, *buf = nullptr, *rot = nullptr;
  if (hipMalloc(&in, n * sizeof(double)) != hipSuccess || hipMalloc(&out, n * sizeof(double)) != hipSuccess ||
      hipMalloc(&ints, n * sizeof(int)) != hipSuccess || hipMalloc(&buf, n * sizeof(int)) != hipSuccess ||
      hipMalloc(&rot, n * sizeof(int)) != hipSuccess)
    return 3;
  double h[n];
  for (int i = 0; i < n; i++) h[i] = i;
  hipMemcpy(in, h, sizeof h, hipMemcpyHostToDevice);
  int wrong = 0;

  // A launch by address; its arguments change right after it.
  Coeffs c{2.0, 'z', 0.5};
  short k = 3;
  int count = n;
  void* args[] = {&out, &c, &k, &in, &count};
  const void* fn = (const void*)affine;  // kept, launched below
  if (hipLaunchKernel(fn, dim3(n / 64), dim3(64), args, 0, nullptr) != hipSuccess) return 4;
  c.a = -1;
  k = 100;
  count = 0;
  hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) wrong += h[i] != 2.0 * i + 0.5 + 3 + 1;

  // A template kernel's instance, through a macro.
  int v = 7, m = n;
  void* fargs[] = {&ints, &v, &m};
  if (LAUNCH_BY_ADDRESS(fill<int>, n / 128, 128, fargs) != hipSuccess) return 5;
  int hi[n];
  hipMemcpy(hi, ints, sizeof hi, hipMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) wrong += hi[i] != 7 + i;

  // A cooperative launch by address.
  void* rargs[] = {&buf, &rot};
  if (hipLaunchCooperativeKernel(reinterpret_cast<void*>(&rotate), dim3(4), dim3(64), rargs, 0, nullptr) != hipSuccess)
    return 6;
  hipMemcpy(hi, rot, sizeof hi, hipMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) wrong += hi[i] != ((i + 1) % n) * 3;

  const void* callbacks[] = {(const void*)bump, (const void*)&named};
  void* none[] = {nullptr};
  wrong += hipLaunchKernel(callbacks[0], dim3(1), dim3(1), none, 0, nullptr) != hipErrorInvalidDeviceFunction;

  std::printf("launch_addr: %d of %d values wrong (%s)\n", wrong, 3 * n, wrong ? "FAIL" : "PASS");
  return wrong != 0;
}
