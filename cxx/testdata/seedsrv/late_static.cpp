// A function-local static made after the program's first HIP call, whose
// destructor makes HIP calls and prints: exit runs it before emud's own
// end of run (handlers run newest first), while the emulation still
// runs. Under a seed server its seed must end the same way.
#include <hip/hip_runtime.h>

#include <cstdio>

struct Buffer {
  int* d = nullptr;
  Buffer() { (void)hipMalloc(&d, 256); }
  ~Buffer() { std::fprintf(stderr, "late destructor: hipFree %d\n", (int)hipFree(d)); }
};

static Buffer& buffer() {
  static Buffer b;
  return b;
}

int main() {
  if (hipSetDevice(0) != hipSuccess) return 1;
  std::fprintf(stderr, "buffer %s\n", buffer().d ? "made" : "missing");
  return 0;
}
