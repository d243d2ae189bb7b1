// Correct lane code that reads an atomic word twice in a row and gets the
// same value, with no write to come: emud takes two equal reads as a
// poll, and must not then report a hang that no GPU would have.
//   read_twice wait_then_read  lane 1 waits for lane 0's flag, then reads
//                              the flag again to use it
//   read_twice read_twice      every lane reads a word the host set before
//                              the launch twice (a check, then a use)
//   read_twice poll            block 1 polls a flag block 0 sets after a
//                              while: a real poll, ended by the write
//   read_twice stuck           planted: lane 1 polls a flag nobody sets; a
//                              hang naming the spin (exit 2)
// Each correct mode checks what the lanes read and prints PASS.
#include <cstdio>
#include <cstring>

#include <hip/hip_runtime.h>

static int load(int* p) { return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT); }

__global__ void waitThenRead(int* flag, int* out) {
  if (threadIdx.x == 0) {
    __hip_atomic_store(flag, 7, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    return;
  }
  while (load(flag) == 0) {
  }
  out[threadIdx.x] = load(flag);  // the same value again: not a poll
}

__global__ void readTwice(int* word, int* out) {
  int first = load(word);
  int second = load(word);
  out[threadIdx.x] = first == second ? second : -1;
}

__global__ void poll(int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    long long start = clock64();
    while (clock64() - start < 2000) {
    }
    __hip_atomic_store(flag, 7, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    return;
  }
  while (load(flag) == 0) {
  }
  out[0] = load(flag);
}

__global__ void stuck(int* flag, int* out) {
  if (threadIdx.x != 1) return;
  while (load(flag) == 0) {  // nobody ever sets it
  }
  out[1] = 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "wait_then_read";
  int *word, *out;
  hipMalloc(&word, sizeof(int));
  hipMalloc(&out, 64 * sizeof(int));
  hipMemset(word, 0, sizeof(int));
  hipMemset(out, 0, 64 * sizeof(int));
  int want[64] = {};
  int lanes = 2;
  if (!strcmp(mode, "wait_then_read")) {
    waitThenRead<<<1, 2>>>(word, out);
    want[1] = 7;
  } else if (!strcmp(mode, "read_twice")) {
    int v = 5;
    hipMemcpy(word, &v, sizeof v, hipMemcpyHostToDevice);
    lanes = 64;
    readTwice<<<1, 64>>>(word, out);
    for (int i = 0; i < 64; i++) want[i] = 5;
  } else if (!strcmp(mode, "poll")) {
    poll<<<2, 1>>>(word, out);
    want[0] = 7;
  } else if (!strcmp(mode, "stuck")) {
    stuck<<<1, 2>>>(word, out);
  } else {
    fprintf(stderr, "read_twice: unknown mode %s\n", mode);
    return 64;
  }
  hipDeviceSynchronize();
  int got[64];
  hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < lanes; i++) bad += got[i] != want[i];
  printf("read_twice %s: %s\n", mode, bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
