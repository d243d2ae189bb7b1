package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/scenario"
)

// Every correct scenario runs clean with the race detector on.
func TestRunScenariosRaceClean(t *testing.T) {
	for _, sc := range scenario.All() {
		name := sc.Name
		if sc.Planted != nil || sc.Shape != nil {
			continue // the corpus twins' race tests are scenario/planted's
		}
		t.Run(name, func(t *testing.T) {
			out, errOut, status := execute(t, "run", name, "--race", "--ranks", "4", "--bytes", "16K", "--queues", "2")
			assert.Equal(t, scenario.ExitOK, status, "%s\n%s", errOut, out)
		})
	}
}

func TestRunEarlyReuseRace(t *testing.T) {
	args := []string{"run", "alltoall-early-reuse", "--ranks", "4", "--bytes", "16K"}
	for seed := 1; seed <= 3; seed++ {
		s := []string{"--seed", fmt.Sprint(seed)}
		_, errOut, status := execute(t, append(args, s...)...)
		assert.Contains(t, []int{scenario.ExitOK, scenario.ExitMismatch}, status, errOut)
		if status == scenario.ExitMismatch {
			assert.Contains(t, errOut, "data check failed")
		}
		out, errOut, status := execute(t, append(append(args, s...), "--race")...)
		require.Equal(t, scenario.ExitRace, status, errOut)
		assert.Contains(t, errOut, "data race")
		for _, want := range []string{"fill (write)", "COPY source read (read)", `kernel "rank`, "sdma gpu", "sdma/alltoall.go:", "missing edge:", " µs"} {
			assert.Contains(t, out, want)
		}
		out, _, status = execute(t, append(append(args, s...), "--race", "--json")...)
		require.Equal(t, scenario.ExitRace, status)
		var e race.Error
		require.NoError(t, json.Unmarshal([]byte(out), &e), out)
		require.NotEmpty(t, e.Reports)
		r := e.Reports[0]
		assert.NotEqual(t, r.First.Kind, r.Second.Kind, "a lane and an engine")
		assert.True(t, r.First.Write || r.Second.Write)
		assert.NotEmpty(t, r.Missing)
	}
}

func TestRunWrongQueueRace(t *testing.T) {
	for _, size := range []string{"64", "4K", "256K", "4M"} {
		for seed := 1; seed <= 2; seed++ {
			out, errOut, status := execute(t, "run", "allgather-wrong-queue", "--race", "--ranks", "3", "--bytes", size, "--seed", fmt.Sprint(seed))
			require.Equal(t, scenario.ExitRace, status, "size %s seed %d: %s", size, seed, errOut)
			assert.Contains(t, out, "is not ordered after the COPY destination write by sdma gpu")
		}
	}
}

// The whole race report of each planted race, pinned (go test -run
// TestRaceReportsGolden -update rewrites them when a change is meant).
func TestRaceReportsGolden(t *testing.T) {
	for _, tc := range []struct{ file, scenario string }{
		{"race-early-reuse.txt", "alltoall-early-reuse"},
		{"race-wrong-queue.txt", "allgather-wrong-queue"},
	} {
		out, errOut, status := execute(t, "run", tc.scenario, "--race", "--ranks", "2", "--bytes", "4K", "--seed", "1")
		require.Equal(t, scenario.ExitRace, status, errOut)
		golden.Check(t, tc.file, out)
	}
}
