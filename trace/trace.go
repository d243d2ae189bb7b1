package trace

import (
	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Recorder records one node's queues, packets, device calls and wake-ups.
// Its hooks run on the simulator's current actor or event, one at a time;
// call WriteJSON after sim.Run returns (or from an actor of the run).
type Recorder struct {
	n   *engine.Node
	h   *cco.Host // nil: queue work only
	s   *sim.Sim
	seq uint64 // orders hook events: "after the call began" is by seq, not time

	queues   map[*issuer.Queue]*queueTrack
	queueIDs []*queueTrack // first-seen order
	waves    map[*kernel.Wave]*waveTrack
	waveIDs  []*waveTrack

	open      map[*sim.Actor]*call // the call each wave is in
	submitter *call                // set by Running: the next doorbell is this call's
	commits   []*call              // open commit calls, in begin order

	packets  []*packet // retire order
	bells    []bell
	faults   []faultMark
	lastWrit map[uint64]*packet // address → last packet that stored there (not COPYs)
	detached bool
}

type queueTrack struct {
	q       *issuer.Queue
	id      engine.QueueID
	rung    []rung  // doorbells not yet passed by the engine, in order
	top     uint64  // highest doorbell seen
	last    *packet // last retired
	packets []*packet
}

// rung is a doorbell value and the call that rang it (nil: not a call).
type rung struct {
	v uint64
	t sim.Time
	c *call
}

type waveTrack struct {
	w                *kernel.Wave
	gpu, block, wave int
	kernel           string
	seq              int // creation order, for tids
	calls            []*call
}

type packet struct {
	q          *queueTrack
	off        uint64
	start, end sim.Time
	seq        uint64
	p          ring.Packet // Payload dropped: the engine reuses it
	text       string
	issuer     *call
	issuedAt   sim.Time // the issuing doorbell
	woke       []waiter
}

type call struct {
	ev         *cco.CallEvent
	w          *waveTrack
	start, end sim.Time
	seq        uint64
	done       bool
	err        string
}

// waiter is a slice a packet's write ended: a device call or a POLL_REGMEM.
type waiter struct {
	c *call
	p *packet
}

type bell struct {
	q *queueTrack
	t sim.Time
	v uint64
}

type faultMark struct {
	q *queueTrack
	f engine.Fault
}

// Attach starts recording node n: from now on every doorbell, packet and
// wake-up on it is kept, and with h (the host whose jobs run on n; nil for
// none) every device call (cco) too. A node has one recorder: attaching
// twice returns the first. The recorder replaces any other observer the
// node and the host had.
func Attach(n *engine.Node, h *cco.Host) *Recorder {
	if r, ok := n.Observer().(*Recorder); ok {
		return r
	}
	r := &Recorder{n: n, h: h, s: n.Sim(), queues: map[*issuer.Queue]*queueTrack{}, waves: map[*kernel.Wave]*waveTrack{},
		open: map[*sim.Actor]*call{}, lastWrit: map[uint64]*packet{}}
	for _, q := range n.Queues() {
		r.queue(q.Queue).top = q.Ring().Doorbell()
	}
	if h != nil {
		h.SetObserver(r) // the host's device is n: its queues report to r too
	} else {
		n.SetObserver(r)
	}
	n.OnFault(r.fault)
	return r
}

// Detach stops recording; what was recorded stays and can be written.
func (r *Recorder) Detach() {
	if r.n.Observer() == engine.Observer(r) {
		r.n.SetObserver(nil)
	}
	if r.h != nil && r.h.Observer() == cco.Observer(r) {
		r.h.SetObserver(nil)
	}
	r.detached = true
}

func (r *Recorder) next() uint64 { r.seq++; return r.seq }

func (r *Recorder) queue(q *issuer.Queue) *queueTrack {
	if t, ok := r.queues[q]; ok {
		return t
	}
	t := &queueTrack{q: q, id: q.ID(), top: q.Start()}
	r.queues[q] = t
	r.queueIDs = append(r.queueIDs, t)
	return t
}

func (r *Recorder) wave(ev *cco.CallEvent) *waveTrack {
	if t, ok := r.waves[ev.Wave]; ok {
		return t
	}
	t := &waveTrack{w: ev.Wave, gpu: ev.GPU, block: ev.Block, wave: ev.Wave.Index(), kernel: ev.Kernel, seq: len(r.waveIDs)}
	r.waves[ev.Wave] = t
	r.waveIDs = append(r.waveIDs, t)
	return t
}

// ---- issuer.Observer ----

// Running implements issuer.Observer: a's open call rings next.
func (r *Recorder) Running(a *sim.Actor) { r.submitter = r.open[a] }

// Doorbell implements issuer.Observer.
func (r *Recorder) Doorbell(q *issuer.Queue, v uint64) {
	t := r.queue(q)
	c := r.submitter
	if c == nil {
		c = r.committer(t.id)
	}
	r.submitter = nil
	r.next()
	r.bells = append(r.bells, bell{q: t, t: r.s.Now(), v: v})
	if v > t.top && v%4 == 0 { // the engine ignores other values
		t.top = v
		t.rung = append(t.rung, rung{v: v, t: r.s.Now(), c: c})
	}
}

// Retired implements issuer.Observer.
func (r *Recorder) Retired(q *issuer.Queue, off uint64, start sim.Time, p *ring.Packet) {
	now := r.s.Now()
	if p.Kind == ring.KindNop && start == now {
		return // padding inside a unit: free, not a packet of its own
	}
	t := r.queue(q)
	k := &packet{q: t, off: off, start: start, end: now, seq: r.next(), p: *p, text: p.String()}
	k.p.Payload = nil
	for len(t.rung) > 0 && t.rung[0].v <= off {
		t.rung = t.rung[1:]
	}
	if len(t.rung) > 0 && t.rung[0].c != nil {
		k.issuer = t.rung[0].c
		k.issuedAt = t.rung[0].t
	}
	if p.Kind == ring.KindPoll && now > start {
		// A parked poll ends because a write made its condition true: the
		// last store to the polled word (or its 64-bit slot) after it began.
		if w := r.laterWriter(p.Addr, p.Addr&^7); w != nil && w.end > start {
			w.woke = append(w.woke, waiter{p: k})
		}
	}
	if p.HasWait && now > start {
		// A fused packet's wait: the same, on its 64-bit wait word.
		if w := r.laterWriter(p.Wait.Addr); w != nil && w.end > start {
			w.woke = append(w.woke, waiter{p: k})
		}
	}
	if p.HasSignal {
		r.lastWrit[p.Signal.Addr] = k // a fused packet's signal is a write too
	}
	switch p.Kind {
	case ring.KindAtomic, ring.KindFence, ring.KindTimestamp:
		r.lastWrit[p.Addr] = k
	case ring.KindWrite, ring.KindConstFill:
		r.lastWrit[p.Dst] = k
	}
	t.last = k
	t.packets = append(t.packets, k)
	r.packets = append(r.packets, k)
}

func (r *Recorder) laterWriter(addrs ...uint64) *packet {
	var w *packet
	for _, a := range addrs {
		if k := r.lastWrit[a]; k != nil && (w == nil || k.seq > w.seq) {
			w = k
		}
	}
	return w
}

func (r *Recorder) fault(f engine.Fault) {
	if r.detached {
		return
	}
	q := r.n.LookupQueue(f.Queue.GPU, f.Queue.Peer, f.Queue.Q)
	if q == nil {
		return
	}
	r.faults = append(r.faults, faultMark{q: r.queue(q.Queue), f: f})
}

// ---- cco.Observer ----

// CallBegin implements cco.Observer.
func (r *Recorder) CallBegin(ev *cco.CallEvent) {
	c := &call{ev: ev, w: r.wave(ev), start: r.s.Now(), seq: r.next()}
	r.open[ev.Actor] = c
	c.w.calls = append(c.w.calls, c)
	if ev.Call == "commit" {
		r.commits = append(r.commits, c)
	}
}

// committer is the open commit call that rings queue id: Commit takes no
// actor, and the CU time a commit spends before ringing lets other waves
// run, so the match is by queue (the earliest such call, if several).
func (r *Recorder) committer(id engine.QueueID) *call {
	for _, c := range r.commits {
		for _, q := range c.ev.Rings {
			if q == id {
				return c
			}
		}
	}
	return nil
}

// CallEnd implements cco.Observer: a call that waited was woken by the
// last write to a signal slot it waited on (waitSignal) or by the last
// packet a queue it drained retired (quiet, quietQueue), if those came
// after it began.
func (r *Recorder) CallEnd(ev *cco.CallEvent, err error) {
	c := r.open[ev.Actor]
	if c == nil || c.ev != ev {
		return // began before Attach
	}
	delete(r.open, ev.Actor)
	for i, o := range r.commits {
		if o == c {
			r.commits = append(r.commits[:i], r.commits[i+1:]...)
			break
		}
	}
	c.end, c.done = r.s.Now(), true
	if err != nil {
		c.err = err.Error()
	}
	var wakers []*packet
	add := func(k *packet) {
		if k == nil || k.seq <= c.seq {
			return
		}
		for _, w := range wakers {
			if w == k {
				return
			}
		}
		wakers = append(wakers, k)
	}
	for _, l := range ev.Lanes {
		if ev.Call == "waitSignal" {
			add(r.lastWrit[l.Slot])
		}
	}
	for _, d := range ev.Drains {
		if t := r.queues[d]; t != nil {
			add(t.last)
		}
	}
	for _, k := range wakers {
		k.woke = append(k.woke, waiter{c: c})
	}
}

var _ cco.Observer = (*Recorder)(nil)
