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
// set before its start unless the environment sets it) of EMUD_GPUS GPUs
// (8, the node's count; more is refused naming it) on seed EMUD_SEED (1),
// perturbation
// EMUD_PERTURB (exact), with
// the race detector when EMUD_RACE is set, and MORI_* read as a MORI
// program reads them (MORI_ENABLE_SDMA defaults to 1). The main thread is
// the first host thread; every thread a host thread starts (std::thread,
// pthread_create, both interposed) is another, so ranks are host threads
// of one process, each calling hipSetDevice and ccoCommCreate with one
// shared unique id, as MORI's in-process multi-GPU tests do. Threads the
// main thread started before the first HIP or cco call are host threads
// too: the emulation adopts those still running when it starts, in the
// order they were made, and each takes its first turn at its first call
// (a pthread_join of one by the main thread starts the emulation, so the
// join waits in virtual time; examples/cxx/errors/early_threads.cpp).
// Partial: one that never calls in and ends is adopted or not depending
// on whether it ended before the first call, and a thread started before
// the first call by another such thread is not known to emud.
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
// forked process (MORI's fork-per-GPU test harness), forked before or
// after the first HIP call, has none: the Go runtime starts when the
// program loads, and of its threads only the forking one survives, so
// the child's first HIP or cco call says so and exits 1 instead of
// hanging (examples/cxx/errors/fork_rank.cpp).
//
// # Queues
//
// Each comm owns its SDMA queues, as MORI's cco did before its anvil
// shared them (ROCm/mori#513): ccoDevCommCreate creates every queue
// toward every LSA peer (cco.DevCommRequirements.PerCommQueues and
// ConnectQueues) and ccoCommDestroy frees them (their work must be
// drained: quiet first). A comm made while another of its GPU is alive
// is warned about, as a possible leak; a creation KFD's per-engine cap
// refuses prints the error, naming the engine, the cap and the live comms
// holding its queues, and exits 1, as MORI's anvil exits when
// hsaKmtCreateQueue fails (examples/cxx/errors/queue_leak.cpp). Today's
// MORI shares one set of queues per GPU pair among all comms (its connect
// only adds the shortfall), so there a forgotten ccoCommDestroy costs no
// queues; emud keeps ownership, the stricter discipline, so the leak
// shows. Every warning package cco records (Host.Warnings: the
// sdmaQueueCount clamp, an ignored count, a possible leak, SDMA off) is
// printed on stderr as "emud: warning: ..." when it is issued. An
// out-of-range queueId does nothing, as in MORI's release and debug
// builds alike (cco.hpp returns before touching a queue; none of MORI's
// debug checks covers it); with MORI_CCO_SDMA_DEBUG emud says so on
// stderr once per dev comm and call site, so queue ids past a clamped
// count show (examples/cxx/errors/queue_clamp.cpp). ccoDevCommDestroy
// ends the dev comm (a kernel using it later fails naming it); its queues
// are the comm's.
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
// copies from it take the model's host path; HIP copies and memsets of
// it are seen by the race detector and read it when they land, unstaged,
// as HIP's DMA reads pinned memory (partial: a lane's native
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
// A lane's own loads and stores are native. emud c++ instruments lane
// code by default (-fsanitize=thread, with -g1's line tables; it links no
// TSan runtime; -fno-sanitize=thread turns it off): lane code calls
// ThreadSanitizer's callbacks, which lane.c implements. Each store to
// device memory, and with the race detector each load, is logged with
// its return address and, at the lane's next device call, recorded: as
// an access of its wave's detector thread, whose Site is the access's
// own file:line (read from the program's DWARF line table; "lane code
// before file:line" of the next call where the program has none, or is
// position-independent), and, for stores, as a write of the lane in the
// write history of the words hang reports watch, so a report that a
// signal slot went back to 0 names the lane and its store's line
// (examples/cxx/errors/slot_reset.cpp, put_overwrite.cpp). Atomics are
// atomic accesses that acquire and (writing) release their word, an
// over-approximation of their memory order that can hide a race but not
// invent one (examples/cxx/errors/lane_race.cpp), and name the lane and
// its call site as their writer. A program built with
// -fno-sanitize=thread and run with EMUD_RACE=1 says once on stderr that
// its lanes' accesses are not checked (its cco and HIP calls and the
// engines' accesses are). A host thread's own plain stores to device
// memory enter the write history the same way, named by the thread and
// the store's line, at its next emud call (slot_reset.cpp host). Partial:
// a plain store is announced at the lane's next device call (the host
// thread's next emud call), not at the instant it lands, and not at all
// in a program built with -fno-sanitize=thread. The cost, measured on the bench programs (user CPU
// with the instrumentation and without, at a load average near 20): the
// 8-rank all-to-all 0.05-0.07 s both; alltoall_rounds.cpp at 201 rounds
// 0.33-0.36 s and 0.30-0.37 s; packets.cpp at 200 rounds 0.28-0.33 s and
// 0.34-0.36 s: within the noise, since their lanes touch device memory
// little (the engines move the bytes); examples/cxx/lsa_barrier.cpp,
// whose lanes poll and store barrier words, 0.70-0.81 s against
// 0.61-0.73 s, some 10% more. Each instrumented access costs a
// call and a range check (a few ns), each device store a log entry too,
// so a kernel that loops over device memory in lane code pays in
// proportion; the line tables cost compile time and binary size only.
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
// # A user's own MORI header
//
// A program emud c++ compiled against a user's mori/cco/cco.hpp
// (cxx/mori.go, docs/mori-headers.md) runs that header's device code in
// the lanes: its builtins are emud/amdgcn.h's, and its host calls are
// include/emud/mori_host.cpp's, which fill the header's own structures.
// ccoDevCommCreate asks mori.go for each queue (EMUD_H_MORI_QUEUE): a
// 256 KiB ring and the rptr/wptr/doorbell/cachedWptr/committedWptr words
// in the rank's device memory, over the dev comm's engine queue. A write
// that changes the doorbell word (a lane's atomic, a plain store at the
// lane's next device call, or a fence) makes the engine read wptr and
// fetch the ring bytes rung since the last doorbell into its own ring,
// which it runs; its read-pointer write-backs land in the rptr word. The
// publish edge: a lane's plain stores into a ring are pending until its
// next fence (s_waitcnt, the AMDGCN fence); a fetch of pending bytes is,
// with the race detector on, a *MoriPublishError naming the store, the
// doorbell and the missing wait, and without it, under perturbation, a
// pending store may not have landed (the engine fetches zeros there).
// Wave barriers hold the wave, so MORI's pre-#502 commit-chain deadlock
// (lanes of one wave on one queue) is a hang naming the chain's spin and
// its lanes. Partial: the lanes of a branch are not run to its end before
// the others (below), so MORI's wave-grouped posting over several queues
// livelocks, and a lane that skips a branch can act before the ones in it.
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
// call; a failed run (hang, race, lane failure) prints the first line
// after its report. EMUD_CPUPROFILE=file writes a Go CPU profile of the emulation, from
// the first call to a clean exit (go tool pprof reads it).
//
// EMUD_TRACE=file writes the run's Chrome trace-event JSON, what emud run
// --trace writes (package trace's recorder), when the run ends, whatever
// its outcome (a hang, a race, a lane failure, a refused queue); the file
// is made at the first call, so a bad path fails the start. The recorder
// observes the node, so EMUD_SUMMARY's packet line is left out with it;
// the digest is the same with or without it. Partial: a program that
// exits leaving host threads it never joined writes no trace.
// EMUD_STRATEGY picks the schedule as emud hunt's strategies mean it:
// ties (seeded tie-breaks at exact timing, the default, also "random"),
// perturb (the same under realistic timing perturbation) or pct (PCT
// under realistic perturbation); EMUD_PERTURB, when set, overrides the
// strategy's level, and EMUD_PCT_DEPTH and EMUD_PCT_STEPS are emud run's
// --pct-depth and --pct-steps. One seed and strategy give one digest.
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
