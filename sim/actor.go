package sim

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	hb "github.com/emud-dev/emud/race"
)

type actorState uint8

const (
	stateReady actorState = iota
	stateRunning
	stateSleeping
	stateWaiting
	stateDone
)

// Actor is a goroutine under the simulator's control: GPU code, a host
// thread, a test driver. Its methods may only be called from its own
// goroutine, while it runs.
type Actor struct {
	s       *Sim
	name    string
	id      uint32
	fn      func(*Actor)
	resume  chan struct{}
	start   func() // main, as the goroutine's function: made with the actor, kept when a Scratch reuses it
	started bool
	killed  bool
	foreign bool // turns taken on goroutines that must not exit (SetForeign)
	state   actorState
	token   uint64 // bumped each time the actor blocks; wakes carry it
	since   Time
	until   Time // sleeping: wake time
	wait    Wait
	label   string
	labelFn func() string
	labeler Labeler    // SetLabeler
	body    Body       // SpawnBody: run instead of fn
	rt      *hb.Thread // the race detector's thread, made on first use
	// credited is the progress (plus one) a long timed wait's expiry
	// last set for this actor: a second such expiry with no progress
	// between is not progress again.
	credited Time
	// tentative: the actor waits in AwaitUnlessQuiescent; released: a
	// quiescent run ended that wait without its predicate.
	tentative, released bool
	// ts is a foreign actor's turnstile (SetTurnstile); inTs: the actor
	// waits on it for its turn, not on resume.
	ts   Turnstile
	inTs bool
}

// newActor makes an actor with the next id and adds it to s.actors. Once
// finished actors outnumber the live ones, they leave s.actors (kept in id
// order, so every scan over it sees the live actors in the order it always
// did): a C++ program's thousands of launches each left 64 finished waves
// behind, ~280 B each, for the rest of the run. Their names stay only
// while records are kept (Config.Record), for the scheduler records' text.
func (s *Sim) newActor(name string, fn func(*Actor)) *Actor {
	if s.finished > 64 && s.finished > len(s.actors)-s.finished {
		live := s.actors[:0]
		for _, a := range s.actors {
			if a.state != stateDone {
				live = append(live, a)
			}
		}
		clear(s.actors[len(live):])
		s.actors, s.finished = live, 0
	}
	var a *Actor
	if sc := s.cfg.Scratch; sc != nil && len(sc.actors) > 0 {
		// An actor of an earlier run whose goroutine ended (takeBack):
		// its channel and start function are free to use again.
		a = sc.actors[len(sc.actors)-1]
		sc.actors = sc.actors[:len(sc.actors)-1]
		*a = Actor{s: s, name: name, id: s.nextID, fn: fn, resume: a.resume, start: a.start}
	} else {
		a = &Actor{s: s, name: name, id: s.nextID, fn: fn, resume: make(chan struct{})}
		a.start = a.main
	}
	s.nextID++
	s.actors = append(s.actors, a)
	if s.trace.keep {
		s.trace.actorNames = append(s.trace.actorNames, name)
	}
	return a
}

// Spawn creates an actor that runs fn, starting at Now (after whatever is
// already due now, in PRNG order). It may be called before Run, from an
// actor or from an event.
func (s *Sim) Spawn(name string, fn func(a *Actor)) *Actor {
	a := s.newActor(name, fn)
	s.trace.record(s, s.traceSched, a.id, 1, 0, 0)
	s.wake(a, s.now)
	return a
}

// Name returns the name given to Spawn.
func (a *Actor) Name() string { return a.name }

// Sim returns the simulator the actor belongs to.
func (a *Actor) Sim() *Sim { return a.s }

// Now is a.Sim().Now().
func (a *Actor) Now() Time { return a.s.now }

// Done reports whether the actor's function has returned.
func (a *Actor) Done() bool { return a.state == stateDone }

// SetLabel names what the actor is doing, for hang reports (a polling loop
// that sleeps between reads shows its label while it sleeps).
func (a *Actor) SetLabel(l string) { a.label, a.labelFn = l, nil }

// SetLabelFunc is SetLabel with the text built only when a report asks for
// it: for labels that change on every step of a hot loop.
func (a *Actor) SetLabelFunc(f func() string) { a.label, a.labelFn, a.labeler = "", f, nil }

// Labeler says what an actor's code is at, as SetLabelFunc's function
// does: for a pointer that already holds the state (a kernel's wave), so
// that setting it makes no function value.
type Labeler interface{ Label() string }

// SetLabeler is SetLabelFunc with l's Label.
func (a *Actor) SetLabeler(l Labeler) { a.label, a.labelFn, a.labeler = "", nil, l }

func (a *Actor) labelText() string {
	if a.labeler != nil {
		return a.labeler.Label()
	}
	if a.labelFn != nil {
		return a.labelFn()
	}
	return a.label
}

// wake schedules a to run at t with its current token.
func (s *Sim) wake(a *Actor, t Time) Timer { return s.wakeTok(a, t, a.token) }

func (s *Sim) wakeTok(a *Actor, t Time, tok uint64) Timer {
	if t < s.now {
		t = s.now
	}
	e := s.alloc()
	e.t, e.actor, e.token = t, a, tok
	s.schedule(e)
	return Timer{e: e, gen: e.gen}
}

// Current is the running actor, nil while an event (or nothing) runs.
func (s *Sim) Current() *Actor { return s.cur }

// enter marks a as the running actor.
func (s *Sim) enter(a *Actor) {
	s.cur = a
	a.state = stateRunning
	a.wait = Wait{}
	s.trace.record(s, s.traceSched, a.id, 2, a.token, 0)
}

// dispatch hands the token to a, or back to Run's goroutine when a is nil.
// The caller then waits for the token (or exits). Control moves straight
// from one actor to the next: one channel operation per switch, none when
// an actor's own wake is next.
func (s *Sim) dispatch(a *Actor) {
	if a == nil {
		s.cur = nil
		s.back <- struct{}{}
		return
	}
	s.enter(a)
	if !a.started {
		a.started = true
		s.progress = s.now
		goStart(a.start)
		return
	}
	a.wakeUp()
}

// wakeUp lets a's blocked goroutine or thread go on, wherever it waits:
// a thread on its turnstile through the gate, when the gate is free.
func (a *Actor) wakeUp() {
	if a.inTs {
		a.s.toThread(a.ts)
		return
	}
	a.resume <- struct{}{}
}

// ActorPanicError reports a panic in an actor's function. The run stops;
// the process does not.
type ActorPanicError struct {
	Actor string
	At    Time
	Value any
	Stack string
}

func (e *ActorPanicError) Error() string {
	return fmt.Sprintf("actor %q panicked at %v: %v", e.Actor, e.At, e.Value)
}

func (a *Actor) main() {
	returned := false
	defer func() {
		if r := recover(); r != nil && !a.killed {
			a.s.Fail(&ActorPanicError{Actor: a.name, At: a.s.now, Value: r, Stack: string(debug.Stack())})
		} else if !returned && !a.killed {
			// runtime.Goexit, not ours: a test's t.FailNow or require.*
			// from actor code. The run must not end as if all went well.
			a.s.Fail(&ActorPanicError{Actor: a.name, At: a.s.now, Value: errGoexit})
		}
		s := a.s
		a.state = stateDone
		// What its code held (a wave and its lanes) goes now, or each
		// launch of a long C++ program kept ~0.9 KiB a lane for the rest
		// of the run; the actor itself leaves s.actors at the next
		// compaction (newActor).
		a.fn, a.body, a.wait, a.labelFn, a.labeler = nil, nil, Wait{}, nil, nil
		s.finished++
		if a.killed {
			s.back <- struct{}{}
			return
		}
		if a.rt != nil {
			// Its slot may go to a later thread ordered after it
			// (race.Detector.Retire), or every clock grows with the waves
			// of every launch.
			s.race.Retire(a.rt)
			a.rt = nil
		}
		s.progress = s.now
		s.trace.record(s, s.traceSched, a.id, 3, 0, 0)
		s.dispatch(s.next())
	}()
	if a.body != nil {
		a.body.Run(a)
	} else {
		a.fn(a)
	}
	returned = true
}

// errGoexit is the ActorPanicError value of an actor whose function ended
// through runtime.Goexit.
var errGoexit = errors.New("runtime.Goexit: the actor's code exited without returning (t.FailNow, t.Fatal or require.* called outside the test goroutine?)")

// block hands control back to the scheduler until a wake with the current
// token runs the actor again.
func (a *Actor) block() {
	if a.killed {
		return // a defer running during the kill: never block again
	}
	a.since = a.s.now
	nx := a.s.next()
	if nx == a {
		a.s.enter(a) // our own wake is next: no goroutine switch
		return
	}
	switch g := a.s.gate; {
	case a.ts != nil && nx != nil && nx.inTs:
		// From a thread to a thread, both on turnstiles (turnstile.go).
		a.s.enter(nx)
		a.passWait(nx.ts)
	case a.ts != nil && g != nil && g.inC:
		// From a thread to the goroutines' side, through the gate.
		g.job = func() { a.s.dispatch(nx) }
		a.passWait(g.ts)
	default:
		a.s.dispatch(nx)
		<-a.resume
	}
	if a.killed {
		if a.foreign {
			// Not our goroutine to end: tell killAll the actor is done
			// and park it for good (the run failed with the actor
			// blocked, so its process is ending).
			a.state = stateDone
			a.s.back <- struct{}{}
			select {}
		}
		runtime.Goexit()
	}
}

// SetForeign says that a's turns are taken, after its function has
// started, on goroutines the simulator did not start and that must not
// exit: a cgo callback from a C thread, which runs the actor's blocking
// calls (Sleep, Await) itself while the actor's own goroutine waits, so
// that a host thread's call costs no switch between OS threads (package
// capi). The actor's methods work there as on its own goroutine. What
// changes is the end of a run that stopped with the actor blocked on such
// a goroutine: killing it cannot runtime.Goexit (fatal on a C thread), so
// the actor is marked done and that goroutine stays parked for good,
// which suits a process that is about to report the failure and exit.
// Call it from the actor's turn (or before Run).
func (a *Actor) SetForeign() { a.foreign = true }

func (a *Actor) check() {
	if a.s.cur != a {
		panic(fmt.Sprintf("sim: actor %q used from outside its own goroutine turn", a.name))
	}
}

// Sleep advances the actor's virtual time by d (at least 0).
func (a *Actor) Sleep(d Time) {
	a.check()
	if d < 0 {
		d = 0
	}
	a.token++
	a.state = stateSleeping
	a.until = a.s.now + d
	a.s.wake(a, a.until)
	a.block()
}

// Yield lets every other actor and event due now run first, in PRNG order.
func (a *Actor) Yield() { a.Sleep(0) }

// Wait describes what an actor waits for: a predicate over state that
// writers to List announce with Notify on [Lo, Hi).
type Wait struct {
	List   *WatchList
	Lo, Hi uint64
	// Pred is true when the wait is over. It is evaluated by the writer's
	// Notify and again by the actor when it runs.
	Pred func() bool
	// What says what is awaited, for hang reports. Text, if set, is called
	// at report time instead, so the report can show values as they are then.
	What string
	Text func() string
	// Detail is optional structured data for the JSON report.
	Detail func() any
	// Cond, if set, is the condition, text and detail in one (Pred, What,
	// Text and Detail are not read). Code that wraps a wait's predicate
	// wraps Pred: it takes waits without Cond.
	Cond Cond
}

// Cond is a wait's condition, description and detail as methods of one
// value (Wait.Cond): a pointer that already holds the state, so that a
// wait made often (an issuer's quiet) makes no closure.
type Cond interface {
	Holds() bool
	Text() string
	Detail() any
}

// holds evaluates the wait's condition: Cond's if set, else Pred.
func (w *Wait) holds() bool {
	if w.Cond != nil {
		return w.Cond.Holds()
	}
	return w.Pred()
}

func (w *Wait) describe() string {
	switch {
	case w.Cond != nil:
		return w.Cond.Text()
	case w.Text != nil:
		return w.Text()
	}
	return w.What
}

// Await blocks until w.Pred holds. It returns at once if it already holds.
func (a *Actor) Await(w Wait) { a.await(w, -1) }

// AwaitTimeout is Await with a deadline d after Now. It reports whether the
// predicate held (false: the deadline passed first).
func (a *Actor) AwaitTimeout(w Wait, d Time) bool {
	if d < 0 {
		d = 0
	}
	return a.await(w, a.s.now+d)
}

// AwaitUnlessQuiescent is Await for a wait that may not be one: a native
// lane whose load read the same value twice may be polling a word or may
// just read it twice. If the run becomes quiescent (nothing pending,
// nothing runnable, so no write can ever end the wait) while the actor
// waits, the actor resumes and it returns false, instead of the run being
// a hang; the caller decides whether the next such wait is a real one.
// Runs where a write ends the wait are unchanged.
func (a *Actor) AwaitUnlessQuiescent(w Wait) bool {
	a.tentative = true
	defer func() { a.tentative, a.released = false, false }()
	return a.await(w, -1)
}

func (a *Actor) await(w Wait, deadline Time) bool {
	a.check()
	for !w.holds() {
		if a.killed {
			return false
		}
		if a.released {
			return false
		}
		if deadline >= 0 && a.s.now >= deadline {
			return false
		}
		a.token++
		tok := a.token
		var h *watch
		if w.List != nil {
			h = w.List.add(w.Lo, w.Hi, w.Pred, w.Cond, nil, a, tok)
		}
		var tm Timer
		if deadline >= 0 {
			tm = a.s.wake(a, deadline)
			// A timeout the program chose longer than the watchdog's span
			// is not a hang while it runs (see Sim.Run's watchdog).
			tm.e.long = a.s.watchdog > 0 && deadline-a.s.now > a.s.watchdog
		}
		a.state = stateWaiting
		a.wait = w // a copy: a pointer to w moved every await's Wait to the heap
		a.block()
		if h != nil {
			w.List.remove(h)
			a.s.release(h)
		}
		tm.Stop()
	}
	a.s.progress = a.s.now
	return true
}

func (a *Actor) waiter() (Waiter, bool) {
	switch a.state {
	case stateWaiting:
		return Waiter{Kind: "actor", Name: a.name, State: "waiting", Since: a.since, WaitsFor: a.wait.describe(), Detail: detail(&a.wait), Label: a.labelText()}, true
	case stateSleeping:
		return Waiter{Kind: "actor", Name: a.name, State: "sleeping", Since: a.since,
			WaitsFor: fmt.Sprintf("sleep until %v", a.until), Label: a.labelText()}, true
	}
	return Waiter{}, false
}

func detail(w *Wait) any {
	switch {
	case w == nil:
		return nil
	case w.Cond != nil:
		return w.Cond.Detail()
	case w.Detail == nil:
		return nil
	}
	return w.Detail()
}

// killAll ends every started actor goroutine: each blocked actor resumes,
// sees it was killed and exits through runtime.Goexit (its defers run).
func (s *Sim) killAll() {
	for _, a := range s.actors {
		if a.started && a.state != stateDone {
			a.killed = true
			s.cur = a
			a.wakeUp()
			<-s.back
			s.cur = nil
		}
	}
}
