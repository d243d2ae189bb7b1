package sim

import (
	"encoding/json"
	"fmt"
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

// HangError is how a run that cannot finish ends: who waits on what, and
// any cause an inspector recognised.
type HangError struct {
	Kind         HangKind `json:"kind"`
	At           Time     `json:"at_ps"`
	LastProgress Time     `json:"last_progress_ps"`
	Seed         uint64   `json:"seed"`
	Digest       string   `json:"digest"`
	Waiters      []Waiter `json:"waiters"`
	// Causes are plain-words diagnoses of known misuse, most likely first.
	Causes []string `json:"causes,omitempty"`
}

// AddCause appends a diagnosis unless it is already there.
func (h *HangError) AddCause(c string) {
	for _, x := range h.Causes {
		if x == c {
			return
		}
	}
	h.Causes = append(h.Causes, c)
}

// AddLeadCause adds c as the first cause: for an inspector that recognises
// a more specific misuse than the ones already listed.
func (h *HangError) AddLeadCause(c string) {
	for i, x := range h.Causes {
		if x == c {
			h.Causes = append(h.Causes[:i], h.Causes[i+1:]...)
			break
		}
	}
	h.Causes = append([]string{c}, h.Causes...)
}

// AddLeadCauses puts cs ahead of the causes already listed, in the order
// given (each moved, never duplicated): for an inspector that collected
// several specific causes.
func (h *HangError) AddLeadCauses(cs ...string) {
	for i := len(cs) - 1; i >= 0; i-- {
		h.AddLeadCause(cs[i])
	}
}

func (h *HangError) Error() string {
	what := "no actor can run and no event is pending"
	if h.Kind == HangWatchdog {
		what = fmt.Sprintf("no progress since %v", h.LastProgress)
	}
	s := fmt.Sprintf("hang (%s) at %v, seed %d: %s; %d waiting", h.Kind, h.At, h.Seed, what, len(h.Waiters))
	if len(h.Causes) > 0 {
		s += "; likely cause: " + h.Causes[0]
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
			fmt.Fprintf(&b, "  - %s\n", c)
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
