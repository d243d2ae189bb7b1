package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/sim"
)

// ranAlltoall returns a finished, verified small run to tamper with.
func ranAlltoall(t *testing.T) *alltoall {
	t.Helper()
	x, err := newAlltoall(options{Ranks: 4, Bytes: 1000, Queues: 2, Seed: 5})
	require.NoError(t, err)
	require.NoError(t, x.spawn())
	require.NoError(t, x.s.Run())
	require.NoError(t, x.verify())
	return x
}

func TestVerifyCatchesWrongByte(t *testing.T) {
	x := ranAlltoall(t)
	// Byte 100 of rank 2's block from rank 1.
	addr := x.ranks[2].recvWin.LocalPtr(1*1000 + 100)
	b := make([]byte, 1)
	require.NoError(t, x.n.Memory().Read(addr, b))
	require.NoError(t, x.n.Memory().Write(addr, []byte{^b[0]}))
	err := x.verify()
	var bad *mismatchError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "rank 2's receive block from rank 1: 1 of 1000 bytes wrong, first at block offset 100")
	assert.Contains(t, err.Error(), "seed 5")
}

func TestVerifyCatchesSwappedBlocks(t *testing.T) {
	x := ranAlltoall(t)
	// Rank 3's blocks from ranks 0 and 1 swapped: every byte is a valid
	// pattern byte, just not the one from the right sender.
	mem, recv := x.n.Memory(), x.ranks[3].recvWin.LocalPtr(0)
	b0, b1 := make([]byte, 1000), make([]byte, 1000)
	require.NoError(t, mem.Read(recv, b0))
	require.NoError(t, mem.Read(recv+1000, b1))
	require.NoError(t, mem.Write(recv, b1))
	require.NoError(t, mem.Write(recv+1000, b0))
	err := x.verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 wrong blocks or signals")
	assert.Contains(t, err.Error(), "rank 3's receive block from rank 0")
}

func TestVerifyCatchesExtraSignal(t *testing.T) {
	x := ranAlltoall(t)
	slot, err := x.ranks[1].dc.SignalPool().Slot(2, x.queueID(1))
	require.NoError(t, err)
	require.NoError(t, x.n.Memory().Store64(slot, 2))
	err = x.verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 1's signal slot (sender 2, queue 1) is 2, want 1")
}

func TestFillBlockDependsOnSourceAndDestination(t *testing.T) {
	a, b, c := make([]byte, 13), make([]byte, 13), make([]byte, 13)
	fillBlock(a, 1, 2)
	fillBlock(b, 2, 1)
	fillBlock(c, 1, 2)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, c)
	assert.NotEqual(t, make([]byte, 5), a[8:], "the tail past the last whole word is filled too")
}

// withScenario registers sc for one test.
func withScenario(t *testing.T, sc *scenario) {
	t.Helper()
	register(sc)
	t.Cleanup(func() { delete(scenarios, sc.name) })
}

// Rank 0 never runs: every other rank waits for its signal forever. The run
// must end in a hang report that names the missing signal, with status 2.
func TestRunHangReport(t *testing.T) {
	withScenario(t, &scenario{name: "test-rank0-missing", run: func(o options) (*outcome, error) {
		x, err := newAlltoall(o)
		if err != nil {
			return nil, err
		}
		for r := 1; r < o.Ranks; r++ {
			if err := x.spawnRank(r); err != nil {
				return nil, err
			}
		}
		if err := x.s.Run(); err != nil {
			return nil, err
		}
		return nil, errors.New("the run was meant to hang")
	}})
	args := []string{"run", "--scenario", "test-rank0-missing", "--ranks", "3", "--bytes", "4K", "--seed", "9"}

	out, errOut, status := execute(t, args...)
	assert.Equal(t, exitHang, status, errOut)
	assert.Contains(t, errOut, "hang (deadlock)")
	golden.Check(t, "hang-rank0-missing.txt", out)
	seedAndDigest(t, out, 9)

	out, _, status = execute(t, append(args, "--json")...)
	assert.Equal(t, exitHang, status)
	golden.Check(t, "hang-rank0-missing.json", out)
	var h sim.HangError
	require.NoError(t, json.Unmarshal([]byte(out), &h), out)
	assert.Equal(t, sim.HangDeadlock, h.Kind)
	assert.Equal(t, uint64(9), h.Seed)
}

func TestRunMismatchStatus(t *testing.T) {
	withScenario(t, &scenario{name: "test-bad-data", run: func(o options) (*outcome, error) {
		return nil, &mismatchError{Scenario: "test-bad-data", Seed: o.Seed, Detail: "byte 0 wrong"}
	}})
	out, errOut, status := execute(t, "run", "--scenario", "test-bad-data")
	assert.Equal(t, exitMismatch, status)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(errOut, "emud: test-bad-data data check failed (seed 1): byte 0 wrong"), errOut)
}

// The planted bug's whole hang report under its first hanging seed: who
// waits on what, and the cause said once for every waiting rank with the
// failure-mode row it matches.
func TestPlantedHangReport(t *testing.T) {
	var seed uint64
	for s := uint64(1); s <= 200 && seed == 0; s++ {
		if runOnce(scenarios["alltoall-shared-expected"], options{Ranks: 4, Bytes: 4 << 10, Queues: 2, Seed: s}).Status == statusHang {
			seed = s
		}
	}
	require.NotZero(t, seed, "no seed in 1..200 hangs the planted bug")
	out, errOut, status := execute(t, append([]string{"run"}, append(plantedArgs, "--seed", strconv.FormatUint(seed, 10))...)...)
	require.Equal(t, exitHang, status, errOut)
	golden.Check(t, "hang-planted.txt", out)
}
