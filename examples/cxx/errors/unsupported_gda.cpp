// A cco feature emud does not emulate names itself at run time:
// ccoDevCommCreate asking for GDA queue pairs (ccoGda, scale-out) fails
// with a message naming gdaConnectionType, and the program's status check
// ends it.
#include "../common.hpp"

using namespace mori::cco;

int main() {
  ccoUniqueId id;
  CCO_CHECK(ccoGetUniqueId(&id));
  HIP_CHECK(hipSetDevice(0));
  ccoComm* comm = nullptr;
  CCO_CHECK(ccoCommCreate(id, 1, 0, 0, &comm));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.gdaConnectionType = CCO_GDA_CONNECTION_FULL;
  ccoDevComm dc;
  CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));
  std::printf("unsupported_gda: created (FAIL)\n");
  return 1;
}
