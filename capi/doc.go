// Command capi is emud's C ABI: built with `go build -buildmode=c-archive
// ./capi` (emud c++ does it) and linked into a HIP C++ program whose
// hip/hip_runtime.h and mori/cco/cco.hpp are emud's headers (include/).
// It is optional, as hw/rocm is: nothing else in the module imports it,
// and users of Go kernels never need a C or C++ toolchain for it.
//
// # The program and its ranks
//
// The first HIP or cco call builds one emulated MI355X node of EMUD_GPUS
// GPUs (8) on seed EMUD_SEED (1), perturbation EMUD_PERTURB (exact), with
// the race detector when EMUD_RACE is set, and MORI_* read as a MORI
// program reads them (MORI_ENABLE_SDMA defaults to 1). The main thread is
// the first host thread; every thread a host thread starts (std::thread,
// pthread_create, both interposed) is another, so ranks are host threads
// of one process, each calling hipSetDevice and ccoCommCreate with one
// shared unique id, as MORI's in-process multi-GPU tests do. Each host
// thread is a sim actor: its calls run on the actor, and its code between
// two calls runs while the actor runs, so host threads take turns the
// simulator chooses and host code takes no virtual time. The same seed
// therefore gives the same run and digest. A job of several processes is
// not emulated: each process would build its own node and its
// ccoCommCreate would wait for ranks that never come (a hang report
// naming them).
//
// # Device memory
//
// Memory is engine.Memory backed by mappings at the device addresses:
// every region (hipMalloc, ccoMemAlloc, signal pools) is mapped at its own
// device address, GPU g's slice at DefaultBase + g·64 GiB (EMUD_BASE moves
// it), so lanes and the host dereference the pointers the API returns and
// the engines' copies move the same bytes. The range of 64 slices is
// reserved (inaccessible, unbacked) by a constructor that runs before the
// Go runtime, whose randomized heap could otherwise land in a slice. hipMemcpy/hipMemset are ordered after the stream's
// (null stream: the device's) kernels and done by the host thread; the
// Async forms are ordered the same way and are not yet concurrent with
// the host (partial). Memory is never freed (hipFree, ccoMemFree keep the
// mapping until exit).
//
// # Lanes
//
// Every thread of a launched grid is a lane of package kernel whose body
// is the C++ kernel, run as a coroutine on its own 256 KiB stack
// (ucontext): the Go side resumes it, and it runs natively until its next
// device call, which yields back with its arguments. Every ccoSdma call
// runs package cco's implementation, so grouping, signals, debug traps,
// hang causes and timing are those of a Go kernel. __syncthreads,
// __syncwarp, __ballot/__any/__all, __activemask and __shfl* are the
// kernel package's collectives. Atomics (atomicAdd/CAS/Exch/…,
// __hip_atomic_*, GCC's __atomic_*_n in lane code) are done natively (one
// lane runs at a time, engines run only while lanes are parked) and then
// reported, waking waiters on the word; an atomic load that reads the
// same value from the same word twice in a row is a spin, and the lane
// then waits, as a subscription, for a write to the word after a 100 ns
// poll, so spin loops advance virtual time and a flag that is never set
// is a reported hang. clock64 counts 2.4 GHz cycles and wall_clock64 a
// 100 MHz clock of virtual time. A lane's SIGSEGV/SIGBUS, __builtin_trap,
// abort (assert) or SIGFPE fails the lane (kernel.LaneError) naming the
// address: a host pointer or an unmapped device address in GPU g's slice.
//
// # Program order
//
// A lane's convergence point is the file:line of its device call
// (__builtin_FILE/LINE/FUNCTION default arguments) and the loops of the
// source that enclose that line (package cxx reads them), so lanes group
// and reconverge by program order whatever the C++ compiler's code layout
// or -O level. Limits, beyond package kernel's: a point is one frame (the
// line of the call in the function that makes it): a helper called from
// two places of a kernel is one point; two calls on one line are one
// point; a lane that spins on a plain (non-atomic) load never yields, and
// such a loop freezes the process instead of being reported.
//
// # Failure
//
// A hang prints the sim's report (lanes named by kernel, block, wave and
// the file:line of the blocked call) to stderr and exits 2; a lane
// failure exits 1 and a race (EMUD_RACE) exits 5, as emud run does. A
// failed host call prints the call, the thread and why to stderr and
// returns its error code. EMUD_SUMMARY=1 prints the seed, the emulated
// end time and the digest at exit.
package main
