package sim

// Turns on turnstiles. A foreign actor's turns are taken on a thread the
// simulator did not start (package capi: a C++ program's host threads,
// each a cgo callback's goroutine locked to its thread). Handed on by
// channels, a turn from one such thread to another parks the first
// thread's goroutine, which wakes a third thread to hand Go's P on, which
// wakes the second: two wakes where one would do, most of a C++ seed's
// context switches. So such a thread may wait for its turn on a
// turnstile (a futex word, in a cgo call) and the simulator hands turns
// to it there:
//
//   - from one thread to another, Pass wakes the next and waits, as one
//     step (in one cgo call, Go sees both threads out of Go and the woken
//     one takes the P as it comes back);
//   - between the threads and the goroutines (lanes' actors, events'
//     callers, Run's), through the gate: a goroutine of the simulator's
//     that waits on a turnstile of its own while a thread holds the turn
//     (SetGate). A thread that hands the turn to the goroutines' side
//     passes to the gate, which dispatches there and parks, so the
//     goroutine it readied runs on the gate's thread; a goroutine that
//     hands the turn to a thread readies the gate, which passes to the
//     thread and waits. Each crossing is one wake too.
//
// The gate's state: parked on its channel (in) while the goroutines'
// side holds the turn, waiting on its turnstile (inC) while a thread
// does. A crossing that finds it in the other state (a thread's first
// block, before any crossing; a thread that hands on without it) goes
// by channel as before, and the crossings after it put the gate right.
// Which actor runs next never depends on any of this: only how a turn
// reaches its thread does.

// Turnstile is where a thread waits for its turn: Wake lets the thread
// waiting on it go on (a wake before the wait is kept for it); Pass wakes
// to and then waits on this one, as one step.
type Turnstile interface {
	Wake()
	Pass(to Turnstile)
}

// SetTurnstile gives a foreign actor (SetForeign) a turnstile to wait on
// for its turns. Call it before the actor's first block.
func (a *Actor) SetTurnstile(t Turnstile) { a.ts = t }

// gate hands turns between the goroutines' side and threads waiting on
// turnstiles.
type gate struct {
	ts  Turnstile
	in  chan Turnstile // a turn for the thread waiting on it; nil: the run is over
	inC bool           // waiting on ts: a thread holds the turn
	job func()         // what a thread that woke the gate asks of it, on the goroutines' side; nil: the run is over
}

// SetGate starts the gate, waiting on t, for the actors with turnstiles.
// Without it, a thread's first turn comes on its turnstile (EnterThread)
// and every later one by channel: its first block, to the goroutines'
// side, finds no gate waiting, so it waits on its channel, and a thread
// waiting on a channel is handed its turn there. Call it before Run.
func (s *Sim) SetGate(t Turnstile) {
	s.gate = &gate{ts: t, in: make(chan Turnstile)}
	go s.gate.main()
}

func (g *gate) main() {
	for {
		to := <-g.in
		if to == nil {
			return
		}
		g.inC = true
		g.ts.Pass(to)
		g.inC = false
		job := g.job
		g.job = nil
		if job == nil {
			return
		}
		job()
	}
}

// stop ends the gate's goroutine at the end of Run, wherever it waits.
func (g *gate) stop() {
	if g.inC {
		g.job = nil
		g.ts.Wake()
		return
	}
	g.in <- nil
}

// toThread hands the turn, from the goroutines' side, to the thread
// waiting on t.
func (s *Sim) toThread(t Turnstile) {
	if g := s.gate; g != nil && !g.inC {
		g.in <- t
		return
	}
	t.Wake()
}

// passWait is a thread's wait for its turn on its turnstile, having
// handed the turn to the one waiting on to.
func (a *Actor) passWait(to Turnstile) {
	a.inTs = true
	a.ts.Pass(to)
	a.inTs = false
}

// EnterThread hands a's turn, from a's own goroutine, to a's thread
// waiting on a's turnstile for its first turn (package capi: a host
// thread's first call). The goroutine goes on, holding nothing.
func (a *Actor) EnterThread() { a.s.toThread(a.ts) }

// LeaveThread is the last act of a's thread in a's turn: f, which hands
// the turn back to a's own goroutine, runs on the goroutines' side (on
// the gate, when the gate waits for it). The thread goes on, holding
// nothing.
func (a *Actor) LeaveThread(f func()) {
	if g := a.s.gate; g != nil && g.inC {
		g.job = f
		g.ts.Wake()
		return
	}
	f()
}
