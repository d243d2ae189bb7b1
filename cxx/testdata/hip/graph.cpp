// Stream capture and graphs: a stream's memset, kernel launches and
// async copy between hipStreamBeginCapture and hipStreamEndCapture are
// recorded, not run (the buffer stays as it was), and each
// hipGraphLaunch runs them on a stream, in order: three launches of the
// captured "add 1 to every word" leave 3 + the kernel's argument (given
// when captured) in every word. A synchronize of the capturing stream,
// an event recorded on it and a capture of the null stream are refused.
// "racy" launches the graph on two streams with nothing between them:
// their kernels race.
#include <cstdio>
#include <cstring>

#include <hip/hip_runtime.h>

static int failures = 0;
#define EXPECT(cond)                                                          \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::printf("graph: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);  \
      failures++;                                                             \
    }                                                                         \
  } while (0)
#define OK(x) EXPECT((x) == hipSuccess)

constexpr int kWords = 256;

__global__ void addTo(unsigned* p, unsigned v) { p[blockIdx.x * blockDim.x + threadIdx.x] += v; }

int main(int argc, char** argv) {
  const bool racy = argc > 1 && !std::strcmp(argv[1], "racy");
  unsigned *work = nullptr, *snap = nullptr;
  OK(hipMalloc(&work, kWords * sizeof(unsigned)));
  OK(hipMalloc(&snap, kWords * sizeof(unsigned)));
  OK(hipMemset(work, 0, kWords * sizeof(unsigned)));
  OK(hipMemset(snap, 0xff, kWords * sizeof(unsigned)));
  hipStream_t s = nullptr, t = nullptr;
  OK(hipStreamCreate(&s));
  OK(hipStreamCreate(&t));
  unsigned step = 1;
  OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
  OK(hipStreamIsCapturing(s, &st));
  EXPECT(st == hipStreamCaptureStatusActive);
  addTo<<<kWords / 64, 64, 0, s>>>(work, step);
  step = 100;  // the captured launch keeps the 1 it was given
  OK(hipMemcpyAsync(snap, work, kWords * sizeof(unsigned), hipMemcpyDeviceToDevice, s));
  EXPECT(hipStreamSynchronize(s) == hipErrorStreamCaptureUnsupported);
  hipEvent_t ev = nullptr;
  OK(hipEventCreate(&ev));
  EXPECT(hipEventRecord(ev, s) == hipErrorStreamCaptureUnsupported);
  EXPECT(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal) == hipErrorIllegalState);
  hipGraph_t graph = nullptr;
  OK(hipStreamEndCapture(s, &graph));
  EXPECT(hipStreamEndCapture(s, &graph) == hipErrorIllegalState);
  EXPECT(hipStreamBeginCapture(nullptr, hipStreamCaptureModeGlobal) == hipErrorStreamCaptureUnsupported);
  (void)hipGetLastError();
  OK(hipStreamIsCapturing(s, &st));
  EXPECT(st == hipStreamCaptureStatusNone);
  unsigned h[kWords];
  OK(hipMemcpy(h, snap, sizeof h, hipMemcpyDeviceToHost));
  EXPECT(h[0] == 0xffffffffu);  // captured, not run
  hipGraphExec_t exec = nullptr;
  OK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  if (racy) {
    OK(hipGraphLaunch(exec, s));
    OK(hipGraphLaunch(exec, t));  // nothing orders t's run after s's
  } else {
    for (int i = 0; i < 3; i++) OK(hipGraphLaunch(exec, s));
  }
  OK(hipDeviceSynchronize());
  OK(hipMemcpy(h, snap, sizeof h, hipMemcpyDeviceToHost));
  int wrong = 0;
  const unsigned want = racy ? 2 : 3;
  for (int i = 0; i < kWords; i++) wrong += h[i] != want;
  if (!racy) EXPECT(wrong == 0);
  std::printf("graph: %d of %d words wrong after the graph's runs\n", wrong, kWords);
  OK(hipGraphExecDestroy(exec));
  OK(hipGraphDestroy(graph));
  OK(hipEventDestroy(ev));
  OK(hipStreamDestroy(s));
  OK(hipStreamDestroy(t));
  std::printf("graph: %s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
