package shard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/emud-dev/emud/internal/fileio"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// MaxRecordBytes bounds a shard record: an explore shard records about 40
// bytes per passing seed, so this is millions of seeds a shard.
const MaxRecordBytes = 256 << 20

// readRecord reads the file f, up to MaxRecordBytes, and refuses at once
// a file that does not start as a JSON object does (a record is one), so
// a wrong file costs a peek, not MaxRecordBytes of reading.
func readRecord(f string) ([]byte, error) {
	r, err := fileio.Open(f, MaxRecordBytes, "merge")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	br := bufio.NewReader(r)
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: not an emud shard record: the file holds no JSON", f)
		} else if err != nil {
			return nil, err
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if c != '{' {
			return nil, fmt.Errorf("%s: not an emud shard record: it starts with %q, not a JSON object", f, c)
		}
		rest, err := io.ReadAll(br)
		return append([]byte{'{'}, rest...), err
	}
}

// ReadFiles reads and merges the shard records in files, refusing records
// of another build or of a command that is not sharded.
func ReadFiles(files []string) (*Merged, error) {
	var parts []Named
	for _, f := range files {
		b, err := readRecord(f)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		p, err := Decode(f, b)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		parts = append(parts, p)
	}
	m, err := Merge(parts)
	if err != nil {
		return nil, err
	}
	if v := Version(); m.Version != v {
		return nil, fmt.Errorf("merge: the shards were run by emud %q, this is %q: merge with the build that ran them", m.Version, v)
	}
	if m.Command != "explore" && m.Command != "hunt" && m.Command != "perf" {
		return nil, fmt.Errorf("merge: records of %q: only explore's, hunt's and perf's shards can be merged", m.Command)
	}
	return m, nil
}

// RunExplore runs explore's share of the sweep, rec's range, and records the
// lowest failing seed or, if all passed, their end times and digests.
func (rec *Record) RunExplore(sc *scenario.Scenario, o scenario.Options, jobs int) {
	if rec.RangeSeeds == 0 {
		return
	}
	x := scenario.Explore(sc, o, rec.RangeFirst, rec.RangeSeeds, jobs, nil)
	if f := x.Found(); f != nil {
		rec.Found = &Found{Seed: f.O.Seed, Status: f.Status}
	} else {
		rec.Ends, rec.Digests = x.Passed()
	}
}

// RunHunt runs hunt's share of the sweep, rec's range of every (bug,
// strategy) pair, and records a cell each. A shard with no seeds still
// records PCT's k, which the whole sweep measures from its first seed.
func (rec *Record) RunHunt(list []*scenario.Scenario, sts []scenario.Strategy, jobs int, fixed bool) {
	if rec.RangeSeeds > 0 {
		h := scenario.HuntAllRange(list, sts, rec.First, rec.RangeFirst, rec.RangeSeeds, jobs, fixed, nil)
		for b := range list {
			for s := range sts {
				r := h.Res[b][s]
				rec.Hunt = append(rec.Hunt, HuntCell{Bug: r.Bug, Strategy: r.Strategy, Detected: r.Detected, First: r.First, PCTSteps: r.PCTSteps})
			}
		}
		return
	}
	for _, b := range list {
		for _, st := range sts {
			c := HuntCell{Bug: b.Name, Strategy: st.Name}
			if st.Schedule == sim.StrategyPCT {
				c.PCTSteps = scenario.PCTStepsFor(b, st, rec.First, fixed)
			}
			rec.Hunt = append(rec.Hunt, c)
		}
	}
}

// RunPerf runs perf's share of the sweep: the sizes of rec's range (of
// sizes), each as one perf sweep runs it, and records the lines and the
// range's worst failure.
func (rec *Record) RunPerf(sc *scenario.Scenario, o scenario.Options, sizes []uint64, iters int, budget uint64) {
	var worst error
	for _, size := range sizes[rec.RangeFirst : rec.RangeFirst+uint64(rec.RangeSeeds)] {
		l, err := scenario.PerfSize(sc, o, size, iters, budget)
		worst = scenario.MoreSevere(worst, err)
		rec.Perf = append(rec.Perf, l)
	}
	if worst != nil {
		rec.PerfWorst = &Worst{Code: scenario.PerfExitCode(worst), Text: worst.Error()}
	}
}

// Write writes the record as indented JSON to stdout (out "-") or to the
// file out, whole or not at all: a half-written record is never merged.
func (rec *Record) Write(stdout io.Writer, out string) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if out == "-" {
		_, err = stdout.Write(b)
		return err
	}
	if err := fileio.WriteFile(out, b, 0o644); err != nil {
		return fmt.Errorf("--shard-out: %w", err)
	}
	return nil
}

// Exploration is the whole explore sweep's report from the merged
// records; the lowest failing seed runs again for its report, and must
// fail as it did in its shard.
func (m *Merged) Exploration(sc *scenario.Scenario, o scenario.Options) (*scenario.Exploration, error) {
	var found *scenario.Report
	if m.Found != nil {
		ro := o
		ro.Seed = m.Found.Seed
		found = scenario.RunOnce(sc, ro)
		if found.Status != m.Found.Status {
			return nil, fmt.Errorf("merge: seed %d was %q in its shard but is %q here: merge with the build that ran the shards", m.Found.Seed, m.Found.Status, found.Status)
		}
	}
	return scenario.Merged(sc, o, m.First, m.Seeds, found, m.Ends, m.Digests), nil
}

// Hunting is the whole hunt sweep's table from the merged cells; each
// first detection runs again for its example.
func (m *Merged) Hunting(list []*scenario.Scenario, sts []scenario.Strategy, fixed bool) (*scenario.Hunting, error) {
	if len(m.Hunt) != len(list)*len(sts) {
		return nil, fmt.Errorf("merge: %d hunt cells for %d bugs × %d strategies", len(m.Hunt), len(list), len(sts))
	}
	h := &scenario.Hunting{Bugs: list, Strategies: sts, First: m.First, Seeds: m.Seeds, Fixed: fixed, Res: make([][]scenario.Result, len(list))}
	for b := range list {
		h.Res[b] = make([]scenario.Result, len(sts))
		for s := range sts {
			c := m.Hunt[b*len(sts)+s]
			if c.Bug != list[b].Name || c.Strategy != sts[s].Name {
				return nil, fmt.Errorf("merge: cell %s/%s where %s/%s belongs", c.Bug, c.Strategy, list[b].Name, sts[s].Name)
			}
			r := scenario.Result{Bug: c.Bug, Strategy: c.Strategy, Seeds: m.Seeds, First: c.First, Detected: c.Detected, PCTSteps: c.PCTSteps}
			if c.First != 0 {
				if r.Example = scenario.HuntDetects(list[b], sts[s], c.First, c.PCTSteps, fixed); r.Example == nil {
					return nil, fmt.Errorf("merge: %s under %s detected at seed %d in its shard but passes here: merge with the build that ran the shards", c.Bug, c.Strategy, c.First)
				}
			}
			h.Res[b][s] = r
		}
	}
	return h, nil
}

// PerfWorstOf is a merged perf sweep's worst failure; nil for no failure
// or no merge (m nil).
func (m *Merged) PerfWorstOf() *Worst {
	if m == nil {
		return nil
	}
	return m.PerfWorst
}

// PerfTable prints the whole perf sweep's table from the merged lines, as
// one sweep of sizes sizes prints it, and returns its rows.
func (m *Merged) PerfTable(w io.Writer, sc *scenario.Scenario, o scenario.Options, iters, sizes int) ([]scenario.PerfRow, error) {
	if len(m.Perf) != sizes {
		return nil, fmt.Errorf("merge: the shards hold %d sizes, their flags give %d", len(m.Perf), sizes)
	}
	scenario.WritePerfHeader(w, sc, o, iters)
	for _, l := range m.Perf {
		scenario.WritePerfLine(w, sc, l)
	}
	return scenario.WritePerfFooter(w, m.Perf), nil
}
