package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// One lap: 8192 single-unit COPY packets, each its own reservation and
// doorbell, issued as fast as the issuer can. With the seed's capacity
// (one unit to spare) the last reservation must wait for the engine; with
// MORI HEAD's capacity (a whole ring) it fits.
func TestExactlyOneLapOf8192SingleUnitPackets(t *testing.T) {
	for _, tc := range []struct {
		rule     ring.CapacityRule
		fullWait float64
	}{{ring.CapacitySeed, 1}, {ring.CapacityMORI, 0}} {
		t.Run(fmt.Sprint(tc.rule), func(t *testing.T) {
			r := newRig(t, 1, Config{GPUs: 2, Ring: ring.Options{Capacity: tc.rule}})
			const n, sz = 8192, 64
			src, dst := r.alloc(0, n*sz), r.alloc(1, n*sz)
			require.NoError(t, r.n.Memory().Write(src, pattern(n*sz, 5)))
			q := r.queue(0, 1, 0)
			var lastReserved sim.Time
			r.s.Spawn("issuer", func(a *sim.Actor) {
				for i := range uint64(n) {
					require.NoError(t, post(a, q, ring.Copy(dst+i*sz, src+i*sz, sz)))
				}
				lastReserved = a.Now()
				q.AwaitDrained(a, q.QuietTarget())
			})
			require.NoError(t, r.s.Run())
			assert.Equal(t, uint64(ring.DefaultSize), q.Ring().Rptr(), "exactly one lap of the 256 KiB ring")
			assert.Equal(t, uint64(ring.DefaultSize), q.Ring().CommittedWptr())
			got := make([]byte, n*sz)
			require.NoError(t, r.n.Memory().Read(dst, got))
			assert.Equal(t, pattern(n*sz, 5), got)
			assert.Equal(t, tc.fullWait, q.c.ringFull.value())
			assert.Equal(t, float64(n), q.c.packets[ring.KindCopy].value())
			assert.Equal(t, float64(n), q.c.packets[ring.KindNop].value(), "one padding dword per COPY unit")
			assert.Equal(t, float64(n), q.c.doorbells.value())
			if tc.fullWait > 0 {
				// The 8192nd reservation proceeded once the engine retired
				// the first packet: a doorbell latency after the first
				// doorbell at the earliest (the packet's gap comes after).
				first := r.n.Model().Cost(model.Doorbell)
				assert.GreaterOrEqual(t, lastReserved, first)
			} else {
				assert.Zero(t, lastReserved, "nothing waited")
			}
		})
	}
}

// Mixed sizes over seven laps: groups of COPYs followed by a signal ATOMIC
// (the SameQueue layout), broadcasts (three units), always-true polls.
func TestMixedSizesOverSevenLaps(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := newRig(t, seed, Config{GPUs: 3})
			const blk = 128
			src, dst, dst2, sig := r.alloc(0, 64*blk), r.alloc(1, 1<<20), r.alloc(2, 1<<20), r.alloc(1, 64)
			require.NoError(t, r.n.Memory().Write(src, pattern(64*blk, 1)))
			q := r.queue(0, 1, 0)
			rng := rand.New(rand.NewPCG(seed, 99))
			groups, laps := uint64(0), 7*uint64(ring.DefaultSize)
			type placed struct{ off, n uint64 }
			var copies []placed
			var total uint64
			r.s.Spawn("issuer", func(a *sim.Actor) {
				cursor := uint64(0)
				for total < laps {
					switch rng.IntN(4) {
					case 0, 1: // k copies + one signal: k+1 units, k in 1..64
						k := uint64(1 + rng.IntN(64))
						base, err := q.Reserve(a, (k+1)*ring.Unit)
						require.NoError(t, err)
						for i := range k {
							off := (cursor % 4096) * blk
							p := ring.Copy(dst+off, src+(i%64)*blk, blk)
							require.NoError(t, q.WriteUnit(base+i*ring.Unit, &p))
							copies = append(copies, placed{off, i % 64})
							cursor++
						}
						p := ring.AtomicAdd64(sig, 1)
						require.NoError(t, q.WriteUnit(base+k*ring.Unit, &p))
						require.NoError(t, q.Submit(a, base, base+(k+1)*ring.Unit))
						groups++
						total += (k + 1) * ring.Unit
					case 2: // broadcast: 3 units, congruent destinations
						base, err := q.Reserve(a, 3*ring.Unit)
						require.NoError(t, err)
						p := ring.Broadcast(dst2, dst2+4096, src, blk)
						_, err = q.WriteBroadcast(base, &p)
						require.NoError(t, err)
						require.NoError(t, q.Submit(a, base, base+3*ring.Unit))
						total += 3 * ring.Unit
					case 3: // an engine wait that already holds
						require.NoError(t, post(a, q, ring.Poll(sig, 0, 0, ring.CmpAlways, 4, ring.RetryForever)))
						total += ring.Unit
					}
				}
				q.AwaitDrained(a, q.QuietTarget())
			})
			require.NoError(t, r.s.Run())
			assert.GreaterOrEqual(t, q.Ring().Rptr(), laps, "seven laps or more")
			assert.Equal(t, total, q.Ring().Rptr())
			v, _ := r.n.Memory().Load64(sig)
			assert.Equal(t, groups, v, "one signal per group")
			// The last writer of each destination block decides its bytes.
			last := map[uint64]uint64{}
			for _, c := range copies {
				last[c.off] = c.n
			}
			want := pattern(64*blk, 1)
			for off, n := range last {
				got := make([]byte, blk)
				require.NoError(t, r.n.Memory().Read(dst+off, got))
				require.Equal(t, want[n*blk:(n+1)*blk], got, "block at %#x", off)
			}
		})
	}
}

// Several issuers on one queue reserve, dawdle for seeded times, then
// ring: doorbells still go out strictly in reservation order.
func TestCommitChainRingsInReservationOrder(t *testing.T) {
	reordered := 0
	for seed := range uint64(20) {
		s := sim.New(sim.Config{Seed: seed, Record: true})
		n, err := NewNode(s, Config{GPUs: 2})
		require.NoError(t, err)
		src, _ := n.Memory().Alloc(0, 4096, "src")
		dst, _ := n.Memory().Alloc(1, 4096, "dst")
		q, _ := n.Queue(0, 1, 0)
		var ends []uint64
		var submitOrder []uint64
		for w := range 4 {
			s.Spawn(fmt.Sprintf("warp%d", w), func(a *sim.Actor) {
				rng := s.Rand(uint64(w))
				for range 10 {
					k := uint64(1 + rng.IntN(3))
					base, err := q.Reserve(a, k*ring.Unit)
					require.NoError(t, err)
					ends = append(ends, base+k*ring.Unit)
					a.Sleep(sim.Time(rng.IntN(5)) * 100 * sim.Nanosecond)
					for i := range k {
						p := ring.Copy(dst+64*uint64(w), src, 64)
						require.NoError(t, q.WriteUnit(base+i*ring.Unit, &p))
					}
					submitOrder = append(submitOrder, base)
					require.NoError(t, q.Submit(a, base, base+k*ring.Unit))
				}
			})
		}
		require.NoError(t, s.Run())
		var bells []uint64
		for _, rec := range s.Records() {
			if s.KindName(rec.Kind) == "sdma.doorbell" {
				bells = append(bells, rec.A)
			}
		}
		slices.Sort(ends)
		require.Equal(t, ends, bells, "seed %d: one doorbell per reservation, in reservation order", seed)
		if !slices.IsSorted(submitOrder) {
			reordered++
		}
	}
	assert.Positive(t, reordered, "some seeds must have issuers ready out of order, or the test proves nothing")
}

// An Aggregate batch that fills the ring without a commit: the put that
// needs more space waits for an engine that has nothing rung. The hang
// report says so.
func TestFullRingOfUnrungReservationsHangs(t *testing.T) {
	r := newRig(t, 4, Config{GPUs: 2})
	src, dst := r.alloc(0, 4096), r.alloc(1, 4096)
	q := r.queue(0, 1, 3)
	r.s.Spawn("rank0 lane0", func(a *sim.Actor) {
		for range 8192 {
			base, err := q.Reserve(a, ring.Unit)
			require.NoError(t, err)
			p := ring.Copy(dst, src, 64)
			require.NoError(t, q.WriteUnit(base, &p))
		}
		q.Commit() // never reached
	})
	err := r.s.Run()
	var h *sim.HangError
	require.ErrorAs(t, err, &h)
	assert.Equal(t, sim.HangDeadlock, h.Kind)
	golden.Check(t, "hang-ring-full.txt", h.Text())
	require.Len(t, h.Waiters, 2)
	rep, ok := h.Waiters[1].Detail.(QueueReport)
	require.True(t, ok)
	assert.Equal(t, uint64(0x40000), rep.CachedWptr)
	assert.Zero(t, rep.CommittedWptr)
	assert.Equal(t, 1, rep.SpaceWaiters)
	js, err := h.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(js), `"cached_wptr": 262144`)
	w, ok := h.Waiters[0].Detail.(IssuerWait)
	require.True(t, ok, "the blocked actor's wait has structured detail")
	assert.Equal(t, IssuerWait{Queue: "sdma gpu0→gpu1 q3", Op: "reserve", Base: 0x3ffe0, End: 0x40000, Need: 0x20,
		CachedWptr: 0x40000}, w)
}

// commit<> rings everything reserved by anyone: an issuer whose slot was
// inside the rung range can never ring its own.
func TestCommitPastAnotherIssuersSlotHangs(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	src, dst := r.alloc(0, 4096), r.alloc(1, 4096)
	q := r.queue(0, 1, 0)
	r.s.Spawn("slow", func(a *sim.Actor) {
		base, err := q.Reserve(a, ring.Unit)
		require.NoError(t, err)
		a.Sleep(sim.Microsecond)
		p := ring.Copy(dst, src, 64)
		require.NoError(t, q.WriteUnit(base, &p))
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
	})
	r.s.Spawn("committer", func(a *sim.Actor) {
		a.Yield()
		base, err := q.Reserve(a, ring.Unit)
		require.NoError(t, err)
		p := ring.Copy(dst+64, src, 64)
		require.NoError(t, q.WriteUnit(base, &p))
		assert.True(t, q.Commit())
	})
	var h *sim.HangError
	require.ErrorAs(t, r.s.Run(), &h)
	golden.Check(t, "hang-commit-past-slot.txt", h.Text())
	require.NotEmpty(t, h.Causes)
	assert.Equal(t, issuer.CauseChainJumped, h.Causes[0].Kind)
}

func TestDoorbellValidation(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1, KeepGoingOnFault: true})
	buf := r.alloc(0, 4096)
	q := r.queue(0, 0, 0)
	r.s.Spawn("host", func(a *sim.Actor) {
		base, err := q.Reserve(a, 2*ring.Unit)
		require.NoError(t, err)
		p := ring.Fence(buf, 7)
		require.NoError(t, q.WriteUnit(base, &p))
		p = ring.Fence(buf+4, 8)
		require.NoError(t, q.WriteUnit(base+ring.Unit, &p))
		q.RingDoorbell(6)              // not a multiple of 4
		q.RingDoorbell(2 * ring.Unit)  // fine: rings both
		q.RingDoorbell(ring.Unit)      // moves back
		q.RingDoorbell(1 << 20)        // more than a ring ahead
		q.AwaitDrained(a, 2*ring.Unit) // the good doorbell still ran
	})
	require.NoError(t, r.s.Run())
	var why []string
	for _, f := range r.n.Faults() {
		require.Equal(t, FaultDoorbellInvalid, f.Kind)
		why = append(why, f.Detail)
	}
	require.Len(t, why, 3)
	assert.Contains(t, why[0], "not a multiple of 4")
	assert.Contains(t, why[1], "below the previous one")
	assert.Contains(t, why[2], "more than one ring")
	v, _ := r.n.Memory().Load32(buf + 4)
	assert.Equal(t, uint32(8), v)
	assert.Equal(t, float64(4), q.c.doorbells.value())
}

func TestRptrWriteBackPolicies(t *testing.T) {
	for _, tc := range []struct {
		pol   RptrPolicy
		burst int
		want  uint64 // rptr seen while the queue is parked behind 3 FENCEs
	}{
		{RptrPerPacket, 0, 3 * ring.Unit},
		{RptrOnDrain, 0, 0},
		{RptrPerBurst, 2, 2*ring.Unit - 16}, // just past the second 16 B FENCE
	} {
		t.Run(fmt.Sprint(tc.pol), func(t *testing.T) {
			r := newRig(t, 1, Config{GPUs: 1, RptrWriteBack: tc.pol, RptrBurst: tc.burst})
			flag, buf := r.alloc(0, 64), r.alloc(0, 4096)
			q := r.queue(0, 0, 0)
			var rptrWhileParked uint64
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Fence(buf, 1), ring.Fence(buf+4, 1), ring.Fence(buf+8, 1),
					ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 4, ring.RetryForever)))
				a.Sleep(50 * sim.Microsecond)
				rptrWhileParked = q.Ring().Rptr()
				require.NoError(t, r.n.Memory().Store32(flag, 1))
				q.AwaitDrained(a, q.QuietTarget())
			})
			require.NoError(t, r.s.Run())
			assert.Equal(t, tc.want, rptrWhileParked)
			assert.Equal(t, uint64(4*ring.Unit), q.Ring().Rptr(), "everything written back once drained")
		})
	}
	_, err := NewNode(sim.New(sim.Config{}), Config{RptrWriteBack: 9})
	assert.ErrorContains(t, err, "unknown policy")
	_, err = NewNode(sim.New(sim.Config{}), Config{RptrBurst: -1})
	assert.ErrorContains(t, err, "RptrBurst = -1")
}
