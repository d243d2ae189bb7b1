// ncclGetLastError's storage: NCCL declares it with C linkage (and
// programs such as nccl-tests declare it again, with a weak fallback of
// their own), so it lives here, not inline in nccl.h.
#include <stdio.h>
#include <string.h>

static __thread char last_error[512];

// emud_nccl_set_last_error keeps the calling thread's last failed NCCL
// call, in words (nccl.h's fail).
void emud_nccl_set_last_error(const char* msg) { snprintf(last_error, sizeof last_error, "%s", msg ? msg : ""); }

const char* ncclGetLastError(void* comm) {
  (void)comm;
  return last_error;
}
