// Host threads started before the program's first HIP call (a thread pool
// made early): each is a host thread like one started later. The main
// thread starts four threads and joins them without calling HIP itself;
// each thread, on GPU t, makes a one-rank comm of its own, copies a block
// through a loopback queue and checks it. Every run gives the same digest
// (EMUD_SUMMARY=1), whichever thread's call starts the emulation.
#include <thread>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kThreads = 4;
constexpr size_t kBytes = 8192;

__global__ void loopback(ccoDevComm dc, ccoWindow_t win) {
  ccoSdma sdma(dc);
  sdma.put<ccoCoopThread>(0, win, kBytes, win, 0, kBytes, 0);
  sdma.quiet(0);
}

int worker(int t) {
  HIP_CHECK(hipSetDevice(t));
  ccoUniqueId id;
  CCO_CHECK(ccoGetUniqueId(&id));
  ccoComm* comm = nullptr;
  CCO_CHECK(ccoCommCreate(id, 1, 0, 0, &comm));
  ccoWindow_t win = nullptr;
  void* buf = nullptr;
  CCO_CHECK(ccoWindowRegister(comm, 2 * kBytes, &win, &buf));
  std::vector<uint64_t> host(kBytes / 8);
  for (size_t i = 0; i < host.size(); i++) host[i] = pattern(t, t, i);
  HIP_CHECK(hipMemcpy(buf, host.data(), kBytes, hipMemcpyHostToDevice));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ccoDevComm dc;
  CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));
  loopback<<<1, 1>>>(dc, win);
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<uint64_t> got(kBytes / 8);
  HIP_CHECK(hipMemcpy(got.data(), (char*)buf + kBytes, kBytes, hipMemcpyDeviceToHost));
  int bad = 0;
  for (size_t i = 0; i < got.size(); i++) bad += got[i] != host[i];
  CCO_CHECK(ccoDevCommDestroy(comm, &dc));
  CCO_CHECK(ccoCommDestroy(comm));
  return bad;
}

int main() {
  int errors[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back([&errors, t] { errors[t] = worker(t); });
  for (auto& th : threads) th.join();
  int total = 0;
  for (int e : errors) total += e;
  return finish("early_threads", total);
}
