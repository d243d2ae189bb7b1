// Host functions on a stream (hipLaunchHostFunc, hipStreamAddCallback):
// a kernel fills pinned memory, a host function on the same stream sums
// it and sets a flag, and the next kernel on the stream copies the flag:
// the function saw the whole fill and the kernel saw the flag, as the
// stream orders them. A callback added after them gets the stream and
// hipSuccess. Run twice on one stream, and at two seeds with EMUD_RACE=1.
#include <cstdio>

#include <hip/hip_runtime.h>

static int failures = 0;
#define EXPECT(cond)                                                              \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::printf("host_func: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);  \
      failures++;                                                                 \
    }                                                                             \
  } while (0)
#define OK(x) EXPECT((x) == hipSuccess)

constexpr int kWords = 128;

__global__ void fill(unsigned* p, unsigned v) { p[threadIdx.x] = v + threadIdx.x; }
__global__ void copyFlag(const unsigned* flag, unsigned* out) { *out = *(const volatile unsigned*)flag; }

struct Ctx {
  unsigned* buf;
  unsigned* flag;
  unsigned long long sum = 0;
  unsigned base = 0;
  int callbacks = 0;
  hipStream_t stream = nullptr;
  hipError_t status = hipErrorUnknown;
};

static void sumAndFlag(void* p) {
  Ctx* c = static_cast<Ctx*>(p);
  c->sum = 0;
  for (int i = 0; i < kWords; i++) c->sum += c->buf[i];
  *c->flag = c->base;
}

static void callback(hipStream_t s, hipError_t status, void* p) {
  Ctx* c = static_cast<Ctx*>(p);
  c->stream = s;
  c->status = status;
  c->callbacks++;
}

int main() {
  Ctx c;
  unsigned* out = nullptr;
  OK(hipHostMalloc(&c.buf, kWords * sizeof(unsigned)));
  OK(hipHostMalloc(&c.flag, sizeof(unsigned)));
  OK(hipHostMalloc(&out, sizeof(unsigned)));
  hipStream_t s = nullptr;
  OK(hipStreamCreate(&s));
  for (unsigned round = 1; round <= 2; round++) {
    c.base = 1000 * round;
    fill<<<1, kWords, 0, s>>>(c.buf, c.base);
    OK(hipLaunchHostFunc(s, sumAndFlag, &c));
    copyFlag<<<1, 1, 0, s>>>(c.flag, out);
    OK(hipStreamAddCallback(s, callback, &c, 0));
    OK(hipStreamSynchronize(s));
    const unsigned long long want = (unsigned long long)kWords * c.base + kWords * (kWords - 1) / 2;
    EXPECT(c.sum == want);
    EXPECT(*out == c.base);
    EXPECT(c.callbacks == (int)round && c.stream == s && c.status == hipSuccess);
    std::printf("host_func round %u: sum %llu (want %llu), flag seen %u, callbacks %d\n", round, c.sum, want, *out,
                c.callbacks);
  }
  EXPECT(hipStreamAddCallback(s, callback, &c, 1) == hipErrorInvalidValue);
  (void)hipGetLastError();
  OK(hipStreamDestroy(s));
  std::printf("host_func: %s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
