// A HIP call emud does not emulate names itself at build time: this
// program does not compile, and the error says "hipMallocPitch is not
// supported by emud" (never a silent no-op).
#include "../common.hpp"

int main() {
  float* p = nullptr;
  size_t pitch = 0;
  HIP_CHECK(hipMallocPitch((void**)&p, &pitch, 4096, 4));
  std::printf("unsupported_call: built (FAIL)\n");
  return 1;
}
