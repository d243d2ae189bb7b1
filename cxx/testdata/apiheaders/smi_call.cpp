// A call of ROCm SMI's device API, which emud's rocm_smi.h does not
// declare: the build fails naming it (cxx/apiheaders_test.go).
#include <rocm_smi/rocm_smi.h>

int main() { return rsmi_init(0) == RSMI_STATUS_SUCCESS ? 0 : 1; }
