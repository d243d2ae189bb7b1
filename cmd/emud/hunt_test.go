package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// A reduced hunt (CI): two deterministic bugs and one that needs timing,
// a few seeds each. The full table is in the README.
func TestHuntTable(t *testing.T) {
	out, errOut, status := execute(t, "hunt", "--seeds", "8", "--jobs", "2", "ring-off-by-one", "late-rank-snapshot", "missing-commit")
	require.Equal(t, scenario.ExitOK, status, errOut)
	ls := lines(out)
	require.Len(t, ls, 12, out)
	assert.Equal(t, "hunt: 3 planted bugs, seeds 1..8 under each strategy", ls[0])
	assert.Regexp(t, `^bug +timing +ties first +ties rate +perturb first +perturb rate +pct first +pct rate`, ls[1])
	assert.Regexp(t, `^ring-off-by-one +any +1 +100% +1 +100% +1 +100%`, ls[2])
	assert.Regexp(t, `^late-rank-snapshot +needs +- +0% +\d+ +\d+% +\d+ +\d+%`, ls[3], "tie-breaks alone never find it")
	assert.Equal(t, "ties: 2 of 3 detected; missed late-rank-snapshot", ls[5])
	assert.Regexp(t, `^  reproduce: emud hunt late-rank-snapshot --seed \d+ --strategy pct --pct-steps \d+$`, ls[9])
	assert.Equal(t, "found 3 of 3 planted bugs within 8 seeds each", ls[len(ls)-1])

	// The reproduce command reruns that detection: the same hang, twice.
	repro := strings.Fields(strings.TrimPrefix(ls[9], "  reproduce: emud "))
	one, errOut, status := execute(t, repro...)
	require.Equal(t, scenario.ExitHang, status, errOut)
	assert.Contains(t, one, "waitSignal never returns")
	two, _, _ := execute(t, repro...)
	assert.Equal(t, one, two, "same seed and strategy, same run")
	assert.Regexp(t, `digest: [0-9a-f]{64}\n$`, one)

	again, _, _ := execute(t, "hunt", "--seeds", "8", "--jobs", "1", "ring-off-by-one", "late-rank-snapshot", "missing-commit")
	assert.Equal(t, out, again, "the table does not depend on --jobs")
}

func TestHuntFixedAndJSON(t *testing.T) {
	out, errOut, status := execute(t, "hunt", "--seeds", "3", "--fixed", "--strategies", "ties,pct", "expected-per-lane", "flag-set-cleared")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "2 fixed twins")
	assert.Contains(t, out, "ties: 0 of 2 detected")
	assert.Contains(t, out, "pct: 0 of 2 detected")
	assert.NotContains(t, out, "found ", "no found line for the twins")

	out, errOut, status = execute(t, "hunt", "--seeds", "2", "--json", "--strategies", "pct", "lost-completion", "gin-allgather-multicta")
	require.Contains(t, []int{scenario.ExitOK, scenario.ExitFailed}, status, errOut)
	var j scenario.HuntJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j), out)
	require.Len(t, j.Bugs, 2)
	assert.Equal(t, "pct", j.Default)
	g := j.Bugs[1]
	assert.Equal(t, "gin-allgather-multicta", g.Name)
	require.Len(t, g.Results, 1)
	assert.Equal(t, 1, g.Results[0].SeedsToFirst)
	assert.Contains(t, g.Results[0].Example, "waitSignal never returns")
	assert.NotEmpty(t, j.Bugs[0].Faults, "the fault-injected bug says which faults")
}

// One run of one bug, as run prints it: wrong data exits 3, a fixed twin
// passes, a trace can be written.
func TestHuntOneSeed(t *testing.T) {
	out, errOut, status := execute(t, "hunt", "ring-off-by-one", "--seed", "4", "--strategy", "ties")
	assert.Equal(t, scenario.ExitMismatch, status, errOut)
	assert.Contains(t, out, "wrong data: rank 0's block of rank 1")
	assert.Contains(t, out, "seed: 4\n")
	trace := filepath.Join(t.TempDir(), "t.json")
	out, errOut, status = execute(t, "hunt", "ring-off-by-one", "--seed", "4", "--fixed", "--trace", trace)
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "ring-off-by-one (fixed twin): no hang, right data")
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.Contains(t, string(data), "traceEvents")
}

func TestHuntErrors(t *testing.T) {
	assertFlagErrors(t, nil, []flagError{
		{[]string{"hunt", "--seeds", "0"}, "invalid --seeds 0"},
		{[]string{"hunt", "--jobs", "0"}, "invalid --jobs 0"},
		{[]string{"hunt", "--strategies", "ties,dfs"}, "invalid --strategies"},
		{[]string{"hunt", "no-such-bug"}, `no planted bug "no-such-bug"`},
		{[]string{"hunt", "--seed", "1"}, "hunt --seed runs one bug: name exactly one"},
		{[]string{"hunt", "--seed", "1", "ring-off-by-one", "missing-commit"}, "name exactly one"},
		{[]string{"hunt", "--trace", "x.json", "ring-off-by-one"}, "invalid --trace: only with --seed"},
		{[]string{"hunt", "--strategy", "bogus"}, `invalid --strategy: no strategy "bogus"`}, // not ignored without --seed
		{[]string{"hunt", "--strategy", "pct"}, "invalid --strategy pct: only with --seed"},
		{[]string{"hunt", "--seed", "1", "--strategy", "dfs", "ring-off-by-one"}, "invalid --strategy"},
	})
}

// The same seed and flags give the same digest with timing perturbation
// and fault injection on: 100 seeds, each run twice, across the
// strategies.
func TestDigestStableWithPerturbationAndFaults(t *testing.T) {
	sc, err := scenario.Lookup("alltoall")
	require.NoError(t, err)
	faults, err := engine.ParseInject("seed=0.5")
	require.NoError(t, err)
	digests := map[string]bool{}
	injected := 0
	for seed := uint64(1); seed <= 100; seed++ {
		o := scenario.Options{Ranks: 4, Bytes: 4096, Queues: 2, Seed: seed, Perturb: 1, Faults: faults}
		if seed%2 == 0 {
			o.Strategy, o.PCT.Steps = sim.StrategyPCT, 400
		}
		a, b := scenario.RunOnce(sc, o), scenario.RunOnce(sc, o)
		require.NotEmpty(t, a.Digest(), "seed %d: %s", seed, a.Error)
		require.Equal(t, a.Digest(), b.Digest(), "seed %d: same seed and flags, same digest", seed)
		require.Equal(t, a.Status, b.Status)
		digests[a.Digest()] = true
		if a.Outcome != nil {
			injected += len(a.Outcome.Injected)
		} else if a.Hang != nil && strings.Contains(a.Hang.Text(), "injected fault") {
			injected++
		}
	}
	assert.Len(t, digests, 100, "every seed is its own run")
	assert.Greater(t, injected, 10, "faults were injected in some runs")
}

func TestTimingFlagErrors(t *testing.T) {
	assertFlagErrors(t, nil, []flagError{
		{[]string{"run", "--perturb", "3"}, "invalid --perturb 3: need 0..2"},
		{[]string{"run", "--perturb", "-1"}, "invalid --perturb -1"},
		{[]string{"explore", "--strategy", "dfs"}, "invalid --strategy"},
		{[]string{"run", "--faults", "melt"}, `invalid --faults: fault spec "melt"`},
		{[]string{"run", "--faults", "dead=0:9:0"}, "invalid --faults: inject plan: dead/lagging queue gpu0→gpu9 q0 outside the node"},
		{[]string{"run", "--pct-depth", "-2"}, "invalid --pct-depth"},
		{[]string{"run", "cft-allreduce", "--bytes", "64", "--faults", "seed"}, "SDMA faults"},
	})
}

// run defaults to level 0, the model's exact timing (the golden reports
// pin those runs' digests): the same output as --perturb 0, with no
// perturbation line; level 1 is another run.
func TestRunDefaultsToExactTiming(t *testing.T) {
	exact, _, status := execute(t, "run", "--ranks", "3", "--bytes", "4K", "--seed", "2")
	require.Equal(t, scenario.ExitOK, status)
	zero, _, _ := execute(t, "run", "--ranks", "3", "--bytes", "4K", "--seed", "2", "--perturb", "0")
	assert.Equal(t, exact, zero)
	assert.NotContains(t, exact, "timing perturbation")
	pert, _, status := execute(t, "run", "--ranks", "3", "--bytes", "4K", "--seed", "2", "--perturb", "1")
	require.Equal(t, scenario.ExitOK, status)
	assert.Contains(t, pert, "timing perturbation: level 1 (realistic); strategy random")
	assert.NotEqual(t, seedAndDigest(t, exact, 2), seedAndDigest(t, pert, 2))
}

// hunt --race: a bug whose races rarely corrupt data at these seeds is a
// detection on every seed once the detector runs, the table says the
// detector was on, and the reproduce command carries --race and reruns the
// race report (exit 5). Its fixed twin stays clean under the detector.
func TestHuntRace(t *testing.T) {
	args := []string{"hunt", "--seeds", "2", "--strategies", "ties", "allgather-wrong-queue"}
	out, errOut, status := execute(t, args...)
	require.Equal(t, scenario.ExitOK, status, errOut, "the default strategy (pct) is not in the table")
	assert.Contains(t, out, "ties: 0 of 1 detected; missed allgather-wrong-queue", "release runs at exact timing miss it")

	out, errOut, status = execute(t, append(args, "--race")...)
	require.Equal(t, scenario.ExitOK, status, errOut)
	ls := lines(out)
	assert.Equal(t, "hunt: 1 planted bugs, seeds 1..2 under each strategy, with the race detector", ls[0])
	assert.Regexp(t, `^allgather-wrong-queue +needs +1 +100%`, ls[2])
	assert.Equal(t, "ties: 1 of 1 detected", ls[3])

	out, errOut, status = execute(t, "hunt", "allgather-wrong-queue", "--seed", "1", "--strategy", "ties", "--race")
	require.Equal(t, scenario.ExitRace, status, errOut)
	assert.Contains(t, out, "data race")
	assert.Contains(t, out, "missing edge")
	assert.NotContains(t, out, "digest:", "a race report has no digest")

	out, errOut, status = execute(t, "hunt", "--seeds", "2", "--strategies", "ties", "--fixed", "--race", "allgather-wrong-queue")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "ties: 0 of 1 detected")

	out, _, status = execute(t, "hunt", "--seeds", "2", "--strategies", "pct", "--race", "--json", "allgather-wrong-queue")
	require.Equal(t, scenario.ExitOK, status)
	var j scenario.HuntJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j), out)
	assert.True(t, j.Race)
}
