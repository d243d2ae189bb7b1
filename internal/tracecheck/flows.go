package tracecheck

import (
	"fmt"
	"math"
	"sort"
)

// flows checks the v1 flows: their shape, and that Perfetto and DevTools
// bind each event to the slice its args.slice_id names.
func (c *checker) flows() []Flow {
	perfetto := c.bindPerfetto(true)
	perfettoSorted := c.bindPerfetto(false)
	devtools := c.bindDevTools()
	bySliceID := map[string]*ev{}
	for _, e := range c.evs {
		if e.ph != "X" {
			continue
		}
		if id, ok := e.args["slice_id"]; ok {
			k := fmt.Sprint(id)
			if o, dup := bySliceID[k]; dup {
				c.bad("events %d and %d have the same args.slice_id %s", o.i, e.i, k)
			}
			bySliceID[k] = e
		}
	}
	var ids []string
	byID := map[string][]*ev{}
	for _, e := range c.evs {
		if !isFlow(e.ph) || !e.hasID || e.ts == nil {
			continue
		}
		if _, ok := byID[e.id]; !ok {
			ids = append(ids, e.id)
		}
		byID[e.id] = append(byID[e.id], e)
	}
	var out []Flow
	for _, id := range ids {
		fs := byID[id]
		f := Flow{ID: id, Name: fs[0].name, Cat: fs[0].cat}
		var s, fin int
		for j, fe := range fs {
			at := func(format string, args ...any) {
				c.bad("flow %s, %s: %s", id, fe.where(), fmt.Sprintf(format, args...))
			}
			switch fe.ph {
			case "s":
				s++
				if j != 0 {
					at("s is not the flow's first event")
				}
			case "f":
				fin++
				if j != len(fs)-1 {
					at("f is not the flow's last event")
				}
			}
			if fe.name != f.Name || fe.cat != f.Cat {
				at("name/cat %q/%q differ from the flow's %q/%q", fe.name, fe.cat, f.Name, f.Cat)
			}
			if j > 0 && fe.ts.Cmp(fs[j-1].ts) <= 0 {
				at("ts %v is not after the previous event's %v (Perfetto needs time order, DevTools one event per time)",
					fe.raw["ts"], fs[j-1].raw["ts"])
			}
			var bound *Slice
			pb, okP := perfetto[fe.i]
			if okP && c.evs[pb].ph == "X" {
				bound = c.slice(c.evs[pb])
			}
			f.Slices = append(f.Slices, bound)
			want, named := fe.args["slice_id"]
			switch {
			case !named:
				at("args.slice_id does not name the slice it binds to")
			case bySliceID[fmt.Sprint(want)] == nil:
				at("args.slice_id %v names no slice", want)
			default:
				w := bySliceID[fmt.Sprint(want)]
				if !okP {
					at("Perfetto binds it to nothing (no slice open on pid %d tid %d at ts %v); it names event %d",
						fe.pid, fe.tid, fe.raw["ts"], w.i)
				} else if pb != w.i {
					at("Perfetto binds it to event %d, not to event %d that its args.slice_id names", pb, w.i)
				}
				if sb, ok := perfettoSorted[fe.i]; !ok || sb != w.i {
					at("Perfetto, reading the file as sorted (no re-sort), binds it to event %d (ok=%v), not to event %d", sb, ok, w.i)
				}
				if db, ok := devtools[fe.i]; !ok {
					at("the DevTools trace engine binds it to nothing (it binds by exact ts, pid, tid and cat: %v, %d, %d, %q, one event per ts in a flow); it names event %d",
						fe.raw["ts"], fe.pid, fe.tid, fe.cat, w.i)
				} else if db != w.i {
					at("the DevTools trace engine binds it to event %d, not to event %d that its args.slice_id names", db, w.i)
				}
			}
		}
		if s != 1 || fin != 1 {
			c.bad("flow %s: %d s and %d f events, want one of each", id, s, fin)
		}
		out = append(out, f)
	}
	return out
}

// bindPerfetto binds flow events as Perfetto's JSON importer does: events
// sorted by ts (nanoseconds), then, if keyed (its sort of a trace with X
// events that is not in ts order), E first, then X by duration, longest
// first, then the rest (flows, instants, zero-length X), each in file
// order (a file already in ts order is read in file order); per
// track a stack of open slices that a new slice pops when they ended before
// it (or at its start, unless both take no time); s, t and f with bp "e"
// bind to the top of the stack, an f without bp to the next slice that
// begins on its track. It returns flow event index → bound event index.
func (c *checker) bindPerfetto(keyed bool) map[int]int {
	type open struct {
		i        int
		end, dur int64
	}
	const pending int64 = math.MaxInt64
	key := func(e *ev) int64 {
		switch e.ph {
		case "E":
			return math.MinInt64
		case "X":
			return math.MaxInt64 - e.durNs
		}
		return math.MaxInt64
	}
	var idx []int
	for i, e := range c.evs {
		if e.ph != "M" && e.ts != nil && e.okPid && (e.okTid || !e.threadScoped()) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ea, eb := c.evs[idx[a]], c.evs[idx[b]]
		if ea.tsNs != eb.tsNs {
			return ea.tsNs < eb.tsNs
		}
		return keyed && key(ea) < key(eb)
	})
	stacks := map[track][]open{}
	next := map[track][]int{}
	bound := map[int]int{}
	begin := func(e *ev, dur int64) {
		tr := e.track()
		st := stacks[tr]
		for len(st) > 0 {
			top := st[len(st)-1]
			if top.end == pending || top.end > e.tsNs || (top.end == e.tsNs && top.dur == 0 && dur == 0) {
				break
			}
			st = st[:len(st)-1]
		}
		if dur != pending && len(st) > 0 {
			if top := st[len(st)-1]; top.end != pending && e.tsNs < top.end && e.tsNs+dur > top.end {
				c.bad("%s: Perfetto drops it: it starts inside event %d and ends after it", e.where(), top.i)
				stacks[tr] = st
				return
			}
		}
		end := pending
		if dur != pending {
			end = e.tsNs + dur
		}
		stacks[tr] = append(st, open{e.i, end, dur})
		for _, f := range next[tr] {
			bound[f] = e.i
		}
		delete(next, tr)
	}
	for _, i := range idx {
		e := c.evs[i]
		tr := e.track()
		switch e.ph {
		case "X":
			if e.dur != nil {
				begin(e, e.durNs)
			}
		case "B":
			begin(e, pending)
		case "i", "I":
			if e.threadScoped() {
				begin(e, 0)
			}
		case "E":
			if st := stacks[tr]; len(st) > 0 {
				stacks[tr] = st[:len(st)-1]
			}
		case "s", "t", "f":
			if e.ph == "f" && e.bp != "e" {
				next[tr] = append(next[tr], i)
				continue
			}
			if st := stacks[tr]; len(st) > 0 {
				bound[i] = st[len(st)-1].i
			}
		}
	}
	return bound
}

// bindDevTools binds flow events as the DevTools trace engine does
// (FlowsHandler): an event of a flow binds to the first non-flow event in
// file order with the same ts (as a float64), pid, tid and category; a
// flow's events are processed in file order (s opens it, f closes it, t
// and f without an open flow are ignored), its bound events are keyed by
// ts (a later one at the same ts replaces an earlier one), and a flow of
// fewer than two events is dropped. It returns flow event index → bound
// event index for the events of the flows it keeps.
func (c *checker) bindDevTools() map[int]int {
	type tuple struct {
		ts       uint64
		pid, tid int64
		cat      string
	}
	tup := func(e *ev) tuple { return tuple{math.Float64bits(e.tsF), e.pid, e.tid, e.cat} }
	first := map[tuple]int{}
	for i, e := range c.evs {
		if isFlow(e.ph) || e.ts == nil {
			continue
		}
		if _, ok := first[tup(e)]; !ok {
			first[tup(e)] = i
		}
	}
	type member struct{ flowEv, target int }
	var flows [][]member
	openFlow := map[string]int{} // cat, name, id → index in flows
	for i, e := range c.evs {
		if !isFlow(e.ph) || e.ts == nil || !e.hasID {
			continue
		}
		g := e.cat + "\x00" + e.name + "\x00" + e.id
		n, ok := openFlow[g]
		switch e.ph {
		case "s":
			n, ok = len(flows), true
			flows = append(flows, nil)
			openFlow[g] = n
		case "f":
			delete(openFlow, g)
		}
		if !ok {
			continue
		}
		t, bound := first[tup(e)]
		if !bound {
			continue
		}
		flows[n] = append(flows[n], member{i, t})
	}
	out := map[int]int{}
	for _, ms := range flows {
		// Keyed by the bound event's ts, in the order the bound events come
		// in the file.
		sort.SliceStable(ms, func(a, b int) bool { return ms[a].target < ms[b].target })
		last := map[float64]int{}
		for k, m := range ms {
			last[c.evs[m.target].tsF] = k
		}
		if len(last) < 2 {
			continue
		}
		for k, m := range ms {
			if last[c.evs[m.target].tsF] == k {
				out[m.flowEv] = m.target
			}
		}
	}
	return out
}
