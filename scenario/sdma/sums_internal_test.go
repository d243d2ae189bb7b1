package sdma

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/scenario"
)

// mutation is a write into a window that a correct all-to-all never
// makes: by a lane of rank r serving peer p once p's block has landed
// (lane), or by the host after the run (host).
type mutation struct {
	name string
	lane func(x *alltoall, r, p int, t *kernel.Thread, sdma *cco.Sdma, m cco.Mem)
	host func(t *testing.T, x *alltoall)
}

// runMutated runs one all-to-all seed whose lanes and host also make mu's
// writes, and returns the run (not closed: the caller inspects its
// memory, then closes it) and its check's error.
func runMutated(t *testing.T, o scenario.Options, mu mutation) (*alltoall, error) {
	t.Helper()
	x, err := newAlltoall(o)
	require.NoError(t, err)
	ranks, b := o.Ranks, o.Bytes
	for r := range x.ranks {
		me := &x.ranks[r]
		require.NoError(t, x.LaunchRank(r, 1, ranks, func(t *kernel.Thread, sdma *cco.Sdma) {
			p := (r + 1 + t.ThreadIdx()) % ranks
			m := cco.NewMem(t, me.dc)
			sdma.Put(p, me.recvWin, uint64(r)*b, me.sendWin, uint64(p)*b, b, x.queueID(p), cco.RemoteSignal)
			sdma.Quiet(p)
			sdma.WaitSignal(p, x.queueID(r), 1)
			if mu.lane != nil {
				mu.lane(x, r, p, t, sdma, m)
			}
			x.Done(r, t)
		}))
	}
	require.NoError(t, x.Sim.Run())
	if mu.host != nil {
		mu.host(t, x)
	}
	return x, x.verify("alltoall", x.oneSignal)
}

// The send windows a worker's next seed gets back unfilled (their kept
// mapping still holds the pattern: engine.Memory.Prefill) are only those
// nothing wrote: a lane's store, a COPY's landing or a host write into
// rank 0's send window in one seed leaves the next seed a freshly filled
// window (its check passes), while the other ranks' windows come back
// unfilled.
func TestSendWindowRefilledAfterWrite(t *testing.T) {
	// A window of 1 MiB (the memory keeps its mapping by content) in blocks
	// off the 256 B granules: filled, not referred to (patternFill.Blocks).
	const b = 256<<10 + 64
	tests := []mutation{
		{name: "lane store", lane: func(x *alltoall, r, p int, _ *kernel.Thread, _ *cco.Sdma, m cco.Mem) {
			if r == 0 && p == 1 {
				m.Store64(x.ranks[0].sendWin.LocalPtr(3*b+8), 0xdead)
			}
		}},
		{name: "COPY landing", lane: func(x *alltoall, r, p int, _ *kernel.Thread, sdma *cco.Sdma, _ cco.Mem) {
			if r == 0 && p == 0 {
				// the loopback lane's own queue: rank 0's receive block 0 over its send block 2
				sdma.Put(0, x.ranks[0].sendWin, 2*b, x.ranks[0].recvWin, 0, 4096, x.queueID(0))
				sdma.Quiet(0)
			}
		}},
		{name: "host write", host: func(t *testing.T, x *alltoall) {
			require.NoError(t, x.Mem().Write(x.ranks[0].sendWin.LocalPtr(b-3), []byte{1, 2, 3}))
		}},
	}
	for _, mu := range tests {
		t.Run(mu.name, func(t *testing.T) {
			o := scenario.Options{Ranks: 4, Bytes: b, Queues: 1, Perturb: 1, Scratch: engine.NewScratch()}
			defer o.Scratch.Close()
			o.Seed = 1
			x, err := runMutated(t, o, mutation{})
			require.NoError(t, err, "a clean seed first: the windows go back filled")
			x.Close()
			o.Seed = 2
			x, err = runMutated(t, o, mu)
			require.NoError(t, err, "the write came after the window was sent")
			x.Close()
			o.Seed = 3
			x, err = runMutated(t, o, mutation{})
			t.Cleanup(func() { x.Close() }) // the check's error is the subject here
			require.NoError(t, err, "the next seed's rank 0 sends the pattern, not what was written")
			assert.False(t, x.Mem().Prefilled(x.ranks[0].sendWin.LocalPtr(0)), "rank 0's written window is filled again")
			for r := 1; r < o.Ranks; r++ {
				assert.True(t, x.Mem().Prefilled(x.ranks[r].sendWin.LocalPtr(0)), "rank %d's window comes back unfilled", r)
			}
		})
	}
}

// A receive block written after its copy landed (a lane's store, a second
// COPY, a host write) has no landing sum, and the check reads it: the
// run fails with the report the byte compare gives (the first wrong
// byte), while the blocks nothing else wrote are checked by their sums.
func TestReceiveSumSeesLaterWrites(t *testing.T) {
	const b = 64 << 10
	recvBlock := func(x *alltoall, r, p int) uint64 { return x.ranks[r].recvWin.LocalPtr(uint64(p) * b) }
	tests := []mutation{
		{name: "none"},
		{name: "lane store", lane: func(x *alltoall, r, p int, _ *kernel.Thread, _ *cco.Sdma, m cco.Mem) {
			if r == 0 && p == 1 {
				m.Store64(recvBlock(x, 0, 1)+b/2, 0xdead)
			}
		}},
		{name: "COPY landing", lane: func(x *alltoall, r, p int, _ *kernel.Thread, sdma *cco.Sdma, _ cco.Mem) {
			if r == 1 && p == 0 {
				// a second put on the queue that sent rank 0 its block from rank 1
				sdma.Put(0, x.ranks[1].recvWin, b+4096, x.ranks[1].sendWin, 0, 4096, x.queueID(0))
				sdma.Quiet(0)
			}
		}},
		{name: "host write", host: func(t *testing.T, x *alltoall) {
			require.NoError(t, x.Mem().Write(recvBlock(x, 0, 1)+b-1, []byte{0}))
		}},
	}
	for _, mu := range tests {
		t.Run(mu.name, func(t *testing.T) {
			o := scenario.Options{Ranks: 4, Bytes: b, Queues: 1, Perturb: 1, Seed: 7}
			x, err := runMutated(t, o, mu)
			t.Cleanup(func() { x.Close() }) // the check's error is the subject here
			_, ok := x.Mem().LandedSum(recvBlock(x, 0, 2), b)
			assert.True(t, ok, "a block only its copy wrote is checked by its sum")
			_, ok = x.Mem().LandedSum(recvBlock(x, 0, 1), b)
			if mu.name == "none" {
				assert.True(t, ok)
				require.NoError(t, err)
				return
			}
			assert.False(t, ok, "the written block has no sum")
			// The report the byte compare gives for the bytes there.
			got, gerr := x.Mem().Bytes("read", recvBlock(x, 0, 1), b)
			require.NoError(t, gerr)
			var c scenario.Checker
			c.Block(receiveBlock(0, 1), got, scenario.PatternOf(b, 0, 1, 0))
			require.Error(t, err)
			assert.Equal(t, c.Err("alltoall", o.Seed).Error(), err.Error())
		})
	}
}

// Blocks from sumMin up sent from pattern windows land by reference
// (engine.Memory.Move, lsa.Space.LandRef): after the run and its check
// every granule of every send and receive window is still unmoved, and reading
// one copies in the bytes a copy would have left. A send window written
// before the run (the same bytes again: the check still passes) is
// copied from instead.
func TestAlltoallLandsByReference(t *testing.T) {
	const b = 64 << 10
	granules := 4 * b / lsa.StaleGranule
	tests := []struct {
		name   string
		before func(t *testing.T, x *alltoall)
		moved  int // granules of each receive window copied, not referred to
	}{
		{name: "pattern windows"},
		{name: "a send window written first", before: func(t *testing.T, x *alltoall) {
			at := x.ranks[3].sendWin.LocalPtr(2*b + 64)
			got, err := x.Mem().Bytes("read", at, 8)
			require.NoError(t, err)
			require.NoError(t, x.Mem().Write(at, bytes.Clone(got)))
		}, moved: b / lsa.StaleGranule},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := scenario.Options{Ranks: 4, Bytes: b, Queues: 1, Perturb: 1, Seed: 3}
			x, err := newAlltoall(o)
			require.NoError(t, err)
			t.Cleanup(func() { x.Close() })
			if tc.before != nil {
				tc.before(t, x)
			}
			require.NoError(t, x.spawn())
			require.NoError(t, x.Sim.Run())
			require.NoError(t, x.verify("alltoall", x.oneSignal))
			for r := range x.ranks {
				if r != 3 || tc.before == nil {
					// Nor were the send windows written or read: they
					// read as the pattern cache's blocks (lsa.Space.Refer).
					assert.Equal(t, granules, x.Mem().Stale(x.ranks[r].sendWin.LocalPtr(0)), "rank %d's send window unmoved", r)
				}
				at := x.ranks[r].recvWin.LocalPtr(0)
				assert.Equal(t, granules-tc.moved, x.Mem().Stale(at), "rank %d's receive window unmoved", r)
				got, err := x.Mem().Bytes("read", at, 4*b)
				require.NoError(t, err)
				for p := range 4 {
					require.Equal(t, scenario.PatternOf(b, 0, p, r), got[p*b:(p+1)*b], "rank %d's block from %d", r, p)
				}
				assert.Zero(t, x.Mem().Stale(at), "read: copied in")
			}
		})
	}
}
