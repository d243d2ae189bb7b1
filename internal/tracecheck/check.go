package tracecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
)

// Slice is a complete ("X") event of the document.
type Slice struct {
	Index    int // position in traceEvents
	Name     string
	Pid, Tid int64
	Args     map[string]any
}

// Flow is one v1 flow and the slices its events bind to, in event order
// (nil where an event binds to no complete slice), as Perfetto binds them.
type Flow struct {
	ID        string
	Name, Cat string
	Slices    []*Slice
}

// Report is what a checked document holds.
type Report struct {
	Events int
	Slices []*Slice
	Flows  []Flow
}

// maxProblems bounds the error: past it, the rest are counted.
const maxProblems = 40

// Check reads data and returns what it holds and every problem found
// (nil if none). The report is nil only if data is not a trace at all.
func Check(data []byte) (*Report, error) {
	evs, problems, err := parse(data)
	if err != nil {
		return nil, err
	}
	c := &checker{evs: evs}
	c.errs = problems
	c.fields()
	c.nesting()
	rep := &Report{Events: len(evs)}
	for _, e := range evs {
		if e.ph == "X" {
			rep.Slices = append(rep.Slices, c.slice(e))
		}
	}
	rep.Flows = c.flows()
	if len(c.errs) > maxProblems {
		n := len(c.errs) - maxProblems
		c.errs = append(c.errs[:maxProblems], fmt.Errorf("and %d more problems", n))
	}
	return rep, errors.Join(c.errs...)
}

// ev is one event, its times read exactly and as each viewer reads them.
type ev struct {
	i             int
	raw           map[string]any
	ph, name, cat string
	hasName       bool
	pid, tid      int64
	okPid, okTid  bool
	ts, dur       *big.Rat // nil: absent or not a number
	tsF, durF     float64  // as JSON.parse reads them
	tsNs, durNs   int64    // as Perfetto reads them: round(µs × 1000)
	args          map[string]any
	scope, bp     string
	id            string
	hasID         bool
}

func (e *ev) end() *big.Rat { return new(big.Rat).Add(e.ts, e.dur) }

type track struct{ pid, tid int64 }

func (e *ev) track() track { return track{e.pid, e.tid} }

func (e *ev) where() string { return fmt.Sprintf("event %d (%s %q)", e.i, e.ph, e.name) }

func parse(data []byte) ([]*ev, []error, error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var errs []error
	if u, ok := top["displayTimeUnit"]; ok {
		var s string
		if json.Unmarshal(u, &s) != nil || (s != "ms" && s != "ns") {
			errs = append(errs, fmt.Errorf("displayTimeUnit %s: want \"ms\" or \"ns\"", u))
		}
	}
	raw, ok := top["traceEvents"]
	if !ok {
		return nil, nil, errors.New("no traceEvents array")
	}
	var objs []map[string]any
	d2 := json.NewDecoder(bytes.NewReader(raw))
	d2.UseNumber()
	if err := d2.Decode(&objs); err != nil {
		return nil, nil, fmt.Errorf("traceEvents is not an array of objects: %w", err)
	}
	evs := make([]*ev, len(objs))
	for i, o := range objs {
		e := &ev{i: i, raw: o}
		e.ph, _ = o["ph"].(string)
		e.name, e.hasName = o["name"].(string)
		e.cat, _ = o["cat"].(string)
		e.pid, e.okPid = integer(o["pid"])
		e.tid, e.okTid = integer(o["tid"])
		e.ts, e.tsF, e.tsNs = number(o["ts"])
		e.dur, e.durF, e.durNs = number(o["dur"])
		e.args, _ = o["args"].(map[string]any)
		e.scope, _ = o["s"].(string)
		e.bp, _ = o["bp"].(string)
		e.id, e.hasID = flowID(o["id"])
		evs[i] = e
	}
	return evs, errs, nil
}

type checker struct {
	evs  []*ev
	errs []error
}

func (c *checker) bad(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func (c *checker) slice(e *ev) *Slice {
	return &Slice{Index: e.i, Name: e.name, Pid: e.pid, Tid: e.tid, Args: e.args}
}

func isFlow(ph string) bool { return ph == "s" || ph == "t" || ph == "f" }

// threadScoped says whether e lives on its thread's track.
func (e *ev) threadScoped() bool {
	return !(e.ph == "i" || e.ph == "I") || e.scope == "" || e.scope == "t"
}

// fields checks each event's own fields, the time grid, metadata and
// track naming.
func (c *checker) fields() {
	named := map[track]bool{}
	procNamed := map[int64]bool{}
	tidPid := map[int64]int64{}
	used := map[track]int{}
	open := map[track]int{}
	for _, e := range c.evs {
		at := func(format string, args ...any) { c.bad("%s: %s", e.where(), fmt.Sprintf(format, args...)) }
		if len(e.ph) != 1 || !validPhase[e.ph] {
			at("ph %v: not a trace-event phase", e.raw["ph"])
			continue
		}
		if _, present := e.raw["name"]; present && !e.hasName {
			at("name %v is not a string", e.raw["name"])
		}
		if cat, present := e.raw["cat"]; !present {
			at("no cat (some parsers need one on every event)")
		} else if _, ok := cat.(string); !ok {
			at("cat %v is not a string", cat)
		}
		if _, present := e.raw["args"]; present && e.args == nil {
			at("args is not an object")
		}
		if !e.okPid {
			at("pid %v is not an integer", e.raw["pid"])
		}
		if e.ph == "i" || e.ph == "I" {
			if _, present := e.raw["s"]; present && e.scope != "g" && e.scope != "p" && e.scope != "t" {
				at("instant scope %v: want g, p or t", e.raw["s"])
			}
		}
		if e.threadScoped() && !e.okTid {
			at("tid %v is not an integer", e.raw["tid"])
		}
		if e.okPid && e.okTid && (e.ph != "M" || strings.HasPrefix(e.name, "thread_")) {
			if p, seen := tidPid[e.tid]; seen && p != e.pid {
				at("tid %d is used with pids %d and %d", e.tid, p, e.pid)
			}
			tidPid[e.tid] = e.pid
		}
		if e.ph != "M" && e.ts == nil {
			at("ts %v is not a number", e.raw["ts"])
			continue
		}
		if e.ts != nil {
			c.onGrid(e, "ts", e.ts, true)
		}
		tr := e.track()
		switch e.ph {
		case "M":
			c.metadata(e, named, procNamed)
		case "X":
			if e.dur == nil {
				at("complete event without a numeric dur")
				continue
			}
			c.onGrid(e, "dur", e.dur, false)
			c.endOnGrid(e)
			if !e.hasName {
				at("complete event without a name")
			}
			if _, ok := used[tr]; !ok {
				used[tr] = e.i
			}
		case "B":
			open[tr]++
			if _, ok := used[tr]; !ok {
				used[tr] = e.i
			}
		case "E":
			if open[tr] == 0 {
				at("E without a B on pid %d tid %d", e.pid, e.tid)
			} else {
				open[tr]--
			}
		case "s", "t", "f":
			if !e.hasID {
				at("flow event without an id")
			}
			if _, present := e.raw["bp"]; present && (e.ph != "f" || e.bp != "e") {
				at("bp %v on a %q event: only \"e\" on f", e.raw["bp"], e.ph)
			}
		}
	}
	for tr, n := range open {
		if n > 0 {
			c.bad("pid %d tid %d: %d B events never ended", tr.pid, tr.tid, n)
		}
	}
	tracks := make([]track, 0, len(used))
	for tr := range used {
		tracks = append(tracks, tr)
	}
	sort.Slice(tracks, func(i, j int) bool { return used[tracks[i]] < used[tracks[j]] })
	for _, tr := range tracks {
		if !named[tr] {
			c.bad("pid %d tid %d (first slice: event %d) has no thread_name", tr.pid, tr.tid, used[tr])
		}
		if !procNamed[tr.pid] {
			c.bad("pid %d has no process_name", tr.pid)
		}
	}
}

func (c *checker) metadata(e *ev, named map[track]bool, procNamed map[int64]bool) {
	at := func(format string, args ...any) { c.bad("%s: %s", e.where(), fmt.Sprintf(format, args...)) }
	switch e.name {
	case "process_name", "thread_name":
		if _, ok := e.args["name"].(string); !ok {
			at("%s without a string args.name", e.name)
		} else if e.name == "process_name" {
			procNamed[e.pid] = true
		} else {
			named[e.track()] = true
		}
	case "process_labels":
		if _, ok := e.args["labels"].(string); !ok {
			at("process_labels without a string args.labels")
		}
	case "process_sort_index", "thread_sort_index":
		if _, ok := integer(e.args["sort_index"]); !ok {
			at("%s without an integer args.sort_index", e.name)
		}
	default:
		at("metadata name %q: not one of process_name, process_labels, process_sort_index, thread_name, thread_sort_index", e.name)
	}
}

var (
	gridPerMicro = big.NewRat(2048, 1)
	thousand     = big.NewRat(1000, 1)
	quarter      = big.NewRat(1, 4)
)

// onGrid checks that v (µs) is not negative and a multiple of 2⁻¹¹ µs,
// and a time point (not a duration) within a quarter nanosecond of a whole
// nanosecond.
func (c *checker) onGrid(e *ev, field string, v *big.Rat, point bool) {
	if v.Sign() < 0 {
		c.bad("%s: %s %s is negative", e.where(), field, v.FloatString(6))
		return
	}
	if !new(big.Rat).Mul(v, gridPerMicro).IsInt() {
		c.bad("%s: %s %v µs is not a multiple of 2^-11 µs: float64 viewers round it", e.where(), field, e.raw[field])
		return
	}
	if !point {
		return
	}
	n := new(big.Rat).Mul(v, thousand)
	off := new(big.Rat).Sub(n, new(big.Rat).SetInt64(roundRat(n)))
	if off.Abs(off).Cmp(quarter) > 0 {
		c.bad("%s: %s %v µs is more than 1/4 ns from a whole nanosecond", e.where(), field, e.raw[field])
	}
}

// endOnGrid checks a complete slice's end: a time point on the grid, and
// Perfetto's ts + dur in whole nanoseconds is its nanosecond.
func (c *checker) endOnGrid(e *ev) {
	if e.ts == nil || e.dur == nil || e.ts.Sign() < 0 || e.dur.Sign() < 0 {
		return
	}
	end := e.end()
	n := new(big.Rat).Mul(end, thousand)
	off := new(big.Rat).Sub(n, new(big.Rat).SetInt64(roundRat(n)))
	if off.Abs(off).Cmp(quarter) > 0 {
		c.bad("%s: its end, %s µs, is more than 1/4 ns from a whole nanosecond", e.where(), end.FloatString(12))
	} else if roundRat(n) != e.tsNs+e.durNs {
		c.bad("%s: Perfetto's ts + dur, %d ns, is not its end's %d ns", e.where(), e.tsNs+e.durNs, roundRat(n))
	}
}

// nesting checks that each track's complete slices nest or are disjoint,
// exactly and in float64 as DevTools and speedscope compute their ends.
func (c *checker) nesting() {
	byTrack := map[track][]*ev{}
	var order []track
	for _, e := range c.evs {
		if e.ph == "X" && e.ts != nil && e.dur != nil && e.okPid && e.okTid {
			tr := e.track()
			if _, ok := byTrack[tr]; !ok {
				order = append(order, tr)
			}
			byTrack[tr] = append(byTrack[tr], e)
		}
	}
	type span struct {
		e          *ev
		start, end float64
	}
	checkFloat := func(tr track, how string, spans []span) {
		sort.SliceStable(spans, func(i, j int) bool {
			if spans[i].start != spans[j].start {
				return spans[i].start < spans[j].start
			}
			return spans[i].end > spans[j].end
		})
		var st []span
		for i, s := range spans {
			for len(st) > 0 && st[len(st)-1].end <= s.start {
				st = st[:len(st)-1]
			}
			if len(st) > 0 && s.end > st[len(st)-1].end {
				c.bad("pid %d tid %d: %s, slices of events %d and %d overlap without nesting (%v ends after %v)",
					tr.pid, tr.tid, how, st[len(st)-1].e.i, s.e.i, s.end, st[len(st)-1].end)
			}
			st = append(st, s)
			if how == "shifted as speedscope does" && s.end == s.start {
				for j := i - 1; j >= 0 && spans[j].start == s.start; j-- {
					if spans[j].end > spans[j].start {
						c.bad("pid %d tid %d: zero-length slice %d starts with the longer slice %d: speedscope ends it before it begins",
							tr.pid, tr.tid, s.e.i, spans[j].e.i)
						break
					}
				}
			}
		}
	}
	for _, tr := range order {
		xs := byTrack[tr]
		// Exact.
		exact := append([]*ev(nil), xs...)
		sort.SliceStable(exact, func(i, j int) bool {
			if d := exact[i].ts.Cmp(exact[j].ts); d != 0 {
				return d < 0
			}
			return exact[i].end().Cmp(exact[j].end()) > 0
		})
		var st []*ev
		for _, s := range exact {
			for len(st) > 0 && st[len(st)-1].end().Cmp(s.ts) <= 0 {
				st = st[:len(st)-1]
			}
			if len(st) > 0 && s.end().Cmp(st[len(st)-1].end()) > 0 {
				c.bad("pid %d tid %d: slices of events %d and %d overlap without nesting", tr.pid, tr.tid, st[len(st)-1].i, s.i)
			}
			st = append(st, s)
		}
		// Float64, unshifted (DevTools) and shifted to the track's first
		// slice (speedscope).
		first := math.Inf(1)
		for _, e := range xs {
			first = math.Min(first, e.tsF)
		}
		plain := make([]span, len(xs))
		shifted := make([]span, len(xs))
		for i, e := range xs {
			plain[i] = span{e, e.tsF, e.tsF + e.durF}
			s := e.tsF - first
			shifted[i] = span{e, s, s + e.durF}
		}
		checkFloat(tr, "in float64 as DevTools adds ts and dur", plain)
		checkFloat(tr, "shifted as speedscope does", shifted)
	}
}

// validPhase lists the phases of the Trace Event Format.
var validPhase = map[string]bool{}

func init() {
	for _, p := range []string{"B", "E", "X", "i", "I", "C", "b", "n", "e", "S", "T", "p", "F",
		"s", "t", "f", "P", "N", "O", "D", "M", "V", "v", "R", "c", "(", ")"} {
		validPhase[p] = true
	}
}

// number reads a JSON number exactly, as float64 (JSON.parse) and as
// Perfetto's nanoseconds.
func number(v any) (*big.Rat, float64, int64) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, 0, 0
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return nil, 0, 0
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, 0, 0
	}
	return r, f, roundRat(new(big.Rat).Mul(r, thousand))
}

// roundRat rounds half away from zero, as llround does.
func roundRat(r *big.Rat) int64 {
	num, den := new(big.Int).Set(r.Num()), r.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if new(big.Int).Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return q.Int64()
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
