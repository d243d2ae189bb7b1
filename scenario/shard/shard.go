package shard

import (
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/emud-dev/emud/scenario"
)

// Spec is shard K of N.
type Spec struct{ K, N int }

// MaxShards bounds N: far more than any cluster array a sweep needs.
const MaxShards = 1 << 20

// Parse reads "K/N" with 0 ≤ K < N.
func Parse(s string) (Spec, error) {
	k, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Spec{}, fmt.Errorf("invalid --shard %q: want K/N, shard K (from 0) of N", s)
	}
	kv, err1 := strconv.Atoi(k)
	nv, err2 := strconv.Atoi(n)
	switch {
	case err1 != nil || err2 != nil:
		return Spec{}, fmt.Errorf("invalid --shard %q: K and N must be integers (K/N, shard K from 0 of N)", s)
	case nv < 1 || nv > MaxShards:
		return Spec{}, fmt.Errorf("invalid --shard %q: N must be 1..%d", s, MaxShards)
	case kv < 0 || kv >= nv:
		return Spec{}, fmt.Errorf("invalid --shard %q: K must be 0..%d (shards count from 0)", s, nv-1)
	}
	return Spec{kv, nv}, nil
}

func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Range is shard s's seeds of first..first+n−1: first' and how many
// (possibly none when there are more shards than seeds).
func (s Spec) Range(first uint64, n int) (uint64, int) {
	lo := uint64(s.K) * uint64(n) / uint64(s.N)
	hi := uint64(s.K+1) * uint64(n) / uint64(s.N)
	return first + lo, int(hi - lo)
}

// Header identifies the sweep a shard belongs to.
type Header struct {
	Version  string            `json:"version"`
	Command  string            `json:"command"`
	Scenario string            `json:"scenario"`
	Flags    map[string]string `json:"flags"` // flag name → value, every flag that shapes the result
	First    uint64            `json:"first_seed"`
	Seeds    int               `json:"seeds"`
	Shard    int               `json:"shard"`
	Shards   int               `json:"shards"`
	// A C++ program's sweep (explore or hunt after --) has no scenario:
	// Program is explore's program and arguments, or hunt's pairs
	// (BUG[:FIXED] each), and Sums the SHA-256 of each executable they
	// name, in order of first mention, so shards of another build of the
	// program do not merge.
	Program []string `json:"program,omitempty"`
	Sums    []string `json:"program_sha256,omitempty"`
}

// Found is a failing seed and its status (one of scenario.StatusHang, StatusRace, StatusMismatch, ...).
type Found struct {
	Seed   uint64 `json:"seed"`
	Status string `json:"status"`
}

// Record is one shard's record: its range and what it found there.
type Record struct {
	Header
	RangeFirst uint64 `json:"range_first"`
	RangeSeeds int    `json:"range_seeds"`
	// explore: Found is the range's lowest failing seed, nil if all
	// passed; Ends (µs) and Digests those of the passing runs.
	Found   *Found    `json:"found,omitempty"`
	Ends    []float64 `json:"ends,omitempty"`
	Digests []string  `json:"digests,omitempty"`
	// hunt: one cell per (bug, strategy), in the table's order.
	Hunt []HuntCell `json:"hunt,omitempty"`
	// perf: one line per size of the range (First is 0 and Seeds the
	// number of sizes: a perf shard's range is of sizes, not seeds), and
	// the range's worst failure.
	Perf      []scenario.PerfLine `json:"perf,omitempty"`
	PerfWorst *Worst              `json:"perf_worst,omitempty"`
}

// Worst is a failure known by its exit status and text.
type Worst struct {
	Code int    `json:"code"`
	Text string `json:"text"`
}

// HuntCell is what one (bug, strategy) pair detected in a range: how many
// seeds, the first of them (0: none) and the PCT steps it used.
type HuntCell struct {
	Bug      string `json:"bug"`
	Strategy string `json:"strategy"`
	Detected int    `json:"detected"`
	First    uint64 `json:"first,omitempty"`
	PCTSteps int    `json:"pct_steps,omitempty"`
	// A program hunt runs each bug's fixed twin on every seed too: how
	// many of them failed, and the first (0: none).
	TwinFailed int    `json:"twin_failed,omitempty"`
	TwinFirst  uint64 `json:"twin_first,omitempty"`
}

// Version names the build: module version, VCS revision (and whether the
// tree was modified) and Go version. Shards of one sweep must share it.
func Version() string {
	v, rev, mod := "devel", "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					mod = "+modified"
				}
			}
		}
		v += " " + bi.GoVersion
	}
	if rev != "" {
		v += " " + rev + mod
	}
	return v
}

// Named is a record with the file it came from, for errors.
type Named struct {
	File string
	Rec  Record
}

// Decode reads one shard record; the error names file.
func Decode(file string, data []byte) (Named, error) {
	var e Record
	if err := json.Unmarshal(data, &e); err != nil {
		return Named{}, fmt.Errorf("%s: not an emud shard record: %v", file, err)
	}
	if e.Command == "" || e.Shards < 1 || e.Shard < 0 || e.Shard >= e.Shards {
		return Named{}, fmt.Errorf("%s: not an emud shard record (no command, or shard %d of %d)", file, e.Shard, e.Shards)
	}
	if err := e.check(); err != nil {
		return Named{}, fmt.Errorf("%s: %w", file, err)
	}
	e.escapeText()
	return Named{File: file, Rec: e}, nil
}

// check refuses a record at odds with itself: a name with control
// characters (no emud name has one; printed, they would drive the
// terminal), a found seed or first detection outside the record's own
// range (it was ignored), more passing runs than seeds.
func (e *Record) check() error {
	names := []struct{ what, v string }{{"version", e.Version}, {"command", e.Command}, {"scenario", e.Scenario}}
	for k, v := range e.Flags {
		names = append(names, struct{ what, v string }{"flag name", k}, struct{ what, v string }{"flag --" + k, v})
	}
	if e.Found != nil {
		names = append(names, struct{ what, v string }{"found status", e.Found.Status})
	}
	for _, v := range e.Program {
		names = append(names, struct{ what, v string }{"program", v})
	}
	for _, v := range e.Sums {
		names = append(names, struct{ what, v string }{"program checksum", v})
	}
	for _, c := range e.Hunt {
		names = append(names, struct{ what, v string }{"hunt bug", c.Bug}, struct{ what, v string }{"hunt strategy", c.Strategy})
	}
	for _, n := range names {
		if strings.ContainsFunc(n.v, unicode.IsControl) {
			return fmt.Errorf("inconsistent shard record: its %s %q has control characters", n.what, n.v)
		}
	}
	if e.RangeSeeds < 0 || e.Seeds < 0 {
		return fmt.Errorf("inconsistent shard record: %d seeds in its range, %d in the sweep", e.RangeSeeds, e.Seeds)
	}
	in := func(seed uint64) bool { return seed >= e.RangeFirst && seed-e.RangeFirst < uint64(e.RangeSeeds) }
	if f := e.Found; f != nil && !in(f.Seed) {
		return fmt.Errorf("inconsistent shard record: found seed %d outside its own range of %d seeds from %d", f.Seed, e.RangeSeeds, e.RangeFirst)
	}
	for _, c := range e.Hunt {
		if c.First != 0 && !in(c.First) {
			return fmt.Errorf("inconsistent shard record: %s/%s first detected at seed %d, outside its own range of %d seeds from %d", c.Bug, c.Strategy, c.First, e.RangeSeeds, e.RangeFirst)
		}
		if c.Detected < 0 || c.Detected > e.RangeSeeds {
			return fmt.Errorf("inconsistent shard record: %s/%s detected %d times in %d seeds, first at %d", c.Bug, c.Strategy, c.Detected, e.RangeSeeds, c.First)
		}
		if c.TwinFirst != 0 && !in(c.TwinFirst) || c.TwinFailed < 0 || c.TwinFailed > e.RangeSeeds {
			return fmt.Errorf("inconsistent shard record: %s/%s's twin failed %d times in %d seeds from %d, first at %d", c.Bug, c.Strategy, c.TwinFailed, e.RangeSeeds, e.RangeFirst, c.TwinFirst)
		}
	}
	if e.Command == "explore" && (len(e.Ends) > e.RangeSeeds || len(e.Digests) > e.RangeSeeds) {
		return fmt.Errorf("inconsistent shard record: %d end times and %d digests for %d seeds", len(e.Ends), len(e.Digests), e.RangeSeeds)
	}
	return nil
}

// escapeText escapes the control characters of a record's free text (a
// perf line's skip reason or error, the worst failure), which merge
// prints: a record is a file anyone can write.
func (e *Record) escapeText() {
	for i := range e.Perf {
		l := &e.Perf[i]
		l.Skip = escapeControl(l.Skip)
		if l.Row != nil {
			l.Row.Err = escapeControl(l.Row.Err)
		}
	}
	if e.PerfWorst != nil {
		e.PerfWorst.Text = escapeControl(e.PerfWorst.Text)
	}
}

// escapeControl writes the control characters of s but newline and tab
// as Go escapes (\x1b, \u0085).
func escapeControl(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Merged is the answer of the whole sweep.
type Merged struct {
	Header
	// explore
	Found   *Found
	Ends    []float64
	Digests []string // distinct, sorted
	// hunt: per cell, the detections summed and the lowest first seed.
	Hunt []HuntCell
	// perf: every size's line in order, and the worst failure (the first
	// of the most severe, as one sweep keeps it).
	Perf      []scenario.PerfLine
	PerfWorst *Worst
}

// MergeExplore merges the records of every shard of one explore sweep
// (Merge by another name, kept for its callers).
func MergeExplore(parts []Named) (*Merged, error) { return Merge(parts) }

// Merge merges the records of every shard of one sweep, explore's or
// hunt's.
func Merge(parts []Named) (*Merged, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no shard files")
	}
	ref := parts[0]
	seen := make(map[int]string, ref.Rec.Shards)
	for _, p := range parts {
		if err := sameSweep(ref, p); err != nil {
			return nil, err
		}
		if other, dup := seen[p.Rec.Shard]; dup {
			return nil, fmt.Errorf("merge: duplicate shard %d/%d: %s and %s", p.Rec.Shard, p.Rec.Shards, other, p.File)
		}
		seen[p.Rec.Shard] = p.File
		wf, wn := Spec{p.Rec.Shard, p.Rec.Shards}.Range(p.Rec.First, p.Rec.Seeds)
		if p.Rec.RangeFirst != wf || p.Rec.RangeSeeds != wn {
			return nil, fmt.Errorf("merge: %s: shard %d/%d covers seeds from %d (%d of them), want from %d (%d)", p.File, p.Rec.Shard, p.Rec.Shards, p.Rec.RangeFirst, p.Rec.RangeSeeds, wf, wn)
		}
	}
	var missing []string
	for k := range ref.Rec.Shards {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, ref.Rec.Shards))
		}
	}
	if len(missing) > 0 {
		return nil, &MissingError{Shards: ref.Rec.Shards, Missing: missingIndices(seen, ref.Rec.Shards),
			msg: fmt.Sprintf("merge: missing shard(s) %s of %d: every shard must be merged", strings.Join(missing, ", "), ref.Rec.Shards)}
	}
	m := &Merged{Header: ref.Rec.Header}
	m.Shard = 0
	digests := map[string]bool{}
	for _, p := range parts {
		if f := p.Rec.Found; f != nil && (m.Found == nil || f.Seed < m.Found.Seed) {
			m.Found = f
		}
		m.Ends = append(m.Ends, p.Rec.Ends...)
		for _, d := range p.Rec.Digests {
			digests[d] = true
		}
	}
	m.Digests = slices.Sorted(maps.Keys(digests))
	if m.Command == "perf" {
		slices.SortFunc(parts, func(a, b Named) int { return a.Rec.Shard - b.Rec.Shard })
		for _, p := range parts {
			if len(p.Rec.Perf) != p.Rec.RangeSeeds {
				return nil, fmt.Errorf("merge: %s has %d perf lines for its %d sizes", p.File, len(p.Rec.Perf), p.Rec.RangeSeeds)
			}
			m.Perf = append(m.Perf, p.Rec.Perf...)
			if w := p.Rec.PerfWorst; w != nil && (m.PerfWorst == nil || severity(w.Code) > severity(m.PerfWorst.Code)) {
				m.PerfWorst = w
			}
		}
	}
	if m.Command == "hunt" {
		slices.SortFunc(parts, func(a, b Named) int { return a.Rec.Shard - b.Rec.Shard })
		m.Hunt = slices.Clone(parts[0].Rec.Hunt)
		for _, p := range parts[1:] {
			if len(p.Rec.Hunt) != len(m.Hunt) {
				return nil, fmt.Errorf("merge: %s has %d hunt cells, %s %d: not one sweep", p.File, len(p.Rec.Hunt), parts[0].File, len(m.Hunt))
			}
			for i, c := range p.Rec.Hunt {
				mc := &m.Hunt[i]
				if c.Bug != mc.Bug || c.Strategy != mc.Strategy || c.PCTSteps != mc.PCTSteps {
					return nil, fmt.Errorf("merge: %s cell %d is %s/%s (pct steps %d), %s has %s/%s (%d): not one sweep",
						p.File, i, c.Bug, c.Strategy, c.PCTSteps, parts[0].File, mc.Bug, mc.Strategy, mc.PCTSteps)
				}
				mc.Detected += c.Detected
				if mc.First == 0 {
					mc.First = c.First // shards in seed order: the first one that saw it
				}
				mc.TwinFailed += c.TwinFailed
				if mc.TwinFirst == 0 {
					mc.TwinFirst = c.TwinFirst
				}
			}
		}
	}
	return m, nil
}

// severity orders exit statuses as scenario.MoreSevere orders errors: a
// hang, then wrong data, then any other failure.
func severity(code int) int {
	switch code {
	case scenario.ExitHang:
		return 3
	case scenario.ExitMismatch:
		return 2
	}
	return 1
}

// MissingError is a merge short of shards: Missing lists their K.
type MissingError struct {
	Shards  int
	Missing []int
	msg     string
}

func (e *MissingError) Error() string { return e.msg }

func missingIndices(seen map[int]string, n int) []int {
	var out []int
	for k := range n {
		if _, ok := seen[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// sameSweep names the first difference between two records' sweeps.
func sameSweep(a, b Named) error {
	diff := func(what, x, y string) error {
		return fmt.Errorf("merge: shards of different sweeps: %s differs: %s (shard %d/%d) has %s, %s (shard %d/%d) has %s",
			what, a.File, a.Rec.Shard, a.Rec.Shards, x, b.File, b.Rec.Shard, b.Rec.Shards, y)
	}
	ha, hb := a.Rec.Header, b.Rec.Header
	switch {
	case ha.Version != hb.Version:
		return diff("version", strconv.Quote(ha.Version), strconv.Quote(hb.Version))
	case ha.Command != hb.Command:
		return diff("command", ha.Command, hb.Command)
	case ha.Scenario != hb.Scenario:
		return diff("scenario", ha.Scenario, hb.Scenario)
	case !slices.Equal(ha.Program, hb.Program):
		return diff("program", strconv.Quote(strings.Join(ha.Program, " ")), strconv.Quote(strings.Join(hb.Program, " ")))
	case !slices.Equal(ha.Sums, hb.Sums):
		return diff("program build (SHA-256)", strings.Join(ha.Sums, ","), strings.Join(hb.Sums, ","))
	case ha.First != hb.First:
		return diff("flag --first-seed", fmt.Sprint(ha.First), fmt.Sprint(hb.First))
	case ha.Seeds != hb.Seeds:
		return diff("flag --seeds", fmt.Sprint(ha.Seeds), fmt.Sprint(hb.Seeds))
	case ha.Shards != hb.Shards:
		return diff("shard count", fmt.Sprint(ha.Shards), fmt.Sprint(hb.Shards))
	}
	names := slices.Sorted(maps.Keys(ha.Flags))
	for n := range hb.Flags {
		if _, ok := ha.Flags[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range names {
		x, okx := ha.Flags[n]
		y, oky := hb.Flags[n]
		if x != y || okx != oky {
			show := func(v string, ok bool) string {
				if !ok {
					return "it unset (the default)"
				}
				return strconv.Quote(v)
			}
			return diff("flag --"+n, show(x, okx), show(y, oky))
		}
	}
	return nil
}
