// Host buffers as a rank's test harness makes them: after its first emud
// call, each of two host threads allocates eight 512 KiB blocks, fills
// them and frees them (cxx TestHostHeap: with emud's heap, capi/heap.c,
// the blocks come from the one arena's huge pages and cost a few page
// faults; with EMUD_MALLOC=system, glibc maps and faults each block anew,
// 128 faults a block).
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"

static long fill(int seed) {
  std::vector<char*> blocks;
  for (int i = 0; i < 8; i++) {
    char* b = new char[512 << 10];
    std::memset(b, seed + i, 512 << 10);
    blocks.push_back(b);
  }
  long sum = 0;
  for (char* b : blocks) {
    sum += b[0] + b[(512 << 10) - 1];
    delete[] b;
  }
  return sum;
}

int main() {
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess) return 1;
  long a = 0, b = 0;
  std::thread t0([&] { a = fill(1); });
  t0.join();
  std::thread t1([&] { b = fill(2); });
  t1.join();
  const bool ok = a == 2 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8) && b == 2 * (2 + 3 + 4 + 5 + 6 + 7 + 8 + 9);
  std::printf("host_buffers: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
