// Command capi is emud's C ABI: built with `go build -buildmode=c-archive
// -tags emud_nometrics ./capi` (emud c++ does it; the tag leaves out
// engine's Prometheus metrics, which the C ABI does not serve and whose
// package initialisation would cost every program start) and linked into a HIP C++ program whose
// hip/hip_runtime.h and mori/cco/cco.hpp are emud's headers (include/).
// It is optional, as hw/rocm is: nothing else in the module imports it,
// and users of Go kernels never need a C or C++ toolchain for it.
//
// # The program and its ranks
//
// The first HIP or cco call builds one emulated MI355X node (EMUD_ARCH=gfx950
// or gfx1250: that preset's node, whose architecture also gives kernels
// their wave size; a program built with emud c++ --offload-arch has it
// set before its start unless the environment sets it) of EMUD_GPUS GPUs (8) on seed EMUD_SEED (1), perturbation
// EMUD_PERTURB (exact), with
// the race detector when EMUD_RACE is set, and MORI_* read as a MORI
// program reads them (MORI_ENABLE_SDMA defaults to 1). The main thread is
// the first host thread; every thread a host thread starts (std::thread,
// pthread_create, both interposed) is another, so ranks are host threads
// of one process, each calling hipSetDevice and ccoCommCreate with one
// shared unique id, as MORI's in-process multi-GPU tests do.
// ccoCommCreate, ccoWindowRegister, ccoDevCommCreate and ccoBarrierAll
// are collective: each returns when every rank of the comm has made it
// (MORI exchanges keys and peer pointers in all-gathers there), so a
// kernel may use peers' windows and barrier slots right after
// ccoDevCommCreate; ranks whose collective calls are out of step fail the
// later call (examples/cxx/errors/collective_order.cpp). Each host
// thread is a sim actor whose turn the thread holds: its code between two
// calls runs in the actor's turn, and each call runs on the thread itself
// (a call that must wait in virtual time hands the turn on and waits for
// it to come back), so host threads take turns the simulator chooses,
// host code takes no virtual time, and a call that does not wait costs
// no switch between OS threads. The same seed therefore gives the same
// run and digest. A job of several processes is
// not emulated: processes started apart each build their own node, whose
// ranks wait for peers that never come (a hang report naming them); a
// process forked after the emulation started (MORI's fork-per-GPU test
// harness) has none (of the Go runtime only the forking thread survives),
// so its first HIP or cco call says so and exits 1
// (examples/cxx/errors/fork_rank.cpp).
//
// # Device memory
//
// Memory is engine.Memory backed by mappings at the device addresses:
// every region (hipMalloc, ccoMemAlloc, signal pools) is mapped at its own
// device address, GPU g's slice at DefaultBase + g·64 GiB (EMUD_BASE moves
// it), so lanes and the host dereference the pointers the API returns and
// the engines' copies move the same bytes. The range of 64 slices is
// reserved (inaccessible, unbacked) by a constructor that runs before the
// Go runtime, whose randomized heap could otherwise land in a slice.
// Regions are mapped in whole 2 MiB chunks, as transparent huge pages
// where the kernel allows them (MADV_HUGEPAGE), so fresh device memory
// costs a page fault per 2 MiB rather than per 4 KiB; the regions of a GPU
// share their chunks. So an access just past a region but inside its
// chunk does not fault (nor would it on most GPUs, whose allocators map
// large pages); one outside every chunk does. Memory is never unmapped
// (hipFree, ccoMemFree keep the mapping until exit). hipHostMalloc's
// memory is the node's host slice (lsa.Host), mapped at its host address
// like a device region, so lanes and SDMA engines reach it at the
// pointer the host uses (hipHostGetDevicePointer returns it) and engines'
// copies from it take the model's host path (partial: a lane's native
// access to it costs no time, as a lane's access to device memory does
// not); hipPointerGetAttributes tells the two kinds and an unregistered
// pointer apart, and hipMemGetInfo's free is what the current device's
// 64 GiB slice still holds (its total is the MI355X's 288 GB, as
// hipGetDeviceProperties's totalGlobalMem). ccoMemFree gives its
// slot back to the comm's ccoMemAlloc, which reuses it for an allocation
// of the same rounded size, as MORI's free list does.
//
// # Streams, copies and memsets
//
// A stream's work (kernels, hipMemcpyAsync, hipMemsetAsync) runs in
// order; the null stream waits for the device's blocking streams and they
// for it, as HIP's legacy default stream; a stream made with
// hipStreamNonBlocking is ordered by its own work only. hipMemcpy and
// hipMemset follow all of the device's work and are done by the host
// thread. The Async forms are really asynchronous: each is a sim actor of
// its stream that starts 2 µs after it is queued and lands 64 KiB at a
// time (50 GB/s to or from the host, 2 TB/s on the device; rough figures,
// not calibrated), so work on another stream sees it in flight. A host
// source is staged when the call is made, as HIP stages pageable memory.
// hipMemsetD8/D16/D32 and their async forms fill with the value's
// element pattern the same way. hipEventRecord's event is complete when
// the call returns (below), so hipEventQuery succeeds on it and
// hipStreamWaitEvent has nothing to wait for; for the race detector an
// event is a synchronisation that its record releases and a wait on it
// (hipEventSynchronize, hipEventQuery, hipStreamWaitEvent) acquires, in
// the calling host thread, so work it then queues follows the event's.
// Partial: a kernel launch makes the launching thread wait for the work
// the kernel must follow (HIP would queue it), and so does hipEventRecord
// for the stream's work. A launch itself takes no virtual time (the seed
// documents no launch latency), so hipEventElapsedTime around a kernel
// whose lanes return at once reads 0 ms, and around one that waits reads
// that wait (MORI's test_lsa_barrier prints such a figure).
//
// With the race detector (EMUD_RACE=1) the host's copies and memsets are
// accesses of their host thread or stream job, and HIP's and cco's host
// synchronisation are its edges: stream order, hipStreamSynchronize,
// hipDeviceSynchronize, kernel launch and end, ccoBarrierAll, thread
// creation and pthread_join. So a hipMemsetAsync still in flight when
// another stream's kernel has a peer's put land in the buffer is reported
// (examples/cxx/errors/memset_async.cpp).
//
// A lane's own loads and stores are native. Built with -fsanitize=thread
// (emud c++ passes it to the compiler and links no TSan runtime), lane
// code calls ThreadSanitizer's callbacks, which lane.c implements: each
// device-memory access is logged and, at the lane's next device call,
// recorded as an access of its wave's detector thread (Site: "lane code
// before file:line" of that call); atomics are atomic accesses that
// acquire and (writing) release their word, an over-approximation of
// their memory order that can hide a race but not invent one
// (examples/cxx/errors/lane_race.cpp). Without the flag the detector does
// not see them (partial: its cco calls and the engines' accesses on its
// behalf it sees either way).
//
// # Lanes
//
// Every thread of a launched grid is a lane of package kernel whose body
// is the C++ kernel, run as a coroutine on its own 256 KiB stack
// (ucontext): the Go side resumes it, and it runs natively until its next
// device call, which yields back with its arguments. Every ccoSdma call
// and ccoLsaBarrierSession call runs package cco's implementation, so
// grouping, signals, barriers, debug traps, hang causes and timing are
// those of a Go kernel. __syncthreads,
// __syncwarp, __ballot/__any/__all, __activemask and __shfl* are the
// kernel package's collectives. Atomics (atomicAdd/CAS/Exch/…,
// __hip_atomic_*, GCC's __atomic_*_n in lane code) are done natively (one
// lane runs at a time, engines run only while lanes are parked) and then
// reported, waking waiters on the word; an atomic load that reads the
// same value from the same word twice in a row is a spin, and the lane
// then waits, as a subscription, for a write to the word after a 100 ns
// poll, so spin loops advance virtual time and a flag that is never set
// is a reported hang. clock64 counts 2.4 GHz cycles and wall_clock64 a
// 100 MHz clock of virtual time; a lane that reads a clock again at the
// instant of its last read of it (a delay loop) reads it 20 ns later, so
// such a loop ends (overshooting by less than 20 ns). A lane's SIGSEGV/SIGBUS, __builtin_trap,
// abort (assert) or SIGFPE fails the lane (kernel.LaneError) naming the
// address: a host pointer or an unmapped device address in GPU g's slice
// (examples/cxx/errors/bad_pointer.cpp). Built with -fsanitize=thread, a
// lane's load or store of any host memory fails the lane with the address
// too, before it happens (the lane's stack, the program's static data, as
// a __device__ global is, and what the runtime lends the lane, its launch
// arguments and shared memory, excepted). Partial: without the flag only
// an access that faults is caught; a host pointer to memory the process
// has mapped (a live std::vector's data, say) is read or written natively
// without a report, where a GPU would fault.
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
// point. A lane that spins on a plain (non-atomic) load never yields (nor
// does a host thread that waits in its own code for another host thread):
// the spin watch (spin.go) ends such a run after EMUD_SPIN_LIMIT (10s of
// wall time) as a hang naming the thread and its last call
// (examples/cxx/errors/plain_spin.cpp).
//
// # Failure
//
// A hang prints the sim's report (lanes named by kernel, block, wave and
// the file:line of the blocked call) to stderr and exits 2; a lane
// failure exits 1 and a race (EMUD_RACE) exits 5, as emud run does. A
// failed host call prints the call, the thread and why to stderr and
// returns its error code, which hipGetLastError then returns (and clears)
// on that thread, so a failed <<<>>> launch is seen too. A HIP call emud
// does not emulate is a compile error naming it ("hipMallocManaged is not
// supported by emud (docs/hip.md lists the HIP calls emud emulates)"), a cco feature it does not emulate (GDA) a failed
// call naming it; none is a silent no-op. EMUD_SUMMARY=1 prints the seed,
// the emulated end time and the digest at exit, and on a second line the
// packets the engines retired by kind and the wall time since the first
// call. EMUD_CPUPROFILE=file writes a Go CPU profile of the emulation, from
// the first call to a clean exit (go tool pprof reads it).
//
// # Start-up costs
//
// A test program lives well under a second, so what each start costs
// counts: the library is built without engine's Prometheus metrics (tag
// emud_nometrics) and device memory is mapped as huge pages (above). The
// Go collector runs as usual (GOGC, GOMEMLIMIT): holding it off to save a
// short program its first collections made a longer one touch fresh heap
// pages instead of reusing them, and a fresh page's fault (some 15 µs in a
// virtual machine with shadow page tables) costs more than collecting it.
// The emulator's Go code runs on one P (GOMAXPROCS=1 unless the
// environment sets it): the simulation runs one actor at a time, and a
// second P only woke a thread at each handoff between actors.
package main
