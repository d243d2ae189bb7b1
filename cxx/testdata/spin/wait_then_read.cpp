// A lane waits for a flag that is already set and then reads it again at
// another line, twice, as MORI's waitSignal and readSignal do (its
// test_gda_signal_ut round C): a wait that saw its word and a later read
// of that word are not a poll of it. Before loads were told apart by
// their lines, the second wait-and-read was taken for a poll for good:
// a hang report ("spin on an atomic load ... never written again").
#include <cstdio>

#include "hip/hip_runtime.h"

__global__ void waitRead(unsigned long long* flag, unsigned long long* out) {
  for (int i = 0; i < 2; i++) {
    while (__hip_atomic_load(flag, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT) < 1) {
    }
    out[i] = __hip_atomic_load(flag, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
}

int main() {
  unsigned long long *flag = nullptr, *out = nullptr;
  const unsigned long long one = 1;
  unsigned long long got[2] = {};
  if (hipMalloc(&flag, 8) != hipSuccess || hipMalloc(&out, 16) != hipSuccess) return 1;
  if (hipMemcpy(flag, &one, 8, hipMemcpyHostToDevice) != hipSuccess) return 1;
  waitRead<<<1, 1>>>(flag, out);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  if (hipMemcpy(got, out, 16, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  std::printf("wait_then_read: %s\n", got[0] == 1 && got[1] == 1 ? "PASS" : "FAIL");
  return got[0] == 1 && got[1] == 1 ? 0 : 1;
}
