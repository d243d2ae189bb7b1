// A HIP call emud does not emulate names itself at build time: this
// program does not compile, and the error says "hipMalloc3D is not
// supported by emud" (never a silent no-op).
#include "../common.hpp"

int main() {
  float* p = nullptr;
  HIP_CHECK(hipMalloc3D((void**)&p, 4096));
  std::printf("unsupported_call: built (FAIL)\n");
  return 1;
}
