// An all-reduce over IPC memory handles, ranks started by mpirun (one
// process a rank, EMUD_NODE set), with no MORI or NCCL: the shape of a
// custom all-reduce that reads its peers' buffers directly. Each rank
// allocates its input, sends its handle to every rank (MPI_Allgather),
// opens its peers' handles, fills its input, waits at MPI_Barrier until
// every rank has, and sums every rank's input into its own output with a
// kernel that reads the peers' buffers through the opened pointers; a
// second barrier keeps each input alive until every rank has read it.
//
// "planted" leaves the first barrier out: a rank's kernel may read a
// peer's input before the peer filled it. Under EMUD_RACE=1 that is a
// race between the peer's hipMemcpy and the kernel's loads, whatever
// order the run happened to give them.
//
// Build and run (as cxx's TestMPIIpc does):
//   emud c++ -O2 $(mpicxx --showme:compile) mpi_ipc.cpp -o mpi_ipc $(mpicxx --showme:link)
//   EMUD_NODE=/tmp/node.sock mpirun -np 4 -x EMUD_NODE ./mpi_ipc
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include <hip/hip_runtime.h>

constexpr int kMaxRanks = 8, kWords = 1024;

#define CHECK(x)                                                                              \
  do {                                                                                        \
    hipError_t e_ = (x);                                                                      \
    if (e_ != hipSuccess) {                                                                   \
      std::fprintf(stderr, "mpi_ipc: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 3);                                                           \
    }                                                                                         \
  } while (0)

struct Inputs {
  const unsigned* in[kMaxRanks];
};

__global__ void sum(Inputs ins, int n, unsigned* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = 0;
  for (int r = 0; r < n; r++) s += ins.in[r][i];
  out[i] = s;
}

static unsigned value(int rank, int i) { return 1000u * (rank + 1) + i; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const bool planted = argc > 1 && !std::strcmp(argv[1], "planted");
  if (n > kMaxRanks) {
    if (rank == 0) std::fprintf(stderr, "mpi_ipc: at most %d ranks\n", kMaxRanks);
    MPI_Finalize();
    return 2;
  }
  CHECK(hipSetDevice(rank));
  unsigned *in = nullptr, *out = nullptr;
  CHECK(hipMalloc(&in, kWords * sizeof(unsigned)));
  CHECK(hipMalloc(&out, kWords * sizeof(unsigned)));
  hipIpcMemHandle_t mine;
  CHECK(hipIpcGetMemHandle(&mine, in));
  std::vector<hipIpcMemHandle_t> all(n);
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  Inputs ins{};
  for (int r = 0; r < n; r++) {
    if (r == rank) {
      ins.in[r] = in;
      continue;
    }
    void* p = nullptr;
    CHECK(hipIpcOpenMemHandle(&p, all[r], hipIpcMemLazyEnablePeerAccess));
    ins.in[r] = (const unsigned*)p;
  }
  std::vector<unsigned> host(kWords);
  for (int i = 0; i < kWords; i++) host[i] = value(rank, i);
  CHECK(hipMemcpy(in, host.data(), kWords * sizeof(unsigned), hipMemcpyHostToDevice));
  if (!planted) MPI_Barrier(MPI_COMM_WORLD);  // every input is filled before any is read
  sum<<<kWords / 256, 256>>>(ins, n, out);
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(host.data(), out, kWords * sizeof(unsigned), hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < kWords; i++) {
    unsigned want = 0;
    for (int r = 0; r < n; r++) want += value(r, i);
    wrong += host[i] != want;
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has read every input
  for (int r = 0; r < n; r++)
    if (r != rank) CHECK(hipIpcCloseMemHandle((void*)ins.in[r]));
  CHECK(hipFree(in));
  CHECK(hipFree(out));
  std::printf("mpi_ipc: rank %d: %s (%d of %d words wrong)\n", rank, wrong ? "FAIL" : "PASS", wrong, kWords);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
