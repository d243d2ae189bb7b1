// Bad arguments to HIP and cco calls are refused with an error naming the
// call, the argument and this file's line, and do nothing; before, each
// was accepted silently (issue 45; cxx TestBadArguments). argv[1] picks
// the call; the program prints what the call returned and exits 0 when it
// was refused, 1 when it was accepted.
#include <cstdio>
#include <cstring>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"

using namespace mori::cco;

__global__ void nop() {}

static int report(const char* what, int rc) {
  std::printf("bad_args %s: %s\n", what, rc != 0 ? "refused" : "accepted (FAIL)");
  return rc != 0 ? 0 : 1;
}

static ccoComm* comm1() {
  ccoUniqueId id;
  ccoComm* c = nullptr;
  if (ccoGetUniqueId(&id) != 0 || ccoCommCreate(id, 1, 0, 0, &c) != 0) return nullptr;
  return c;
}

int main(int argc, char** argv) {
  const char* m = argc > 1 ? argv[1] : "";
  static char host[4096];
  void* p = nullptr;
  if (!std::strcmp(m, "double_free")) {
    if (hipMalloc(&p, 4096) != hipSuccess || hipFree(p) != hipSuccess) return 2;
    return report(m, hipFree(p));
  }
  if (!std::strcmp(m, "wild_free")) {
    if (hipMalloc(&p, 4096) != hipSuccess) return 2;
    return report(m, hipFree((char*)p + 64));
  }
  if (!std::strcmp(m, "host_free")) return report(m, hipFree(host));
  if (!std::strcmp(m, "malloc_null")) return report(m, hipMalloc(nullptr, 4096));
  if (!std::strcmp(m, "memset_host")) return report(m, hipMemset(host, 0, sizeof host));
  if (!std::strcmp(m, "dyn_shared")) {
    nop<<<1, 64, 2u << 30>>>();
    return report(m, hipGetLastError());
  }
  if (!std::strcmp(m, "comm_null")) {
    ccoUniqueId id;
    if (ccoGetUniqueId(&id) != 0) return 2;
    return report(m, ccoCommCreate(id, 1, 0, 0, nullptr));
  }
  if (!std::strcmp(m, "memalloc_null")) {
    ccoComm* c = comm1();
    if (!c) return 2;
    return report(m, ccoMemAlloc(c, 4096, nullptr));
  }
  if (!std::strcmp(m, "window_null")) {
    ccoComm* c = comm1();
    if (!c || ccoMemAlloc(c, 4096, &p) != 0) return 2;
    return report(m, ccoWindowRegister(c, p, 4096, nullptr));
  }
  if (!std::strcmp(m, "ok")) {  // the same calls with good arguments
    if (hipFree(nullptr) != hipSuccess || hipMalloc(&p, 4096) != hipSuccess || hipMemset(p, 0, 4096) != hipSuccess ||
        hipFree(p) != hipSuccess)
      return 1;
    nop<<<1, 64, 64 << 10>>>();
    if (hipDeviceSynchronize() != hipSuccess) return 1;
    std::printf("bad_args ok: PASS\n");
    return 0;
  }
  std::printf("bad_args: unknown mode %s\n", m);
  return 2;
}
