package main

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run over --mem-budget is refused before it starts, with the estimate
// item by item and the budget; phantom drops the emulated bytes from it.
func TestMemBudget(t *testing.T) {
	out, errOut, status := execute(t, "run", "relay", "--ranks", "2", "--bytes", "2G", "--mem-budget", "4G")
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Empty(t, out)
	assert.Regexp(t, `invalid --bytes 2GiB with --ranks 2: relay needs an estimated 8\.0\dGiB \(emulated memory 4\.00GiB, host buffers 4\.00GiB, 4 SDMA queues`, errOut)
	assert.Contains(t, errOut, "over --mem-budget 4.00GiB; use --phantom")

	args := []string{"run", "--ranks", "8", "--bytes", "1M", "--mem-budget", "40M"}
	_, errOut, status = execute(t, args...)
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, "alltoall needs an estimated")
	out, errOut, status = execute(t, append(args, "--phantom")...)
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Len(t, rankRows(out), 8)

	_, errOut, status = execute(t, "run", "--ranks", "8", "--bytes", "1M", "--mem-budget", "0")
	assert.Equal(t, scenario.ExitOK, status, "0 means no budget: %s", errOut)
}

func TestFootprintGrowsWithTheRun(t *testing.T) {
	for _, sc := range scenario.All() {
		name := sc.Name
		if sc.Shape != nil {
			continue // a corpus program: a fixed, small shape (scenario/planted)
		}
		if sc.Usage == nil {
			t.Errorf("scenario %s has no footprint estimate", name)
			continue
		}
		small := scenario.Options{Ranks: 4, Bytes: 1 << 10, Queues: 2}
		big := small
		big.Bytes = 1 << 20
		more := small
		more.Ranks = 8
		s, b, m := scenario.Footprint(sc, small).Bytes(), scenario.Footprint(sc, big).Bytes(), scenario.Footprint(sc, more).Bytes()
		assert.Greater(t, b, s, "%s: more bytes", name)
		assert.Greater(t, m, s, "%s: more ranks", name)
		ph := big
		ph.Phantom = true
		assert.Less(t, scenario.Footprint(sc, ph).Bytes(), b, "%s: phantom stores no bytes", name)
		assert.Contains(t, scenario.Footprint(sc, big).String(), "emulated memory", name)
		if !sc.Fabric {
			tr := big
			tr.Traced = true
			assert.Greater(t, scenario.Footprint(sc, tr).Bytes(), b, "%s: a trace costs memory", name)
		}
	}
}

func TestExploreJobsCap(t *testing.T) {
	for _, tc := range []struct {
		jobs, procs   int
		perRun, budge uint64
		want          int
		why           string
	}{
		{2, 2, 10 << 20, 1 << 30, 2, ""},
		{32, 2, 10 << 20, 1 << 30, 8, "4 × 2 processors"},
		{8, 4, 100 << 20, 300 << 20, 3, "--mem-budget 300MiB / 100MiB per run"},
		{8, 4, 1 << 30, 300 << 20, 1, "--mem-budget"},
		{8, 4, 1 << 30, 0, 8, ""},
	} {
		n, why := scenario.ExploreJobs(tc.jobs, tc.procs, tc.perRun, tc.budge)
		assert.Equal(t, tc.want, n, "%+v", tc)
		assert.Contains(t, why, tc.why)
		if tc.why == "" {
			assert.Empty(t, why)
		}
	}
	// The command says so when it caps.
	o := scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2}
	per := scenario.Footprint(mustScenario(t, "alltoall"), o).Bytes()
	_, errOut, status := execute(t, "explore", "--ranks", "4", "--bytes", "4K", "--seeds", "3", "--jobs", "3",
		"--mem-budget", fmt.Sprint(2*per+per/2))
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, errOut, "explore: --jobs 3 capped to 2 (--mem-budget")
}
