package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// Cause is one diagnosis of a hang: a condition that keeps the run from
// finishing, in words for people, with what it names so tools need not
// parse the words.
type Cause struct {
	// Kind names the condition, stable for tools ("ring-full",
	// "poll-parked", "signal-short", ...); empty for a cause given only as
	// text.
	Kind string `json:"kind,omitempty"`
	// Ranks are the waiting ranks it is said for; causes that differ only
	// in their ranks are said once, for all of them.
	Ranks []int `json:"ranks,omitempty"`
	// Queue names the queue it is about, if any.
	Queue string `json:"queue,omitempty"`
	// Row is the row of a known-misuse table it matches, quoted as its
	// document names it (the seed's failure modes, MORI's hazards).
	Row string `json:"row,omitempty"`
	// Text is the diagnosis; with Ranks, the words after who waits.
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
	if c.Row != "" {
		s += " (" + c.Row + ")"
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

// sameBut reports whether a and b are one condition, their ranks aside.
func sameBut(a, b Cause) bool {
	return a.Kind == b.Kind && a.Queue == b.Queue && a.Row == b.Row && a.Text == b.Text
}

// HangError is how a run that cannot finish ends: who waits on what, and
// any cause an inspector recognised.
type HangError struct {
	Kind         HangKind `json:"kind"`
	At           Time     `json:"at_ps"`
	LastProgress Time     `json:"last_progress_ps"`
	Seed         uint64   `json:"seed"`
	Digest       string   `json:"digest"`
	Waiters      []Waiter `json:"waiters"`
	// Causes are diagnoses of known misuse, most likely first.
	Causes []Cause `json:"causes,omitempty"`
}

// merge folds c into an equal cause already listed (their ranks joined)
// and returns its index, or −1.
func (h *HangError) merge(c Cause) int {
	for i := range h.Causes {
		if x := &h.Causes[i]; sameBut(*x, c) {
			for _, r := range c.Ranks {
				if !slices.Contains(x.Ranks, r) {
					x.Ranks = append(x.Ranks, r)
				}
			}
			slices.Sort(x.Ranks)
			return i
		}
	}
	return -1
}

// AddCause appends a diagnosis unless it is already there (then their
// ranks are joined).
func (h *HangError) AddCause(c Cause) {
	if h.merge(c) < 0 {
		h.Causes = append(h.Causes, c)
	}
}

// AddLeadCause adds c as the first cause: for an inspector that recognises
// a more specific misuse than the ones already listed.
func (h *HangError) AddLeadCause(c Cause) {
	if i := h.merge(c); i >= 0 {
		c = h.Causes[i]
		h.Causes = append(h.Causes[:i], h.Causes[i+1:]...)
	}
	h.Causes = append([]Cause{c}, h.Causes...)
}

// AddLeadCauses puts cs ahead of the causes already listed, in the order
// given (each moved, never duplicated): for an inspector that collected
// several specific causes.
func (h *HangError) AddLeadCauses(cs ...Cause) {
	for i := len(cs) - 1; i >= 0; i-- {
		h.AddLeadCause(cs[i])
	}
}

// Drop removes the listed causes of kind about queue: for an inspector
// that says the same condition better.
func (h *HangError) Drop(kind, queue string) {
	if kind == "" {
		return
	}
	h.Causes = slices.DeleteFunc(h.Causes, func(c Cause) bool { return c.Kind == kind && c.Queue == queue })
}

// Find returns the listed cause of kind about queue, or nil: for an
// inspector that knows more about a condition a lower layer found.
func (h *HangError) Find(kind, queue string) *Cause {
	for i := range h.Causes {
		if h.Causes[i].Kind == kind && h.Causes[i].Queue == queue {
			return &h.Causes[i]
		}
	}
	return nil
}

func (h *HangError) Error() string {
	what := "no actor can run and no event is pending"
	if h.Kind == HangWatchdog {
		what = fmt.Sprintf("no progress since %v", h.LastProgress)
	}
	s := fmt.Sprintf("hang (%s) at %v, seed %d: %s; %d waiting", h.Kind, h.At, h.Seed, what, len(h.Waiters))
	if len(h.Causes) > 0 {
		s += "; likely cause: " + h.Causes[0].String()
	}
	return s
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
