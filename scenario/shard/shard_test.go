package shard

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/all"
	"github.com/emud-dev/emud/sim"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{"0/8", Spec{0, 8}, ""},
		{" 7/8 ", Spec{7, 8}, ""},
		{"0/1", Spec{0, 1}, ""},
		{"8/8", Spec{}, "K must be 0..7"},
		{"-1/8", Spec{}, "K must be 0..7"},
		{"1/0", Spec{}, "N must be 1.."},
		{"3", Spec{}, "want K/N"},
		{"a/b", Spec{}, "must be integers"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.want.String(), got.String())
	}
}

// The ranges of all shards tile the sweep in order, sizes within one.
func TestRangesTile(t *testing.T) {
	for _, n := range []int{1, 7, 100, 101} {
		for _, shards := range []int{1, 3, 8, 200} {
			next, lo, hi := uint64(5), n, 0
			for k := range shards {
				f, c := Spec{k, shards}.Range(5, n)
				require.Equal(t, next, f, "n %d shards %d k %d", n, shards, k)
				next += uint64(c)
				lo, hi = min(lo, c), max(hi, c)
			}
			assert.Equal(t, uint64(5+n), next)
			assert.LessOrEqual(t, hi-lo, 1)
		}
	}
}

func rec(k, n int, found *Found, flags map[string]string) Named {
	h := Header{Version: "v1", Command: "explore", Scenario: "alltoall", Flags: flags, First: 1, Seeds: 40, Shard: k, Shards: n}
	f, c := Spec{k, n}.Range(1, 40)
	e := Record{Header: h, RangeFirst: f, RangeSeeds: c, Found: found, Ends: []float64{float64(k)}, Digests: []string{"d", string(rune('a' + k))}}
	return Named{File: "s" + string(rune('0'+k)) + ".json", Rec: e}
}

func TestMergeExplore(t *testing.T) {
	fl := map[string]string{"perturb": "1"}
	all := []Named{rec(2, 4, nil, fl), rec(0, 4, nil, fl), rec(3, 4, nil, fl), rec(1, 4, nil, fl)}
	m, err := MergeExplore(all)
	require.NoError(t, err)
	assert.Nil(t, m.Found)
	assert.ElementsMatch(t, []float64{0, 1, 2, 3}, m.Ends)
	assert.Equal(t, []string{"a", "b", "c", "d"}, m.Digests, "distinct, sorted")

	// The lowest failing seed over all shards wins, whichever shard has it.
	f := []Named{rec(0, 4, nil, fl), rec(1, 4, &Found{Seed: 19, Status: "hang"}, fl), rec(2, 4, &Found{Seed: 22, Status: "mismatch"}, fl), rec(3, 4, &Found{Seed: 31, Status: "hang"}, fl)}
	m, err = MergeExplore(f)
	require.NoError(t, err)
	assert.Equal(t, &Found{Seed: 19, Status: "hang"}, m.Found)
}

func TestMergeRefuses(t *testing.T) {
	fl := map[string]string{"perturb": "1"}
	other := func(mod func(*Named)) Named { n := rec(1, 4, nil, fl); mod(&n); return n }
	for _, tc := range []struct {
		name  string
		parts []Named
		err   string
	}{
		{"missing", []Named{rec(0, 4, nil, fl), rec(1, 4, nil, fl), rec(3, 4, nil, fl)}, "missing shard(s) 2/4 of 4"},
		{"two missing", []Named{rec(0, 4, nil, fl), rec(3, 4, nil, fl)}, "missing shard(s) 1/4, 2/4 of 4"},
		{"duplicate", []Named{rec(0, 4, nil, fl), rec(1, 4, nil, fl), rec(1, 4, nil, fl), rec(2, 4, nil, fl), rec(3, 4, nil, fl)}, "duplicate shard 1/4: s1.json and s1.json"},
		{"flag", []Named{rec(0, 4, nil, fl), rec(1, 4, nil, map[string]string{"perturb": "2"})}, `flag --perturb differs: s0.json (shard 0/4) has "1", s1.json (shard 1/4) has "2"`},
		{"flag unset", []Named{rec(0, 4, nil, fl), rec(1, 4, nil, map[string]string{})}, `flag --perturb differs: s0.json (shard 0/4) has "1", s1.json (shard 1/4) has it unset (the default)`},
		{"extra flag", []Named{rec(0, 4, nil, fl), rec(1, 4, nil, map[string]string{"perturb": "1", "race": "true"})}, `flag --race differs`},
		{"version", []Named{rec(0, 4, nil, fl), other(func(n *Named) { n.Rec.Version = "v2" })}, `version differs: s0.json (shard 0/4) has "v1", s1.json (shard 1/4) has "v2"`},
		{"scenario", []Named{rec(0, 4, nil, fl), other(func(n *Named) { n.Rec.Scenario = "relay" })}, "scenario differs"},
		{"seeds", []Named{rec(0, 4, nil, fl), other(func(n *Named) { n.Rec.Seeds = 41 })}, "flag --seeds differs"},
		{"shard count", []Named{rec(0, 4, nil, fl), rec(1, 5, nil, fl)}, "shard count differs"},
		{"range", []Named{rec(0, 4, nil, fl), other(func(n *Named) { n.Rec.RangeSeeds = 3 })}, "covers seeds from 11 (3 of them), want from 11 (10)"},
		{"none", nil, "no shard files"},
	} {
		_, err := MergeExplore(tc.parts)
		assert.ErrorContains(t, err, tc.err, tc.name)
	}
	var me *MissingError
	_, err := MergeExplore([]Named{rec(0, 4, nil, fl), rec(3, 4, nil, fl)})
	require.ErrorAs(t, err, &me)
	assert.Equal(t, []int{1, 2}, me.Missing)
}

func TestDecode(t *testing.T) {
	b, err := json.Marshal(rec(1, 4, &Found{Seed: 12, Status: "hang"}, nil).Rec)
	require.NoError(t, err)
	n, err := Decode("x.json", b)
	require.NoError(t, err)
	assert.Equal(t, 1, n.Rec.Shard)
	assert.Equal(t, uint64(12), n.Rec.Found.Seed)
	_, err = Decode("bad.json", []byte("{"))
	assert.ErrorContains(t, err, "bad.json: not an emud shard record")
	_, err = Decode("other.json", []byte(`{"scenario":"x"}`))
	assert.ErrorContains(t, err, "other.json: not an emud shard record")
}

func FuzzDecode(f *testing.F) {
	b, _ := json.Marshal(rec(1, 4, nil, map[string]string{"a": "b"}).Rec)
	f.Add(b)
	f.Add([]byte(`{"command":"explore","shards":2,"shard":5}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Decode("f", data)
		if err == nil {
			_, _ = MergeExplore([]Named{n})
		}
	})
}

func TestMergeHunt(t *testing.T) {
	cells := func(k int, d1 int, f1 uint64) Named {
		n := rec(k, 3, nil, nil)
		n.Rec.Command = "hunt"
		n.Rec.Ends, n.Rec.Digests = nil, nil
		n.Rec.Hunt = []HuntCell{{Bug: "b", Strategy: "ties", Detected: d1, First: f1}, {Bug: "b", Strategy: "pct", Detected: 1, First: 14 + uint64(k), PCTSteps: 90}}
		return n
	}
	m, err := Merge([]Named{cells(2, 3, 30), cells(0, 0, 0), cells(1, 2, 17)})
	require.NoError(t, err)
	assert.Equal(t, []HuntCell{{Bug: "b", Strategy: "ties", Detected: 5, First: 17}, {Bug: "b", Strategy: "pct", Detected: 3, First: 14, PCTSteps: 90}}, m.Hunt,
		"detections summed, the first detection of the lowest shard that has one")
	bad := cells(1, 2, 17)
	bad.Rec.Hunt[1].PCTSteps = 91
	_, err = Merge([]Named{cells(0, 0, 0), bad, cells(2, 1, 30)})
	assert.ErrorContains(t, err, "not one sweep")
}

// A shard's record does not depend on --jobs: its runs finish in any order.
func TestRunExploreSameAtAnyJobs(t *testing.T) {
	sc, err := scenario.Lookup("alltoall")
	require.NoError(t, err)
	o := scenario.Defaults(sc)
	o.Ranks, o.Bytes, o.Perturb = 4, 4096, sim.MaxLevel
	var recs [2][]byte
	for i, jobs := range []int{1, 2} {
		r := &Record{RangeFirst: 1, RangeSeeds: 16}
		r.RunExplore(sc, o, jobs)
		require.Nil(t, r.Found)
		require.Len(t, r.Ends, 16)
		recs[i], err = json.Marshal(r)
		require.NoError(t, err)
	}
	assert.Equal(t, string(recs[0]), string(recs[1]))
}

// A record at odds with itself is refused, naming what: its found seed
// outside its own range was ignored (the merge reported the wrong first
// failing seed, or none), and names with control characters were printed
// raw to the terminal.
func TestDecodeRefusesInconsistentRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(r *Record)
		msg  string
	}{
		{"found below its range", func(r *Record) { r.Found = &Found{Seed: 3, Status: "hang"} }, "found seed 3 outside its own range of 10 seeds from 11"},
		{"found above its range", func(r *Record) { r.Found = &Found{Seed: 21, Status: "hang"} }, "found seed 21 outside"},
		{"control in scenario", func(r *Record) { r.Scenario = "all\x1b[2Jtoall" }, `its scenario "all\x1b[2Jtoall" has control characters`},
		{"control in a flag", func(r *Record) { r.Flags = map[string]string{"perturb": "1\r2"} }, "has control characters"},
		{"control in a status", func(r *Record) { r.Found = &Found{Seed: 12, Status: "hang\n"} }, "found status"},
		{"hunt first outside", func(r *Record) {
			r.Command = "hunt"
			r.Hunt = []HuntCell{{Bug: "b", Strategy: "random", Detected: 1, First: 99}}
		}, "first detected at seed 99, outside its own range"},
		{"hunt detects more than its seeds", func(r *Record) {
			r.Command = "hunt"
			r.Hunt = []HuntCell{{Bug: "b", Strategy: "random", Detected: 11, First: 12}}
		}, "detected 11 times in 10 seeds"},
		{"more digests than seeds", func(r *Record) { r.Digests = make([]string, 11) }, "11 digests for 10 seeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rec(1, 4, nil, nil).Rec
			tc.edit(&r)
			b, err := json.Marshal(r)
			require.NoError(t, err)
			_, err = Decode("x.json", b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "x.json: inconsistent shard record")
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	r := rec(1, 4, &Found{Seed: 20, Status: "hang"}, nil).Rec
	r.PerfWorst = &Worst{Code: 2, Text: "hang at \x1b[31mred\x1b[0m\nnext line"}
	r.Perf = []scenario.PerfLine{{Skip: "skip\x07"}}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	n, err := Decode("x.json", b)
	require.NoError(t, err, "the range's last seed is in it")
	assert.Equal(t, `hang at \x1b[31mred\x1b[0m`+"\nnext line", n.Rec.PerfWorst.Text, "free text is escaped, newlines kept")
	assert.Equal(t, `skip\a`, n.Rec.Perf[0].Skip)
}
