package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"

	hb "github.com/emud-dev/emud/race"
)

// DefaultWatchdog is the progress watchdog's span when Config.Watchdog is 0:
// long against any collective on one node (microseconds to milliseconds),
// short enough that a poller spinning forever is reported quickly.
const DefaultWatchdog = 100 * Millisecond

// Config sets up a run.
type Config struct {
	// Seed fixes every choice of the run: tie-breaks between events due at
	// the same time, and the streams handed out by Rand.
	Seed uint64
	// Watchdog is the span of virtual time without progress after which the
	// run stops with a watchdog HangError. 0 means DefaultWatchdog; a
	// negative value disables the watchdog.
	Watchdog Time
	// Record keeps every trace record in memory (Records). The digest is
	// computed either way.
	Record bool
	// Perturb is the timing perturbation level (perturb.go): 0 runs the
	// timing model exactly; higher levels spread durations, launches and
	// poll phases from the seed.
	Perturb Level
	// Strategy is how scheduling choices are made (pct.go); PCT configures
	// StrategyPCT.
	Strategy Strategy
	PCT      PCT
	// Scratch, if set, lends the run its event store and takes it back
	// when Run returns (scratch.go); nil makes a store of the run's own.
	Scratch *Scratch
	// Stop, if set, ends the run at its next event once stopped, from any
	// goroutine (a daemon canceling a run it did not build itself); nil
	// gives the run a Stopper of its own (Interrupt).
	Stop *Stopper
}

// Stopper stops a run from outside it: Stop may be called from any
// goroutine, before or during the run, and the first error given wins.
// The run is cut short, so its digest is not the uninterrupted run's;
// nothing changes for a run never stopped.
type Stopper struct{ err atomic.Pointer[error] }

// Stop makes the run end at its next event with err (Run returns it).
func (st *Stopper) Stop(err error) {
	if err == nil {
		err = errors.New("sim: Stop(nil)")
	}
	st.err.CompareAndSwap(nil, &err)
}

// stopped is Stop's error, nil until then.
func (st *Stopper) stopped() error {
	if p := st.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Sim is one deterministic run. It is single-use: build it, spawn actors,
// call Run once.
type Sim struct {
	gate *gate // SetGate (turnstile.go)
	// released: how many actors the last quiescent point released from
	// AwaitUnlessQuiescent (LastRelease)
	released int
	// quiet are the OnQuiescent hooks, in registration order.
	quiet    []func() bool
	cfg      Config
	now      Time
	seq      uint64
	heap     eventQueue
	batch    []*event // events due now, not yet run; the PRNG picks among them
	free     []uint32 // recycled events' ids
	chunks   [][]event
	freeRuns []*stepRun // AtWorkSteps' runs, for reuse
	nevents  uint32     // events made so far (ids 0..nevents-1)
	sched    *rand.Rand
	watchdog Time
	progress Time // virtual time of the last progress
	work     int  // AtWork events pending (cancelled ones until their time)

	actors []*Actor // in id order; finished ones leave it (newActor)
	nextID uint32   // the next actor's id
	// finished counts the finished actors still in actors.
	finished int
	cur      *Actor
	back     chan struct{} // actor -> scheduler hand-back

	diagnosers []diagnoser
	trace      tracer
	traceSched TraceKind

	perturb *Perturber
	pct     *pctState // nil unless StrategyPCT
	steps   int

	ran bool
	err error
	// stop is Config.Stop or the run's own; the event loop reads it once
	// per event.
	stop  *Stopper
	local locals // RunLocal
	atEnd []func()
	race  *hb.Detector // nil unless EnableRace (race.go)

	writer  Writer   // who writes now (SetWriter), reset per event and actor
	nameBuf []byte   // the writer's name as it is appended (writerName)
	fired   []*watch // the watches a Notify fires (WatchList.wake), from the Scratch
	// The free watches, page lists and page maps of the run's watch
	// lists (watch.go), from the Scratch.
	freeWatches []*watch
	freeLists   [][]*watch
	freeMaps    []map[uint64][]*watch
}

// New returns a simulator at virtual time 0.
func New(cfg Config) *Sim {
	s := &Sim{
		cfg:   cfg,
		sched: rand.New(rand.NewPCG(cfg.Seed, 0x5eed_5c4ed)),
		back:  make(chan struct{}),
		stop:  cfg.Stop,
	}
	if s.stop == nil {
		s.stop = &Stopper{}
	}
	switch {
	case cfg.Watchdog == 0:
		s.watchdog = DefaultWatchdog
	case cfg.Watchdog < 0:
		s.watchdog = -1
	default:
		s.watchdog = cfg.Watchdog
	}
	s.heap.scratch = cfg.Scratch
	if sc := cfg.Scratch; sc != nil {
		// The last run's lists, emptied (takeBack): taken, not shared.
		s.free, s.batch, s.heap.heap, s.heap.free = sc.free, sc.batch, sc.heap, sc.qfree
		for i := range s.heap.runs {
			s.heap.runs[i].blocks, sc.runBlocks[i] = sc.runBlocks[i], nil
		}
		sc.free, sc.batch, sc.heap, sc.qfree = nil, nil, nil, nil
	}
	cfg.Scratch.newRun()
	s.trace.init(cfg.Record, cfg.Scratch)
	if cfg.Scratch != nil {
		s.fired, s.nameBuf = cfg.Scratch.fired, cfg.Scratch.nameBuf
		s.freeWatches, s.freeLists, s.freeMaps = cfg.Scratch.freeWatches, cfg.Scratch.freeLists, cfg.Scratch.freeMaps
		cfg.Scratch.freeWatches, cfg.Scratch.freeLists, cfg.Scratch.freeMaps = nil, nil, nil
		clear(cfg.Scratch.actorList)
		s.actors, cfg.Scratch.actorList = cfg.Scratch.actorList[:0], nil
		clear(cfg.Scratch.runLocal)
		s.local, cfg.Scratch.runLocal = cfg.Scratch.runLocal, nil
	}
	s.traceSched = s.TraceKind("sched")
	s.perturb = newPerturber(s, cfg.Perturb)
	if cfg.Strategy == StrategyPCT {
		s.pct = newPCT(s, cfg.PCT)
	}
	if cfg.Perturb != LevelExact || cfg.Strategy != StrategyRandom {
		// Part of the digest: the same seed under other settings is another
		// run. Exact random runs hash nothing more, keeping their digests.
		s.trace.hashString(fmt.Sprintf("perturb=%d strategy=%v pct=%+v", cfg.Perturb, cfg.Strategy, cfg.PCT))
	}
	return s
}

// Now returns the current virtual time.
func (s *Sim) Now() Time { return s.now }

// Seed returns the run's seed.
func (s *Sim) Seed() uint64 { return s.cfg.Seed }

// Rand returns a new PRNG stream derived from the seed and stream. Users of
// randomness (timing jitter, fault injection) each take their own stream so
// that one consumer drawing more numbers does not shift another's.
func (s *Sim) Rand(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(s.cfg.Seed, 0x9e3779b97f4a7c15^stream))
}

func (s *Sim) alloc() *event {
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		s.free = s.free[:n-1]
		return s.ev(id)
	}
	// Out of recycled events: make a chunk of them at once (a run with many
	// pending events would otherwise allocate each on its own).
	id := s.nevents
	if id%eventChunk == 0 {
		s.chunks = append(s.chunks, s.cfg.Scratch.chunk())
	}
	s.nevents++
	e := s.ev(id)
	e.id = id
	return e
}

// ev is the event of an id.
func (s *Sim) ev(id uint32) *event { return &s.chunks[id>>eventChunkBits][id&(eventChunk-1)] }

func (s *Sim) recycle(e *event) {
	if e.work {
		s.work--
	}
	e.gen++
	e.fn, e.h, e.actor, e.steps, e.dead, e.work, e.long = nil, nil, nil, nil, false, false, false
	s.free = append(s.free, e.id)
}

func (s *Sim) schedule(e *event) {
	s.seq++
	e.seq = s.seq
	if e.t == s.now && len(s.batch) > 0 {
		// Already choosing among events due now: the new one competes too.
		s.batch = append(s.batch, e)
		return
	}
	s.heap.push(e)
}

// At schedules fn at virtual time t. A time in the past runs at Now: the
// past cannot be changed.
func (s *Sim) At(t Time, fn func()) Timer {
	if t < s.now {
		t = s.now
	}
	e := s.alloc()
	e.t, e.fn = t, fn
	s.schedule(e)
	return Timer{e: e, gen: e.gen}
}

// After schedules fn d after Now.
func (s *Sim) After(d Time, fn func()) Timer { return s.At(s.now+d, fn) }

// AtWork is At for the end of a step of real work whose length the timing
// model fixed (a packet's transfer or gap, a doorbell's latency): however
// long it is, nothing spins meanwhile. While one is pending the watchdog
// does not fire, and running it counts as progress. A slow but valid model
// (a packet gap of 1000 s) is not a hang; pollers that re-check on a timer
// must keep using At.
func (s *Sim) AtWork(t Time, fn func()) Timer {
	tm := s.At(t, fn)
	tm.e.work = true
	s.work++
	return tm
}

// AtWorkStep is AtWork for a step of a Handler: h.Step(arg) runs at t.
// It schedules exactly as AtWork does (the same sequence number, the same
// place among the events due at t); it only spares the caller a closure
// per step.
func (s *Sim) AtWorkStep(t Time, h Handler, arg uint64) Timer {
	if t < s.now {
		t = s.now
	}
	e := s.alloc()
	e.t, e.h, e.arg, e.work = t, h, arg, true
	s.work++
	s.schedule(e)
	return Timer{e: e, gen: e.gen}
}

// AfterWork is AtWork d after Now.
func (s *Sim) AfterWork(d Time, fn func()) Timer { return s.AtWork(s.now+d, fn) }

// Progress records that the run made progress now (the watchdog's notion).
// The engine calls it per completed packet; satisfied waits, actor starts and
// exits count on their own.
func (s *Sim) Progress() { s.progress = s.now }

// LastProgress returns the virtual time of the last progress.
func (s *Sim) LastProgress() Time { return s.progress }

// Fail stops the run: Run returns err (the first one, if several fail).
func (s *Sim) Fail(err error) {
	if err == nil {
		err = errors.New("sim: Fail(nil)")
	}
	if s.err == nil {
		s.err = err
	}
}

// Interrupt stops a running simulation from any goroutine: Run returns err
// at the next event (actors still in flight end as on any failure). The
// run is cut short, so its digest is not the uninterrupted run's; nothing
// changes for a run never interrupted.
func (s *Sim) Interrupt(err error) { s.stop.Stop(err) }

// Err returns the error that stopped the run, if any.
func (s *Sim) Err() error { return s.err }

// EventPanicError reports a panic inside an event callback: a bug in emud
// itself, turned into an error so the process survives.
type EventPanicError struct {
	At    Time
	Value any
	Stack string
}

func (e *EventPanicError) Error() string {
	return fmt.Sprintf("sim: event callback panicked at %v: %v\n%s", e.At, e.Value, e.Stack)
}

// Run runs the simulation until it finishes, fails or hangs. It returns nil
// on success, a *HangError on a hang, or the failure. Every actor goroutine
// has ended when Run returns.
func (s *Sim) Run() error {
	if s.ran {
		return errors.New("sim: Run called twice; a Sim is single-use")
	}
	s.ran = true
	if a := s.next(); a != nil {
		s.dispatch(a)
		<-s.back // the token comes back when nothing is left to run
	}
	if s.err == nil {
		if h := s.quiescentHang(); h != nil {
			s.err = h
		}
	}
	if s.err == nil && s.race != nil {
		s.err = s.race.Err()
	}
	s.killAll()
	if s.gate != nil {
		s.gate.stop()
	}
	for _, fn := range s.atEnd {
		fn()
	}
	if s.cfg.Scratch != nil {
		s.cfg.Scratch.takeBack(s)
	}
	return s.err
}

// Scratch returns the Scratch the run borrows (Config.Scratch), or nil.
func (s *Sim) Scratch() *Scratch { return s.cfg.Scratch }

// AtEnd registers fn to run when Run returns, after every actor has ended:
// to release per-run resources such as idle goroutines.
func (s *Sim) AtEnd(fn func()) { s.atEnd = append(s.atEnd, fn) }

// next runs due events, on whichever goroutine holds the token, until an
// actor is due (it returns that actor) or the run is over (nil).
func (s *Sim) next() *Actor {
	s.cur = nil
	for s.err == nil {
		if err := s.stop.stopped(); err != nil {
			s.err = err
			return nil
		}
		var e *event
		if n := len(s.batch); n > 0 {
			i := 0
			if n > 1 {
				if s.pct != nil {
					i = s.pct.pick(s.batch)
				} else {
					i = s.sched.IntN(n)
				}
				s.trace.sched(s, uint64(i), uint64(n))
			}
			e = s.batch[i]
			s.batch[i] = s.batch[n-1]
			s.batch[n-1] = nil
			s.batch = s.batch[:n-1]
		} else {
			if s.heap.len() == 0 {
				if s.quiescent() || s.releaseTentative() {
					continue
				}
				return nil
			}
			e = s.popEvent()
			if e.dead {
				s.recycle(e)
				continue
			}
			if e.long && e.actor.credited != s.progress+1 {
				// A timed wait longer than the watchdog's span ends now:
				// its expiry is progress (the program asked to wait that
				// long), once; a second with no progress between is not,
				// so a loop of long timed waits that never ends is still
				// a watchdog hang.
				s.progress = e.t
				e.actor.credited = s.progress + 1
			}
			if s.watchdog > 0 && s.work == 0 && e.t-s.progress > s.watchdog {
				// Put it back so the report shows it pending; stop at the
				// moment the watchdog expired.
				s.heap.push(e)
				s.now = s.progress + s.watchdog
				s.err = s.hang(HangWatchdog)
				return nil
			}
			s.now = e.t
			if t, ok := s.heap.peekTime(); ok && t == e.t {
				// Several due at once: gather them and let the PRNG pick.
				s.batch = append(s.batch, e)
				for t, ok := s.heap.peekTime(); ok && t == e.t; t, ok = s.heap.peekTime() {
					s.batch = append(s.batch, s.popEvent())
				}
				continue
			}
		}
		if e.dead {
			s.recycle(e)
			continue
		}
		if a := e.actor; a == nil || (a.token == e.token && a.state != stateDone) {
			s.steps++
			if s.pct != nil {
				if d, ok := s.pct.preempt(s.steps, e); ok {
					s.trace.record(s, s.traceSched, ^uint32(0)-1, 4, uint64(d), uint64(s.steps))
					e.t = s.now + d
					s.seq++
					e.seq = s.seq
					s.heap.push(e)
					continue
				}
			}
		}
		if a := e.actor; a != nil {
			tok := e.token
			s.recycle(e)
			if a.token == tok && a.state != stateDone {
				s.writer = nil
				return a
			}
			continue
		}
		fn, h, arg := e.fn, e.h, e.arg
		if e.work {
			s.progress = s.now
		}
		s.recycle(e)
		s.writer = nil
		s.call(fn, h, arg)
	}
	return nil
}

// call runs an event's callback fn, or h.Step(arg) when fn is nil.
func (s *Sim) call(fn func(), h Handler, arg uint64) {
	defer func() {
		if r := recover(); r != nil {
			s.Fail(&EventPanicError{At: s.now, Value: r, Stack: string(debug.Stack())})
		}
	}()
	if fn != nil {
		fn()
		return
	}
	h.Step(arg)
}

// Diagnoser is a layer's part in a hang report, asked for when a run is
// checked for a hang: it returns what it sees now and changes nothing. A
// quiescent run is a hang if any actor is blocked or any diagnoser returns
// a waiter.
type Diagnoser func() Diagnosis

type diagnoser struct {
	layer Layer
	name  string
	f     Diagnoser
}

// AddDiagnoser registers the diagnoser of a layer under a name ("engine",
// "cco", ...). Diagnosers are asked in the order of their layer, then
// name, whatever the order they were added in (diagnosers of one layer and
// name keep the order they were added in), and their causes are merged by
// [MergeCauses]. Waiters come from actors and the layers below
// [LayerAPI]: a run that ends with none of them waiting is not a hang,
// and its LayerAPI diagnosers are not asked (their waiters would be
// ignored).
func (s *Sim) AddDiagnoser(layer Layer, name string, f Diagnoser) {
	s.diagnosers = append(s.diagnosers, diagnoser{layer, name, f})
	slices.SortStableFunc(s.diagnosers, func(a, b diagnoser) int {
		if a.layer != b.layer {
			return int(a.layer) - int(b.layer)
		}
		return strings.Compare(a.name, b.name)
	})
}

// OnQuiescent adds f to what runs when nothing is pending (every actor
// waits and no event is due): before the run's waiters are released from
// AwaitUnlessQuiescent or reported as a hang, f may make work that was
// held back (a block a lane budget kept from starting, package kernel's
// Pool) and reports whether it did; the run then goes on. Hooks run in
// the order they were added, until one reports work.
func (s *Sim) OnQuiescent(f func() bool) { s.quiet = append(s.quiet, f) }

// quiescent runs the OnQuiescent hooks until one makes work.
func (s *Sim) quiescent() bool {
	for _, f := range s.quiet {
		if f() {
			return true
		}
	}
	return false
}

// releaseTentative wakes, in actor order, every actor waiting in
// AwaitUnlessQuiescent once the run is quiescent, and reports whether
// there was one. The scan runs only when nothing is pending, which a
// passing run reaches once.
func (s *Sim) releaseTentative() bool {
	n := 0
	for _, a := range s.actors {
		if a.tentative && !a.released && a.state == stateWaiting {
			a.released = true
			s.wakeTok(a, s.now, a.token)
			n++
		}
	}
	if n > 0 {
		s.released = n
	}
	return n > 0
}

// LastRelease is how many actors the last quiescent point released from
// AwaitUnlessQuiescent. An actor released there learns from it whether
// it was released alone with its kind (a C++ rank out in a call outside
// the simulation, package capi) or with others that may still make
// progress, so the run was quiescent only until those run.
func (s *Sim) LastRelease() int { return s.released }

func (s *Sim) quiescentHang() *HangError {
	// Every run ends here: the causes are merged and the digest taken only
	// for a hang (a passing 4 KiB all-to-all seed spent 9 KiB of its
	// allocation merging causes no report would show).
	h, causes := s.hangWaiters(HangDeadlock, true)
	if len(h.Waiters) == 0 {
		return nil
	}
	s.finishHang(h, causes)
	return h
}

// FrozenHang is the report of a run frozen by code outside the
// simulation: spinner is who holds the turn and has not called into the
// emulation for the caller's spin limit (a native lane or host thread
// running its own code), why says so, and the rest of the report is what
// every other actor and queue waits for. Call it only while that code
// runs: the simulation is then still (nothing else can take a turn), so
// another goroutine may read it.
func (s *Sim) FrozenHang(spinner Waiter, why Cause) *HangError {
	h := s.hang(HangSpin)
	h.Waiters = append([]Waiter{spinner}, h.Waiters...)
	h.Causes = MergeCauses(append([]Cause{why}, h.Causes...))
	return h
}

// OutsideHang is the report of a quiescent run whose remaining actors
// wait for calls made outside the simulation that never came back (out
// names each such call's thread, first in the report): a deadlock whose
// last link is outside. Call it while the simulation is still (from the
// running actor, or while nothing else can take a turn).
func (s *Sim) OutsideHang(out []Waiter, why Cause) *HangError {
	h := s.hang(HangOutside)
	h.Waiters = append(slices.Clone(out), h.Waiters...)
	h.Causes = MergeCauses(append([]Cause{why}, h.Causes...))
	return h
}

func (s *Sim) hang(kind HangKind) *HangError {
	h, causes := s.hangWaiters(kind, false)
	s.finishHang(h, causes)
	return h
}

// hangWaiters is a hang report's waiters, actors' and diagnosers' (the
// diagnosers asked once), and the diagnosers' causes, not yet merged.
// With ifWaiters, the device-API layer's diagnosers, which name causes
// and no waiters, are not asked when nothing below them waits: every
// passing run ends at quiescentHang, and a 4 KiB all-to-all seed spent
// 6 KiB there on causes of a hang it did not have.
func (s *Sim) hangWaiters(kind HangKind, ifWaiters bool) (*HangError, []Cause) {
	h := &HangError{Kind: kind, At: s.now, Seed: s.cfg.Seed, LastProgress: s.progress}
	if s.race != nil {
		var re *hb.Error
		if errors.As(s.race.Err(), &re) {
			h.Races = re
		}
	}
	for _, a := range s.actors {
		if w, ok := a.waiter(); ok {
			h.Waiters = append(h.Waiters, w)
		}
	}
	var causes []Cause
	for _, d := range s.diagnosers { // by layer (AddDiagnoser)
		if ifWaiters && d.layer >= LayerAPI && len(h.Waiters) == 0 {
			break
		}
		g := d.f()
		h.Waiters = append(h.Waiters, g.Waiters...)
		causes = append(causes, g.Causes...)
	}
	return h, causes
}

// finishHang merges the causes into h and takes the digest.
func (s *Sim) finishHang(h *HangError, causes []Cause) {
	h.Causes = MergeCauses(causes)
	h.Digest = s.Digest()
}
