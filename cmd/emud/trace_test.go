package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/tracecheck"
	"github.com/emud-dev/emud/scenario"
)

// The trace of every scenario with SDMA queues, at its defaults, and of
// the planted bug's hang (alltoall-shared-expected --seed 1, the run the
// viewers were first seen to misread) reads right: tracecheck finds no
// problem (time grid, every slice nested or disjoint, every flow bound
// under Perfetto's and DevTools' rules to the slices its args name), no
// flow link was dropped and no overflow lane was needed. So do runs off
// the defaults: the placeholder model (free CU issue: zero-length calls,
// drawn on overflow lanes) and timing perturbation. The planted bugs' runs
// too, whatever their outcome (wrong data, say). With $EMUD_TRACE_DIR
// set the traces are kept there as NAME.json: .ci/run loads them in the
// real viewers (.ci/tracecheck).
func TestScenarioTracesReadRight(t *testing.T) {
	keep := os.Getenv("EMUD_TRACE_DIR")
	type run struct {
		file     string
		args     []string
		defaults bool
	}
	var runs []run
	var names []string
	for _, sc := range scenario.All() {
		n := sc.Name
		if !sc.Fabric && sc.Shape == nil { // the corpus programs: see TestHuntOneSeed
			names = append(names, n)
		}
	}
	slices.Sort(names)
	require.Contains(t, names, "alltoall-shared-expected")
	for _, n := range names {
		runs = append(runs, run{n + "-seed1", []string{n, "--seed", "1"}, true})
	}
	small := []string{"--ranks", "4", "--bytes", "4K", "--seed", "2"}
	runs = append(runs,
		run{"alltoall-placeholder", append([]string{"alltoall", "--model", "placeholder"}, small...), false},
		run{"relay-placeholder", append([]string{"relay", "--model", "placeholder"}, small...), false},
		run{"alltoall-split-perturb2", append([]string{"alltoall-split", "--perturb", "2"}, small...), false},
	)
	count := func(data []byte, key string) string {
		m := regexp.MustCompile(`"` + key + `":(\d+)`).FindSubmatch(data)
		require.NotNil(t, m, key)
		return string(m[1])
	}
	for _, r := range runs {
		t.Run(r.file, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.json")
			if keep != "" {
				path = filepath.Join(keep, r.file+".json")
			}
			_, errOut, status := execute(t, append(append([]string{"run"}, r.args...), "--trace", path)...)
			switch sc := mustScenario(t, r.args[0]); {
			case r.file == "alltoall-shared-expected-seed1":
				require.Equal(t, scenario.ExitHang, status, errOut) // seed 1 hangs at the defaults
			case sc.Planted != nil: // a hang, wrong data or a race: the trace is written all the same
				require.Contains(t, []int{scenario.ExitOK, scenario.ExitHang, scenario.ExitMismatch, scenario.ExitRace}, status, errOut)
			default:
				require.Equal(t, scenario.ExitOK, status, errOut)
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			rep, err := tracecheck.Check(data)
			require.NoError(t, err)
			assert.NotEmpty(t, rep.Flows, "flows to check")
			var wakes int
			for _, s := range rep.Slices {
				if s.Name == "wake" {
					wakes++
				}
			}
			assert.Positive(t, wakes, "some waiter was woken")
			switch {
			case r.defaults:
				assert.Equal(t, "0", count(data, "flow_links_dropped"))
				assert.Equal(t, "0", count(data, "overflow_lanes"), "calls and packets take time at the defaults")
			case strings.HasSuffix(r.file, "-placeholder"):
				assert.NotEqual(t, "0", count(data, "overflow_lanes"), "zero-length calls at one time")
			}
			t.Logf("%d events, %d slices (%d wakes), %d flows, %s flow links dropped, %s overflow lanes",
				rep.Events, len(rep.Slices), wakes, len(rep.Flows), count(data, "flow_links_dropped"), count(data, "overflow_lanes"))
		})
	}
}

// --trace FILE leaves an old FILE as it is until the new trace is whole:
// during the run, and after a run that leaves no trace. Before, FILE was
// emptied when the run started (an interrupted run left 0 bytes) and
// removed when the run left no trace.
func TestTraceFileSurvivesAFailedRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.json")
	require.NoError(t, os.WriteFile(path, []byte("old trace"), 0o644))
	var during string
	withScenario(t, &scenario.Scenario{Name: "test-fails-early", Run: func(scenario.Options) (*scenario.Outcome, error) {
		b, _ := os.ReadFile(path)
		during = string(b)
		return nil, errors.New("no node today")
	}})
	_, errOut, status := execute(t, "run", "test-fails-early", "--trace", path, "--ranks", "2", "--bytes", "64")
	assert.Equal(t, scenario.ExitFailed, status, errOut)
	assert.Equal(t, "old trace", during, "the old trace is whole while the run goes")
	b, err := os.ReadFile(path)
	require.NoError(t, err, "the old trace survives a run that left none")
	assert.Equal(t, "old trace", string(b))
	es, _ := os.ReadDir(dir)
	assert.Len(t, es, 1, "no temporary file is left")

	_, errOut, status = execute(t, "run", "relay", "--trace", path, "--ranks", "2", "--bytes", "64")
	require.Equal(t, 0, status, errOut)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "traceEvents", "a run that made a trace replaces the file")
	_, errOut, status = execute(t, "run", "relay", "--trace", dir, "--ranks", "2", "--bytes", "64")
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, "invalid --trace: "+dir+" is a directory")
}
