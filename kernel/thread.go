package kernel

import (
	"fmt"
	"math/bits"
	"strconv"

	"github.com/emud-dev/emud/sim"
)

// Thread is one lane's view of the kernel: its indices and the wave
// collectives. A Thread must only be used by its own kernel function.
type Thread struct {
	w    *Wave
	lane int
	tid  int

	wk    *worker // the coroutine running the lane; nil when done
	yield func(struct{}) bool
	done  bool

	panicked *LaneError

	// convergence point
	call   caller
	arg    any   // the argument it passed to call (Call.run reads it back)
	idle   bool  // parked with its EXEC bit off: the call's Run does not see it
	site   *site // where it is parked, in program terms
	iters  []uint32
	spare  []uint32
	lastPC [maxDepth]uintptr // the chain that gave site, to skip the lookup
	lastN  int
	native *NativeSite // the point of the next park, set by native lane code (native.go)

	// u64 and res64 carry the wave collectives' per-lane values (Ballot,
	// MatchAny, ReadFirstLane) without boxing.
	u64   uint64
	res64 uint64
}

// GPU is the GPU the kernel runs on.
func (t *Thread) GPU() int { return t.w.k.cfg.GPU }

// ThreadIdx is threadIdx.x.
func (t *Thread) ThreadIdx() int { return t.tid }

// BlockIdx is blockIdx.x.
func (t *Thread) BlockIdx() int { return t.w.b.idx }

// BlockDim is blockDim.x.
func (t *Thread) BlockDim() int { return t.w.k.cfg.Block }

// GridDim is gridDim.x.
func (t *Thread) GridDim() int { return t.w.k.cfg.Grid }

// Lane is the lane index within the wave (threadIdx.x % warpSize).
func (t *Thread) Lane() int { return t.lane }

// WarpSize is the wave width, 64 or 32.
func (t *Thread) WarpSize() int { return t.w.k.cfg.WaveSize }

// WaveIdx is the wave's index in the block (threadIdx.x / warpSize).
func (t *Thread) WaveIdx() int { return t.w.idx }

// Wave is the thread's wave.
func (t *Thread) Wave() *Wave { return t.w }

// Now is the current virtual time (a clock64-style read that costs nothing).
func (t *Thread) Now() sim.Time { return t.w.k.s.Now() }

// Shared is the block's shared memory (LDS), Config.SharedBytes long.
func (t *Thread) Shared() []byte { return t.w.b.shared }

// String names the thread for messages.
func (t *Thread) String() string {
	return fmt.Sprintf("GPU %d block %d thread %d (wave %d lane %d)", t.GPU(), t.BlockIdx(), t.tid, t.w.idx, t.lane)
}

// Who names the lane as reports name an actor: its kernel, GPU, block,
// wave and lane (the race detector's and the engine's poster labels).
func (t *Thread) Who() string { return string(t.AppendWho(make([]byte, 0, 96))) }

// AppendWho appends Who's name to b: appended, not formatted (fmt boxed
// each argument), for names the simulator interns.
func (t *Thread) AppendWho(b []byte) []byte {
	cfg := t.w.k.cfg
	b = append(b, "kernel "...)
	b = strconv.AppendQuote(b, cfg.Name)
	b = append(b, " GPU "...)
	b = strconv.AppendInt(b, int64(cfg.GPU), 10)
	b = append(b, " block "...)
	b = strconv.AppendInt(b, int64(t.BlockIdx()), 10)
	b = append(b, " wave "...)
	b = strconv.AppendInt(b, int64(t.w.idx), 10)
	b = append(b, " lane "...)
	b = strconv.AppendInt(b, int64(t.lane), 10)
	return b
}

// Converge parks lane t at call c with its argument arg and returns once c
// has run for the group of lanes that reached it together (c.Run gets their
// arguments in lane order). Packages that implement device calls (cco,
// fabric) build on it.
func Converge[A any](t *Thread, c *Call[A], arg A) {
	t.arg = arg
	t.park(c, false)
}

// ConvergeIf is Converge for a call that only some lanes of a coop group
// execute, as a wave runs a leader-only call with its EXEC mask narrowed:
// every lane parks at c and resumes when the group's call has run, but
// c.Run sees only the lanes with active set (Active.Lanes, Active.Mask, and
// their arguments). When no lane of the group is active, c.Run is not
// called at all. Call it from one line for active and inactive lanes alike,
// so that they park at one point.
func ConvergeIf[A any](t *Thread, c *Call[A], arg A, active bool) {
	t.arg = arg
	t.park(c, !active)
}

// Fail stops the kernel at this lane with err, as a trap does: the run ends
// with a *LaneError naming the lane and call. It does not return.
func (t *Thread) Fail(call string, err error) { panic(t.laneError(call, err)) }

// Error returns err as a *LaneError of this lane at call: what a device
// call's Run returns to fail the kernel at a particular lane.
func (t *Thread) Error(call string, err error) error { return t.laneError(call, err) }

func (t *Thread) laneError(call string, err error) *LaneError {
	return &LaneError{Kernel: t.w.k.cfg.Name, GPU: t.GPU(), Block: t.BlockIdx(), Thread: t.tid,
		Wave: t.w.idx, Lane: t.lane, Call: call, Err: err}
}

// ---- wave collectives ----

var (
	ballotCall = &Call[None]{Name: "ballot", Run: func(g *Active, _ []None) error {
		var m uint64
		for _, t := range g.lanes {
			if t.u64 != 0 {
				m |= 1 << uint(t.lane)
			}
		}
		for _, t := range g.lanes {
			t.res64 = m
		}
		return nil
	}}
	matchAnyCall = &Call[None]{Name: "match_any", Run: func(g *Active, _ []None) error {
		for _, t := range g.lanes {
			var m uint64
			for _, u := range g.lanes {
				if u.u64 == t.u64 {
					m |= 1 << uint(u.lane)
				}
			}
			t.res64 = m
		}
		return nil
	}}
	firstLaneCall = &Call[None]{Name: "readfirstlane", Run: func(g *Active, _ []None) error {
		v := g.lanes[0].u64
		for _, t := range g.lanes {
			t.res64 = v
		}
		return nil
	}}
	activeCall = &Call[None]{Name: "activemask", Run: func(g *Active, _ []None) error {
		for _, t := range g.lanes {
			t.res64 = g.mask
		}
		return nil
	}}
	syncWarpCall    = &Call[None]{Name: "syncwarp", Run: func(g *Active, _ []None) error { return nil }}
	syncThreadsCall = &Call[None]{Name: "syncthreads", Run: func(g *Active, _ []None) error {
		g.w.b.arrive(g.w.a, g.w)
		return nil
	}}
)

// Ballot returns the mask of active lanes whose pred is true.
func (t *Thread) Ballot(pred bool) uint64 {
	t.u64 = 0
	if pred {
		t.u64 = 1
	}
	t.arg = None{}
	t.park(ballotCall, false)
	return t.res64
}

// MatchAny returns the mask of active lanes whose key equals this lane's.
func (t *Thread) MatchAny(key uint64) uint64 {
	t.u64 = key
	t.arg = None{}
	t.park(matchAnyCall, false)
	return t.res64
}

// ReadFirstLane returns v of the lowest active lane.
func (t *Thread) ReadFirstLane(v uint64) uint64 {
	t.u64 = v
	t.arg = None{}
	t.park(firstLaneCall, false)
	return t.res64
}

// ActiveMask returns the mask of lanes that reached this call together.
func (t *Thread) ActiveMask() uint64 {
	t.arg = None{}
	t.park(activeCall, false)
	return t.res64
}

// SyncWarp is a wave barrier: the lanes that reach it together leave it
// together.
func (t *Thread) SyncWarp() { t.arg = None{}; t.park(syncWarpCall, false) }

// SyncThreads is __syncthreads: every live wave of the block arrives before
// any leaves.
func (t *Thread) SyncThreads() { t.arg = None{}; t.park(syncThreadsCall, false) }

// Popc is the number of lanes in a mask.
func Popc(mask uint64) int { return bits.OnesCount64(mask) }

// ---- cooperative groups ----

// Scope is the extent of a cooperative group.
type Scope uint8

const (
	ScopeThread Scope = iota
	ScopeWarp
	ScopeBlock
)

var scopeNames = [...]string{"thread", "warp", "block"}

func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return fmt.Sprintf("Scope(%d)", s)
}

// Group is a cooperative group of threads (cg::thread_block and friends).
type Group struct {
	t     *Thread
	scope Scope
}

// ThreadGroup is the group of this thread alone.
func (t *Thread) ThreadGroup() Group { return Group{t, ScopeThread} }

// WarpGroup is the thread's wave.
func (t *Thread) WarpGroup() Group { return Group{t, ScopeWarp} }

// BlockGroup is the thread's block.
func (t *Thread) BlockGroup() Group { return Group{t, ScopeBlock} }

// Scope is the group's extent.
func (g Group) Scope() Scope { return g.scope }

// Thread is the calling thread.
func (g Group) Thread() *Thread { return g.t }

// ThreadRank is the calling thread's rank in the group.
func (g Group) ThreadRank() int {
	switch g.scope {
	case ScopeWarp:
		return g.t.lane
	case ScopeBlock:
		return g.t.tid
	}
	return 0
}

// Size is the number of threads in the group: 1, the wave size, or the
// block size.
func (g Group) Size() int {
	switch g.scope {
	case ScopeWarp:
		return g.t.w.k.cfg.WaveSize
	case ScopeBlock:
		return g.t.w.k.cfg.Block
	}
	return 1
}

// Sync is the group's barrier: nothing for a thread, SyncWarp for a wave,
// SyncThreads for a block.
func (g Group) Sync() {
	switch g.scope {
	case ScopeWarp:
		g.t.SyncWarp()
	case ScopeBlock:
		g.t.SyncThreads()
	}
}

// LaneError is a kernel failure at one lane: a panic in the kernel function
// or a device call that trapped.
type LaneError struct {
	Kernel string
	GPU    int
	Block  int
	Thread int
	Wave   int
	Lane   int
	Call   string // the device call, or "panic"
	Err    error
	Panic  any    // the panic value, when Call == "panic"
	Stack  string // the lane's stack at the panic
}

func (e *LaneError) Error() string {
	return fmt.Sprintf("kernel %q: GPU %d block %d thread %d (wave %d lane %d): %s: %v",
		e.Kernel, e.GPU, e.Block, e.Thread, e.Wave, e.Lane, e.Call, e.Err)
}

func (e *LaneError) Unwrap() error { return e.Err }
