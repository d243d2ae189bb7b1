package race

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Side is one of a race's two accesses.
type Side struct {
	Kind   string `json:"kind"` // lane, sdma, fabric, host
	Who    string `json:"who"`
	Op     string `json:"op"`
	Site   string `json:"site,omitempty"`
	Write  bool   `json:"write"`
	Atomic bool   `json:"atomic,omitempty"`
	Proxy  string `json:"proxy,omitempty"`
	Lo     uint64 `json:"lo"` // the whole access [Lo, Hi)
	Hi     uint64 `json:"hi"`
	AtPs   int64  `json:"at_ps"` // virtual time, picoseconds
}

func (s Side) rw() string {
	if s.Write {
		return "write"
	}
	return "read"
}

func (s Side) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) of [%#x, %#x) by %s", s.Op, s.rw(), s.Lo, s.Hi, s.Who)
	if s.Site != "" {
		fmt.Fprintf(&b, " (%s)", s.Site)
	}
	fmt.Fprintf(&b, " at %s", fmtTime(s.AtPs))
	return b.String()
}

// Report is one race: two accesses to overlapping bytes, at least one a
// write, the first not ordered before the second.
type Report struct {
	Space string `json:"space"`
	// Lo and Hi are the first bytes where the two accesses were found to
	// overlap.
	Lo     uint64 `json:"lo"`
	Hi     uint64 `json:"hi"`
	First  Side   `json:"first"`
	Second Side   `json:"second"`
	// Missing is the edge that would order them, in plain words.
	Missing string `json:"missing"`
	// Count is how many times this pair of access sites conflicted.
	Count int `json:"count"`
	// Class is a signal-lifecycle check's name (lifecycle.go:
	// ClassStoreOverSignal, ClassWrap), empty for a plain data race.
	Class string `json:"class,omitempty"`
}

func (r Report) String() string {
	if r.Class != "" {
		return fmt.Sprintf("signal lifecycle (%s) on %s [%#x, %#x):\n  %s\n  %s\n  %s",
			r.Class, r.Space, r.Lo, r.Hi, r.First, r.Second, r.Missing)
	}
	return fmt.Sprintf("data race on %s [%#x, %#x):\n  %s\n  %s\n  missing edge: %s",
		r.Space, r.Lo, r.Hi, r.First, r.Second, r.Missing)
}

func fmtTime(ps int64) string { return fmt.Sprintf("%.3f µs", float64(ps)/1e6) }

func side(e *ep) Side {
	s := Side{Write: e.write, Atomic: e.atomic, Lo: e.lo, Hi: e.hi, AtPs: e.at}
	s.describe(e.info)
	if e.proxy != ProxyNone {
		s.Proxy = e.proxy.String()
	}
	return s
}

// describe fills in who made the access, from its info (nil: nothing).
func (s *Side) describe(info *Info) {
	if info == nil {
		return
	}
	s.Kind, s.Who, s.Op, s.Site = info.Kind.String(), info.Who, info.Op, info.Site
	if s.Site == "" && info.SiteOf != nil {
		s.Site = info.SiteOf.String()
	}
}

func (d *Detector) report(sp SpaceID, lo, hi uint64, prev, cur *ep, proxyOnly bool) {
	key := [2]string{prev.info.key(), cur.info.key()}
	if !d.first(key, true) {
		return
	}
	a, b := side(prev), side(cur)
	r := Report{Space: d.spaces[sp].name, Lo: lo, Hi: hi, First: a, Second: b, Count: 1,
		Missing: d.missing(prev, cur, proxyOnly)}
	classify(&r, prev, cur)
	if d.lifeOnly && r.Class == "" {
		d.seen[key] = -1 // not asked for: not a drop either
		return
	}
	d.add(key, r)
}

// first says whether the finding under key is new and may be reported. A
// repeat is not (counted on its report when count is set, for findings
// whose report says how often they happened); past MaxReports a new one
// is dropped, and counted as a drop.
func (d *Detector) first(key [2]string, count bool) bool {
	if i, ok := d.seen[key]; ok {
		if count && i >= 0 {
			d.reports[i].Count++
		}
		return false
	}
	if len(d.reports) >= MaxReports {
		d.seen[key] = -1
		d.dropped++
		return false
	}
	return true
}

// add keeps r as the report of the finding under key.
func (d *Detector) add(key [2]string, r Report) {
	d.seen[key] = len(d.reports)
	d.reports = append(d.reports, r)
}

// Reports returns the races found so far, in the order found.
func (d *Detector) Reports() []Report { return d.reports }

// Err returns the races found as an *Error, or nil if there were none,
// the causes first (causeRank), each rank in the order found.
func (d *Detector) Err() error {
	if len(d.reports) == 0 {
		return nil
	}
	rs := slices.Clone(d.reports)
	slices.SortStableFunc(rs, func(a, b Report) int { return causeRank(a.Class) - causeRank(b.Class) })
	return &Error{Reports: rs, Dropped: d.dropped}
}

// causeRank orders a run's findings so that the first printed explains
// the failure: a signal erased or wrapped (store-over-signal, wrap) makes
// every later wait on its slot go wrong, so it comes before what follows
// on that slot; a wait that held on the wrong signal (stale-epoch,
// shared-slot, baseline-read) makes the reads it guards race their data,
// so it comes before the plain data races, which are most often that
// wait's consequence.
func causeRank(class string) int {
	switch class {
	case ClassStoreOverSignal, ClassWrap:
		return 0
	case ClassStaleEpoch, ClassSharedSlot, ClassBaselineRead:
		return 1
	}
	return 2
}

// Error is a run that had data races. The CLI exits with status 5 on it.
type Error struct {
	Reports []Report `json:"reports"`
	// Dropped counts the distinct races beyond the first MaxReports.
	Dropped int `json:"dropped,omitempty"`
}

func (e *Error) Error() string {
	n := len(e.Reports) + e.Dropped
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("race detector: %d data race%s; first: %s", n, s, e.Reports[0])
}

// Text is every report, one after the other.
func (e *Error) Text() string {
	var b strings.Builder
	for i, r := range e.Reports {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s\n", r)
		if r.Count > 1 {
			fmt.Fprintf(&b, "  (%d conflicts between these two sites)\n", r.Count)
		}
	}
	if e.Dropped > 0 {
		fmt.Fprintf(&b, "\n%d more races not shown\n", e.Dropped)
	}
	return b.String()
}

// JSON is the reports for tools.
func (e *Error) JSON() ([]byte, error) { return json.MarshalIndent(e, "", "  ") }
