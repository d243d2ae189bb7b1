// Stream capture and graphs: a stream's kernel launch and async copy
// between hipStreamBeginCapture and hipStreamEndCapture are recorded, not
// run (the copy's target stays as it was), and a second stream that
// waits for an event recorded in the capture joins it, adding its kernel
// after the copy, then the first waits for it to join back. Each
// hipGraphLaunch runs the captured work on a stream, in order: three
// launches leave 3 in the work buffer (the kernel's argument as given
// when captured) and 3 + 10 in the copy. A synchronize of the capturing
// stream, an end by the stream that joined, a second begin and a capture
// of the null stream are refused. "racy" launches the graph on two
// streams with nothing between them: their kernels race.
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
  // A fork and a join: stream t waits for an event recorded in the
  // capture, so it joins it and its kernel goes into the graph after the
  // copy; s waits for t's event to join back.
  hipEvent_t ev = nullptr, back = nullptr;
  OK(hipEventCreate(&ev));
  OK(hipEventCreate(&back));
  OK(hipEventRecord(ev, s));
  OK(hipStreamWaitEvent(t, ev, 0));
  OK(hipStreamIsCapturing(t, &st));
  EXPECT(st == hipStreamCaptureStatusActive);
  addTo<<<kWords / 64, 64, 0, t>>>(snap, 10);
  OK(hipEventRecord(back, t));
  OK(hipStreamWaitEvent(s, back, 0));
  hipGraph_t graph = nullptr;
  EXPECT(hipStreamEndCapture(t, &graph) == hipErrorIllegalState);  // s began it: s ends it
  EXPECT(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal) == hipErrorIllegalState);
  OK(hipStreamEndCapture(s, &graph));
  EXPECT(hipStreamEndCapture(s, &graph) == hipErrorIllegalState);
  EXPECT(hipStreamBeginCapture(nullptr, hipStreamCaptureModeGlobal) == hipErrorStreamCaptureUnsupported);
  (void)hipGetLastError();
  OK(hipStreamIsCapturing(s, &st));
  EXPECT(st == hipStreamCaptureStatusNone);
  OK(hipStreamIsCapturing(t, &st));
  EXPECT(st == hipStreamCaptureStatusNone);  // ended with the capture it joined
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
  const unsigned want = (racy ? 2 : 3) + 10;  // t's kernel adds 10 to the last copy
  for (int i = 0; i < kWords; i++) wrong += h[i] != want;
  if (!racy) EXPECT(wrong == 0);
  std::printf("graph: %d of %d words wrong after the graph's runs\n", wrong, kWords);
  OK(hipGraphExecDestroy(exec));
  OK(hipGraphDestroy(graph));
  OK(hipEventDestroy(ev));
  OK(hipEventDestroy(back));
  OK(hipStreamDestroy(s));
  OK(hipStreamDestroy(t));
  std::printf("graph: %s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
