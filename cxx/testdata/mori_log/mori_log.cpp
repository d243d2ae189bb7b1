// MORI's logging macros (mori/utils/mori_log.hpp) in a program built by
// emud c++: which lines print depends on MORI_APP_LOG_LEVEL,
// MORI_GLOBAL_LOG_LEVEL and the program's own SetModuleLevel calls
// (TestExamplesMoriLog runs it under each).
#include <cstdint>
#include <string>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"
#include "mori/utils/mori_log.hpp"

static void timed() { MORI_FUNCTION_TIMER(mori::modules::CORE); }

int main() {
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess) return 1;
  MORI_APP_INFO("{} devices, warp {}", n, 64);
  MORI_APP_ERROR("fields: [{:>6}] [{:<4}] [{:08.3f}] [{:x}] [{:#X}] [{:b}] [{{}}] [{1}{0}] [{}]", "ab", 7, 3.14159,
                 255u, 255, 5, std::string("s"));
  MORI_SHMEM_WARN("int8 {} bool {} char {} {:c} missing {}", int8_t(-3), true, 'z', 65);
  timed();
  // The application module is set by its variable when MORI_APP_LOG_LEVEL
  // is: this change is refused, with a warning.
  mori::ModuleLogger::GetInstance().SetModuleLevel(mori::modules::APPLICATION, mori::ModuleLogger::Level::TRACE);
  MORI_APP_TRACE("trace after SetModuleLevel");
  MORI_CRITICAL("custom", "a module made on demand");
  std::printf("mori_log: done\n");
  return 0;
}
