package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plantedArgs size the planted-bug runs small so 200 seeds stay cheap.
var plantedArgs = []string{"alltoall-shared-expected", "--ranks", "4", "--bytes", "4K"}

// explore finds the planted bug within 200 seeds, prints the report with
// its cause and a replay command, and replay reproduces the run bit for bit
// (same digest) and writes its trace.
func TestExploreFindsPlantedBugAndReplayReproducesIt(t *testing.T) {
	out, errOut, status := execute(t, append([]string{"explore", "--seeds", "200"}, plantedArgs...)...)
	require.Equal(t, scenario.ExitHang, status, errOut)
	assert.Contains(t, errOut, "explore alltoall-shared-expected: seed ")
	ls := lines(out)
	require.Greater(t, len(ls), 4, out)
	assert.Regexp(t, `^explore alltoall-shared-expected: seed \d+ hangs \(\d+ of seeds 1\.\.200 run\)$`, ls[0])
	assert.Contains(t, out, "expected looks shared across queues", "the report names the cause")
	repro := ls[len(ls)-1]
	require.True(t, strings.HasPrefix(repro, "reproduce: emud replay alltoall-shared-expected --seed "), repro)
	digest := strings.TrimPrefix(ls[len(ls)-2], "digest: ")
	require.Regexp(t, `^[0-9a-f]{64}$`, digest)

	trace := filepath.Join(t.TempDir(), "hang.trace.json")
	args := append(strings.Fields(strings.TrimPrefix(repro, "reproduce: emud "))[0:], "--trace", trace, "--expect-digest", digest)
	rout, rerr, rstatus := execute(t, args...)
	assert.Equal(t, scenario.ExitHang, rstatus, rerr)
	assert.Contains(t, rerr, "trace: "+trace)
	assert.Equal(t, digest, strings.TrimPrefix(lines(rout)[len(lines(rout))-1], "digest: "), "replay gives the explored run's digest")
	assert.Contains(t, rout, "expected looks shared across queues")
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc), "the trace is JSON")
	assert.Contains(t, doc, "traceEvents")
}

// The lowest failing seed is the answer, however many jobs run at once.
func TestExploreAnswerDoesNotDependOnJobs(t *testing.T) {
	var seeds []string
	for _, jobs := range []string{"1", "3"} {
		out, _, status := execute(t, append([]string{"explore", "--seeds", "40", "--first-seed", "5", "--jobs", jobs}, plantedArgs...)...)
		require.Equal(t, scenario.ExitHang, status)
		seeds = append(seeds, lines(out)[0])
	}
	assert.Equal(t, seeds[0], seeds[1])
}

func TestExploreAllPass(t *testing.T) {
	out, errOut, status := execute(t, "explore", "alltoall-split", "--seeds", "12", "--ranks", "3", "--bytes", "1K")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Empty(t, errOut, "no progress bar when stderr is not a terminal")
	ls := lines(out)
	require.Len(t, ls, 4, out)
	assert.Equal(t, "explore alltoall-split: seeds 1..12 all passed (no hang, no failed check)", ls[0])
	assert.Regexp(t, `^  end time \(µs\): min [0-9.]+  median [0-9.]+  max [0-9.]+$`, ls[1])
	assert.Equal(t, "  distinct digests: 12 of 12 runs", ls[2])
	assert.Regexp(t, `^  explored with: --perturb 1 --strategy pct --pct-steps \d+$`, ls[3], "explore's defaults: realistic perturbation, PCT with measured steps")
}

func TestExploreJSON(t *testing.T) {
	out, _, status := execute(t, append([]string{"explore", "--seeds", "200", "--json"}, plantedArgs...)...)
	require.Equal(t, scenario.ExitHang, status)
	var x scenario.ExplorationJSON
	var raw struct {
		Report struct {
			Status string          `json:"status"`
			Hang   json.RawMessage `json:"hang"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &x), out)
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	assert.True(t, x.Found)
	assert.Equal(t, scenario.StatusHang, x.Status)
	assert.Equal(t, int(x.Seed), x.SeedsRun, "seeds 1..seed ran")
	assert.Equal(t, scenario.StatusHang, raw.Report.Status)
	assert.Contains(t, string(raw.Report.Hang), "expected looks shared across queues")
	assert.Contains(t, x.Reproduce, "--seed ")

	out, _, status = execute(t, "explore", "alltoall", "--seeds", "3", "--ranks", "2", "--bytes", "1K", "--json")
	require.Equal(t, scenario.ExitOK, status)
	require.NoError(t, json.Unmarshal([]byte(out), &x))
	assert.False(t, x.Found)
	assert.Equal(t, 3, x.SeedsRun)
}

func TestExploreProgress(t *testing.T) {
	_, errOut, status := execute(t, "explore", "alltoall", "--seeds", "4", "--ranks", "2", "--bytes", "1K", "--progress")
	require.Equal(t, scenario.ExitOK, status)
	assert.Contains(t, errOut, "\rexplore alltoall  [")
	assert.Contains(t, errOut, "4/4 seeds  0 failed")
	assert.True(t, strings.HasSuffix(errOut, "\n"), "the bar's line is ended")
}

func TestExploreBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--seeds", "0"}, "--seeds"},
		{[]string{"--jobs", "0"}, "--jobs"},
		{[]string{"--first-seed", "18446744073709551615", "--seeds", "2"}, "--first-seed"},
		{[]string{"--seed", "3"}, "--seed"}, // explore takes a range, not one seed
		{[]string{"--ranks", "1"}, "--ranks"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, status := execute(t, append([]string{"explore"}, tc.args...)...)
			assert.Equal(t, scenario.ExitFailed, status)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.flag)
		})
	}
}

func TestReplay(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "a.json")
	run, _, status := execute(t, "run", "--ranks", "3", "--bytes", "4K", "--seed", "11")
	require.Equal(t, scenario.ExitOK, status)
	out, errOut, status := execute(t, "replay", "--ranks", "3", "--bytes", "4K", "--seed", "11", "--trace", trace)
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Equal(t, run, out, "replay prints what run printed")
	_, err := os.Stat(trace)
	assert.NoError(t, err)

	_, errOut, status = execute(t, "replay", "--ranks", "3")
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, `"seed" not set`)

	_, errOut, status = execute(t, "replay", "--seed", "1", "--trace", filepath.Join(dir, "no", "such", "dir.json"))
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, "invalid --trace")
}

// Without --trace, replay names the trace after the scenario and seed, in
// the working directory.
func TestReplayDefaultTracePath(t *testing.T) {
	t.Chdir(t.TempDir())
	_, errOut, status := execute(t, "replay", "relay", "--seed", "2", "--ranks", "3", "--bytes", "1K")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Equal(t, "trace: relay-seed2.trace.json\n", errOut)
	_, err := os.Stat("relay-seed2.trace.json")
	assert.NoError(t, err)
}

// run --trace writes the trace even when the run hangs.
func TestRunTraceOnHang(t *testing.T) {
	seed := hangingSeed(t)
	trace := filepath.Join(t.TempDir(), "t.json")
	out, errOut, status := execute(t, "run", "alltoall-shared-expected", "--ranks", "4", "--bytes", "4K", "--seed", fmt.Sprint(seed), "--trace", trace)
	require.Equal(t, scenario.ExitHang, status, errOut)
	seedAndDigest(t, out, seed)
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.True(t, json.Valid(b))
}
