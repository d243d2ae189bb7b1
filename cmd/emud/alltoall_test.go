package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/internal/scentest"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// The registry helpers the daemon's tests share (package scentest).
var (
	withScenario = scentest.Register
	mustScenario = scentest.Lookup
	hangingSeed  = scentest.HangingSeed
)

// Rank 0 never runs: every other rank waits for its signal forever. The run
// must end in a hang report that names the missing signal, with status 2.
func TestRunHangReport(t *testing.T) {
	withScenario(t, &scenario.Scenario{Name: "test-rank0-missing", Run: func(o scenario.Options) (*scenario.Outcome, error) {
		// alltoall's kernels on every rank but 0.
		j, err := scenario.NewEnv(o)
		if err != nil {
			return nil, err
		}
		send, recv, err := j.SendRecv(o.Bytes)
		if err != nil {
			return nil, err
		}
		for r := 1; r < o.Ranks; r++ {
			err := j.LaunchRank(r, 1, o.Ranks, func(t *kernel.Thread, sdma *cco.Sdma) {
				p, b := (r+1+t.ThreadIdx())%o.Ranks, o.Bytes
				sdma.Put(p, recv[r], uint64(r)*b, send[r], uint64(p)*b, b, p%o.Queues, cco.RemoteSignal)
				sdma.Quiet(p)
				sdma.WaitSignal(p, r%o.Queues, 1)
				j.Consume(cco.NewMem(t, j.DevComms[r]), recv[r].LocalPtr(uint64(p)*b), b)
				j.Done(r, t)
			})
			if err != nil {
				return nil, err
			}
		}
		if err := j.Sim.Run(); err != nil {
			return nil, err
		}
		return nil, errors.New("the run was meant to hang")
	}})
	args := []string{"run", "--scenario", "test-rank0-missing", "--ranks", "3", "--bytes", "4K", "--seed", "9"}

	out, errOut, status := execute(t, args...)
	assert.Equal(t, scenario.ExitHang, status, errOut)
	assert.Contains(t, errOut, "hang (deadlock)")
	golden.Check(t, "hang-rank0-missing.txt", out)
	seedAndDigest(t, out, 9)

	out, _, status = execute(t, append(args, "--json")...)
	assert.Equal(t, scenario.ExitHang, status)
	golden.Check(t, "hang-rank0-missing.json", out)
	var h sim.HangError
	require.NoError(t, json.Unmarshal([]byte(out), &h), out)
	assert.Equal(t, sim.HangDeadlock, h.Kind)
	assert.Equal(t, uint64(9), h.Seed)
}

func TestRunMismatchStatus(t *testing.T) {
	withScenario(t, &scenario.Scenario{Name: "test-bad-data", Run: func(o scenario.Options) (*scenario.Outcome, error) {
		return nil, &scenario.MismatchError{Scenario: "test-bad-data", Seed: o.Seed, Detail: "byte 0 wrong"}
	}})
	out, errOut, status := execute(t, "run", "--scenario", "test-bad-data")
	assert.Equal(t, scenario.ExitMismatch, status)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(errOut, "emud: test-bad-data data check failed (seed 1): byte 0 wrong"), errOut)
}

// The planted bug's whole hang report under its first hanging seed: who
// waits on what, and the cause said once for every waiting rank with the
// failure-mode row it matches.
func TestPlantedHangReport(t *testing.T) {
	var seed uint64
	for s := uint64(1); s <= 200 && seed == 0; s++ {
		if scenario.RunOnce(mustScenario(t, "alltoall-shared-expected"), scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2, Seed: s}).Status == scenario.StatusHang {
			seed = s
		}
	}
	require.NotZero(t, seed, "no seed in 1..200 hangs the planted bug")
	out, errOut, status := execute(t, append([]string{"run"}, append(plantedArgs, "--seed", strconv.FormatUint(seed, 10))...)...)
	require.Equal(t, scenario.ExitHang, status, errOut)
	golden.Check(t, "hang-planted.txt", out)
}
