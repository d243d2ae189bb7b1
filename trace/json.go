package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// usec is a virtual time written as trace-event microseconds: an exact
// decimal with up to six fraction digits, so picoseconds survive.
type usec sim.Time

func (u usec) MarshalJSON() ([]byte, error) { return []byte(micros(sim.Time(u))), nil }

func micros(t sim.Time) string {
	v := uint64(t)
	if t < 0 {
		v = 0 // virtual time never runs backwards; keep the output valid
	}
	s := strconv.FormatUint(v/1e6, 10)
	if f := v % 1e6; f != 0 {
		frac := fmt.Sprintf("%06d", f)
		for frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		s += "." + frac
	}
	return s
}

// event is one trace event (Trace Event Format).
type event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   usec           `json:"ts"`
	Dur  *usec          `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	ID   uint64         `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// Flow events of one chain must share name and category (Perfetto keys v1
// flows by id, cat and name).
const (
	flowName = "sdma"
	flowCat  = "flow"
)

// Track numbering: pid is GPU+1 (pid 0 is the idle process to some
// viewers); tids are unique across the trace, as Perfetto wants.
const (
	tidsPerGPU = 100000
	waveTid0   = 70000
)

func pidOf(gpu int) int { return gpu + 1 }

func (t *queueTrack) tid() int {
	return pidOf(t.id.GPU)*tidsPerGPU + 1 + t.id.Peer*64 + t.id.Q
}

func (t *queueTrack) name() string {
	return fmt.Sprintf("GPU %d → %d q%d", t.id.GPU, t.id.Peer, t.id.Q)
}

func (w *waveTrack) tid() int { return pidOf(w.gpu)*tidsPerGPU + waveTid0 + w.seq }

func (w *waveTrack) name() string {
	return fmt.Sprintf("wave b%dw%d (%s)", w.block, w.wave, w.kernel)
}

func hexs(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// slice is an X event and the flow events bound to it, written right after
// it so that a viewer binds them to it even when it takes no time.
type slice struct {
	ev    event
	flows []event
}

// WriteJSON writes what was recorded as Chrome trace-event JSON, object
// form, which the Perfetto UI and chrome://tracing open. The same run gives
// the same bytes.
func (r *Recorder) WriteJSON(w io.Writer) error {
	for _, q := range r.n.Queues() { // queues made but never rung still get a track
		r.queue(q)
	}
	end := r.s.Now()
	meta := r.metadata()

	slices := map[any]*slice{}
	var order []*slice // emission order: track by track, slice by slice
	for _, t := range r.queueIDs {
		for _, k := range t.packets {
			s := &slice{ev: r.packetEvent(k)}
			slices[k] = s
			order = append(order, s)
		}
	}
	for _, wt := range r.waveIDs {
		for _, c := range wt.calls {
			s := &slice{ev: r.callEvent(c, end)}
			slices[c] = s
			order = append(order, s)
		}
	}
	r.flows(slices)

	var evs []event
	for _, s := range order {
		evs = append(evs, s.ev)
		evs = append(evs, s.flows...)
	}
	evs = append(evs, r.instants()...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Ts < evs[j].Ts })

	bw := bufio.NewWriter(w)
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":`)
	other, err := json.Marshal(map[string]any{
		"generator": "emud trace", "seed": strconv.FormatUint(r.s.Seed(), 10), "end_us": micros(end),
		"clock": "virtual time; ts and dur in microseconds with picosecond resolution",
	})
	if err != nil {
		return err
	}
	bw.Write(other)
	bw.WriteString(",\n\"traceEvents\":[\n")
	for i, e := range append(meta, evs...) {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteString(",\n")
		}
		bw.Write(b)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// metadata names and orders the processes (GPUs) and threads (tracks).
func (r *Recorder) metadata() []event {
	gpus := map[int]bool{}
	for _, t := range r.queueIDs {
		gpus[t.id.GPU] = true
	}
	for _, w := range r.waveIDs {
		gpus[w.gpu] = true
	}
	var ids []int
	for g := range gpus {
		ids = append(ids, g)
	}
	sort.Ints(ids)
	var evs []event
	for _, g := range ids {
		p := pidOf(g)
		evs = append(evs,
			event{Name: "process_name", Ph: "M", Pid: p, Tid: p, Args: map[string]any{"name": fmt.Sprintf("GPU %d", g)}},
			event{Name: "process_sort_index", Ph: "M", Pid: p, Tid: p, Args: map[string]any{"sort_index": g}})
	}
	qs := append([]*queueTrack(nil), r.queueIDs...)
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].tid() < qs[j].tid() })
	for _, t := range qs {
		p := pidOf(t.id.GPU)
		evs = append(evs,
			event{Name: "thread_name", Ph: "M", Pid: p, Tid: t.tid(), Args: map[string]any{"name": t.name()}},
			event{Name: "thread_sort_index", Ph: "M", Pid: p, Tid: t.tid(), Args: map[string]any{"sort_index": t.tid() - p*tidsPerGPU}})
	}
	for _, w := range r.waveIDs {
		p := pidOf(w.gpu)
		evs = append(evs,
			event{Name: "thread_name", Ph: "M", Pid: p, Tid: w.tid(), Args: map[string]any{"name": w.name()}},
			event{Name: "thread_sort_index", Ph: "M", Pid: p, Tid: w.tid(), Args: map[string]any{"sort_index": w.tid() - p*tidsPerGPU}})
	}
	return evs
}

func (r *Recorder) packetEvent(k *packet) event {
	d := usec(k.end - k.start)
	p := &k.p
	args := map[string]any{"ring_offset": hexs(k.off), "packet": k.text}
	switch p.Kind {
	case ring.KindCopy, ring.KindBroadcastCopy:
		args["bytes"] = p.CopyBytes()
		args["src"], args["dst"] = hexs(p.Src), hexs(p.Dst)
		if p.Kind == ring.KindBroadcastCopy {
			args["dst2"] = hexs(p.Dst2)
		}
	case ring.KindAtomic:
		args["addr"], args["op"], args["data"] = hexs(p.Addr), p.AtomicOp.String(), p.Data
	case ring.KindPoll:
		args["addr"], args["ref"], args["mask"], args["func"] = hexs(p.Addr), p.Ref, hexs(uint64(p.Mask)), p.Func.String()
	case ring.KindFence, ring.KindTimestamp:
		args["addr"] = hexs(p.Addr)
	case ring.KindWrite, ring.KindConstFill:
		args["dst"] = hexs(p.Dst)
	}
	if k.issuer != nil {
		args["issued_by"] = k.issuer.ev.Name + " on " + k.issuer.w.name()
	}
	return event{Name: p.Kind.String(), Cat: "sdma", Ph: "X", Ts: usec(k.start), Dur: &d,
		Pid: pidOf(k.q.id.GPU), Tid: k.q.tid(), Args: args}
}

func (r *Recorder) callEvent(c *call, end sim.Time) event {
	ev := c.ev
	args := map[string]any{"rank": ev.Rank, "kernel": ev.Kernel, "active_lanes": hexs(ev.Mask)}
	var peers, queues []int
	var bytes uint64
	var expected []uint64
	for _, l := range ev.Lanes {
		peers = append(peers, l.Peer)
		queues = append(queues, l.Queue)
		bytes += l.Bytes
		expected = append(expected, l.Expected)
	}
	if ev.Call == "waitSignal" {
		args["src_ranks"], args["expected"] = peers, expected
	} else {
		args["peers"] = peers
	}
	if ev.Call != "quiet" {
		args["queues"] = queues
	}
	if bytes > 0 {
		args["bytes"] = bytes
	}
	stop := c.end
	if !c.done {
		stop = end
		args["unfinished"] = true
	}
	if c.err != "" {
		args["error"] = c.err
	}
	d := usec(stop - c.start)
	return event{Name: ev.Name, Cat: "cco", Ph: "X", Ts: usec(c.start), Dur: &d,
		Pid: pidOf(c.w.gpu), Tid: c.w.tid(), Args: args}
}

// flows links each packet to the call that rang it and to the waiters its
// write woke: one chain call → packet → first waiter (s, t, f), and a pair
// packet → waiter (s, f) for every further waiter; a packet that woke no one
// ends its call's flow (s, f). Flow events sit inside their slices at times
// that keep s ≤ t ≤ f: the doorbell, the packet's start, the wake.
func (r *Recorder) flows(slices map[any]*slice) {
	var id uint64
	add := func(key any, ph string, ts sim.Time, fid uint64) {
		s := slices[key]
		e := event{Name: flowName, Cat: flowCat, Ph: ph, Ts: usec(ts), Pid: s.ev.Pid, Tid: s.ev.Tid, ID: fid}
		if ph == "f" {
			e.BP = "e"
		}
		s.flows = append(s.flows, e)
	}
	waiterEnd := func(w waiter) (any, sim.Time) {
		if w.c != nil {
			return w.c, w.c.end
		}
		return w.p, w.p.end
	}
	for _, k := range r.packets {
		rest := k.woke
		if c := k.issuer; c != nil && slices[c] != nil {
			id++
			add(c, "s", k.issuedAt, id)
			if len(rest) > 0 {
				add(k, "t", k.start, id)
				wk, wt := waiterEnd(rest[0])
				add(wk, "f", wt, id)
				rest = rest[1:]
			} else {
				add(k, "f", k.start, id)
			}
		}
		for _, w := range rest {
			id++
			add(k, "s", k.end, id)
			wk, wt := waiterEnd(w)
			add(wk, "f", wt, id)
		}
	}
}

// instants are doorbells and faults, as process-scoped instants: on the
// thread tracks they would nest inside packets and capture their flows.
func (r *Recorder) instants() []event {
	var evs []event
	for _, b := range r.bells {
		evs = append(evs, event{Name: "doorbell " + b.q.name(), Cat: "sdma", Ph: "i", S: "p", Ts: usec(b.t),
			Pid: pidOf(b.q.id.GPU), Tid: b.q.tid(), Args: map[string]any{"value": hexs(b.v)}})
	}
	for _, f := range r.faults {
		evs = append(evs, event{Name: string(f.f.Kind) + " " + f.q.name(), Cat: "sdma", Ph: "i", S: "p", Ts: usec(f.f.At),
			Pid: pidOf(f.q.id.GPU), Tid: f.q.tid(), Args: map[string]any{"detail": f.f.Detail, "ring_offset": hexs(f.f.Offset), "halts": f.f.Halts}})
	}
	return evs
}
