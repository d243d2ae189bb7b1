package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	hb "github.com/emud-dev/emud/race"
)

// HangKind says how a hang was detected.
type HangKind string

const (
	// HangDeadlock: nothing is pending and nothing can run, yet something
	// waits.
	HangDeadlock HangKind = "deadlock"
	// HangWatchdog: events kept happening but nothing counted as progress
	// for the watchdog span.
	HangWatchdog HangKind = "watchdog"
	// HangSpin: the actor whose turn it is ran code outside the
	// simulation (a native C++ lane or host thread) for a spin limit of
	// wall-clock time without calling into it, so virtual time stood
	// still and nothing else could run ([Sim.FrozenHang]).
	HangSpin HangKind = "spin"
	// HangOutside: nothing can run and nothing is pending, and the
	// actors out in calls outside the simulation (a C++ rank's blocking
	// MPI call) did not come back for a limit of wall-clock time
	// ([Sim.OutsideHang]).
	HangOutside HangKind = "outside"
)

// Waiter is one thing that waits in a hang report: an actor, an SDMA queue.
type Waiter struct {
	Kind     string `json:"kind"`  // "actor", "queue", ...
	Name     string `json:"name"`  // who
	State    string `json:"state"` // "waiting", "sleeping", "parked", "faulted", ...
	Since    Time   `json:"since_ps"`
	WaitsFor string `json:"waits_for"`
	Label    string `json:"label,omitempty"`
	// Lines are extra lines for the text report (pointers, head packet).
	Lines []string `json:"-"`
	// Detail is structured data for tools (JSON).
	Detail any `json:"detail,omitempty"`
}

// Layer is the layer of the stack a cause comes from. A higher layer knows
// more of why: the device API (cco, fabric) knows the call a lane made, the
// engine only the packet at a queue's head, the issuer only its pointers.
type Layer uint8

const (
	LayerSim    Layer = iota // the simulator itself
	LayerIssuer              // a queue's issuer side (package issuer)
	LayerEngine              // engines and their backends (engine, hw/rocm), injected faults
	LayerAPI                 // the device APIs (cco, fabric)
)

var layerNames = [...]string{"sim", "issuer", "engine", "api"}

func (l Layer) String() string {
	if int(l) < len(layerNames) {
		return layerNames[l]
	}
	return "layer(" + strconv.Itoa(int(l)) + ")"
}

// MarshalText writes the layer's name.
func (l Layer) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a name MarshalText wrote.
func (l *Layer) UnmarshalText(b []byte) error {
	for i, n := range layerNames {
		if n == string(b) {
			*l = Layer(i)
			return nil
		}
	}
	return fmt.Errorf("sim: unknown cause layer %q", b)
}

// CauseKind names the condition a cause is about, stable for tools
// ("ring-full", "poll-parked", "signal-short", ...). Each layer declares
// its own; a higher layer that says a lower layer's condition better uses
// the lower layer's kind.
type CauseKind string

// Row is the row of a known-misuse table a cause matches, quoted as its
// document names it: the seed's failure modes, MORI's hazards.
type Row struct {
	Table string // "failure mode", "MORI hazard"
	Name  string // the row as the document words it
}

// IsZero reports whether the row is unset.
func (r Row) IsZero() bool { return r == Row{} }

// String is the row as a report quotes it: failure mode "…".
func (r Row) String() string {
	if r.IsZero() {
		return ""
	}
	return fmt.Sprintf("%s %q", r.Table, r.Name)
}

// MarshalText writes the row as String says it.
func (r Row) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a row MarshalText wrote.
func (r *Row) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "" {
		*r = Row{}
		return nil
	}
	i := strings.IndexByte(s, '"')
	if i <= 0 || s[i-1] != ' ' {
		return fmt.Errorf("sim: cause row %q: want table \"name\"", s)
	}
	name, err := strconv.Unquote(s[i:])
	if err != nil {
		return fmt.Errorf("sim: cause row %q: %w", s, err)
	}
	*r = Row{Table: s[:i-1], Name: name}
	return nil
}

// Cause is one diagnosis of a hang: a condition that keeps the run from
// finishing, in words for people, with what it names so tools need not
// parse the words.
type Cause struct {
	// Kind names the condition; empty for a cause given only as text.
	Kind CauseKind `json:"kind,omitempty"`
	// Layer is the layer that said it.
	Layer Layer `json:"layer"`
	// Ranks are the waiting ranks it is said for; causes that differ only
	// in their ranks are said once, for all of them.
	Ranks []int `json:"ranks,omitempty"`
	// Queue names the queue it is about, if any.
	Queue string `json:"queue,omitempty"`
	// Row is the row of a known-misuse table it matches.
	Row Row `json:"row,omitzero"`
	// Text is the diagnosis; with Ranks, the words after who waits. A
	// cause with no text is a note on a lower layer's cause of the same
	// condition (see [MergeCauses]).
	Text string `json:"text"`
}

// Because is a cause given only as words.
func Because(text string) Cause { return Cause{Text: text} }

// String says the cause: who waits (with Ranks), the text, and the row it
// matches.
func (c Cause) String() string {
	s := c.Text
	if len(c.Ranks) > 0 {
		s = Who(c.Ranks) + " " + s
	}
	if !c.Row.IsZero() {
		s += " (" + c.Row.String() + ")"
	}
	return s
}

// MarshalJSON adds the said form ("said") to the fields.
func (c Cause) MarshalJSON() ([]byte, error) {
	type plain Cause
	return json.Marshal(struct {
		plain
		Said string `json:"said"`
	}{plain(c), c.String()})
}

// Who says the waiting ranks: "rank 3 waits", "ranks 0–7 each wait".
func Who(ranks []int) string {
	switch len(ranks) {
	case 0:
		return "a rank waits"
	case 1:
		return fmt.Sprintf("rank %d waits", ranks[0])
	}
	rs := slices.Clone(ranks)
	slices.Sort(rs)
	var parts []string
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", rs[i], rs[j]))
		} else {
			parts = append(parts, strconv.Itoa(rs[i]))
		}
		i = j + 1
	}
	return "ranks " + strings.Join(parts, ", ") + " each wait"
}

// MergeCauses is the one place a hang's causes are put together, from
// every layer's [Diagnosis], by this rule:
//
//  1. Causes about one condition on one queue (the same Kind and Queue,
//     both set) are said in the words of the highest layer that gives
//     words (Text) for it: the lower layers' causes of that condition are
//     left out. A cause without text is a note: its Row goes onto the
//     kept causes of its condition when its layer is at or above theirs,
//     and it is never listed itself.
//  2. Causes that differ only in their ranks are one cause, their ranks
//     joined.
//  3. The rest are ordered by layer, highest first, then by kind, then in
//     the order given (each layer's own order, layers in the order
//     [Sim.AddDiagnoser] sorts them).
//
// The result does not depend on which layer was set up first.
func MergeCauses(in []Cause) []Cause {
	type cond struct {
		kind  CauseKind
		queue string
	}
	top := map[cond]Layer{}  // highest layer with words, per condition
	note := map[cond]Cause{} // the highest note, per condition
	for _, c := range in {
		if c.Kind == "" || c.Queue == "" {
			continue
		}
		k := cond{c.Kind, c.Queue}
		if c.Text == "" {
			if n, ok := note[k]; !ok || c.Layer >= n.Layer {
				note[k] = c
			}
			continue
		}
		if l, ok := top[k]; !ok || c.Layer > l {
			top[k] = c.Layer
		}
	}
	var out []Cause
	for _, c := range in {
		if c.Kind != "" && c.Queue != "" {
			k := cond{c.Kind, c.Queue}
			if c.Text == "" || c.Layer < top[k] {
				continue
			}
			if n, ok := note[k]; ok && n.Layer >= c.Layer && !n.Row.IsZero() {
				c.Row = n.Row
			}
		} else if c.Text == "" {
			continue
		}
		if i := slices.IndexFunc(out, func(x Cause) bool { return sameBut(x, c) }); i >= 0 {
			x := &out[i]
			for _, r := range c.Ranks {
				if !slices.Contains(x.Ranks, r) {
					x.Ranks = append(x.Ranks, r)
				}
			}
			slices.Sort(x.Ranks)
			continue
		}
		c.Ranks = slices.Clone(c.Ranks)
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b Cause) int {
		if a.Layer != b.Layer {
			return int(b.Layer) - int(a.Layer)
		}
		return strings.Compare(string(a.Kind), string(b.Kind))
	})
	return out
}

// sameBut reports whether a and b are one condition, their ranks aside.
func sameBut(a, b Cause) bool {
	return a.Kind == b.Kind && a.Layer == b.Layer && a.Queue == b.Queue && a.Row == b.Row && a.Text == b.Text
}

// Diagnosis is one layer's part of a hang report: the waiters it owns (for
// the engine: queues with rung packets they cannot run) and the causes it
// recognises, each with its kind and layer.
type Diagnosis struct {
	Waiters []Waiter
	Causes  []Cause
}

// HangError is how a run that cannot finish ends: who waits on what, and
// any cause a layer recognised.
type HangError struct {
	Kind         HangKind `json:"kind"`
	At           Time     `json:"at_ps"`
	LastProgress Time     `json:"last_progress_ps"`
	Seed         uint64   `json:"seed"`
	Digest       string   `json:"digest"`
	Waiters      []Waiter `json:"waiters"`
	// Causes are diagnoses of known misuse, most likely first
	// ([MergeCauses]).
	Causes []Cause `json:"causes,omitempty"`
	// Races are the race detector's reports found before the hang (nil
	// with the detector off or nothing found): an unordered access is
	// often why the run hangs (a store over a signal slot, a flag reset
	// racing its set). The run still ends as a hang.
	Races *hb.Error `json:"races,omitempty"`
}

func (h *HangError) Error() string {
	what := "no actor can run and no event is pending"
	switch h.Kind {
	case HangWatchdog:
		what = fmt.Sprintf("no progress since %v", h.LastProgress)
	case HangSpin:
		what = "the running actor's own code never gave its turn back"
	case HangOutside:
		what = "no actor can run, no event is pending, and the calls outside the simulation never returned"
	}
	s := fmt.Sprintf("hang (%s) at %v, seed %d: %s; %d waiting", h.Kind, h.At, h.Seed, what, len(h.Waiters))
	if len(h.Causes) > 0 {
		s += "; likely cause: " + h.Causes[0].String()
	}
	if h.Races != nil {
		n := len(h.Races.Reports) + h.Races.Dropped
		s += fmt.Sprintf("; %d data race%s found before it", n, plural(n))
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Text renders the report for people.
func (h *HangError) Text() string {
	var b strings.Builder
	b.WriteString(h.Error())
	b.WriteString("\n")
	groups := []struct{ kind, title string }{{"actor", "blocked actors"}, {"queue", "blocked queues"}}
	seen := map[string]bool{}
	for _, g := range groups {
		h.writeGroup(&b, g.kind, g.title)
		seen[g.kind] = true
	}
	for _, w := range h.Waiters {
		if !seen[w.Kind] {
			seen[w.Kind] = true
			h.writeGroup(&b, w.Kind, w.Kind+"s")
		}
	}
	if len(h.Causes) > 0 {
		b.WriteString("likely causes:\n")
		for _, c := range h.Causes {
			fmt.Fprintf(&b, "  - %s\n", c.String())
		}
	}
	if h.Races != nil {
		fmt.Fprintf(&b, "data races found before the hang (%d):\n", len(h.Races.Reports)+h.Races.Dropped)
		for _, l := range strings.SplitAfter(strings.TrimSuffix(h.Races.Text(), "\n"), "\n") {
			if strings.TrimSpace(l) == "" {
				b.WriteString("\n")
				continue
			}
			b.WriteString("  " + l)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "seed: %d\ndigest: %s\n", h.Seed, h.Digest)
	return b.String()
}

func (h *HangError) writeGroup(b *strings.Builder, kind, title string) {
	n := 0
	for _, w := range h.Waiters {
		if w.Kind == kind {
			n++
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "%s (%d):\n", title, n)
	for _, w := range h.Waiters {
		if w.Kind != kind {
			continue
		}
		fmt.Fprintf(b, "  %s [%s since %v]: %s\n", w.Name, w.State, w.Since, w.WaitsFor)
		if w.Label != "" {
			fmt.Fprintf(b, "      doing: %s\n", w.Label)
		}
		for _, l := range w.Lines {
			fmt.Fprintf(b, "      %s\n", l)
		}
	}
}

// JSON renders the report for tools.
func (h *HangError) JSON() ([]byte, error) { return json.MarshalIndent(h, "", "  ") }
