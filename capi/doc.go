// Command capi is emud's C ABI: built with `go build -buildmode=c-archive
// -tags emud_nometrics ./capi` (emud c++ does it; the tag leaves out
// engine's Prometheus metrics, which the C ABI does not serve and whose
// package initialisation would cost every program start) and linked into a HIP C++ program whose
// hip/hip_runtime.h and mori/cco/cco.hpp are emud's headers (include/).
// It is optional, as hw/rocm is: nothing else in the module imports it,
// and users of Go kernels never need a C or C++ toolchain for it.
//
// A CUDA program (emud's cuda_runtime.h, nccl.h and nccl_device.h;
// docs/cuda.md) runs on the same entries: its runtime calls are the HIP
// calls', its NCCL comms, windows, dev comms and LSA barriers are the
// cco calls' below, and its launches ask for warps of 32 (the launch's
// warp-size argument) whatever the architecture. Its GIN (ncclGin, GIN
// and hybrid barriers; nccl_gin.go) runs over the dev comm's SDMA queues
// as RCCL's Anvil backend does: a put is a COPY and ATOMICs at the
// signal and counter words the dev comm allocated (cco.Sdma.PutSignals).
// Its CFT calls
// (include/nccl_device/cft.h: EMUD_OP_CFT and EMUD_H_CFT) are
// nccl_cft.go's: puts, gets, reductions and pullReds are copies timed
// by package fabric's own port arithmetic (fabric.Ports on its default
// model, as its engine times its operations), landing as events of the
// run; each ncclCftSmem's completions and the CFT barriers' epochs and
// inboxes are kept there with fabric's semantics; the race detector sees
// each operation's window accesses as its GPU's fabric's (docs/cuda.md
// says what is partial: shared memory is not in its view). Its host
// collectives and point-to-point calls (ncclAllReduce ... ncclAlltoAll,
// ncclSend, ncclRecv, in ncclGroupStart/End groups) are nccl_coll.go's:
// stream jobs, one a stream a group, matched across ranks by call order
// on each communicator, whose last rank to post moves the data, a
// synchronisation of the ranks for the race detector; a call outside a
// group waits until every rank has made its own, as NCCL may; ranks that
// disagree fail the run naming both calls, and one that never calls is
// a hang naming it. An NCCL rank runs on the device current at its
// ncclCommInitRank (cco.CommCreateOn), and ncclCommSplit's rendezvous
// (split.go) gives each color's ranks a comm of their own on their
// parent ranks' GPUs; a comm whose ranks are not GPUs 0..n-1 in order
// has no windows or dev comms (partial: docs/cuda.md).
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
// main thread started before its own first HIP or cco call are host
// threads too: that call (or its pthread_join of one of them, or its
// exit) adopts those still running, in the order they were made, and each
// takes its first turn at its first call (a pthread_join of one by the
// main thread is such a call, so the join waits in virtual time;
// examples/cxx/errors/early_threads.cpp). The emulation may be built
// earlier, by an early thread's first call; that thread then waits for
// the adoption, and threads the main thread makes meanwhile are early
// threads still. So which threads are adopted, and in what order, is the
// program's doing and not the OS's timing, and every run of a seed gives
// one digest (cxx's TestSeedServerEarlyStart runs each seed twice). A
// main thread that waits in its own code for an early thread's call
// before calling in itself (a condition variable) never lets it in: the
// spin watch reports the main thread holding its first turn.
// A thread made by a shared library's own code (other than the C and C++
// libraries), such as MPI_Init's PMIx and libevent progress threads, is
// never a host thread: it runs outside the emulation, as it never calls in.
// Partial: one that never calls in and ends is adopted or not depending
// on whether it ended before the first call, and a thread started before
// the first call by another such thread is not known to emud.
// ccoCommCreate, ccoWindowRegister, ccoDevCommCreate and ccoBarrierAll
// are collective: each returns when every rank of the comm has made it
// (MORI exchanges keys and peer pointers in all-gathers there), so a
// kernel may use peers' windows and barrier slots right after
// ccoDevCommCreate; ranks whose collective calls are out of step fail the
// later call (examples/cxx/errors/collective_order.cpp). A pthread
// barrier between host threads (NCCL's example harness hands the unique
// id to its rank threads with one) waits in virtual time too
// (pbarrier.c, pbarrier.go): its wait is an emud call, a barrier some
// thread never reaches is a hang report saying how many arrived, and
// each round is a synchronisation for the race detector. Each host
// thread is a sim actor whose turn the thread holds: its code between two
// calls runs in the actor's turn, and each call runs on the thread itself
// (a call that must wait in virtual time hands the turn on and waits for
// it to come back), so host threads take turns the simulator chooses,
// host code takes no virtual time unless EMUD_HOST_GBPS gives the rate
// its memory accesses run at (hostcost.go; lane code does: # Lanes), and a call that does not wait costs
// no switch between OS threads. A call that waits does so on the
// thread's turnstile, a futex word (turn.c, sim.Turnstile): a turn
// handed from one host thread to another, or between host threads and
// the lanes' goroutines through the simulator's gate, wakes one thread
// (by Go's channels, a turn between two host threads woke two: a third
// thread handed Go's P on). The same seed therefore gives the same
// run and digest. Ranks may also be processes (below, "Ranks as
// processes"): forked by the program, or started apart by a launcher
// with EMUD_NODE set; processes started apart without it each build
// their own node, whose ranks wait for peers that never come (a hang
// report naming them).
//
// # Ranks as processes
//
// A process that forks, before or after its first HIP or cco call, runs
// its children as ranks of its own emulated node (procs.c, coord.go;
// examples/cxx/procs/fork_alltoall.cpp, MORI's fork harness in shape).
// The forking process is the coordinator: it has the simulator. A child
// has no usable Go runtime (of its threads only the forking one survives
// a fork), so it is a client in C only: fork() makes a socketpair first,
// and in the coordinator a proxy thread, made as a std::thread is (a
// host thread of the forking one), makes the child's HIP and cco calls
// on its behalf, so a rank process takes the turns a rank thread would,
// and the same seed gives the digest of the same program with its ranks
// as threads (thread_alltoall.cpp). The child's lanes run in the child:
// the coordinator's lane is a mirror whose resume puts the lane in the
// child's channel, a slot of shared memory, and waits there for its next
// device call, so the child's kernels, device calls, atomics, faults and
// (instrumented) accesses are seen as a thread's are; lanes still run
// one at a time, in the simulator's order. Device memory is shared: at
// the first fork the chunks mapped so far move into one memfd mapped
// MAP_SHARED at the same addresses, later chunks are mapped from it (a
// child maps them from a shared table at each message), and so are the
// runtime's objects that lanes read and the block shared memory of a
// child's grids. The host side of a child's call (hipMemcpy's, a unique
// id) is staged over the socket. waitpid (and wait) of a forked rank by
// a host thread waits in virtual time, as a pthread_join. A child that
// exits, is killed or crashes is named by pid, host thread and GPU, with
// its status and its last call, on stderr and in a failed run's report;
// a lane whose process is gone fails; a rank process whose coordinator
// is gone exits with the failed run's status (2 hang, 5 race, 1 failed),
// saying nothing (the report names it as still running), so a launcher
// such as mpirun sees the run's outcome whichever rank it hears of
// first, or 1, saying so, if the coordinator ended another way (killed).
// It does so at once, even while it runs its own code and never calls
// emud again (a lane or host loop the spin watch reported, naming the
// process): a thread of it watches its socket for the coordinator's end
// to close (the coordinator's ends of earlier ranks' sockets, which a
// fork copies into each later child, are closed there so that no sibling
// keeps them open). After a coordinator that exited normally, without
// waiting for its ranks, a rank goes on with its own code, and its next
// call says the coordinator is gone. Each lane of a child keeps its own
// stack bounds when resumed (the call context of MORI mode reads its
// frames there), so a child's lanes meet at the lock-step points a
// thread's would: cxx/testdata/mori/put.cpp with "fork" gives the
// threads' digest against the MORI-shaped header. A cross-process host
// call costs a round trip on the socket; a device call one on the
// channel, where each side spins on a word of shared memory before it
// sleeps on it (a futex): EMUD_FORK_SPIN_US, 50 µs by default, 0 never;
// no spin with one CPU, nor on the CPU the other side last waited on; a
// rank process spins only while the lane the coordinator resumed last is
// its own, and not for a call's reply before a lane of it ran in the
// call. A sleeping side looks every 20 ms for the other's socket hanging
// up, so a rank process that dies while its lane runs fails the lane at
// once, naming the process and how it ended. Costs, new against the
// socket's before, on 2 cores at a load of 3.6-4:
// examples/cxx/procs/handoff.cpp's device call 2.1-2.5 µs with both
// sides awake (43-49 µs; 23 µs with no spin), its host call unchanged
// (25-50 µs, load-bound); MORI's test_sdma_put 1.6 s (2.6 s) and
// test_lsa_memcheck 14 s (44 s), 8 ranks; its test_lsa_barrier cut to
// 100 rounds, 53 s to its first line (167 s): a sync of a 256-lane block
// on 8 ranks 0.27 s (0.84 s). Where the simulator's consecutive resumes
// go to one rank's lanes the channel gains most; where they alternate
// between ranks each resume wakes a sleeping process, and the cost is
// the machine's wake-up, about what the socket cost. Partial: each
// device call of a forked rank's lane is still a cross-process round
// trip (MORI's puts take about 25 each), so MORI's test_sdma_edge (8192-
// put ring wraps) and test_lsa_barrier (20,000 syncs) at full size still
// run far past 300 s on 2 cores (neither ended in 7 and 2.5 minutes); a
// forked rank has one host thread (a call from a second thread of the child exits 1 saying so); hipMemcpyAsync or
// hipMemsetAsync into the child's pageable host memory is refused
// (exits 1 naming it; its staged copy could only land after the call);
// a host copy stages at most 1 GiB per call; a child's own plain stores
// to device memory from host code are not announced to hang reports'
// write history; a rank's own fork is not a rank (its calls say
// the process is not emulated and exit 1); every fork of a host thread
// makes a rank (and starts the emulation if it had not started), so a
// child that execs another program is a rank that ends at once; wait
// and waitpid(-1) wait for the ranks in the order they were forked;
// fork flushes stdio first, so a line the parent printed is not printed
// again by the child; the staged strings and the
// program's line table assume the children run the parent's image,
// which a fork guarantees.
//
// Processes started apart (a per-rank launcher's RANK and WORLD_SIZE;
// mpirun's, PMI's and Slurm's variables too) share one node when
// EMUD_NODE names a socket path (examples/cxx/procs/env_alltoall.cpp).
// Rank 0 is the coordinator: it listens there when it loads; every other
// rank connects when it loads (for up to EMUD_NODE_TIMEOUT, 60 s) and
// says its rank, world size and program image; at rank 0's first HIP or
// cco call it takes the other world-1 ranks in and makes their proxies
// in rank order, so the run does not depend on which process started
// first (one digest on every start order), and hands each the node's
// memfds (SCM_RIGHTS), which it maps at rank 0's addresses at its first
// call. From there a rank's calls and lanes go as a forked rank's. Rank
// 0's exit waits, in virtual time, for the other ranks to end. A rank
// that exits with a status other than 0 (a failed check) ends its part
// of the run there, then waits for rank 0's process to end before it
// exits (procs.c node_on_exit), with the failed run's status if the run
// failed, else its own: a launcher that ends the job at the first rank
// to fail (mpirun) would otherwise end rank 0 before it reports the
// race or hang behind the failed check (examples/cxx/procs/mpi_ipc.cpp
// planted). Ranks share device buffers without MORI or NCCL through IPC
// memory handles (ipc.go: a handle opens to the exporter's address). A rank of
// another world size, a rank taken twice, or another program image is
// refused by name; a rank 0 that waits past the timeout names the ranks
// that never came, and a rank that finds no rank 0 says so; each exits 1.
// Partial: every rank must run the same program, not position-
// independent (emud c++'s default), whose image the coordinator's line
// table and staged strings assume; no emud node process of its own (rank
// 0 is the node). Under OpenMPI's mpirun
// (examples/cxx/procs/mpi_alltoall.cpp, built with emud c++ $(mpicxx
// --showme:compile) ... $(mpicxx --showme:link)) each rank is such a
// process; its blocking MPI calls are free sections (below).
//
// # MPI and other blocking calls
//
// A host thread holds its turn between emud calls, so a call in its own
// code that blocks until another rank makes a call (MPI_Barrier, an
// MPI_Recv whose sender has not sent) would wait for ranks that cannot
// get a turn to make theirs: a false hang. mpi.c defines MPI's blocking
// calls over the library's profiling entries (PMPI_*, weak references:
// a program that does not link MPI links and runs as before; handles are
// passed through as words, so no mpi.h is needed and MPICH's integer
// handles pass as OpenMPI's pointers do): MPI_Init, MPI_Init_thread and
// MPI_Finalize; the collectives (Barrier, Bcast, Reduce, Allreduce,
// Gather(v), Scatter(v), Allgather(v), Alltoall(v), Reduce_scatter(_block),
// Scan, Exscan); the communicators made collectively (Comm_dup,
// Comm_split, Comm_split_type, Comm_create); point to point (Send, Ssend,
// Bsend, Rsend, Recv, Sendrecv(_replace), Probe, Mprobe, Mrecv); Wait,
// Waitall, Waitany, Waitsome; the polls Test, Testall, Testany,
// Testsome, Iprobe, Improbe (a loop on them lets the others run); and
// MPI_Win_create, Win_allocate, Win_free and Win_fence. Each opens a free
// section (free.go, procs.c) when made by a thread that holds a turn:
// the thread gives its turn up and makes the real call at once, beside
// the emulation; in a rank process its proxy stops reading the socket
// and a thread of the process serves the process's lanes meanwhile (its
// kernels go on while it is in MPI). The section stays open through the
// thread's own code and further MPI calls until its next emud call (a
// HIP or cco call, a thread's start, join or end, the program's exit),
// so calls in a row (a ring's receive, then its send) need no turn
// between them. Then it waits to be let back in: its actor waits until
// the run is quiescent (every rank blocked in emud or out in such a
// call, no event pending; a quiescent point that also ends a lane's
// first spin wait, after which the lane goes on, does not count:
// examples/cxx/procs/mpi_late.cpp spin), and there, with the simulation still, the
// sections still out are waited for in wall time; when all are back
// they are let in together, in the order they began, at that virtual
// time. So where a rank comes back, and what ran before, is the run's,
// not the wall clock's: one seed, one digest (mpi_alltoall.cpp under
// mpirun -np 4, 10 runs of seed 1 and 5 of seed 5 at perturbation 1;
// mpi_harness.cpp, MORI's MPI harness in shape with a MPI_Recv/MPI_Send
// ring and MPI_Allreduce, under -np 8). For the race detector every
// section's start releases one synchronisation and every return acquires
// it, an over-approximation of MPI's edges (it can hide a race between
// ranks ordered only by MPI, never invent one). A rank's MPI calls made
// before the emulation started, or before rank 0 took it in, run as they
// are. Not covered: which calls can return without more emulation is not
// known to emud (that would need MPI's matching rules), so a quiescent
// point where some sections are back and others are still out
// EMUD_FREE_GRACE (2 s) after the first came back lets the returned ones
// go on without the others, taken to wait for a returned rank's next
// step (a receive posted before its sender's emud work), and says on
// stderr, once, that the run's order from there depends on wall time; a
// call slower than the grace makes that happen where it need not.
// Sections none of which comes back for EMUD_SPIN_LIMIT are a hang
// report naming each call (MPI calls that do not match, a rank that
// waits in emud for what another does after its MPI call). While the
// run does not become quiescent (a lane that polls a clock until a
// timeout of its own) no section is let back in, so a lane waiting that
// way for what a rank's host does after its MPI call waits out its
// timeout, where hardware would not. Host code in an open
// section runs outside the turns: its plain stores to device memory are
// made when it runs, not in a turn (a full store log closes the section
// first), and MPI reading or writing device memory (a GPU-aware MPI
// handed a device pointer) does so beside the lanes. A blocking call of
// another library that waits for other ranks (a socket read, a
// shared-memory barrier of its own) is not a free section: it holds the
// turn, and the spin watch ends the run after EMUD_SPIN_LIMIT naming
// the thread.
//
// # Mutexes and condition variables
//
// A host thread's pthread mutexes and condition variables (std::mutex and
// std::condition_variable are built on them) wait in virtual time, as
// its pthread barriers do (pmutex.c, pmutex.go): natively, a thread
// waiting on a condition variable held its turn, so the thread that was
// to notify it never ran (rank 0 making the unique id and notifying the
// others), and a thread locking a mutex that another host thread held
// across an emud call that waits (a launch and its synchronize inside a
// lock_guard) held it while the owner waited for it: both were spin
// hangs of correct programs. Once the emulation is built and until its
// end of run (exit handlers and static destructors after it are native),
// for a host thread in its turn (not in a lane, an emud call or a free
// section, and not a rank process, whose one host thread waits natively
// as before):
// pthread_mutex_lock takes a free mutex at once; one that another host
// thread owns (glibc's owner field: its thread id) is waited for until an
// unlock, then taken again, while an owner emud does not run (a
// library's thread, a host thread in an MPI call's free section, the
// thread itself) is waited for natively. pthread_cond_wait,
// pthread_cond_timedwait and pthread_cond_clockwait unlock the mutex,
// wait for a signal or broadcast of the condition and lock the mutex
// again; a signal wakes every waiter (a spurious wake-up, which POSIX
// allows: a program loops on its predicate), and both signal natively
// too. A timed wait waits at most its time left, rounded up to a whole
// millisecond (so a seed gives one digest), as virtual time; once that
// passes, it waits natively, holding its turn, for what is left of its
// deadline in wall time, since the C++ library reads the clock again to
// tell a timeout (cxx/testdata/pthread/sync.cpp timeout: a wait_for of
// 50 ms ends at 50 ms of virtual time). Under the race detector each
// unlock and each signal releases a synchronisation of the object that
// each lock and each return from a wait acquires (the unique id handed
// over with a buffer that rank 0 filled: race-clean); those calls are no
// steps of a loop for the call watch, and a loop of a lock, an inert call
// and an unlock for a flag nobody sets is a poll (below), the watchdog's
// hang naming its line (sync.cpp lockloop). Host threads that
// lock two mutexes in opposite orders are a deadlock report naming each
// wait and the mutex's owner. emud's own C code locks its mutexes with
// the C library's calls (lane.h). Partial: a wait whose unlock or signal
// comes from a thread emud does not run, or from a free section, is
// never woken in virtual time (a hang report); only glibc's mutexes are
// told by owner (another C library's are locked natively); at most 256
// objects are waited on at once (a wait on another one is native).
//
// The C++ library's own futex waits (std::future and std::promise,
// std::atomic::wait and notify, std::latch, std::barrier,
// std::counting_semaphore: syscall(SYS_futex, ...), interposed in
// pmutex.c) are waits of the same kind: a host thread's FUTEX_WAIT whose
// word still holds its value waits in virtual time for another host
// thread's FUTEX_WAKE of the word (every waiter wakes; futex users
// re-check) or for its timeout (sync.cpp promise and latch); every other
// syscall is the C library's. For the race detector a host thread's
// atomic and volatile accesses are its synchronisation too, as a lane's
// are: the words its instrumented code loaded since its last emud call
// are acquired at that call and those it stored or updated released
// (lane.c host_atomic, host.go flushAtomics), on the synchronisation of
// the word that lanes' atomics use; so a std::promise, a std::atomic
// flag or a volatile word between host threads, or a lane's atomic store
// to pinned memory that a host thread polls, orders what each does
// around it (sync.cpp promise: race-clean; its twin racy, with nothing
// between the threads: a race). A release taken at the next call orders
// what the thread did up to that call: an over-approximation that can
// hide a race, never invent one. Partial: a rank process's host atomics
// are not seen (its calls run on its proxy thread).
//
// Semaphores, read-write locks, spin locks and once calls (psync.c) wait
// in virtual time the same way; glibc waits for them on futexes of its
// own, not through syscall(), so each was a spin hang of a correct
// program (cxx/testdata/pthread/locks.cpp). For a host thread in its
// turn: sem_wait, sem_timedwait and sem_clockwait take the semaphore if
// its count is above zero, and otherwise wait for another host thread's
// sem_post and try again; pthread_rwlock_rdlock and _wrlock (and their
// timed and clock forms: std::shared_mutex, std::shared_timed_mutex) try
// the lock and wait for an unlock; a timed one waits at most its time
// left, as a condition variable's; a semaphore nobody posts is a
// deadlock report naming each sem_wait. pthread_spin_lock, and
// pthread_once (std::call_once) whose initialiser another host thread is
// running, retry each µs of virtual time (a lock never unlocked is the
// watchdog's hang naming the retries). For the race detector a post, an
// unlock and the end of a once's initialiser release what a wait's or
// lock's return and a once's return acquire (a std::call_once that
// publishes a buffer: race-clean; locks.cpp sem_racy, the readers not
// waiting: a race). Partial: a post or unlock by a thread emud does not
// run never wakes a virtual-time waiter; a process-shared semaphore
// between rank processes is glibc's.
//
// Threads the main thread starts before its first call (above) run
// natively until adopted, so a wait of theirs (a condition variable, a
// mutex, a semaphore, a read-write or spin lock, a futex, a once) may
// begin before the
// adoption and would then hold the turn the adoption gives the thread
// while the thread it waits for waits for one (every handover of
// locks.cpp was a spin hang so). Such a thread waits natively in slices
// of a millisecond (lane.c emud_early_unattached; a condition wait on a
// mutex of its own, so that glibc never takes the program's mutex back
// unsliced, and the slice's end a spurious wake-up), and at a slice's
// end, once adopted, calls in with the program's mutex let go
// (emud_early_attach), its later waits in virtual time (locks.cpp's
// modes with "early", TestPthreadLocks). Partial: an early thread's
// pthread barrier is glibc's (its other threads may have entered it
// natively before the emulation was built: a barrier split between
// native and virtual waits never completes), so a barrier some early
// threads reach after the adoption and others before it hangs, as any
// other native wait (a pipe's read) does.
//
// # Sleeps, yields and polls
//
// A host thread's sleeps, yields and polls in its own code pass in
// virtual time (psleep.c, psleep.go), for a host thread in its turn as
// above and for a rank process's host thread after its first call
// (through its proxy, so ranks as processes give the threads' digest:
// cxx/testdata/pthread/sleep_ranks.cpp): nanosleep, clock_nanosleep, usleep and sleep
// (std::this_thread::sleep_for) sleep their time as virtual time and
// return at once (an absolute clock_nanosleep sleeps its time left,
// rounded up to a whole millisecond, then what is left of its deadline
// natively); sched_yield (std::this_thread::yield) sleeps 1 µs; and a
// loop of a host thread's atomic operations and locks that sees and
// leaves the same values each time is a poll that sleeps 1 µs every 64
// of them, then goes on. emud c++ instruments host code as lane code:
// lane.c notes each atomic or volatile load, store and read-modify-write
// (emud_host_op), pmutex.c and psync.c each lock taken and let go, and
// psleep.c keeps the thread's last 8 as keys of address, site and values;
// 64 in a row that each repeat the one 1 to 8 before them are the poll.
// The sleep never comes right after an operation that may have taken a
// lock (a lock, a read-modify-write that changed its word), but at the
// next one, with the lock let go, so the threads it lets run can take it.
// So a host thread that waits for another with sleep_for(1ms) between
// reads of an atomic flag, with yields, spinning on an atomic or volatile
// flag (a word of hipHostMalloc memory a kernel sets included), on a
// test-and-set lock of its own, a try_lock loop, or a lock taken to read
// a flag and let go, lets the others run, where it held its turn until
// the spin watch's report before (cxx/testdata/pthread/poll.cpp,
// locks.cpp); a flag nobody sets is the watchdog's hang, naming the poll
// and its line (the program's statement: where the site is code inlined
// from a header, the innermost inlined call made from the program's own
// file, from the DWARF entries). Partial: a host loop on a plain load, or
// one built with -fno-sanitize=thread, is still the spin hang (the
// compiler may keep a plain load's value in a register, so natively it
// may never end either); a loop whose values change (a counter) is no
// poll, however long; a program whose host code repeats such a cycle 64
// times for another reason (a lock taken and let go in a loop of work)
// pauses 1 µs of virtual time there. emud's own C code sleeps natively
// (lane.h).
//
// # The KFD view
//
// Launchers find GPUs in KFD's sysfs topology: MORI's test harness counts
// the nodes under /sys/class/kfd/kfd/topology/nodes whose gpu_id is not
// 0. A program built with emud c++ sees the emulated node there
// (sysfs.c): node 0 the host, nodes 1..EMUD_GPUS the GPUs, each with
// gpu_id, name, properties (the preset's SDMA engine counts, wave size,
// gfx_target_version, MI355X's CU and LDS figures) and io_links (a PCIe
// link to the host, an xGMI link to each other GPU whose
// recommended_sdma_engine_id_mask is model.Engines.Mask's). The tree is
// written once, in C (a forked child sees it too), into
// $TMPDIR/emud-kfd-v1-u<uid>-<arch>-<gpus> on the first access to a path
// under /sys/class/kfd or /sys/devices/virtual/kfd, published by a rename
// and kept for later runs; open, fopen, opendir, stat, access and their
// variants are interposed to read it instead. Nothing on the machine
// changes, and programs not built with emud c++ see the machine's own
// (examples/cxx/procs/kfd_topology.cpp). Partial: glibc's own internal
// path calls (scandir, ftw, a program's raw syscalls) are not redirected.
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
// hipMalloc allocates from the upper half of a slice, ccoMemAlloc and
// emud's own regions from the lower: on MORI ccoMemAlloc's slots come from
// the comm's own VMM heap, so a hipMalloc never moves them and ranks that
// hipMalloc differently still register windows at one slot offset
// (examples/cxx/hipmalloc_first.cpp).
// Regions are mapped in whole 2 MiB chunks, as transparent huge pages
// where the kernel allows them (MADV_HUGEPAGE), so fresh device memory
// costs a page fault per 2 MiB rather than per 4 KiB; the regions of a GPU
// share their chunks. So an access just past a region but inside its
// chunk does not fault (nor would it on most GPUs, whose allocators map
// large pages); one outside every chunk does. Memory is never unmapped:
// hipFree first waits for the current device's work (HIP's implicit
// hipDeviceSynchronize), then keeps the block for a later hipMalloc of the
// same rounded size and no more bytes (the newest such block first), and
// hipMemGetInfo counts it free meanwhile; ccoMemFree keeps the slot for
// the comm's next ccoMemAlloc of its size (below); a block that is never
// reused stays mapped until exit (a hipFree of a pointer
// hipMalloc did not return, or freed already, is hipErrorInvalidValue, and
// so are hipMalloc(nullptr), a hipMemset of pageable host memory and a
// launch asking for more dynamic shared memory than a block's 160 KiB
// LDS; cco.hpp refuses a null out-pointer before the call does anything;
// EMUD_RACE and MORI_ENABLE_SDMA must read as on or off). hipHostMalloc's
// memory is the node's host slice (lsa.Host), mapped at its host address
// like a device region, so lanes and SDMA engines reach it at the
// pointer the host uses (hipHostGetDevicePointer returns it) and engines'
// copies from it take the model's host path; HIP copies and memsets of
// it are seen by the race detector and read it when they land, unstaged,
// as HIP's DMA reads pinned memory (partial: a lane's native
// access to it costs no time, as a lane's access to device memory does
// not); hipPointerGetAttributes tells the two kinds and an unregistered
// pointer apart, and hipMemGetInfo's free is what the current device's
// 64 GiB slice still holds, hipFree'd blocks counted free (its total is
// the MI355X's 288 GB, as
// hipGetDeviceProperties's totalGlobalMem). ccoMemFree gives its
// slot back to the comm's ccoMemAlloc, which reuses it for an allocation
// of the same rounded size, as MORI's free list does.
//
// # Memory bound
//
// A program's peak RSS stays within 1.2x its emulated memory (the device
// and pinned host memory it allocated, in 2 MiB chunks, never unmapped)
// plus 64 MiB, whatever number of launches it makes (cxx
// TestProbesRSSBound: bad pointers, a huge grid, endless call loops, 1000
// launches, 300 launches under EMUD_RACE=1, 256 MiB allocated; each peaks
// at 9-34 MiB besides its allocation, 2 GiB allocated at 1.02x). A
// finished wave leaves the simulator (sim: finished actors leave its list)
// and its race-detector slot goes to a later wave ordered after it (race:
// retire.go), so neither grows with the launches. What the constant does
// not cover: the lanes alive at once (10-50 KiB each with their stacks'
// pages, coroutines and records; at most EMUD_RESIDENT_LANES and a block
// a GPU, # Lanes), and under EMUD_RACE=1 the shadow of every byte
// accessed (a few words per access range, partial: not in the budget).
//
// # Streams, copies and memsets
//
// A stream's work (kernels, hipMemcpyAsync, hipMemsetAsync) runs in
// order; the null stream waits for the device's blocking streams and they
// for it, as HIP's legacy default stream (hipStreamLegacy names it); a
// stream made with hipStreamNonBlocking is ordered by its own work only;
// hipStreamPerThread is each host thread's own blocking stream, made on
// first use (streams.go). hipMemcpy and
// hipMemset follow all of the device's work and are done by the host
// thread. The Async forms are really asynchronous: each is a sim actor of
// its stream that starts 2 µs after it is queued and lands 64 KiB at a
// time (50 GB/s to or from the host, 2 TB/s on the device; rough figures,
// not calibrated), so work on another stream sees it in flight. A host
// source is staged when the call is made, as HIP stages pageable memory.
// hipMemsetD8/D16/D32 and their async forms fill with the value's
// element pattern the same way. hipEventRecord queues a marker after the
// stream's work (and what that work follows) and returns at once: an
// actor of its own (calls.go recordEvent) waits for the work, then
// completes the event at that virtual time. hipEventSynchronize waits for
// it; hipEventQuery succeeds once it is complete and, before, answers
// hipErrorNotReady after 1 µs of virtual time, as hipStreamQuery does for
// a busy stream, so a loop of queries is a poll the work advances under;
// hipStreamWaitEvent makes the stream's later work, and its synchronize,
// follow the marker. For the race detector the marker's completion
// acquires the work's ends and the recording thread's clock and releases
// them to whatever waits for the event; a thread that only records is
// ordered after nothing, so a stream that should have waited for another
// stream's event and did not races with its work
// (cxx/testdata/hip/more_calls.cpp nowait). A stream's synchronize also
// waits for the events recorded on it since the last one, so an event
// recorded before it is complete after it. A kernel launch behind work
// that is not done (the stream's, the events it waits for) is queued as
// HIP queues it: an actor of its own (lanes.go queueLaunch), ordered
// after what the launching thread did before the launch, waits for that
// work and then starts the grid, while the thread goes on; before, the
// thread waited at the launch, and a host that launches behind a stream
// wait for its own later store (hipStreamWaitValue32, a kernel polling a
// flag the host sets next) hung (cxx/testdata/hip/stream_mem.cpp). A
// launch behind work already done starts its grid at once, as before.
// Stream memory operations (streammem.go), hipFreeAsync (hipheap.go),
// host functions (hostfunc.go) and cooperative launches with grid syncs
// (gridsync.go) are stream work too. A stream capture is the header's
// alone (hip_runtime.h): the captured launches, copies and memsets are
// closures that hipGraphLaunch makes again on its stream, as new work.
// A launch itself takes no virtual time (the seed
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
// device call, which yields back with its arguments. The built-in
// variables threadIdx, blockIdx, blockDim and gridDim are this library's
// objects (lane.c's emud_builtin_*, which hip_runtime.h names by asm
// labels): emud_resume gives them the lane's values before it switches to
// it and the host's (0s, dimensions of 1) when it stops, as one lane or
// host thread runs at a time and a lane's values never change.
// A launch starts the
// blocks that fit and each later one when a block retires, in block
// order (kernel.Config.Resident, kernel.Pool; resident.go): what a GPU's
// CUs hold (32 waves and 160 KiB of dynamic shared memory a CU, 256 CUs;
// registers and static __shared__ not counted), and at most
// EMUD_RESIDENT_LANES (65,536) lanes alive at once over all the run's
// launches, each GPU with work due an equal share and a GPU with none
// alive always starting one block. A block's lanes, records and shared
// memory are made when it starts and go when it retires, so a launch's
// memory is that of its resident blocks, not of its grid: 4096 blocks of
// 256 lanes on one GPU (cxx/testdata/bounds/wide_grid.cpp) peak at
// 736-742 MiB, 28-48 MiB over 512 blocks (cxx TestWideGridBounded); before, every
// lane was made at the launch, some 10 KiB each. Grids whose lanes all fit
// at their launch start at once, as before, so their runs and digests are
// unchanged; a larger grid's later blocks start as blocks retire, and a
// wait of resident blocks on blocks not started (a grid-wide spin over
// more blocks than fit) is a hang, as on a GPU whose CUs cannot hold
// them, whose report says how many blocks have not started and what
// bounds the resident ones. The lane budget bounds emud's memory, not the
// program: when every lane alive waits and blocks wait to start, blocks
// start past it up to what the CUs hold (kernel.Pool.Overflow at the
// run's quiescent point), so a grid-wide wait the CUs hold passes at any
// EMUD_RESIDENT_LANES (cxx/testdata/bounds/wait_last.cpp,
// TestGridWideWaitReported). Blocks
// that wait only for the same block of other ranks' launches (NCCL's
// per-CTA barriers) always progress: blocks start in order on each GPU.
// Stacks come from
// arenas of 64, mapped MAP_NORESERVE (a page is committed when the lane
// touches it) and reused by later lanes; each stack's guard page is made
// with MADV_GUARD_INSTALL, which does not split the mapping, so a grid of
// 32,768 live lanes takes a few mappings, not 65,536 over Linux's
// vm.max_map_count (cxx/testdata/bounds/big_grid.cpp; before Linux 6.13 the guard
// is mprotect's, a mapping each, and such a grid needs the limit raised).
// A fault in the stack's guard page, or just below it, is "lane stack
// overflow in kernel K at file:line"
// (examples/cxx/errors/stack_overflow.cpp). A launch is
// refused, naming its line, when its grid's estimated memory (1 KiB a
// lane for emud's records, plus each block's dynamic shared memory) is
// over EMUD_MEM_BUDGET (default half the process's memory limit), and a
// retired launch's lane state is freed (budget.go; partial: the native
// stacks of lanes alive at once are not in the estimate, and it counts
// every lane of the grid, though only the resident blocks' lanes live at
// once: a grid it refuses would also run for hours). A thread that
// makes only calls that take no virtual time and change nothing
// (__syncthreads, __ballot, __shfl, __threadfence; hipDeviceSynchronize,
// hipGetLastError … on the host), one call or several in turn (a loop of
// __shfl and __ballot whose mask never empties), at one virtual time for
// EMUD_SPIN_LIMIT of wall time is a hang report naming the loop's calls
// and lines, up to four (callwatch.go, examples/cxx/errors/call_loop.cpp). Every ccoSdma call
// and ccoLsaBarrierSession call runs package cco's implementation, so
// grouping, signals, barriers, debug traps, hang causes and timing are
// those of a Go kernel. __syncthreads,
// __syncwarp, __ballot/__any/__all, __activemask and __shfl* are the
// kernel package's collectives. Atomics (atomicAdd/CAS/Exch/…,
// __hip_atomic_*, GCC's __atomic_*_n in lane code) are done natively (one
// lane runs at a time, engines run only while lanes are parked) and then
// reported, waking waiters on the word. A lane whose atomic loads repeat
// a cycle with unchanged values is spinning, as nothing else runs while
// it runs its own code: the same word read twice in a row, or a cycle
// over up to 8 words seen twice in a row (A, B, A, B: a flag and a
// counter polled in turn, or MORI 489dbfd5's ring-full wait on its write
// and read pointers; examples/cxx/poll_words.cpp). The lane then waits,
// as a subscription, for a write to any of the words after a 100 ns poll,
// so spin loops advance virtual time, and a flag that is never set is a
// reported hang naming the words, their values and the line of the load
// that closed the cycle (examples/cxx/errors/poll_words_never.cpp). An
// atomic write by the lane starts the count again; a read-modify-write
// that leaves its word as it was (an atomicAdd of 0, a failed atomicCAS)
// wrote nothing and counts as a load, so a CAS lock held forever or an
// atomicAdd(p, 0) poll is a spin too (cxx/testdata/bounds/atomic_loop.cpp;
// partial: GCC's __atomic_fetch_add and __atomic_exchange_n in lane code
// still count as writes, and a loop of atomics that do change their word,
// with nothing else ever reading it, runs as long as on a GPU). Equal
// reads are not
// always a poll (a wait loop that saw its flag, then a read of the flag
// to use it; straight-line code that reads the same few words twice): the
// first such wait ends, with nothing written, if the run becomes
// quiescent, and the lane goes on; a second spin on the same words and
// values, with nothing but fences and clock reads between, is the
// poll's, and its quiescence the hang (examples/cxx/quiet/read_twice.cpp).
// Partial: a loop whose cycle is longer than 8 loads is not seen (it runs
// natively until EMUD_SPIN_LIMIT). A lane's volatile loads of device
// memory join the same count (lane.c volatile_load, each at its load's
// pc): a volatile load is made afresh each time and, on a GPU, sees other
// waves' writes, so a loop of them is a poll too, waiting at the lane's
// last call's point (cxx/testdata/spin/volatile_poll.cpp: MORI's cco
// benchmarks wait for their all-block barrier so, and each ran into the
// spin hang before). emud c++ gives TSan's volatile callbacks to lane code
// (--param=tsan-distinguish-volatile=1, clang's -mllvm form); code built
// without them, or with -fno-sanitize=thread, polls as with a plain load:
// natively, until EMUD_SPIN_LIMIT. A plain load's loop stays the spin
// hang: the compiler may keep its value in a register. For the race
// detector a lane's volatile load or store of device memory is an atomic
// access (acquiring and, storing, releasing its word, as atomics do), as
// AMDGPU compiles it: a relaxed atomic at system scope
// (https://reviews.llvm.org/D94214). So a flag set by a volatile or
// atomic store and polled by volatile loads is no race, and the poll's
// last load (the one after its wait) orders what the lane reads next;
// a flag stored plainly, or data stored after the flag, still is a race
// (volatile_poll.cpp's race cases). clock64 counts 2.4 GHz cycles and wall_clock64 a
// 100 MHz clock of virtual time; a lane that reads a clock again at the
// instant of its last read of it (a delay loop) reads it 20 ns later, so
// such a loop ends (overshooting by less than 20 ns). A lane's SIGSEGV/SIGBUS, __builtin_trap,
// abort (assert) or SIGFPE fails the lane (kernel.LaneError) naming the
// address: a host pointer or an unmapped device address in GPU g's slice
// (examples/cxx/errors/bad_pointer.cpp). Built with -fsanitize=thread, a
// lane's load or store of any host memory fails the lane with the address
// too, before it happens (the lane's stack, the program's static data, as
// a __device__ global is, what the runtime lends the lane, its launch
// arguments and shared memory, and host memory hipHostRegister registered,
// excepted). Partial: without the flag only
// an access that faults is caught; a host pointer to memory the process
// has mapped (a live std::vector's data, say) is read or written natively
// without a report, where a GPU would fault.
//
// A lane's logged stores are announced at its next device call (they
// wake waiters on their words); a fence (__threadfence*) or a grid's end
// wakes every waiter whose condition holds, for stores no log saw. A
// fence does so only when such a store may have happened since the last
// such wake (lanes.go fenceWakesAll): a host's code ran (its next call
// says so), a lane called the C library's memcpy, memmove or memset on
// device memory (emud c++ links the program, its seed form and the seed
// server with -Wl,--wrap for each, and lane.c's wrappers mark the lane),
// a unit was built without -fsanitize=thread (emud's hip_runtime.h notes
// it from a constructor), or the program is not instrumented or not
// linked with the wrappers: then every fence wakes every waiter, as it
// always did. A block of 256 lanes each fencing at each of MORI's LSA
// barrier syncs spent most of its run in those wakes (every watched
// word's condition, every tracked word loaded): test_lsa_barrier cut to
// 200 rounds ran its 256-lane case 4.5x faster as threads and 8.4x
// forked (cxx/testdata/fence/unlogged.cpp, TestFenceSeesUnloggedStores).
// Partial: a store by inline assembly, or by a thread that is not a host
// thread, is seen only at a wake that a fence after a host's call or a
// grid's end makes. A fence that would then do nothing at all (no wake of
// everyone due, none of the lane's ring stores waiting for a publish, and
// nothing logged, counted or marked since the lane's last call) passes in
// the lane's own code, without the device call (lane.c emud_fence_skip,
// lanes.go idleFences): it changes nothing, so the run and its digest are
// the same, and a forked rank's lane saves a round trip to the
// coordinator. MORI's LSA barrier makes five fences a lane a block sync,
// nearly all of them so: test_lsa_barrier cut to 200 rounds ran its
// 256-lane case 1.7x faster as threads and 2.4-2.9x forked. At most 64
// pass in a row, so a loop of fences still reaches the call watch
// (examples/cxx/errors/call_loop.cpp fence).
//
// A lane's own code takes virtual time (lanecost.go): the bytes of
// device memory its instrumented code stores since its last device call
// (each once; loads are not charged, since what -O0 and -O2 load
// differs) are paid by its wave, before the group's next gathering
// call (kernel.Config.Between), at EMUD_LANE_COST CU cycles per 16 bytes
// (default 4: one wave64 vector memory instruction of up to 16 bytes a
// lane issues over 4 cycles on a 16-lane CDNA SIMD) for the busiest lane
// of the group, perturbed by the seed at levels 1 and 2; a clock read
// with such a debt pays it first, so clock64 around lane work measures it
// (examples/cxx/timing/lane_work.cpp). Latency is not added (a lower
// bound); the stack, kernel arguments and LDS are not counted, so lanes
// that only make device calls keep their timing and digest at level 0.
// In an NCCL program (after ncclDevCommCreate) the bytes a lane loads
// from and stores to other GPUs' slices are the fabric's instead: its
// wave pays one latency for the span's peer loads and their bytes and
// its peer stores' bytes on package fabric's ports, and an LSA barrier's
// arrival reaches a peer a latency later (fabric.LaneCode, which the
// lane cost is; docs/timing.md).
// Partial: stores of the span land at its start, and an atomic store
// made after the work, before a gathering call, lands before the wave
// has paid. Host code takes time only with EMUD_HOST_GBPS (hostcost.go:
// no documented host figure, so no default).
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
// which it runs; its read-pointer write-backs land in the rptr word. For
// the race detector, a lane's atomic or volatile load of an rptr word
// (MORI's quiet and ring-full waits) orders it after the retired packets
// up to that read pointer whose posts it knew of (mori.go drainedBy, as
// cco's quiet does for a Go kernel), so data a quiet drained and a host
// barrier then handed over is race-clean (cxx TestMoriQuietDrainOrders;
// before, MORI's test_sdma_put raced on every put). The
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
// # MORI's ccoGda in C++
//
// MORI's GDA device layer (cco_scale_out.hpp's ccoGda<MLX5> over the
// mlx5 provider's device primitives) runs natively too: emud is the NIC
// beneath it (mori_gda.go, package mlx5). The host control plane
// (mori_host.cpp) fills the header's own ccoIbgdaContext, its
// core::RdmaEndpointDevice endpoints and each window's ccoIbgdaWin by
// field name; the layout checks cover those and core's WorkQueueHandle,
// CompletionQueueHandle and IbufHandle where the header tree has
// core_device_types.hpp (a header with ibgda but no core types is a build
// error naming the missing header).
//
//   - Connection types: every rank of emud's C++ path shares one node, so
//     CROSSNODE and RAIL collapse to NONE as MORI's ccoDevCommCreate
//     does on one node; FULL with more than one rank connects every pair
//     (world peer p's endpoints are endpoints[p·numQpPerPe + context],
//     this rank's own slots left empty, vendorId Unknown).
//   - Queue pairs: one allocation in the rank's GPU memory per (peer,
//     context): the send queue (gdaQueueDepth rounded up to a power of
//     two, else 4096 WQEs, MORI's maxMsgsNum), then a collapsed CQ of one
//     CQE filled with 0xff as MORI's host fills it (wqe_counter 0xffff:
//     nothing completed), the doorbell record, the CQ's record, the UAR
//     word and an 8-byte atomic buffer.
//   - Keys: every ccoWindowRegister'd buffer is a memory region
//     registered iova-0 (a WQE address is the offset), keyed per rank;
//     peerRkeys holds every rank's key of the same window, found by the
//     window's place in the comm's collective calls (all ranks make them
//     in one order; barrierAll checks it). The dev comm's signal pool
//     (signals, their shadows, then counters, in the rank's GPU memory) is
//     the resource window's region: a signal WQE names slot·8 with
//     resourceWindow_inlined.ibgdaWin's key, as MORI pins signalBuf at
//     offset 0 of its resource window. The atomic buffer is addressed by
//     device address (MORI's ibv_reg_mr).
//   - The doorbell: a watch on each UAR word fires on a store that
//     changes it (MORI stores the last WQE's control qword, whose index
//     differs from the previous doorbell's); the NIC reads the doorbell
//     record's producer counter and fetches, decodes and carries every
//     WQE up to it (package mlx5's doc: opcodes, timing, CQEs, errors).
//     Writes, atomics and CQEs go through engine.Memory, so lanes
//     spinning on a signal, a counter or CQE[0] wake.
//   - Undecodable WQEs, an opcode not emulated (masked atomics, SEND), a
//     bad key or a range past its region end the run with an error naming
//     the queue (rank, peer, context), the WQE index and its opcode.
//
// With the race detector on, each WQE is a detector thread forked from
// the lane that stored the doorbell (snapshotted as it stores), and its
// source reads and remote writes are accesses (package mlx5's race.go):
// a store to a put's source before its quiet, or a read of received data
// not ordered by a signal wait, is a data race naming the lane's line and
// the NIC's queue and WQE. The quiet's edge: a CQE releases the QP's
// completions into its last word and into the endpoint's doneIdx, which
// MORI's quiet advances with an atomic after its plain CQE loads (a lane
// that acquires doneIdx sees every completion reported so far).
//
// Partial: the WQE stores are not under the publish edge the SDMA rings
// have (a missing fence before the doorbell is not reported); a destroyed
// dev comm's queue pairs keep their memory; the network is package nic's
// default model, not calibrated; a UAR store that leaves the word
// unchanged (the same control qword 65536 WQEs later) rings nothing.
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
// Lane code compiled against a user's MORI header (package cxx's
// MoriHeader) has call contexts (callctx.go): emud c++ builds it with
// -DEMUD_CALL_CONTEXT, frame pointers, no inlining and no sibling calls
// (and -g1's line tables), and every device call records the lane's chain
// of return addresses (hip_runtime.h context). The chain maps to file:line
// frames from the kernel function to the call, emud's own frames left out,
// so a point is the whole chain (kernel.NewNativeContext), mapped once per
// distinct chain (callctx.go interns it; the line tables are read from the
// executable mapped read-only, and a file a DWARF 5 table names relative
// to the build's directory is joined with it, so a run from any directory
// orders lanes alike): MORI's one-line wave helpers (waveBallot,
// waveBcastLane32) reached from two places are two points, ordered by
// their callers' lines and loop iterations. Two
// calls on one line are one point, but the second does not count as a
// loop's back edge (their return addresses differ). In that build every
// atomic access (__hip_atomic_*, the __atomic builtins, atomicAdd and
// friends) is first a lock-step point (EMUD_OP_STEP, charging no time of
// its own): a lane that skipped a branch waits at its next atomic access
// until the branch's lanes are past it in program order, as lock-step has
// it, so it does not read a word before they write it (MORI's
// test_sdma_signal A[scope=1 q=1]: lane 1 drained queue 1 before lane 0
// had posted on it). Plain loads and stores are not lock-step points: a
// lane that reads a plain word another lane of its wave writes in a branch
// it skipped can still read it early. Without a MORI header the point
// stays one frame.
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
// after its report. EMUD_STEPS=1 prints the run's length in scheduling
// steps at its end (steps.go; emud explore and hunt -- PROGRAM set PCT's
// steps from one such run of the first seed). EMUD_CPUPROFILE=file writes a Go CPU profile of the emulation, from
// the first call to a clean exit (go tool pprof reads it). EMUD_USAGE=1
// prints, at a clean exit, the process's CPU time and page faults up to
// the first call (process start, the Go runtime's, the program's code
// before it), building the node, and from there to exit.
//
// # The program's heap
//
// A run is a fresh process, so every page of host memory it touches is a
// page fault (emud explore pays them per seed). heap.c sets glibc's
// malloc up before the program's constructors and the Go runtime start:
// one arena (host threads take turns, so per-thread arenas, each a fresh
// 64 MiB reservation, buy nothing), blocks up to 32 MiB from the heap
// rather than a fresh mapping each, and the heap's first 64 MiB advised as
// transparent huge pages (one fault per 2 MiB where the kernel allows;
// alltoall_put.cpp's host buffers went from ~1000 faults a run to a few).
// EMUD_MALLOC=system, or a program that sets glibc's malloc tunables
// itself, keeps glibc's defaults.
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
//
// # The seed server
//
// A seed sweep of a C++ program (emud explore -- PROGRAM) need not start
// a process per seed: emud c++ links the program's objects a second time
// as a shared object, its seed form (PROGRAM.emud-seeds.so, package cxx),
// and builds emud-seed-server-BUILD (a main that calls seedsrv.c's
// emud_seed_serve, linked with this library and -Wl,--export-dynamic so
// that the object's references to the C ABI, the ThreadSanitizer
// callbacks and pthread_create resolve to the server's). The Go runtime
// starts threads in its constructor, so a fork server cannot fork after
// it; the server instead loads the object afresh for every seed.
//
// Protocol: `SERVER OBJECT` (the object's absolute path),
// started with the sweep's environment, stdin /dev/null, its stdout and
// stderr the client's (the server's own messages). Requests arrive on fd
// 3: a uint32 little-endian byte count n (1 to 16 MiB), then n bytes of
// NUL-terminated strings: "emud-seed/1", the seed's stdout path, its
// stderr path, argc in decimal, argc argv strings, then the seed's whole
// environment as K=V strings. The server replaces its environment with
// that one (C's environ, then Go's copy through os.Clearenv/os.Setenv),
// opens the two paths (created or truncated, 0600) as fds 1 and 2,
// dlopens the object (RTLD_NOW|RTLD_LOCAL: its constructors run, and
// whatever they set in C's environ, --offload-arch's EMUD_ARCH, Go's copy
// takes up after them and again at the emulation's start), calls its
// main on the main thread (host 0), and when main returns ends the seed
// as exit would: the object's exit handlers and static destructors run
// newest first (__cxa_finalize with the object's __dso_handle, read from
// its symbol table), emud's end of run (waiting for the simulation, the
// EMUD_SUMMARY, EMUD_STEPS and EMUD_TRACE output) among them where the
// program's first emud call registered it, as exit orders a process's
// handlers; then fflush, dlclose, and a check that the object is really
// gone (dlopen with RTLD_NOLOAD). The reply on fd 4 is 5 bytes: the
// status (main's return & 0xff) as a uint32 little endian, and more = 1
// when the server takes another request, 0 when it exits after the
// reply: the object stayed loaded, device memory was mapped outside the
// reserved range, the server's resident size passed 4 GiB, or the seed
// changed the process in a way that is not put back (below). End of
// file on fd 3 ends the server with status 0. Every other end of a seed
// is the process's own, with the status a process run would give: exit
// or _exit called by the program, a signal, an emulation failure (fail:
// 1, hang 2, race 5), and a main that returns while threads it started
// still run (the server then calls exit(status) itself, as a process's
// return from main does). The client starts a new server for the next
// seed. A bad request (not emud-seed/1, an argc past the strings, an
// environment string without "=", a path that cannot be opened) ends the
// server with status 1 and a message on its stderr naming it; an object
// that does not load or has no main ends it with status 127 (a shell's
// for a program it cannot run), the loader's words on the seed's stderr.
//
// What one emulation leaves in the process, and how a clean seed's end
// puts it back (seedReset in seedsrv.go, emud_seed_reset_c in lane.c);
// the state machine is idle (no emulation) → running (the first call
// built it) → ended clean (main returned, no host thread left) → idle:
//   - rt (the emulation, its once, hosts, job, streams, events, comms,
//     windows, barriers, trace and profile): made anew; the spin watch's
//     goroutine is stopped through rt.stop, and the job's node is closed
//     first, so its rings go back to the process's pool (cleared where
//     written) for the next seed's node. The simulation's and the
//     watch's goroutines have already ended with the run. The server's
//     one engine.Scratch stays (srvScratch, main.go): each seed's
//     simulator and node borrow it as an explore worker's seeds do (its
//     event store, idle lane coroutines, interned names, and the node's
//     queue, ring and engine objects), each handed out cleared.
//   - The package maps and tables (ctxSites, sites, lanes, queueNoted,
//     hostAllocs/hostFlags, hipUsed/hipLive/hipSerial, ipcOpened, symbolFills, ncclDevs, threadBarriers, moriRings,
//     moriPending, moriRng, moriDevSeq/moriDevOf/moriPoolsOf, gdaState,
//     cftState, gins, freeState, procs, spinWatch)
//     and the settings start reads (callLoopLimit, hostRate, laneCode,
//     lsaTimed): made anew or zeroed.
//   - pcLines: the seed form's DWARF line table, read once per file
//     version (device, inode, size, modification time) with a cache by
//     address in the file, so the seeds of one server share it; the load
//     bias is each seed's.
//   - lane.c: started, the race, LSA and host-cost switches, the
//     instrumented flag (each object's __tsan_init sets it again), the
//     tracked threads, the early threads past the server's own (the Go
//     runtime's), the main thread's host store log and byte count, the
//     object pool (zeroed), the program's segments (the server's own plus
//     the seed object's, found after each dlopen) and the object the
//     program's threads are recognised by (runtime_thread).
//   - Device memory: every chunk the seed mapped in the reserved range
//     goes back to PROT_NONE, so an address the last seed mapped faults
//     again, and to all zero bytes, so the next seed's regions start as
//     zero at the same addresses. Up to 64 MiB of chunks is parked: the
//     pages that hold a byte other than zero (the seed's regions, a stray
//     store past them in their chunk) are zeroed, and the chunk is kept
//     with its huge pages, made read-write again when a later seed's
//     region falls in it; that spares the seed a 2 MiB fault and the
//     kernel's clear of each chunk, and the reset the unmapping. The rest,
//     and chunks shared with ranks run as processes, is mapped again
//     PROT_NONE without backing (TestSeedServerDeviceMemoryZero in package
//     cxx holds a region written and stored past in one seed to read zero
//     in the next, and a parked chunk to fault).
//   - sysfs.c's KFD tree: chosen again by the next seed's EMUD_GPUS and
//     EMUD_ARCH.
//   - The process (seedsrv.c): the working directory, the file mode mask
//     and the main thread's signal mask are put back as the server found
//     them, and libc's rand/random, drand48 and getopt state as a fresh
//     process has it; a signal disposition the seed changed (other than emud's own
//     fault handlers), a timer it left running (alarm), stdout or stderr
//     made wide-oriented or reopened elsewhere, or file
//     descriptors piling up (16 over the count after the server's first
//     seed) make the reply's more 0, so the next seed gets a new server.
//   - The CPUs (seedsrv.c, "one CPU a seed"): a seed's threads take
//     turns (one runs at a time) and hand them on hundreds of times a
//     seed, and a thread woken on another CPU costs a wake from idle
//     there (an IPI; in a VM, an exit). So each seed's threads (the
//     server's, Go's, and those the program starts, which inherit it)
//     are held on the CPU the seed began on, and let go at its end,
//     where the next request's wake may land on another, so sweeps side
//     by side spread. The program's affinity queries (sched_getaffinity,
//     pthread_getaffinity_np) answer the server's own affinity for the
//     pin, as a process's would; an affinity the seed set itself is
//     answered as set and put back at its end (pinned or not).
//     EMUD_SEED_PIN=0 in the server's environment turns the pin off
//     (TestSeedServerPin). On 2 cores, a 100-seed explore of
//     examples/cxx/bench/alltoall_sum.cpp nohost at --jobs 1 took 1.46-1.70
//     s against 2.35 s unpinned, in the same CPU time.
//   - The C++ library (the server's, which every seed's object shares):
//     the standard streams' formatting and state (std::cout's std::hex,
//     precision, fill, failbit, and the wide streams') and the global C
//     and C++ locales are saved before the first seed and put back after
//     each, by hooks in the server's main (package cxx's serverMain).
//   - Once per process, not per seed: the fault handlers, the process's
//     atexit handler (at_exit, used when the object has no __dso_handle
//     or its constructors made the first emud call; a seed's own is among
//     its object's handlers, consumed at its end),
//     the lane stack pool (free stacks are reused as in one process),
//     heap.c's malloc settings and the reserved device range (both made
//     by constructors from the server's start environment: EMUD_BASE,
//     EMUD_MALLOC, GLIBC_TUNABLES and MALLOC_* are the server's, which a
//     sweep's seeds share).
//
// Partial: where the object's symbol table is stripped (-s), or a
// constructor of the object made the first emud call, emud's end of run
// comes before all of the object's exit handlers, so one registered after
// the first call (a function-local static made later) runs after it
// instead of before; a seed that sets EMUD_BASE or the malloc settings
// differently from the server's start gets the server's; memory a seed
// reads before writing it (a lane stack from the server's pool, a reused
// malloc block, a thread stack glibc kept) holds an earlier seed's bytes
// where a fresh process's would be zero; std::ios_base::sync_with_stdio
// (false), rlimits and the process's name stay as a seed left them; EMUD_NODE
// (ranks started apart) is not served; a seed's fault before its first
// emud call meets emud's fault handlers, which a process installs only at
// that call.
package main
