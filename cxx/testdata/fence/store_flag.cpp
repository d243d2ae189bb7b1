// unlogged.cpp's "plain" store, in a unit of its own that the test builds
// with -fno-sanitize=thread: its store reaches no access log.
#include "hip/hip_runtime.h"

void storeFlag(unsigned* flag) { *reinterpret_cast<volatile unsigned*>(flag) = 1; }
