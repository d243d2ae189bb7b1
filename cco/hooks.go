package cco

import (
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Call hooks for tracing (package trace). Every device call's Run is wrapped
// once, at init, so the calls' own code stays as it is: the wrapper runs the
// call directly unless the host has an observer. Without one a call costs a
// nil check more, and allocates nothing.

// Observer is told about a job's work as it happens: the queue work of its
// device (issuer.Observer: doorbells, and on the emulator retired packets)
// and the device calls of its waves. Methods run on the simulator's current
// actor or event, one at a time. package trace's Recorder implements it.
type Observer interface {
	issuer.Observer
	// CallBegin says a group of a wave's lanes entered a device call.
	CallBegin(c *CallEvent)
	// CallEnd is given the same event; err is the call's failure (a debug
	// trap, say), or nil.
	CallEnd(c *CallEvent, err error)
}

// SetObserver makes o the observer of the host's device calls and of its
// device's queues (Device.SetObserver); nil detaches both. A host has one
// observer at a time.
func (h *Host) SetObserver(o Observer) {
	h.obs = o
	if o == nil {
		h.dev.SetObserver(nil)
		return
	}
	h.dev.SetObserver(o)
}

// Observer returns the host's observer, or nil.
func (h *Host) Observer() Observer { return h.obs }

// CallEvent is one device call by the active lanes of a wave.
type CallEvent struct {
	// Name is the call as the lanes made it: put, get, putPtr,
	// putBroadcast, postWaitMem, postWaitSignal, postWaitMemPutPtr, commit,
	// quiet, quietQueue or waitSignal. Each chunk of a chunked put is its
	// own call.
	Name string
	// Call is the kernel.Call the lanes converged at: put (put, get,
	// putPtr), post (the engine-side calls), commit, quiet, quietQueue or
	// waitSignal.
	Call   string
	Actor  *sim.Actor // the wave's actor
	Wave   *kernel.Wave
	Kernel string // the kernel's name
	GPU    int
	Block  int
	Rank   int    // the caller's LSA rank
	Mask   uint64 // the active lanes
	Lanes  []CallLane
	// Drains are the queues quiet or quietQueue waits for (those that
	// exist: a queue nobody used holds nothing to drain).
	Drains []*Queue
	// Rings are the queues a commit rings (if they exist when it does).
	Rings []engine.QueueID
}

// CallLane is one active lane's arguments.
type CallLane struct {
	Lane  int
	Peer  int // the peer (posts, commit, quiet) or srcRank (waitSignal)
	Queue int // queue id; −1 when the call takes none (quiet)
	Bytes uint64
	// Slot and Expected are waitSignal's: the signal slot the lane waits
	// on and the value it waits for.
	Slot, Expected uint64
}

func init() {
	observe(putCall)
	observe(serialCall)
	observe(commitCall)
	observe(quietCall)
	observe(quietQueueCall)
	observe(waitSignalCall)
}

// observedArg is the argument of an observed call (*post, *syncArgs): it
// names the dev comm state the call runs on and describes its lane for the
// call's event.
type observedArg interface {
	state() *devState
	describe(ev *CallEvent, l *CallLane, t *kernel.Thread, st *devState)
}

// observe wraps c's Run so that the host's observer, if any, sees it.
func observe[A observedArg](c *kernel.Call[A]) {
	name, run := c.Name, c.Run
	c.Run = func(g *kernel.Active, args []A) error {
		st := args[0].state()
		if st == nil || st.c.h.obs == nil {
			return run(g, args)
		}
		o := st.c.h.obs
		ev := callEvent(g, args, st, name)
		o.CallBegin(ev)
		err := run(g, args)
		o.CallEnd(ev, err)
		return err
	}
}

func (p *post) state() *devState     { return p.s.st }
func (a *syncArgs) state() *devState { return a.s.st }

func callEvent[A observedArg](g *kernel.Active, args []A, st *devState, name string) *CallEvent {
	w := g.Wave()
	cfg := w.Kernel().Config()
	lanes := g.Lanes()
	ev := &CallEvent{Call: name, Actor: g.Actor(), Wave: w, Kernel: cfg.Name, GPU: cfg.GPU, Block: lanes[0].BlockIdx(),
		Rank: st.c.LsaRank, Mask: g.Mask(), Lanes: make([]CallLane, 0, len(lanes))}
	for i, t := range lanes {
		l := CallLane{Lane: t.Lane(), Queue: -1}
		args[i].describe(ev, &l, t, st)
		ev.Lanes = append(ev.Lanes, l)
	}
	return ev
}

func (p *post) describe(ev *CallEvent, l *CallLane, _ *kernel.Thread, _ *devState) {
	ev.Name = p.call
	l.Peer, l.Queue = p.peer, p.q
	if p.copy {
		l.Bytes = p.bytes
	}
}

func (a *syncArgs) describe(ev *CallEvent, l *CallLane, t *kernel.Thread, st *devState) {
	ev.Name = a.call
	l.Peer = a.peer
	switch ev.Call {
	case "commit":
		l.Queue = a.q
		if q := commitQueue(t, a); q >= 0 {
			ev.Rings = append(ev.Rings, engine.QueueID{GPU: st.c.LsaRank, Peer: a.peer, Q: q})
		}
	case "quietQueue":
		l.Queue = a.q
		ev.addDrain(a.s.st.existing(a.peer, a.q))
	case "waitSignal":
		l.Peer, l.Queue, l.Expected = a.src, a.q, a.expected
		l.Slot = a.s.st.pool.Base + uint64(a.src*a.s.st.n+a.q)*8 // runWaitSignal's index
	case "quiet":
		for q := 0; q < a.s.st.n; q++ {
			ev.addDrain(a.s.st.existing(a.peer, q))
		}
	}
}

// commitQueue is the queue id lane t rings in commitCall, or −1.
func commitQueue(t *kernel.Thread, a *syncArgs) int {
	q := a.q
	switch a.coop {
	case CoopWarp:
		q = t.Lane()
	case CoopBlock:
		q = t.ThreadIdx()
	}
	if q < 0 || q >= a.s.st.n {
		return -1
	}
	return q
}

func (ev *CallEvent) addDrain(q *Queue) {
	if q == nil {
		return
	}
	for _, d := range ev.Drains {
		if d == q {
			return
		}
	}
	ev.Drains = append(ev.Drains, q)
}
