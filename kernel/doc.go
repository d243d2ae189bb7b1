// Package kernel runs SIMT kernels on an emulated GPU: a grid of blocks of
// threads, executed as waves (wavefronts) of 64 lanes, or 32 as on gfx1250.
//
// # Execution model
//
// Every thread is a Go function, fn(t *Thread), run as a coroutine of its
// wave. A wave is one sim actor, so the simulator schedules waves, and the
// hang report names them. Inside a wave the lanes are run in lane order, each
// until its next convergence point: a device call (Converge), a ballot, a
// barrier. When every live lane of the wave is parked, the lanes parked at the
// same call site (the same chain of return addresses) form one group: they are
// the active lanes of that call, as when "several lanes of one wave call put at
// once" (shared/seeds/cco-sdma-device-api.txt). The group's call runs once, on
// the wave's actor, with all of their arguments; then those lanes run on to
// their next point.
//
// A call site is the chain of return addresses of the lane's stack (up to
// 16 frames), read by walking frame pointers on amd64 (a few nanoseconds a
// frame) and by runtime.Callers elsewhere; lanes whose chains are equal are
// at the same call.
//
// When lanes diverge (they are parked at different call sites) the wave runs
// one group at a time, choosing the site that comes first in the code: the
// stacks are compared from the outermost frame, and at the first frame that
// differs the lower return address wins. This is the min-PC reconvergence
// rule: lanes that skipped an if-body wait at the code after it until the
// lanes in the body arrive, and lanes that left a loop early wait until the
// others leave it, so they reconverge as on hardware.
//
// Lane coroutines are pooled per run: a finished lane's coroutine runs the
// next lane that starts, of this kernel or a later one, and the pool ends
// them when sim.Run returns. (Creating a goroutine costs about 15 times a
// switch, 60 times under the race detector.)
//
// Code between convergence points takes no virtual time and runs lane by lane,
// which is an allowed interleaving of lock-step execution; ordinary Go values
// shared between lanes need no locks because only one runs at a time.
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
