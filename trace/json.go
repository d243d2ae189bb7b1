package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// ns is a virtual time rounded to the nanosecond: the grid every slice of
// the trace sits on. Rounding is monotone, so slices that nest or are
// disjoint in picoseconds still are.
type ns int64

func nsOf(t sim.Time) ns {
	if t <= 0 {
		return 0 // virtual time never runs backwards; keep the output valid
	}
	return ns((int64(t) + 500) / 1000)
}

// stamp is how a time is written: the multiple of 2⁻¹¹ µs nearest to its
// nanosecond, within a quarter nanosecond of it. Float64 viewers (DevTools,
// speedscope) then add and subtract ts and dur exactly, whatever they shift
// a track by, and Perfetto's import (round(µs × 1000)) gets the exact
// nanoseconds back, for ts, dur and so ts + dur. A grid of plain
// nanoseconds (3 decimals) is not enough: 15.597 + 1.422 is not 17.019 in
// float64, and a viewer then sees adjacent slices overlap.
type stamp int64

const stampsPerMicro = 2048

func (n ns) stamp() stamp { return stamp((int64(n)*256 + 62) / 125) } // n × 2.048, rounded

// String writes s in microseconds, exactly: 2⁻¹¹ needs 11 decimals.
func (s stamp) String() string {
	if s < 0 {
		return "-" + (-s).String()
	}
	out := strconv.FormatInt(int64(s/stampsPerMicro), 10)
	if f := int64(s % stampsPerMicro); f != 0 {
		frac := strings.TrimRight(fmt.Sprintf("%011d", f*48828125), "0") // 10¹¹/2048
		out += "." + frac
	}
	return out
}

func (s stamp) MarshalJSON() ([]byte, error) { return []byte(s.String()), nil }

// event is one trace event (Trace Event Format).
type event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Ts   stamp          `json:"ts"`
	Dur  *stamp         `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	ID   uint64         `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// Categories. Every slice and every flow event is "sdma": the DevTools
// trace engine binds a flow event only to a slice of its own category, and
// the events of one flow share one category, so a flow call → packet →
// waiter needs one category across wave and queue tracks. Instants have
// categories of their own so that no viewer binds a flow to them.
const (
	catSlice    = "sdma"
	catDoorbell = "sdma.doorbell"
	catFault    = "sdma.fault"
	catMeta     = "__metadata" // what Chrome writes on its own metadata
	flowName    = "sdma"
)

// Track numbering: pid is GPU+1 (pid 0 is the idle process to some
// viewers); tids are unique across the trace, as Perfetto wants: queues
// below 40000 + pid·100000, overflow lanes from there, waves from 70000.
const (
	tidsPerGPU   = 100000
	overflowTid0 = 40000
	waveTid0     = 70000
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

// slice is a complete ("X") event and the flow events bound to it,
// written right after it.
type slice struct {
	name       string
	start, end ns
	args       map[string]any
	seq        int    // creation order: ties in the track's order
	parent     *slice // a wake slice's waiter: drawn on its lane if it fits
	lane       *lane  // set by track.layout
	id         int    // args.slice_id, what the flow events name
	flows      []event
}

// track is what the recorder keeps one thread track for (a queue or a
// wave) and the lanes its slices are drawn on: its own track first, then
// overflow tracks named "NAME (+k)".
type track struct {
	pid, tid int
	name     string
	slices   []*slice
	lanes    []*lane
}

// lane is one thread track of the output.
type lane struct {
	pid, tid int
	name     string
	sort     int
	open     []*slice // enclosing the last slice placed
	last     ns       // start of the last slice placed
	used     bool
}

func (t *track) add(s *slice) *slice {
	s.seq = len(t.slices)
	t.slices = append(t.slices, s)
	return s
}

// fits says whether s can go on l next: l's slices, placed in start order,
// stay nested or disjoint, and none of them starts when s does. Viewers
// bind a flow event to a slice by its start (DevTools: the first event of
// the track at that exact ts and category; Perfetto: the innermost slice
// open then), so a start that two slices of a track share would be
// ambiguous; speedscope also ends a zero-length slice before it begins if
// a longer one starts with it.
func (l *lane) fits(s *slice) bool {
	for len(l.open) > 0 && l.open[len(l.open)-1].end <= s.start {
		l.open = l.open[:len(l.open)-1]
	}
	if l.used && l.last == s.start {
		return false
	}
	return len(l.open) == 0 || s.end <= l.open[len(l.open)-1].end
}

func (l *lane) place(s *slice) {
	l.open = append(l.open, s)
	l.last, l.used = s.start, true
	s.lane = l
}

// layout orders the track's slices (by start, longer first) and puts each
// on the first lane it fits, its parent's first: a slice that starts in
// the same nanosecond as another, or would overlap one without nesting,
// goes to an overflow lane (newTid gives its tid), so every lane's slices
// nest or are disjoint and start at distinct times by construction. The
// recorder's tracks are sequential; only calls or packets that take no
// time (a model with free issue or no packet gap) need overflow lanes.
func (t *track) layout(newTid func(pid int) int) {
	sort.SliceStable(t.slices, func(i, j int) bool {
		a, b := t.slices[i], t.slices[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return a.seq < b.seq
	})
	main := &lane{pid: t.pid, tid: t.tid, name: t.name, sort: (t.tid - t.pid*tidsPerGPU) * lanesPerTrack}
	t.lanes = []*lane{main}
	for _, s := range t.slices {
		var to *lane
		if p := s.parent; p != nil && p.lane.fits(s) {
			to = p.lane
		}
		for _, l := range t.lanes {
			if to == nil && l.fits(s) {
				to = l
			}
		}
		if to == nil {
			k := len(t.lanes)
			to = &lane{pid: t.pid, tid: newTid(t.pid), name: fmt.Sprintf("%s (+%d)", t.name, k), sort: main.sort + min(k, lanesPerTrack-1)}
			t.lanes = append(t.lanes, to)
		}
		to.place(s)
	}
}

// lanesPerTrack spaces the tracks' sort indices for their overflow lanes.
const lanesPerTrack = 1000

// WriteJSON writes what was recorded as Chrome trace-event JSON, object
// form, which the Perfetto UI, chrome://tracing, the DevTools performance
// panel and speedscope open. The same run gives the same bytes.
func (r *Recorder) WriteJSON(w io.Writer) error {
	for _, q := range r.n.Queues() { // queues made but never rung still get a track
		r.queue(q.Queue)
	}
	end := r.s.Now()

	var queueTracks, waveTracks []*track
	packets := map[*packet]*slice{}
	calls := map[*call]*slice{}
	owner := map[*slice]*track{}
	for _, qt := range r.queueIDs {
		t := &track{pid: pidOf(qt.id.GPU), tid: qt.tid(), name: qt.name()}
		queueTracks = append(queueTracks, t)
		for _, k := range qt.packets {
			s := t.add(r.packetSlice(k))
			packets[k], owner[s] = s, t
		}
	}
	for _, wt := range r.waveIDs {
		t := &track{pid: pidOf(wt.gpu), tid: wt.tid(), name: wt.name()}
		waveTracks = append(waveTracks, t)
		for _, c := range wt.calls {
			s := t.add(r.callSlice(c, end))
			calls[c], owner[s] = s, t
		}
	}
	wakes := r.wakeSlices(packets, calls, owner)
	tracks := append(queueTracks, waveTracks...)
	overflow := map[int]int{}
	newTid := func(pid int) int {
		overflow[pid]++
		return pid*tidsPerGPU + overflowTid0 + overflow[pid]
	}
	id, spilled := 0, 0
	for _, t := range tracks {
		t.layout(newTid)
		spilled += len(t.lanes) - 1
		for _, s := range t.slices {
			id++
			s.id = id
			s.args["slice_id"] = id
		}
	}
	dropped := r.flows(packets, calls, wakes)

	var evs []event
	for _, t := range tracks {
		for _, s := range t.slices {
			evs = append(evs, s.event())
			evs = append(evs, s.flows...)
		}
	}
	evs = append(evs, r.instants()...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Ts < evs[j].Ts })

	bw := bufio.NewWriter(w)
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":`)
	other, err := json.Marshal(map[string]any{
		"generator": "emud trace", "seed": strconv.FormatUint(r.s.Seed(), 10), "end_us": nsOf(end).stamp().String(),
		"clock":              "virtual time rounded to the nanosecond; ts and dur in microseconds, each the multiple of 2^-11 µs nearest its nanosecond",
		"flows":              "v1 (s/t/f): each flow event at the start of the slice it binds to, on its track, in its category; f with bp e",
		"flow_links_dropped": dropped,
		"overflow_lanes":     spilled,
	})
	if err != nil {
		return err
	}
	bw.Write(other)
	bw.WriteString(",\n\"traceEvents\":[\n")
	for i, e := range append(metadata(queueTracks, waveTracks), evs...) {
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

func (s *slice) event() event {
	ts := s.start.stamp()
	d := s.end.stamp() - ts
	return event{Name: s.name, Cat: catSlice, Ph: "X", Ts: ts, Dur: &d, Pid: s.lane.pid, Tid: s.lane.tid, Args: s.args}
}

// metadata names and orders the processes (GPUs) and threads (lanes):
// queues in tid order, then waves, each followed by its overflow lanes.
func metadata(queues, waves []*track) []event {
	queues = append([]*track(nil), queues...)
	sort.SliceStable(queues, func(i, j int) bool { return queues[i].tid < queues[j].tid })
	var pids []int
	seen := map[int]bool{}
	for _, t := range append(queues, waves...) {
		if !seen[t.pid] {
			seen[t.pid] = true
			pids = append(pids, t.pid)
		}
	}
	sort.Ints(pids)
	meta := func(name string, pid, tid int, args map[string]any) event {
		return event{Name: name, Cat: catMeta, Ph: "M", Pid: pid, Tid: tid, Args: args}
	}
	var evs []event
	for _, p := range pids {
		evs = append(evs,
			meta("process_name", p, p, map[string]any{"name": fmt.Sprintf("GPU %d", p-1)}),
			meta("process_sort_index", p, p, map[string]any{"sort_index": p - 1}))
	}
	for _, t := range append(queues, waves...) {
		for _, l := range t.lanes {
			evs = append(evs,
				meta("thread_name", l.pid, l.tid, map[string]any{"name": l.name}),
				meta("thread_sort_index", l.pid, l.tid, map[string]any{"sort_index": l.sort}))
		}
	}
	return evs
}

func (k *packet) describe() string {
	return k.p.Kind.String() + " on " + k.q.name() + " at ring offset " + hexs(k.off)
}

func (r *Recorder) packetSlice(k *packet) *slice {
	p := &k.p
	args := map[string]any{"ring_offset": hexs(k.off), "packet": k.text}
	switch p.Kind {
	case ring.KindCopy, ring.KindBroadcastCopy:
		args["bytes"] = p.CopyBytes()
		args["src"], args["dst"] = hexs(p.Src), hexs(p.Dst)
		if p.Kind == ring.KindBroadcastCopy {
			args["dst2"] = hexs(p.Dst2)
		}
	case ring.KindCopyWaitSignal, ring.KindMulticast, ring.KindSwap:
		args["bytes"] = p.CopyBytes()
		args["src"], args["dst"] = hexs(p.Src), hexs(p.Dst)
		if p.Kind == ring.KindMulticast {
			args["dsts"] = len(p.Dsts)
		}
		if p.HasWait {
			args["wait_addr"], args["wait_ref"] = hexs(p.Wait.Addr), p.Wait.Ref
		}
		if p.HasSignal {
			args["signal_addr"], args["signal_op"] = hexs(p.Signal.Addr), p.Signal.Op.String()
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
	return &slice{name: p.Kind.String(), start: nsOf(k.start), end: nsOf(k.end), args: args}
}

func (r *Recorder) callSlice(c *call, end sim.Time) *slice {
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
	return &slice{name: ev.Name, start: nsOf(c.start), end: nsOf(stop), args: args}
}

// wakeKey is one waker of one waiter.
type wakeKey struct {
	k      *packet
	waiter *slice
}

// wakeSlices splits each waiter (a call or a parked POLL_REGMEM) that a
// packet woke into the time before the wake and "wake" slices after it,
// one from each distinct wake time to the next (to the waiter's end for
// the last), and returns, for each waker, the slice its flow ends at.
//
// A flow must end at the start of a slice (see lane.fits) and after
// the events before it in time, which a waiter, begun before the packet
// that woke it, does not satisfy; its wake slice does. The wake time is the
// waker's end, moved to the nanosecond after the waker's start if it is not
// later (a zero-length ATOMIC: DevTools keeps one event per time in a
// flow) and to the waiter's last nanosecond if it is its end (a wake slice
// of no length would share its start with the wave's next call). A wake at
// the waiter's start ends the flow at the waiter itself.
func (r *Recorder) wakeSlices(packets map[*packet]*slice, calls map[*call]*slice, owner map[*slice]*track) map[wakeKey]*slice {
	type wake struct {
		k  *packet
		at ns
	}
	var order []*slice
	byWaiter := map[*slice][]wake{}
	for _, k := range r.packets {
		for _, w := range k.woke {
			ws := calls[w.c]
			if w.p != nil {
				ws = packets[w.p]
			}
			if ws == nil {
				continue
			}
			at := max(nsOf(k.end), nsOf(k.start)+1)
			if at >= ws.end {
				at = ws.end - 1
			}
			if _, ok := byWaiter[ws]; !ok {
				order = append(order, ws)
			}
			byWaiter[ws] = append(byWaiter[ws], wake{k, at})
		}
	}
	targets := map[wakeKey]*slice{}
	for _, ws := range order {
		wakes := byWaiter[ws]
		sort.SliceStable(wakes, func(i, j int) bool { return wakes[i].at < wakes[j].at })
		var segs []*slice
		for _, w := range wakes {
			if w.at <= ws.start {
				targets[wakeKey{w.k, ws}] = ws
				continue
			}
			if n := len(segs); n == 0 || segs[n-1].start != w.at {
				segs = append(segs, &slice{name: "wake", parent: ws, start: w.at, end: ws.end,
					args: map[string]any{"of": ws.name}})
			}
			s := segs[len(segs)-1]
			by, _ := s.args["by"].([]string)
			s.args["by"] = append(by, w.k.describe())
			targets[wakeKey{w.k, ws}] = s
		}
		for i, s := range segs {
			if i+1 < len(segs) {
				s.end = segs[i+1].start
			}
			s.args["last"] = i == len(segs)-1
			owner[ws].add(s)
		}
	}
	return targets
}

// flows links each packet to the call that rang it and to the waiters its
// write woke: one chain call → packet → first waiter (s, t, f), and a pair
// packet → waiter (s, f) for every further waiter; a packet that woke no
// one ends its call's flow (s, f). Each flow event sits at the start of the
// slice it binds to, on its track, with its category and args.slice_id
// naming it (Perfetto's enclosing-slice rule and DevTools'
// exact-start rule then agree: lane.fits). A chain's times must strictly
// increase (Perfetto needs time order, DevTools keeps one event per time
// in a flow): from the first link that does not, the chain is cut and the
// links lost are counted in otherData's flow_links_dropped. That happens
// only when a waker takes no time and its waiter returns in the same
// nanosecond (a model with free CU issue: the placeholder preset).
func (r *Recorder) flows(packets map[*packet]*slice, calls map[*call]*slice, wakes map[wakeKey]*slice) (dropped int) {
	var id uint64
	emit := func(chain ...*slice) {
		for i, s := range chain {
			if s == nil || (i > 0 && s.start <= chain[i-1].start) {
				dropped += len(chain) - max(i, 1)
				chain = chain[:i]
				break
			}
		}
		if len(chain) < 2 {
			return
		}
		id++
		for i, s := range chain {
			ph := "t"
			switch i {
			case 0:
				ph = "s"
			case len(chain) - 1:
				ph = "f"
			}
			ts := s.start.stamp()
			e := event{Name: flowName, Cat: catSlice, Ph: ph, Ts: ts, Pid: s.lane.pid, Tid: s.lane.tid, ID: id,
				Args: map[string]any{"slice_id": s.id}}
			if ph == "f" {
				e.BP = "e"
			}
			s.flows = append(s.flows, e)
		}
	}
	waiter := func(k *packet, w waiter) *slice {
		ws := calls[w.c]
		if w.p != nil {
			ws = packets[w.p]
		}
		return wakes[wakeKey{k, ws}]
	}
	for _, k := range r.packets {
		ks := packets[k]
		rest := k.woke
		if c := k.issuer; c != nil && calls[c] != nil {
			if len(rest) > 0 {
				emit(calls[c], ks, waiter(k, rest[0]))
				rest = rest[1:]
			} else {
				emit(calls[c], ks)
			}
		}
		for _, w := range rest {
			emit(ks, waiter(k, w))
		}
	}
	return dropped
}

// instants are doorbells and faults, as process-scoped instants: on the
// thread tracks they would nest inside packets.
func (r *Recorder) instants() []event {
	var evs []event
	at := func(t sim.Time) stamp { return nsOf(t).stamp() }
	for _, b := range r.bells {
		evs = append(evs, event{Name: "doorbell " + b.q.name(), Cat: catDoorbell, Ph: "i", S: "p", Ts: at(b.t),
			Pid: pidOf(b.q.id.GPU), Tid: b.q.tid(), Args: map[string]any{"value": hexs(b.v)}})
	}
	for _, f := range r.faults {
		evs = append(evs, event{Name: string(f.f.Kind) + " " + f.q.name(), Cat: catFault, Ph: "i", S: "p", Ts: at(f.f.At),
			Pid: pidOf(f.q.id.GPU), Tid: f.q.tid(), Args: map[string]any{"detail": f.f.Detail, "ring_offset": hexs(f.f.Offset), "halts": f.f.Halts}})
	}
	return evs
}
