package sdma

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/hostmem"
	"github.com/emud-dev/emud/scenario"
)

// ranAlltoall returns a finished, verified small run to tamper with.
func ranAlltoall(t *testing.T) *alltoall {
	t.Helper()
	x, err := newAlltoall(scenario.Options{Ranks: 4, Bytes: 1000, Queues: 2, Seed: 5})
	require.NoError(t, err)
	require.NoError(t, x.spawn())
	require.NoError(t, x.Sim.Run())
	require.NoError(t, x.verify("alltoall", x.oneSignal))
	return x
}

func TestVerifyCatchesWrongByte(t *testing.T) {
	x := ranAlltoall(t)
	// Byte 100 of rank 2's block from rank 1.
	addr := x.ranks[2].recvWin.LocalPtr(1*1000 + 100)
	b := make([]byte, 1)
	require.NoError(t, x.Mem().Read(addr, b))
	require.NoError(t, x.Mem().Write(addr, []byte{^b[0]}))
	err := x.verify("alltoall", x.oneSignal)
	var bad *scenario.MismatchError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "rank 2's receive block from rank 1: 1 of 1000 bytes wrong, first at block offset 100")
	assert.Contains(t, err.Error(), "seed 5")
}

func TestVerifyCatchesSwappedBlocks(t *testing.T) {
	x := ranAlltoall(t)
	// Rank 3's blocks from ranks 0 and 1 swapped: every byte is a valid
	// pattern byte, just not the one from the right sender.
	mem, recv := x.Mem(), x.ranks[3].recvWin.LocalPtr(0)
	b0, b1 := make([]byte, 1000), make([]byte, 1000)
	require.NoError(t, mem.Read(recv, b0))
	require.NoError(t, mem.Read(recv+1000, b1))
	require.NoError(t, mem.Write(recv, b1))
	require.NoError(t, mem.Write(recv+1000, b0))
	err := x.verify("alltoall", x.oneSignal)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 wrong blocks or signals")
	assert.Contains(t, err.Error(), "rank 3's receive block from rank 0")
}

func TestVerifyCatchesExtraSignal(t *testing.T) {
	x := ranAlltoall(t)
	slot, err := x.ranks[1].dc.SignalPool().Slot(2, x.queueID(1))
	require.NoError(t, err)
	require.NoError(t, x.Mem().Store64(slot, 2))
	err = x.verify("alltoall", x.oneSignal)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 1's signal slot (sender 2, queue 1) is 2, want 1")
}

// verifyPayload fails when a rank lacks the payload or its signals: here
// nothing ran, so only rank 0 holds the data.
func TestVerifyPayloadCatchesMissingData(t *testing.T) {
	o := scenario.Options{Ranks: 3, Bytes: 256, Queues: 1, Seed: 1}
	j, buf, err := newPayloadJob(o)
	require.NoError(t, err)
	err = verifyPayload(j, "relay", buf, 0, func(r int) int { return r - 1 }, 1)
	var bad *scenario.MismatchError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "rank 1's buffer")
}

// The send windows' pattern is kept from one run to the next of the same
// shape (Env.PatternWindow) unless a run wrote them: alltoall-early-reuse
// overwrites its send blocks, and the alltoall runs after it still pass
// with the digests they had before it.
func TestSendWindowsKeptAcrossRuns(t *testing.T) {
	o := scenario.Options{Ranks: 4, Bytes: 1<<20 + 8, Queues: 1, Perturb: 1}
	sc, err := scenario.Lookup("alltoall")
	require.NoError(t, err)
	bug, err := scenario.Lookup("alltoall-early-reuse")
	require.NoError(t, err)
	digests := func() []string {
		var ds []string
		for seed := uint64(1); seed <= 3; seed++ {
			o.Seed = seed
			rep := scenario.RunOnce(sc, o)
			require.Equal(t, scenario.StatusOK, rep.Status, rep.Error)
			ds = append(ds, rep.Digest())
		}
		return ds
	}
	first := digests()
	o.Seed = 1
	assert.NotEqual(t, scenario.StatusOK, scenario.RunOnce(bug, o).Status, "the planted bug's overwrite lands")
	assert.Equal(t, first, digests(), "the overwritten send windows were filled again")

	kept := func() bool {
		x, err := newAlltoall(o)
		require.NoError(t, err)
		defer x.Close()
		return x.Mem().Prefilled(x.ranks[3].sendWin.LocalPtr(0))
	}
	kept()
	if hostmem.OffHeap {
		assert.True(t, kept(), "the second run's send window is the first's, filled")
	}
}
