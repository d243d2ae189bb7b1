package kernel

import (
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/emud-dev/emud/internal/racebuild"
	"github.com/emud-dev/emud/sim"
)

// Call is a device call that lanes converge at, each lane passing an
// argument of type A (Converge, ConvergeIf). Run executes the call once for
// the active lanes, on the wave's actor, which may block (a reservation, a
// drain); args[i] is the argument of g.Lanes()[i]. args is the wave's
// scratch, valid until Run returns. A lane that wants results back passes a
// pointer (to its own per-lane state, say) and Run writes through it.
//
// The argument's type travels with the call: a lane can only park at a
// Call[A] with an A, so Run reads typed values and a reader sees which
// argument goes with which call. Calls are compared by identity: declare
// each as a package variable.
type Call[A any] struct {
	Name string
	Run  func(g *Active, args []A) error
	// StepOnly marks a call that is only a lock-step point (a native
	// lane's atomic access): Config.Between does not run before it, so
	// the lanes' code since their last call is paid at their next call
	// that is not one, as if the point were not there.
	StepOnly bool
}

// None is the argument of a call that takes none.
type None = struct{}

// caller is a Call of any argument type, as a parked lane and its group
// hold it.
type caller interface {
	callName() string
	run(g *Active) error
	stepOnly() bool
}

func (c *Call[A]) callName() string { return c.Name }
func (c *Call[A]) stepOnly() bool   { return c.StepOnly }

// run gathers the active lanes' arguments and runs the call. The lanes'
// values were stored by Converge/ConvergeIf with this same c (a group is
// the lanes parked at one caller), so each holds an A: the conversion back
// is the one place the type is recovered, and it cannot fail.
func (c *Call[A]) run(g *Active) error {
	buf, _ := g.w.args.(*[]A)
	if buf == nil {
		g.w.endArgs() // another call's, kept for it: a wave's calls may alternate types
		buf = takeArgs[A](g.w.k.ar)
		g.w.args = buf
	}
	args := (*buf)[:0]
	if cap(args) < len(g.w.lanes) {
		args = make([]A, 0, len(g.w.lanes)) // once, not grown a lane at a time
	}
	for _, t := range g.lanes {
		args = append(args, t.arg.(A))
	}
	*buf = args
	err := c.Run(g, args)
	clear(args) // hold no lane's value past its call
	return err
}

// Active is the set of lanes of one wave that reached a call together.
type Active struct {
	w     *Wave
	call  caller
	lanes []*Thread // active lanes
	all   []*Thread // active and inactive lanes parked here
	mask  uint64
	site  *site
}

// Actor is the wave's actor: block on it.
func (g *Active) Actor() *sim.Actor { return g.w.a }

// Wave is the wave the lanes belong to.
func (g *Active) Wave() *Wave { return g.w }

// Lanes are the active lanes in lane order.
func (g *Active) Lanes() []*Thread { return g.lanes }

// Mask is the active mask: bit i set for lane i.
func (g *Active) Mask() uint64 { return g.mask }

// Call names the call the lanes are at.
func (g *Active) Call() string { return g.call.callName() }

// Site is the group's source position, file:line of the kernel code that
// made the call.
func (g *Active) Site() string { return g.site.show }

// Errorf returns a *LaneError for lane t at this call.
func (g *Active) Errorf(t *Thread, format string, args ...any) error {
	return t.laneError(g.call.callName(), fmt.Errorf(format, args...))
}

// Wave is one wavefront: up to WaveSize lanes run in lock-step.
type Wave struct {
	k       *Kernel
	b       *block
	idx     int
	a       *sim.Actor
	lanes   []*Thread
	live    int
	cur     *Active
	act     Active  // reused for every group
	running *Thread // the lane whose coroutine runs now
	pcs     [maxDepth]uintptr
	args    any // the last Call's argument scratch, a *[]A (Call.run)
}

// Index is the wave's index within its block.
func (w *Wave) Index() int { return w.idx }

// Size is the number of lanes a wave has (the configured wave size).
func (w *Wave) Size() int { return w.k.cfg.WaveSize }

// Kernel is the kernel the wave belongs to.
func (w *Wave) Kernel() *Kernel { return w.k }

// waveBody and waveLabel are a wave as its actor's code and label
// (sim.Body, sim.Labeler): no function value a launch.
type (
	waveBody  Wave
	waveLabel Wave
)

func (b *waveBody) Run(a *sim.Actor) { (*Wave)(b).main(a) }
func (l *waveLabel) Label() string   { return (*Wave)(l).label() }

func (w *Wave) main(a *sim.Actor) {
	defer w.endArgs()
	defer w.stopLanes()
	defer func() {
		// A lane that ended through runtime.Goexit takes the wave's
		// goroutine with it (iter.Pull propagates Goexit): fail the kernel
		// with that lane's error before the actor goes.
		for _, t := range w.lanes {
			if t.panicked != nil {
				w.k.fail(t.panicked)
			}
		}
	}()
	a.SetLabeler((*waveLabel)(w))
	waves := waveOf(w.k.s)
	waves[a] = w
	defer delete(waves, a)
	pl := lanePool(w.k.s)
	for _, t := range w.lanes {
		t.wk = pl.get()
		t.wk.t = t
		w.live++
	}
	for _, t := range w.lanes {
		if !w.advance(t) {
			return
		}
	}
	for w.live > 0 {
		g := w.pick()
		var err error
		if f := w.k.cfg.Between; f != nil && !g.call.stepOnly() {
			f(w.a, g.all)
		}
		if len(g.lanes) > 0 {
			w.cur = g
			err = g.call.run(g)
			w.cur = nil
		}
		if err != nil {
			if _, ok := err.(*LaneError); !ok {
				err = g.lanes[0].laneError(g.call.callName(), err)
			}
			w.k.fail(err)
			return
		}
		for _, t := range g.all {
			t.call, t.arg = nil, nil
			if !w.advance(t) {
				return
			}
		}
	}
	if f := w.k.cfg.Between; f != nil {
		f(w.a, w.lanes)
	}
	w.b.waveDone()
	w.k.waveDone()
}

// waveOfKey keys the run's map from a wave's actor to the wave.
var waveOfKey = sim.NewLocalKey[map[*sim.Actor]*Wave]()

// waveOf is the run's map from running waves' actors to their waves.
func waveOf(s *sim.Sim) map[*sim.Actor]*Wave {
	return sim.RunLocal(s, waveOfKey, func() map[*sim.Actor]*Wave { return map[*sim.Actor]*Wave{} })
}

// RunningLane is the lane whose own code runs now on s (between its
// device calls, which run with no lane's code running), nil when none
// does: an engine, a host actor, an event, or a device call runs.
func RunningLane(s *sim.Sim) *Thread {
	a := s.Current()
	if a == nil {
		return nil
	}
	if w := waveOf(s)[a]; w != nil {
		return w.running
	}
	return nil
}

// advance runs lane t to its next convergence point. It reports false when
// the kernel has failed.
func (w *Wave) advance(t *Thread) bool {
	if w.k.err != nil {
		return false
	}
	w.running = t
	_, ok := t.wk.next()
	w.running = nil
	if !ok || t.done {
		if ok { // the worker is idle again: reuse it
			lanePool(w.k.s).put(t.wk)
		}
		t.wk, t.done = nil, true
		w.live--
		if t.panicked != nil {
			w.k.fail(t.panicked)
			return false
		}
	}
	return w.k.err == nil
}

// pick returns the group of parked lanes whose point comes first in
// program order (see the package doc): its active lanes run the call, and
// all of its lanes resume after it.
func (w *Wave) pick() *Active {
	var best *Thread
	for _, t := range w.lanes {
		if t.call == nil {
			continue
		}
		if best == nil || t.before(best) {
			best = t
		}
	}
	g := &w.act
	g.w, g.call, g.lanes, g.all, g.mask, g.site = w, best.call, g.lanes[:0], g.all[:0], 0, best.site
	for _, t := range w.lanes {
		if t.call != nil && t.sameSite(best) {
			g.all = append(g.all, t)
			if !t.idle {
				g.lanes = append(g.lanes, t)
				g.mask |= 1 << uint(t.lane)
			}
		}
	}
	return g
}

// stopLanes ends the workers of lanes that are mid-kernel (the kernel
// failed or the run is being torn down): they unwind and are not reused.
// takeArgs is an argument scratch for a Call of A (Call.run): one an
// ended wave of the worker's runs left in the arena, else a new one.
func takeArgs[A any](ar *launchArena) *[]A {
	if ar != nil {
		for i := len(ar.args) - 1; i >= 0; i-- {
			if b, ok := ar.args[i].(*[]A); ok {
				ar.args = append(ar.args[:i], ar.args[i+1:]...)
				return b
			}
		}
	}
	return new([]A)
}

// endArgs leaves the wave's argument scratch (cleared after each call)
// to the arena's waves, when the wave ends or its next call takes
// another type.
func (w *Wave) endArgs() {
	if ar := w.k.ar; ar != nil && w.args != nil && len(ar.args) < maxKeptArgs {
		ar.args = append(ar.args, w.args)
	}
	w.args = nil
}

func (w *Wave) stopLanes() {
	for _, t := range w.lanes {
		if t.wk != nil {
			t.wk.stop()
			t.wk = nil
		}
	}
}

func (w *Wave) label() string {
	var sb strings.Builder
	if g := w.cur; g != nil {
		fmt.Fprintf(&sb, "%s by lanes %s at %s", g.call.callName(), maskString(g.mask), g.site.show)
	}
	// Parked groups in program order, each with its lanes and position.
	type grp struct {
		t    *Thread
		mask uint64
	}
	var gs []grp
	for _, t := range w.lanes {
		if t.call == nil || (w.cur != nil && t.sameSite(w.cur.all[0])) {
			continue
		}
		found := false
		for i := range gs {
			if gs[i].t.sameSite(t) {
				gs[i].mask |= 1 << uint(t.lane)
				found = true
				break
			}
		}
		if !found {
			gs = append(gs, grp{t, 1 << uint(t.lane)})
		}
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].t.before(gs[j].t) })
	for _, g := range gs {
		if sb.Len() > 0 {
			sb.WriteString("; ")
		}
		fmt.Fprintf(&sb, "lanes %s parked at %s (%s)", maskString(g.mask), g.t.call.callName(), g.t.site.show)
	}
	return sb.String()
}

// maskString writes a lane mask as ranges: "0-3,8,10-63".
func maskString(m uint64) string {
	var parts []string
	for m != 0 {
		lo := bits.TrailingZeros64(m)
		hi := lo
		for hi+1 < 64 && m&(1<<uint(hi+1)) != 0 {
			hi++
		}
		if hi == lo {
			parts = append(parts, fmt.Sprint(lo))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", lo, hi))
		}
		if hi == 63 {
			break
		}
		m &^= (uint64(1)<<uint(hi+1) - 1)
	}
	return strings.Join(parts, ",")
}

// ---- lanes as coroutines ----

// errStopped unwinds a lane whose wave is being torn down.
type errStopped struct{}

// worker is a coroutine that runs lanes one after another. Creating one
// costs a goroutine (about 1 µs, 30 µs under the race detector) where a
// switch costs 70 ns, so a run keeps the idle ones in a pool and reuses them
// for the next kernel's lanes; the pool ends them when the run ends.
type worker struct {
	next func() (struct{}, bool)
	stop func()
	t    *Thread // the lane to run next, set before resuming an idle worker
}

func (wk *worker) loop(yield func(struct{}) bool) {
	for {
		if !wk.t.run(yield) {
			return // stopped mid-lane
		}
		if !yield(struct{}{}) { // idle until given a lane
			return
		}
	}
}

type workerPool struct {
	idle []*worker
	made int // workers this run took (created, or under -race shared), for tests
}

// poolKey keys a run's pool of idle workers, and a Scratch's.
var poolKey = sim.NewLocalKey[*workerPool]()

// lanePool is the run's pool of idle workers: the Scratch's, kept across
// the runs that borrow it (an explore worker's seeds: 16 lane workers were
// a tenth of a 4 KiB all-to-all seed's allocations) and ended by its
// Close, or the run's own, ended when the run ends.
func lanePool(s *sim.Sim) *workerPool {
	return sim.RunLocal(s, poolKey, func() *workerPool {
		if sc := s.Scratch(); sc != nil {
			return sim.WorkerLocal(sc, poolKey, func() *workerPool {
				p := &workerPool{}
				sc.OnClose(p.drain)
				return p
			})
		}
		p := &workerPool{}
		s.AtEnd(p.drain)
		return p
	})
}

func (p *workerPool) get() *worker {
	if n := len(p.idle); n > 0 {
		wk := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return wk
	}
	p.made++
	if wk := sharedWorkers.get(); wk != nil {
		return wk
	}
	wk := &worker{}
	wk.next, wk.stop = iter.Pull(wk.loop)
	workersStarted.Add(1)
	return wk
}

// workersStarted counts the lane coroutines the process started, for tests.
var workersStarted atomic.Int64

func (p *workerPool) put(wk *worker) {
	wk.t = nil
	p.idle = append(p.idle, wk)
}

func (p *workerPool) drain() {
	for _, wk := range p.idle {
		if !sharedWorkers.put(wk) {
			wk.stop()
		}
	}
	p.idle = nil
}

// sharedWorkers holds, under the race detector only, idle workers that
// ended runs left for later runs: there an ended goroutine keeps its share
// of the detector's history for the life of the process (racebuild's
// doc), and a test binary starting every run's lane coroutines afresh grew
// by gigabytes. At most maxSharedWorkers wait: enough for the largest
// test's lanes at once (8 ranks × 8 blocks × 128). A shared worker's
// history stops growing at about half a MiB, where each ended one would
// have kept its own. Without -race a run ends its own workers.
var sharedWorkers workerShelf

const maxSharedWorkers = 8192

type workerShelf struct {
	mu   sync.Mutex
	idle []*worker
}

func (s *workerShelf) get() *worker {
	if !racebuild.Enabled {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.idle)
	if n == 0 {
		return nil
	}
	wk := s.idle[n-1]
	s.idle = s.idle[:n-1]
	return wk
}

func (s *workerShelf) put(wk *worker) bool {
	if !racebuild.Enabled {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.idle) >= maxSharedWorkers {
		return false
	}
	s.idle = append(s.idle, wk)
	return true
}

// run runs the kernel function as lane t on the calling worker. It reports
// false when the worker was stopped mid-lane; a panic is recorded as the
// lane's failure and the worker stays usable.
func (t *Thread) run(yield func(struct{}) bool) (ok bool) {
	returned := false
	defer func() {
		t.done = true
		r := recover()
		if r == nil && !returned {
			// runtime.Goexit: from a test's t.FailNow or require.* in
			// kernel code. The lane must fail, not vanish as if it had
			// finished.
			t.panicked = &LaneError{Kernel: t.w.k.cfg.Name, GPU: t.w.k.cfg.GPU, Block: t.w.b.idx,
				Thread: t.tid, Wave: t.w.idx, Lane: t.lane, Call: "runtime.Goexit",
				Err: errors.New("the lane's code called runtime.Goexit (t.FailNow, t.Fatal or require.* inside a kernel?): check with assert, or return errors to the host")}
			return
		}
		if r != nil {
			if _, stopped := r.(errStopped); stopped {
				ok = false
				return
			}
			if le, isLane := r.(*LaneError); isLane { // a failed device call
				t.panicked = le
				return
			}
			t.panicked = &LaneError{Kernel: t.w.k.cfg.Name, GPU: t.w.k.cfg.GPU, Block: t.w.b.idx,
				Thread: t.tid, Wave: t.w.idx, Lane: t.lane, Call: "panic",
				Err: fmt.Errorf("%v", r), Panic: r, Stack: string(debug.Stack())}
		}
	}()
	t.yield = yield
	if c := t.w.k.code; c != nil {
		c.Run(t)
	} else {
		t.w.k.fn(t)
	}
	returned = true
	return true
}

// park records the lane's convergence point and hands control back to the
// wave until the group has run.
func (t *Thread) park(c caller, idle bool) {
	if t.w.running != t {
		// Another lane's code is using this Thread (or an object built on
		// it): the caller's own lane is the one to fail.
		panic(fmt.Sprintf("%s called on %v's Thread from another lane: a Thread (and a cco.Sdma built on it) belongs to its own lane", c.callName(), t))
	}
	// Read the chain into the wave's scratch (one lane runs at a time);
	// a lane that parks where it parked last skips the site lookup.
	if ns := t.native; ns != nil {
		t.native, t.lastN = nil, 0
		if ns.s == t.site {
			t.again()
		} else {
			t.enter(ns.s)
		}
		t.call, t.idle = c, idle
		if !t.yield(struct{}{}) {
			panic(errStopped{})
		}
		return
	}
	pcs := t.w.pcs[:callSite(t.w.pcs[:])]
	if len(pcs) == t.lastN && slices.Equal(pcs, t.lastPC[:t.lastN]) {
		t.again()
	} else {
		t.lastN = copy(t.lastPC[:], pcs)
		t.enter(t.w.k.site(pcs))
	}
	t.call, t.idle = c, idle
	if !t.yield(struct{}{}) {
		panic(errStopped{})
	}
}

// sameSite: lanes at one call and one point of the program form a group.
func (t *Thread) sameSite(u *Thread) bool {
	if t.call != u.call {
		return false
	}
	if t.site == u.site {
		return true
	}
	a, b := t.site.frames, u.site.frames
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].samePos(&b[i]) {
			return false
		}
	}
	return true
}
