package rocm_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// job is one all-to-all: every rank sends to every rank (itself
// included) on every queue, iters times, with a remote signal per put and
// a quiet every quietEvery iterations and at the end. Lane l of the
// single wave owns (peer l / queues, queue l % queues), so each queue has
// exactly one issuer and its ring bytes do not depend on how the
// simulator interleaves the ranks or on how fast the engine drains.
type job struct {
	ranks, queues int
	iters         int
	bytes         uint64
	quietEvery    int
	ringSize      int
}

func (j job) winBytes() uint64 {
	return uint64(j.ranks*j.queues) * j.bytes
}

// run sets up the host side on dev and launches one kernel per rank. It
// returns the kernels; the caller runs the simulator.
func (j job) run(t *testing.T, s *sim.Sim, dev cco.Device) []*kernel.Kernel {
	t.Helper()
	h := cco.NewHost(dev, cco.Env{"MORI_ENABLE_SDMA": "1"})
	comms, err := cco.CommCreateAll(h, j.ranks, 0)
	require.NoError(t, err)
	var send, recv []cco.Window
	for _, c := range comms {
		sb, err := cco.MemAlloc(c, j.winBytes())
		require.NoError(t, err)
		rb, err := cco.MemAlloc(c, j.winBytes())
		require.NoError(t, err)
		sw, err := cco.WindowRegister(c, sb, j.winBytes())
		require.NoError(t, err)
		rw, err := cco.WindowRegister(c, rb, j.winBytes())
		require.NoError(t, err)
		send, recv = append(send, sw), append(recv, rw)
	}
	var ks []*kernel.Kernel
	for rank, c := range comms {
		reqs := cco.DevCommRequirementsInitializer()
		reqs.SdmaQueueCount = j.queues
		dc, err := cco.DevCommCreate(c, &reqs)
		require.NoError(t, err)
		me := rank
		k, err := kernel.Launch(s, kernel.Config{Name: fmt.Sprintf("rank%d", rank), GPU: rank, Grid: 1, Block: j.ranks * j.queues},
			func(th *kernel.Thread) {
				sdma := cco.NewSdma(th, dc)
				l := th.ThreadIdx()
				peer, q := l/j.queues, l%j.queues
				off := uint64(me*j.queues+q) * j.bytes
				for i := 1; i <= j.iters; i++ {
					sdma.Put(peer, recv[me], off, send[me], uint64(l)*j.bytes, j.bytes, q, cco.RemoteSignal)
					if i%j.quietEvery == 0 || i == j.iters {
						sdma.Quiet(peer)
					}
				}
			})
		require.NoError(t, err)
		ks = append(ks, k)
	}
	return ks
}

// emulated runs the job on the emulator and returns its queues' ring bytes
// and the doorbell values its engine saw, per queue name.
func (j job) emulated(t *testing.T, seed uint64) (rings map[string][]byte, bells map[string][]uint64, ptrs map[string][2]uint64) {
	s := sim.New(sim.Config{Seed: seed, Record: true})
	cfg := cco.MI355X(j.ranks)
	cfg.Ring = ring.Options{Size: j.ringSize}
	node, err := engine.NewNode(s, cfg)
	require.NoError(t, err)
	ks := j.run(t, s, cco.Emulated(node))
	require.NoError(t, s.Run())
	for _, k := range ks {
		require.NoError(t, k.Err())
	}
	rings, bells, ptrs = map[string][]byte{}, map[string][]uint64{}, map[string][2]uint64{}
	for _, q := range node.Queues() {
		rings[q.ID().String()] = append([]byte(nil), q.Ring().Bytes()...)
		ptrs[q.ID().String()] = [2]uint64{q.Ring().CachedWptr(), q.Ring().CommittedWptr()}
	}
	for _, r := range s.Records() {
		if s.KindName(r.Kind) == "sdma.doorbell" {
			name := s.SubjectName(r.Subject)
			bells[name] = append(bells[name], r.A)
		}
	}
	return rings, bells, ptrs
}

// standIn runs the job on the backend over the in-memory stand-in. step 0
// drains each queue at its doorbell; otherwise an engine actor consumes
// step bytes per queue every microsecond, so rings fill and issuers poll
// the read pointer.
func (j job) standIn(t *testing.T, seed uint64, step uint64) (rings map[string][]byte, bells map[string][]uint64, ptrs map[string][2]uint64, spaceWaits int) {
	s := sim.New(sim.Config{Seed: seed})
	si := rocm.NewStandIn(j.ranks)
	si.AutoDrain = step == 0
	dev, err := rocm.New(s, si, rocm.Config{Ring: ring.Options{Size: j.ringSize}})
	require.NoError(t, err)
	ks := j.run(t, s, dev)
	if step != 0 {
		s.Spawn("stand-in engine", func(a *sim.Actor) {
			for {
				done := true
				for _, k := range ks {
					done = done && k.Done()
				}
				pending := uint64(0)
				for _, q := range si.Queues() {
					q.Advance(step)
					pending += q.Pending()
				}
				if done && pending == 0 {
					return
				}
				a.Sleep(sim.Microsecond)
			}
		})
	}
	require.NoError(t, s.Run())
	for _, k := range ks {
		require.NoError(t, k.Err())
	}
	require.NoError(t, dev.Close())
	rings, bells, ptrs = map[string][]byte{}, map[string][]uint64{}, map[string][2]uint64{}
	for _, q := range dev.Queues() {
		name := q.ID().String()
		rings[name] = append([]byte(nil), q.Resource().RingMemory()...)
		ptrs[name] = [2]uint64{q.Ring().CachedWptr(), q.Ring().CommittedWptr()}
		spaceWaits += q.SpaceWaits()
	}
	for _, q := range si.Queues() {
		require.NoError(t, q.Err(), "doorbell protocol on gpu%d→gpu%d q%d", q.GPU, q.Peer, q.Q)
		name := rocm.QueueID{GPU: q.GPU, Peer: q.Peer, Q: q.Q}.String()
		bells[name] = q.Doorbells()
	}
	return rings, bells, ptrs, spaceWaits
}

// The acceptance test of the hardware backend: the same cco calls put the
// same bytes in every ring and ring the same doorbell values, in the same
// order, on the emulator and on the backend's queue path.
func TestRingBytesAndDoorbellsMatchEmulator(t *testing.T) {
	cases := []struct {
		name string
		job  job
		step uint64 // stand-in engine: bytes per queue per µs; 0 = drain at the doorbell
		full bool   // issuers must find rings full
	}{
		{"4 ranks x 2 queues, 4 KiB rings wrap 7 times, drained at the doorbell",
			job{ranks: 4, queues: 2, iters: 450, bytes: 256, quietEvery: 50, ringSize: 4 << 10}, 0, false},
		{"4 ranks x 2 queues, 4 KiB rings, slow engine: full rings, issuers poll rptr",
			job{ranks: 4, queues: 2, iters: 450, bytes: 256, quietEvery: 150, ringSize: 4 << 10}, 64, true},
		{"2 ranks x 3 queues, 256 KiB rings wrap once",
			job{ranks: 2, queues: 3, iters: 4200, bytes: 64, quietEvery: 1000, ringSize: 0}, 0, false},
		{"3 ranks x 1 queue, quiet after every put",
			job{ranks: 3, queues: 1, iters: 100, bytes: 4096, quietEvery: 1, ringSize: 4 << 10}, 32, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seed := uint64(100 + i)
			eRings, eBells, ePtrs := tc.job.emulated(t, seed)
			bRings, bBells, bPtrs, waits := tc.job.standIn(t, seed, tc.step)
			if tc.full {
				require.Positive(t, waits, "the slow stand-in engine must make issuers wait for ring space")
			}

			want := tc.job.ranks * tc.job.ranks * tc.job.queues
			require.Len(t, eRings, want, "emulator queues")
			require.Len(t, bRings, want, "backend queues")
			size := uint64(tc.job.ringSize)
			if size == 0 {
				size = ring.DefaultSize
			}
			for name, e := range eRings {
				b, ok := bRings[name]
				require.True(t, ok, "backend has no %s", name)
				require.Equal(t, ePtrs[name], bPtrs[name], "%s: cachedWptr, committedWptr", name)
				require.Greater(t, ePtrs[name][0], size, "%s: the ring must wrap", name)
				require.True(t, string(e) == string(b), "%s: ring bytes differ at byte %d", name, firstDiff(e, b))
				require.NotEmpty(t, eBells[name], name)
				require.Equal(t, eBells[name], bBells[name], "%s: doorbell values", name)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
