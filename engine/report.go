package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// QueueReport is a queue's state in a hang report (the JSON detail of its
// waiter).
type QueueReport struct {
	Queue         string      `json:"queue"`
	GPU           int         `json:"gpu"`
	Peer          int         `json:"peer"`
	Q             int         `json:"q"`
	State         string      `json:"state"`
	Rptr          uint64      `json:"rptr"`
	Wptr          uint64      `json:"wptr"`
	Doorbell      uint64      `json:"doorbell"`
	CachedWptr    uint64      `json:"cached_wptr"`
	CommittedWptr uint64      `json:"committed_wptr"`
	EnginePos     uint64      `json:"engine_pos"`
	Head          string      `json:"head,omitempty"`
	Poll          *PollReport `json:"poll,omitempty"`
	Fault         string      `json:"fault,omitempty"`
	SpaceWaiters  int         `json:"space_waiters,omitempty"`
	ChainWaiters  int         `json:"chain_waiters,omitempty"`
	QuietWaiters  int         `json:"quiet_waiters,omitempty"`
}

// PollReport describes the POLL_REGMEM a queue is parked on.
type PollReport struct {
	Addr     uint64   `json:"addr"`
	AddrGPU  int      `json:"addr_gpu"`
	Mask     uint32   `json:"mask"`
	Func     string   `json:"func"`
	Ref      uint32   `json:"ref"`
	Value    uint32   `json:"value"`
	Retry    uint16   `json:"retry"`
	Interval uint16   `json:"interval"`
	Since    sim.Time `json:"since_ps"`
}

// Report returns the queue's state now.
func (q *Queue) Report() QueueReport {
	r := QueueReport{
		Queue: q.id.String(), GPU: q.id.GPU, Peer: q.id.Peer, Q: q.id.Q, State: q.state.String(),
		Rptr: q.r.Rptr(), Wptr: q.r.Wptr(), Doorbell: q.r.Doorbell(), CachedWptr: q.r.CachedWptr(),
		CommittedWptr: q.r.CommittedWptr(), EnginePos: q.pos,
	}
	w := q.Waiters()
	r.SpaceWaiters, r.ChainWaiters, r.QuietWaiters = w.Space, w.Chain, w.Quiet
	switch q.state {
	case qBusy, qParked:
		r.Head = q.head.String()
	case qStalled:
		var p ring.Packet
		_, err := q.r.DecodeAt(&p, q.pos, q.target-q.pos)
		r.Head = "incomplete packet: " + err.Error()
	case qHalted:
		if q.fault != nil {
			r.Head, r.Fault = q.fault.Packet, q.fault.Error()
		}
	}
	if q.state == qParked && q.head.Kind != ring.KindPoll {
		w := &q.head.Wait // a fused packet's 64-bit wait: the low dwords
		v, _ := q.n.mem.Load64(w.Addr)
		r.Poll = &PollReport{Addr: w.Addr, AddrGPU: q.n.mem.GPUOf(w.Addr), Mask: uint32(w.Mask),
			Func: w.Func.String(), Ref: uint32(w.Ref), Value: uint32(v), Retry: ring.RetryForever,
			Interval: fusedPollInterval, Since: q.headSince}
	} else if q.state == qParked {
		v, _ := q.n.mem.Load32(q.head.Addr)
		r.Poll = &PollReport{Addr: q.head.Addr, AddrGPU: q.n.mem.GPUOf(q.head.Addr), Mask: q.head.Mask,
			Func: q.head.Func.String(), Ref: q.head.Ref, Value: v, Retry: q.head.Retry,
			Interval: q.head.Interval, Since: q.headSince}
	}
	return r
}

// Lines renders the report's text lines.
func (r QueueReport) Lines() []string {
	l := []string{fmt.Sprintf("rptr=%#x wptr=%#x doorbell=%#x cachedWptr=%#x committedWptr=%#x engine=%#x",
		r.Rptr, r.Wptr, r.Doorbell, r.CachedWptr, r.CommittedWptr, r.EnginePos)}
	if r.Head != "" {
		l = append(l, fmt.Sprintf("head @%#x: %s", r.EnginePos, r.Head))
	}
	if p := r.Poll; p != nil {
		l = append(l, fmt.Sprintf("poll: mem[%#x] (GPU %d) & %#x %s %#x; value now %#x (%#x under mask); retry %s, interval %d",
			p.Addr, p.AddrGPU, p.Mask, p.Func, p.Ref, p.Value, p.Value&p.Mask, retryText(p.Retry), p.Interval))
	}
	return l
}

func retryText(r uint16) string {
	if r == ring.RetryForever {
		return "forever"
	}
	return fmt.Sprint(r)
}

// diagnose is the engine's part of a hang report: every queue that cannot
// make progress or that actors wait on, the causes its issuer side
// (sim.LayerIssuer) and the engine (sim.LayerEngine) name, and the
// injected faults.
func (n *Node) diagnose() sim.Diagnosis {
	var d sim.Diagnosis
	for _, q := range n.queues.All() {
		w := q.Waiters()
		waiters := w.Space + w.Chain + w.Quiet
		stuck := q.state == qParked || q.state == qStalled || q.state == qHalted
		if !stuck && waiters == 0 {
			continue
		}
		rep := q.Report()
		d.Waiters = append(d.Waiters, sim.Waiter{
			Kind: "queue", Name: q.id.String(), State: rep.State, Since: q.headSince,
			WaitsFor: q.waitsFor(), Lines: rep.Lines(), Detail: rep,
		})
		d.Causes = append(d.Causes, q.causes()...)
	}
	if n.inj != nil {
		n.inj.diagnose(&d)
	}
	return d
}

func (q *Queue) waitsFor() string {
	switch q.state {
	case qParked:
		return "POLL_REGMEM condition to hold"
	case qStalled:
		return fmt.Sprintf("the rest of a packet: doorbell %#x points inside it", q.target)
	case qHalted:
		return "nothing: halted by a fault"
	case qIdle:
		return "a doorbell: nothing rung to execute"
	}
	return "its current packet to finish"
}

// causes names the misuse a queue's state matches, in plain words: the
// issuer side's (issuer.Queue.Causes) and the engine's own.
func (q *Queue) causes() []sim.Cause {
	c := q.Queue.Causes()
	name := q.id.String()
	switch q.state {
	case qParked:
		v, _ := q.n.mem.Load32(q.head.Addr)
		s := fmt.Sprintf("QUEUE_HANG: %v parked on POLL_REGMEM since %v: mem[%#x] & %#x %s %#x never held (value now %#x)",
			q.id, q.headSince, q.head.Addr, q.head.Mask, q.head.Func, q.head.Ref, v)
		addr := q.head.Addr
		if w := &q.head.Wait; q.head.Kind != ring.KindPoll {
			addr = w.Addr
			v64, _ := q.n.mem.Load64(w.Addr)
			s = fmt.Sprintf("QUEUE_HANG: %v parked on the wait of %v since %v: mem64[%#x] & %#x %s %#x never held (value now %#x)",
				q.id, q.head.Kind, q.headSince, w.Addr, w.Mask, w.Func, w.Ref, v64)
		}
		if g := q.n.mem.GPUOf(addr); g != q.id.GPU {
			s += fmt.Sprintf("; the polled word is GPU %d's memory, not the queue's GPU %d — an engine-side wait must poll local memory", g, q.id.GPU)
		} else {
			s += q.pollHistory()
		}
		c = append(c, sim.Cause{Kind: CausePollParked, Layer: sim.LayerEngine, Queue: name, Text: s})
	case qStalled:
		c = append(c, sim.Cause{Kind: CauseStalled, Layer: sim.LayerEngine, Queue: name, Text: fmt.Sprintf(
			"QUEUE_HANG: %v: the doorbell %#x stops inside the packet at %#x; its issuer rang a partial packet", q.id, q.target, q.pos)})
	case qHalted:
		if q.fault != nil {
			c = append(c, sim.Cause{Kind: CauseHalted, Layer: sim.LayerEngine, Queue: name, Text: "queue halted by a fault: " + q.fault.Error()})
		}
	}
	return c
}

// Kinds of the hang causes the engine names (sim.Cause.Kind), beside the
// issuer's (issuer.CauseRingFull, ...).
const (
	// CausePollParked: the queue is parked on a POLL_REGMEM whose condition
	// never held.
	CausePollParked sim.CauseKind = "poll-parked"
	// CauseStalled: the doorbell stops inside a packet.
	CauseStalled sim.CauseKind = "queue-stalled"
	// CauseHalted: a fault halted the queue.
	CauseHalted sim.CauseKind = "queue-halted"
)

// AppendWriter names the queue's head packet as the writer of a tracked
// word (sim.Writer). It is asked on every write to a tracked word, so it
// appends, not formats (fmt boxed each argument: four allocations a
// write), and the Sim interns what it appends.
func (q *Queue) AppendWriter(b []byte) []byte {
	b = append(b, q.id.String()...)
	b = append(b, "'s "...)
	b = append(b, q.head.Kind.String()...)
	b = append(b, " at ring offset 0x"...)
	b = strconv.AppendUint(b, q.pos, 16)
	if q.poster != nil {
		b = append(b, " (posted by "...)
		b = q.poster.AppendWho(b)
		b = append(b, ')')
	}
	return b
}

// pollHistory says what the writes to a parked POLL's word did since the
// poll began (sim.WriteLog): the write that made the condition hold and
// the one that undid it before the engine read it again, or that none
// made it hold.
func (q *Queue) pollHistory() string {
	p := &q.head
	ws, total, since, ok := q.n.mem.Log().History(p.Addr)
	if !ok || total == 0 || p.Kind != ring.KindPoll {
		return "; the flag never reached the value"
	}
	holds := func(v uint64) bool { return p.Func.Eval(uint32(v)&p.Mask, p.Ref) }
	for i := len(ws) - 1; i >= 0; i-- {
		if !holds(ws[i].Value) {
			continue
		}
		if i == len(ws)-1 {
			break // holds now: not why it is parked
		}
		set, reset := ws[i], ws[i+1]
		return fmt.Sprintf("; but the flag did reach the value before the engine read it: it became %#x at %v by %s, then was reset to %#x at %v by %s (a POLL samples the word; a value that flips back before a read is missed)",
			set.Value, set.At, set.By, reset.Value, reset.At, reset.By)
	}
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%#x at %v by %s", w.Value, w.At, w.By))
	}
	more := ""
	if total > len(ws) {
		more = fmt.Sprintf(" (the last %d of %d)", len(ws), total)
	}
	return fmt.Sprintf("; the flag never reached the value: its writes since it was first watched at %v%s were %s", since, more, strings.Join(parts, ", "))
}
