package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// validateTrace checks data against the Trace Event Format (the JSON object
// form): the top-level object, the fields each phase requires, numeric
// times, integer pids and tids, metadata names and args, flows matched
// s → t* → f with one name and category and in time order, each flow event
// bound to a complete slice of its track that contains it (bindFlows),
// complete slices properly nested per track, and B/E balanced. It also checks what
// Perfetto needs beyond the document: every track that holds slices is
// named, and a tid belongs to one pid. It returns every problem found.
func validateTrace(data []byte) error {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if u, ok := top["displayTimeUnit"]; ok {
		var s string
		if json.Unmarshal(u, &s) != nil || (s != "ms" && s != "ns") {
			bad("displayTimeUnit %s: want \"ms\" or \"ns\"", u)
		}
	}
	raw, ok := top["traceEvents"]
	if !ok {
		return errors.New("no traceEvents array")
	}
	var evs []map[string]any
	d2 := json.NewDecoder(bytes.NewReader(raw))
	d2.UseNumber()
	if err := d2.Decode(&evs); err != nil {
		return fmt.Errorf("traceEvents is not an array of objects: %w", err)
	}

	type track struct{ pid, tid int64 }
	type flowEv struct {
		ph        string
		ts        float64
		tr        track
		i         int
		name, cat string
	}
	named := map[track]bool{}
	procNamed := map[int64]bool{}
	tidPid := map[int64]int64{}
	used := map[track]int{} // tracks holding slices → first event
	flows := map[string][]flowEv{}
	open := map[track][]string{} // B/E stacks
	var flowOrder []string

	for i, e := range evs {
		at := func(format string, args ...any) { bad("event %d (%v): %s", i, e["ph"], fmt.Sprintf(format, args...)) }
		ph, ok := e["ph"].(string)
		if !ok || len(ph) != 1 || !validPhase[ph] {
			at("ph %v: not a trace-event phase", e["ph"])
			continue
		}
		name, hasName := e["name"].(string)
		if _, present := e["name"]; present && !hasName {
			at("name %v is not a string", e["name"])
		}
		if c, present := e["cat"]; present {
			if _, ok := c.(string); !ok {
				at("cat %v is not a string", c)
			}
		}
		if a, present := e["args"]; present {
			if _, ok := a.(map[string]any); !ok {
				at("args is not an object")
			}
		}
		pid, okPid := integer(e["pid"])
		tid, okTid := integer(e["tid"])
		if !okPid {
			at("pid %v is not an integer", e["pid"])
		}
		scope, _ := e["s"].(string)
		threadScoped := !(ph == "i" || ph == "I") || scope == "" || scope == "t"
		if ph == "i" || ph == "I" {
			if _, present := e["s"]; present && scope != "g" && scope != "p" && scope != "t" {
				at("instant scope %v: want g, p or t", e["s"])
			}
		}
		if threadScoped && !okTid {
			at("tid %v is not an integer", e["tid"])
		}
		if okPid && okTid && (ph != "M" || strings.HasPrefix(name, "thread_")) {
			if p, seen := tidPid[tid]; seen && p != pid {
				at("tid %d is used with pids %d and %d", tid, p, pid)
			}
			tidPid[tid] = pid
		}
		tr := track{pid, tid}
		ts, okTs := number(e["ts"])
		if ph != "M" && !okTs {
			at("ts %v is not a number", e["ts"])
			continue
		}
		if okTs && ts < 0 {
			at("ts %v is negative", ts)
		}
		switch ph {
		case "M":
			args, _ := e["args"].(map[string]any)
			switch name {
			case "process_name", "thread_name", "process_labels":
				if _, ok := args["name"].(string); !ok && name != "process_labels" {
					at("%s without a string args.name", name)
				} else if name == "process_name" {
					procNamed[pid] = true
				} else if name == "thread_name" {
					named[tr] = true
				}
				if name == "process_labels" {
					if _, ok := args["labels"].(string); !ok {
						at("process_labels without a string args.labels")
					}
				}
			case "process_sort_index", "thread_sort_index":
				if _, ok := integer(args["sort_index"]); !ok {
					at("%s without an integer args.sort_index", name)
				}
			default:
				at("metadata name %q: not one of process_name, process_labels, process_sort_index, thread_name, thread_sort_index", name)
			}
		case "X":
			dur, ok := number(e["dur"])
			if !ok {
				at("complete event without a numeric dur")
				continue
			}
			if dur < 0 {
				at("dur %v is negative", dur)
			}
			if !hasName {
				at("complete event without a name")
			}
			if _, ok := used[tr]; !ok {
				used[tr] = i
			}
		case "B":
			open[tr] = append(open[tr], name)
			if _, ok := used[tr]; !ok {
				used[tr] = i
			}
		case "E":
			if len(open[tr]) == 0 {
				at("E without a B on pid %d tid %d", pid, tid)
			} else {
				open[tr] = open[tr][:len(open[tr])-1]
			}
		case "s", "t", "f":
			id, ok := flowID(e["id"])
			if !ok {
				at("flow event without an id")
				continue
			}
			cat, _ := e["cat"].(string)
			if bp, present := e["bp"]; present && (ph != "f" || bp != "e") {
				at("bp %v on a %q event: only \"e\" on f", bp, ph)
			}
			if _, ok := flows[id]; !ok {
				flowOrder = append(flowOrder, id)
			}
			flows[id] = append(flows[id], flowEv{ph, ts, tr, i, name, cat})
		}
	}
	for tr, st := range open {
		if len(st) > 0 {
			bad("pid %d tid %d: %d B events never ended", tr.pid, tr.tid, len(st))
		}
	}
	bound, problems := bindFlows(evs)
	errs = append(errs, problems...)
	for _, id := range flowOrder {
		fs := flows[id]
		var s, f int
		for j, fe := range fs {
			switch fe.ph {
			case "s":
				s++
				if j != 0 {
					bad("flow %s: s is not its first event", id)
				}
			case "f":
				f++
				if j != len(fs)-1 {
					bad("flow %s: f is not its last event", id)
				}
			}
			if fe.name != fs[0].name || fe.cat != fs[0].cat {
				bad("flow %s: events differ in name or cat (%q/%q vs %q/%q)", id, fe.name, fe.cat, fs[0].name, fs[0].cat)
			}
			if j > 0 && fe.ts < fs[j-1].ts-eps {
				bad("flow %s: event %d at %v is before the previous one at %v", id, fe.i, fe.ts, fs[j-1].ts)
			}
			if _, ok := bound[fe.i]; !ok {
				bad("flow %s: %s event %d at %v binds to no slice of pid %d tid %d", id, fe.ph, fe.i, fe.ts, fe.tr.pid, fe.tr.tid)
			}
		}
		if s != 1 || f != 1 {
			bad("flow %s: %d s and %d f events, want one of each", id, s, f)
		}
	}
	for tr, i := range used {
		if !named[tr] {
			bad("pid %d tid %d (first slice: event %d) has no thread_name", tr.pid, tr.tid, i)
		}
		if !procNamed[tr.pid] {
			bad("pid %d has no process_name", tr.pid)
		}
	}
	return errors.Join(errs...)
}

// eps absorbs float rounding of microsecond decimals (0.1 ps).
const eps = 1e-7

// bindFlows binds flow events to complete slices as Perfetto does: events
// in time order (a stable sort, so ties keep file order); per track a stack
// of open X slices, a new slice first closing those that ended by its
// start; s, t and f with bp "e" bind to the topmost open slice, an f
// without bp to the next slice that begins on its track. It returns flow
// event index → X event index and the problems found: slices that overlap
// without nesting, flow events that bind to nothing or to a slice that does
// not contain them.
func bindFlows(evs []map[string]any) (map[int]int, []error) {
	type track struct{ pid, tid int64 }
	type open struct {
		end float64
		i   int
	}
	idx := make([]int, 0, len(evs))
	ts := make([]float64, len(evs))
	for i, e := range evs {
		if t, ok := number(e["ts"]); ok {
			ts[i] = t
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ts[idx[a]] < ts[idx[b]] })
	stacks := map[track][]open{}
	pending := map[track][]int{}
	bound := map[int]int{}
	var errs []error
	for _, i := range idx {
		e := evs[i]
		ph, _ := e["ph"].(string)
		pid, _ := integer(e["pid"])
		tid, _ := integer(e["tid"])
		tr := track{pid, tid}
		st := stacks[tr]
		switch ph {
		case "X":
			dur, _ := number(e["dur"])
			for len(st) > 0 && st[len(st)-1].end <= ts[i]+eps {
				st = st[:len(st)-1]
			}
			if len(st) > 0 && ts[i]+dur > st[len(st)-1].end+eps {
				errs = append(errs, fmt.Errorf("pid %d tid %d: slices of events %d and %d overlap without nesting", pid, tid, st[len(st)-1].i, i))
			}
			stacks[tr] = append(st, open{ts[i] + dur, i})
			for _, f := range pending[tr] {
				bound[f] = i
			}
			delete(pending, tr)
		case "s", "t", "f":
			if bp, _ := e["bp"].(string); ph == "f" && bp != "e" {
				pending[tr] = append(pending[tr], i)
				continue
			}
			if len(st) == 0 {
				continue // reported by the caller as unbound
			}
			top := st[len(st)-1]
			start, _ := number(evs[top.i]["ts"])
			if ts[i] < start-eps || ts[i] > top.end+eps {
				errs = append(errs, fmt.Errorf("flow event %d at %v binds to slice %d [%v, %v], which does not contain it", i, ts[i], top.i, start, top.end))
				continue
			}
			bound[i] = top.i
		}
	}
	return bound, errs
}

// validPhase lists the phases of the Trace Event Format.
var validPhase = map[string]bool{}

func init() {
	for _, p := range []string{"B", "E", "X", "i", "I", "C", "b", "n", "e", "S", "T", "p", "F",
		"s", "t", "f", "P", "N", "O", "D", "M", "V", "v", "R", "c", "(", ")"} {
		validPhase[p] = true
	}
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// flowID renders an id (number or string) as a key.
func flowID(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return "n" + x.String(), true
	case string:
		return "s" + x, x != ""
	}
	return "", false
}
