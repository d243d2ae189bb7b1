// Package kernel runs SIMT kernels on an emulated GPU: a grid of blocks of
// threads, executed as waves (wavefronts) of 64 lanes, or 32 as on gfx1250.
//
// # Execution model
//
// Every thread is a Go function, fn(t *Thread), run as a coroutine of its
// wave. A wave is one sim actor, so the simulator schedules waves, and the
// hang report names them. Inside a wave the lanes are run in lane order, each
// until its next convergence point: a device call (Converge, ConvergeIf), a
// ballot, a barrier. When every live lane of the wave is parked, the lanes
// parked at the same point of the program form one group: they are the
// active lanes of that call, as when "several lanes of one wave call put at
// once" (the ccoSdma API's wording; docs/cco-semantics.md §6). The group's call runs once,
// on the wave's actor, with all of their arguments; then those lanes run on
// to their next point.
//
// # Reconvergence by program order
//
// On hardware a SIMT compiler gives the wave structured control flow: lanes
// that diverge run one side of an if/else while the others wait, and rejoin
// at its end; lanes that leave a loop early wait at its exit; lanes that
// return early from a function wait at its return. The wave is always at one
// point of the program, the earliest one any of its lanes still has to run.
// The emulator reproduces this by ordering parked lanes by their position in
// the program, never by machine-code addresses, so the result is the same
// under any inlining, block layout or -gcflags:
//
//   - A lane's point is its logical stack, from the kernel function to the
//     call: each frame is (function, file, line), with inlined calls expanded
//     (runtime.CallersFrames), read from the frame-pointer chain and interned
//     per chain of return addresses (a map lookup per park; a lane that
//     parks where it parked last skips even that).
//   - The loops that enclose each frame's line, within that frame's own
//     function, come from the file's syntax tree (go/parser, once per file).
//   - Each lane counts its iterations of those loops: when it parks at or
//     before its previous point within a function, it went round the
//     innermost loop that holds both points (or, if none does, a caller's
//     loop that called the function again).
//   - Groups are ordered by comparing frames from the outermost: in a frame
//     where both are at one line, the lower iteration of an enclosing loop
//     comes first; at the first frame where they differ, the lower
//     iteration of a loop holding both, then the lower line. Lanes at the
//     same point (the same logical stack and call) form one group.
//
// Lanes whose code is not Go (C++ kernels, package capi) park at a
// NativeSite their driver names: one frame (NewNativeSite), or the whole
// call chain (NewNativeContext, from the native frame-pointer chain), so a
// helper reached from two places is two points. In a native frame, two
// calls on one line are one point, but the second is not taken for a
// loop's back edge: their return addresses differ (the address never
// orders or groups lanes, as the compiler may duplicate a call).
//
// So lanes that skipped an if-body wait after it until the body's lanes
// arrive; lanes in iteration i+1 wait while others finish iteration i; lanes
// that left a loop wait at its exit; and lanes that returned from a helper
// wait in the caller.
//
// # Device calls and their arguments
//
// A device call is a Call[A]: each lane parks at it with an argument of
// type A (Converge, ConvergeIf), and its Run gets the active lanes and
// their arguments as an []A in lane order, so the type of what travels with
// each call is in its declaration and no call site converts it back. A
// lane that wants results passes a pointer to its own per-lane state (cco
// passes its *post, fabric its *opArgs) and Run writes through it. A call
// with no argument is a Call[None]. Inside package kernel a parked lane
// keeps its argument untyped, and Call.run, which only sees lanes parked at
// that same Call[A], converts it back: the one conversion, which cannot
// fail.
//
// Leader-only calls are convergence points for their whole coop group: a
// device call that only some lanes execute (a warp-scope put posted by lane
// 0) parks every lane with ConvergeIf, the non-leaders with their EXEC bit
// off, and they all resume together once the call has run.
//
// Limits, each a place where Go code does not show the wave what it does:
//   - A loop iteration in which a lane reaches no convergence point is not
//     seen (`for … { if skip { continue }; t.Ballot(x) }`): such a lane
//     joins the group of the iteration the others are in, so its mask
//     membership in that loop can differ from hardware's.
//   - Two convergence calls on one source line are told apart by their
//     function, then by lane, not by column.
//   - Kernel source must be readable at run time for loops to be known (it
//     is under go test and go run; a -trimpath binary without its source
//     orders by line only). goto is not a loop.
//   - A lane deeper than 64 frames keeps only its innermost 64.
//
// Lane coroutines are pooled per run: a finished lane's coroutine runs the
// next lane that starts, of this kernel or a later one, and the pool ends
// them when sim.Sim.Run returns; a run that borrows a sim.Scratch keeps its
// pool there instead, for the Scratch's later runs, until its Close. Such
// a run's launches also make their kernels, blocks, waves and lanes in
// arenas kept in the Scratch (arena.go), reset at the run's first launch:
// a kernel is not used once a later run borrows the Scratch. The waves'
// call-argument buffers stay in that arena across runs, and block and
// wave names are interned by the Scratch (sim.Sim.Intern).
// (Creating a goroutine costs about 15 times a
// switch, 60 times under the race detector.)
//
// Code between convergence points takes no virtual time and runs lane by lane,
// which is an allowed interleaving of lock-step execution; ordinary Go values
// shared between lanes need no locks because only one runs at a time. A
// driver of native lanes may charge that code's time itself:
// Config.Between runs on the wave before each group's call and at the
// wave's end, where it may sleep (package capi charges C++ lane code's
// device-memory bytes there).
//
// # Residency
//
// By default a launch starts every block at once. Config.Resident bounds
// the blocks of a launch that run at once, as a GPU's CUs do, and a Pool
// (Config.Pool) bounds the lanes alive at once over the launches sharing
// it, on any GPU, each GPU with work due an equal share and a GPU with
// none alive always starting one block. A grid over either starts the
// blocks that fit and each later one when a block retires, in block order
// (at the retiring wave's time, plus its skew under perturbation); its
// waves, lanes and lane lists are made when the block starts and dropped
// when it retires, so its memory is that of its resident blocks. A grid
// that fits at its launch starts as without either, in the same order,
// so its runs and digests are those of an unbounded launch. With the race
// detector a later block is forked from what the launching actor had done
// at the launch, not from the block that retired to make room for it
// (nothing orders them on a GPU). A Pool's budget is emud's, not the
// GPU's: Pool.Overflow, hooked to the run's quiescent point
// (sim.Sim.OnQuiescent), starts blocks past it when every lane alive
// waits, up to Config.Resident. A wait of resident blocks on blocks that
// cannot start is a hang whose report names the blocks not started and
// what bounds the resident ones. Package capi bounds C++ launches so; Go
// kernels set neither.
//
// # Collectives
//
// Thread provides what kernels need: lane and wave indices, Ballot,
// MatchAny, ReadFirstLane, ActiveMask, SyncWarp (a wave barrier), SyncThreads
// (a block barrier), per-block shared memory, and cooperative groups
// (ThreadGroup, WarpGroup, BlockGroup) with ThreadRank, Size and Sync. A block
// barrier counts waves, as s_barrier does: a wave whose lanes have all
// returned no longer takes part.
//
// # Hang reports
//
// A wave's entry in a hang report names the group whose call is running
// ("put by lanes 0 at alltoall.go:42") and each parked group, in program
// order, with its lanes, call and source position ("lanes 1-63 parked at
// waitSignal (alltoall.go:47)"). The position is the innermost frame outside
// the device-call packages (kernel, cco, fabric), so it points at the
// kernel's own line.
//
// # Shared memory and the race detector
//
// Shared returns the block's LDS bytes; SharedLoad and SharedStore copy
// through them with bounds checks and are the accesses the run's race
// detector (package race, sim.EnableRace) sees. With it on, a launch
// orders each wave after the launching actor, a wave's end is released to
// its kernel and Wait acquires it, and SyncThreads releases and acquires
// the block's barrier. The lanes of a wave are one detector thread: they
// run in lock-step, so SyncWarp adds no edge and lanes of one wave are
// not reported against each other.
//
// # Failure
//
// A kernel completes when every thread returns. A panic in a lane, or an
// error returned by a group call (a debug trap, for instance), fails the
// kernel with a *LaneError naming the GPU, block, thread and lane, and stops
// the run with that error; the process never crashes. Device-call packages
// (cco) build on Converge and fail lanes through it.
//
// Under timing perturbation (sim.Config.Perturb above 0) a launch lands
// late by a skew drawn from the seed and each block starts a little after
// it (sim.Perturber.LaunchSkew, BlockSkew): host launches on several GPUs
// never land together, nor do a grid's blocks. At level 0 every wave
// starts at the launch.
package kernel
