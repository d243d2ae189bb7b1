// Inline PTX as NCCL's examples carry it, on emud: block 0 writes a
// buffer and publishes it with st.release; block 1 polls the flag with
// ld.acquire and then reads the buffer; every thread adds to a counter
// with red.release.sys.global.add.u64, and atom.add hands out tickets.
// Prints PASS or what was wrong.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#define CUDACHECK(x)                                                                                    \
  do {                                                                                                  \
    cudaError_t e_ = (x);                                                                               \
    if (e_ != cudaSuccess) {                                                                            \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                                         \
    }                                                                                                   \
  } while (0)

#define N 64

__global__ void handoff(uint64_t* data, uint32_t* flag, uint64_t* counter, uint32_t* tickets, uint64_t* seen) {
  if (blockIdx.x == 0) {
    data[threadIdx.x] = 1000 + threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(1u) : "memory");
  } else {
    uint32_t f = 0;
    while (f == 0) asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(f) : "l"(flag) : "memory");
    seen[threadIdx.x] = data[threadIdx.x];
  }
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(counter), "l"((uint64_t)1) : "memory");
  uint32_t t;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" : "=r"(t) : "l"(tickets), "r"(1u));
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
  (void)t;
}

int main() {
  uint64_t *data, *counter, *seen;
  uint32_t *flag, *tickets;
  CUDACHECK(cudaMalloc(&data, N * sizeof(uint64_t)));
  CUDACHECK(cudaMalloc(&seen, N * sizeof(uint64_t)));
  CUDACHECK(cudaMalloc(&counter, sizeof(uint64_t)));
  CUDACHECK(cudaMalloc(&flag, sizeof(uint32_t)));
  CUDACHECK(cudaMalloc(&tickets, sizeof(uint32_t)));
  CUDACHECK(cudaMemset(counter, 0, sizeof(uint64_t)));
  CUDACHECK(cudaMemset(flag, 0, sizeof(uint32_t)));
  CUDACHECK(cudaMemset(tickets, 0, sizeof(uint32_t)));
  handoff<<<2, N>>>(data, flag, counter, tickets, seen);
  CUDACHECK(cudaGetLastError());
  CUDACHECK(cudaDeviceSynchronize());
  uint64_t h[N], c = 0;
  uint32_t tk = 0;
  CUDACHECK(cudaMemcpy(h, seen, sizeof h, cudaMemcpyDeviceToHost));
  CUDACHECK(cudaMemcpy(&c, counter, sizeof c, cudaMemcpyDeviceToHost));
  CUDACHECK(cudaMemcpy(&tk, tickets, sizeof tk, cudaMemcpyDeviceToHost));
  int errors = 0;
  for (int i = 0; i < N; i++)
    if (h[i] != 1000u + i) errors++;
  if (c != 2 * N) errors++, std::printf("counter %llu, want %d\n", (unsigned long long)c, 2 * N);
  if (tk != 2 * N) errors++, std::printf("tickets %u, want %d\n", tk, 2 * N);
  std::printf("ptx_flags: %s\n", errors ? "FAIL" : "PASS");
  return errors ? 1 : 0;
}
