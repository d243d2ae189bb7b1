// Interprocess memory handles (hipIpcGetMemHandle, hipIpcOpenMemHandle,
// hipIpcCloseMemHandle) with ranks as host threads: each rank allocates a
// buffer of one slot per rank, publishes its handle, opens its peers'
// handles and has a kernel write its slot in every peer's buffer, then
// checks its own buffer once all ranks are past a barrier. The pattern of
// a custom all-reduce's peer buffers (in a process per rank, the handles
// would travel by MPI_Allgather: examples/cxx/procs/mpi_ipc.cpp).
//
// Modes (argv[1]):
//   (none)    the exchange; PASS, race-clean under EMUD_RACE=1;
//   interior  the handles are made from a pointer 256 B into each buffer:
//             an opened pointer is the exporter's pointer itself (HIP's
//             base plus offset);
//   racy      no barrier between the kernels and the check: a rank reads
//             its buffer while peers may still write it (a race);
//   errors    one thread, every refusal: a host pointer, bad flags, a
//             zeroed or altered handle, the handle of a freed (and
//             reused) block, a close of a pointer not opened or closed
//             too often; each prints its code.
#include <pthread.h>

#include <cstdio>
#include <cstring>

#include <hip/hip_runtime.h>

constexpr int kRanks = 4, kWords = 64;
constexpr size_t kOffset = 256;

static int failures = 0;
#define EXPECT(cond)                                                       \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::printf("ipc: %s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                  \
    }                                                                      \
  } while (0)
#define OK(x) EXPECT((x) == hipSuccess)

struct Peers {
  unsigned* p[kRanks];
};

static unsigned pattern(int from, int i) { return 0x1000u * (from + 1) + i; }

// put writes rank me's slot in every peer's buffer.
__global__ void put(Peers peers, int me) {
  for (int p = 0; p < kRanks; p++)
    if (p != me) peers.p[p][me * kWords + threadIdx.x] = pattern(me, threadIdx.x);
}

static pthread_barrier_t barrier;
static hipIpcMemHandle_t handles[kRanks];
static unsigned* exported[kRanks];
static bool interior = false, racy = false;

static void* rank(void* arg) {
  const int me = (int)(intptr_t)arg;
  OK(hipSetDevice(me));
  const size_t bytes = kRanks * kWords * sizeof(unsigned) + kOffset;
  char* buf = nullptr;
  OK(hipMalloc(&buf, bytes));
  OK(hipMemset(buf, 0, bytes));
  unsigned* mine = (unsigned*)(buf + (interior ? kOffset : 0));
  exported[me] = mine;
  OK(hipIpcGetMemHandle(&handles[me], mine));
  pthread_barrier_wait(&barrier);
  Peers peers{};
  for (int p = 0; p < kRanks; p++) {
    if (p == me) continue;
    void* q = nullptr;
    OK(hipIpcOpenMemHandle(&q, handles[p], hipIpcMemLazyEnablePeerAccess));
    EXPECT(q == exported[p]);
    peers.p[p] = (unsigned*)q;
  }
  put<<<1, kWords>>>(peers, me);
  OK(hipDeviceSynchronize());
  if (!racy) pthread_barrier_wait(&barrier);
  unsigned got[kRanks * kWords];
  OK(hipMemcpy(got, mine, sizeof got, hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int p = 0; p < kRanks; p++)
    for (int i = 0; i < kWords; i++) wrong += got[p * kWords + i] != (p == me ? 0u : pattern(p, i));
  if (!racy) EXPECT(wrong == 0);
  for (int p = 0; p < kRanks; p++)
    if (p != me) OK(hipIpcCloseMemHandle(peers.p[p]));
  pthread_barrier_wait(&barrier);  // every importer closed before the exporter frees
  OK(hipFree(buf));
  return nullptr;
}

static void errors() {
  OK(hipSetDevice(0));
  hipIpcMemHandle_t h;
  unsigned host[4];
  hipError_t e = hipIpcGetMemHandle(&h, host);
  std::printf("ipc errors: host pointer: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidDevicePointer);
  void* a = nullptr;
  OK(hipMalloc(&a, 4096));
  OK(hipIpcGetMemHandle(&h, a));
  void* q = nullptr;
  e = hipIpcOpenMemHandle(&q, h, 0);
  std::printf("ipc errors: flags 0: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidValue);
  hipIpcMemHandle_t zero;
  std::memset(&zero, 0, sizeof zero);
  e = hipIpcOpenMemHandle(&q, zero, hipIpcMemLazyEnablePeerAccess);
  std::printf("ipc errors: zeroed handle: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidHandle);
  hipIpcMemHandle_t altered = h;
  altered.reserved[20] ^= 1;
  e = hipIpcOpenMemHandle(&q, altered, hipIpcMemLazyEnablePeerAccess);
  std::printf("ipc errors: altered handle: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidHandle);
  // Opened twice, closed twice; a third close is one too many.
  void *q1 = nullptr, *q2 = nullptr;
  OK(hipIpcOpenMemHandle(&q1, h, hipIpcMemLazyEnablePeerAccess));
  OK(hipIpcOpenMemHandle(&q2, h, hipIpcMemLazyEnablePeerAccess));
  EXPECT(q1 == a && q2 == a);
  OK(hipIpcCloseMemHandle(q1));
  OK(hipIpcCloseMemHandle(q2));
  e = hipIpcCloseMemHandle(q1);
  std::printf("ipc errors: closed too often: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidHandle);
  e = hipIpcCloseMemHandle(host);
  std::printf("ipc errors: close of a pointer not opened: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidHandle);
  // The block is freed, then handed out again at the same address: the
  // old handle names the freed allocation, not the new one.
  OK(hipFree(a));
  e = hipIpcOpenMemHandle(&q, h, hipIpcMemLazyEnablePeerAccess);
  std::printf("ipc errors: freed: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidHandle);
  void* b = nullptr;
  OK(hipMalloc(&b, 4096));
  EXPECT(b == a);
  e = hipIpcOpenMemHandle(&q, h, hipIpcMemLazyEnablePeerAccess);
  std::printf("ipc errors: freed and reused: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidHandle);
  OK(hipIpcGetMemHandle(&h, b));
  OK(hipIpcOpenMemHandle(&q, h, hipIpcMemLazyEnablePeerAccess));
  EXPECT(q == b);
  OK(hipIpcCloseMemHandle(q));
  OK(hipFree(b));
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!std::strcmp(mode, "errors")) {
    errors();
  } else {
    interior = !std::strcmp(mode, "interior");
    racy = !std::strcmp(mode, "racy");
    pthread_barrier_init(&barrier, nullptr, kRanks);
    pthread_t t[kRanks];
    for (int r = 0; r < kRanks; r++) pthread_create(&t[r], nullptr, rank, (void*)(intptr_t)r);
    for (int r = 0; r < kRanks; r++) pthread_join(t[r], nullptr);
    pthread_barrier_destroy(&barrier);
  }
  if (failures) {
    std::printf("ipc: FAIL (%d)\n", failures);
    return 1;
  }
  std::printf("ipc: PASS\n");
  return 0;
}
