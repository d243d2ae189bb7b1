package rocm_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// rig is a backend device over a stand-in with small rings.
func rig(t *testing.T, gpus int, cfg rocm.Config, simCfg sim.Config) (*sim.Sim, *rocm.StandIn, *rocm.Device) {
	t.Helper()
	s := sim.New(simCfg)
	si := rocm.NewStandIn(gpus)
	if cfg.Ring.Size == 0 {
		cfg.Ring.Size = 1 << 10
	}
	d, err := rocm.New(s, si, cfg)
	require.NoError(t, err)
	return s, si, d
}

func TestNewRejectsBadConfig(t *testing.T) {
	s := sim.New(sim.Config{})
	si := rocm.NewStandIn(2)
	cases := []struct {
		name string
		s    *sim.Sim
		drv  rocm.Driver
		cfg  rocm.Config
		want string
	}{
		{"nil sim", nil, si, rocm.Config{}, "nil simulator"},
		{"nil driver", s, nil, rocm.Config{}, "nil driver"},
		{"more GPUs than the driver", s, si, rocm.Config{GPUs: 3}, "has 2 GPUs"},
		{"no GPU node", s, rocm.NewStandIn(0), rocm.Config{}, "found no GPU node"},
		{"queues per peer", s, si, rocm.Config{QueuesPerPeer: 65}, "QueuesPerPeer = 65"},
		{"base not 4 GiB aligned", s, si, rocm.Config{Base: 1 << 20}, "not a multiple of 4 GiB"},
		{"ring size", s, si, rocm.Config{Ring: ring.Options{Size: 1000}}, "not a power of two"},
		{"pace", s, si, rocm.Config{Pace: 9}, "Pace = 9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rocm.New(tc.s, tc.drv, tc.cfg)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestQueueRejectsBadIDs(t *testing.T) {
	_, _, d := rig(t, 2, rocm.Config{QueuesPerPeer: 2}, sim.Config{})
	for _, id := range [][3]int{{-1, 0, 0}, {2, 0, 0}, {0, 2, 0}, {0, 1, 2}, {0, 1, -1}} {
		_, err := d.Queue(id[0], id[1], id[2])
		require.Error(t, err, "%v", id)
	}
	require.Nil(t, d.LookupQueue(0, 1, 0), "nothing created yet")
	q, err := d.Queue(0, 1, 1)
	require.NoError(t, err)
	require.Equal(t, q, d.LookupQueue(0, 1, 1))
	require.NoError(t, d.Close())
	_, err = d.Queue(1, 0, 0)
	require.ErrorContains(t, err, "closed")
}

// A reservation that finds the ring full polls the read pointer the engine
// writes back and goes on once the engine has consumed enough.
func TestAwaitSpacePollsTheReadPointer(t *testing.T) {
	s, si, d := rig(t, 2, rocm.Config{}, sim.Config{Seed: 1})
	q, err := d.HWQueue(0, 1, 0)
	require.NoError(t, err)
	var resumed sim.Time
	s.Spawn("issuer", func(a *sim.Actor) {
		p := ring.Copy(0x1000, 0x2000, 64)
		for i := 0; i < 32; i++ { // 1 KiB ring, capacity 31 units: the 32nd waits
			base, err := q.Claim(ring.Unit)
			require.NoError(t, err)
			q.AwaitSpace(a, base, ring.Unit)
			require.NoError(t, q.WriteUnit(base, &p))
			require.NoError(t, q.Submit(a, base, base+ring.Unit))
		}
		resumed = a.Now()
	})
	s.Spawn("engine", func(a *sim.Actor) {
		a.Sleep(10 * sim.Microsecond)
		si.Queues()[0].Advance(ring.Unit)
	})
	require.NoError(t, s.Run())
	require.GreaterOrEqual(t, resumed, 10*sim.Microsecond)
	require.Equal(t, 1, q.SpaceWaits())
	require.Equal(t, uint64(ring.Unit), q.Ring().Rptr(), "the read pointer the issuer saw")
	bells := si.Queues()[0].Doorbells()
	require.Len(t, bells, 32)
	require.Equal(t, uint64(32*ring.Unit), bells[31])
	require.NoError(t, si.Queues()[0].Err())
}

// Out-of-order submitters wait on the commit chain; Commit rings
// everything reserved, once.
func TestCommitChainAndCommit(t *testing.T) {
	s, si, d := rig(t, 1, rocm.Config{}, sim.Config{Seed: 2})
	q, err := d.HWQueue(0, 0, 0)
	require.NoError(t, err)
	first, err := q.Claim(ring.Unit)
	require.NoError(t, err)
	second, err := q.Claim(2 * ring.Unit)
	require.NoError(t, err)
	var order []string
	s.Spawn("second", func(a *sim.Actor) {
		require.NoError(t, q.Submit(a, second, second+2*ring.Unit))
		order = append(order, "second")
	})
	s.Spawn("first", func(a *sim.Actor) {
		a.Sleep(sim.Microsecond)
		require.NoError(t, q.Submit(a, first, first+ring.Unit))
		order = append(order, "first")
		// Let "second" ring its slot first: a Commit now would ring
		// [32, 128) for it, and it would wait on the chain forever (the
		// hazard of ccoSdmaRingQueueDbr, docs/sdma-hardware.md §3.4).
		a.Sleep(sim.Microsecond)
		_, err := q.Claim(ring.Unit)
		require.NoError(t, err)
		require.True(t, q.Commit(), "one unit reserved and not rung")
		require.False(t, q.Commit(), "nothing left")
	})
	require.NoError(t, s.Run())
	require.Equal(t, []string{"first", "second"}, order)
	require.Equal(t, []uint64{32, 96, 128}, si.Queues()[0].Doorbells())
	require.Equal(t, uint64(128), q.QuietTarget())
	require.NoError(t, si.Queues()[0].Err())
	err = q.Submit(nil, 0, 4096)
	require.ErrorContains(t, err, "not a reserved range")
}

// An engine that writes back a read pointer beyond the doorbell stops the
// run with an error naming the queue and the read pointer.
func TestBadReadPointerFailsTheRun(t *testing.T) {
	s, si, d := rig(t, 2, rocm.Config{}, sim.Config{Seed: 3})
	q, err := d.HWQueue(1, 0, 0)
	require.NoError(t, err)
	s.Spawn("issuer", func(a *sim.Actor) {
		base, _ := q.Claim(ring.Unit)
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
		*si.Queues()[0].Rptr() = 0x1000 // a broken engine
		q.AwaitDrained(a, base+ring.Unit)
	})
	err = s.Run()
	require.ErrorContains(t, err, "sdma gpu1→gpu0 q0: engine read pointer")
	require.ErrorContains(t, err, "beyond the doorbell")
}

// Quiet on a queue the engine never drains is reported by the watchdog,
// naming the queue and the read pointer it waits for.
func TestQuietOnAStuckEngineIsAHang(t *testing.T) {
	s, _, d := rig(t, 2, rocm.Config{}, sim.Config{Seed: 4, Watchdog: 50 * sim.Microsecond})
	q, err := d.HWQueue(0, 1, 0)
	require.NoError(t, err)
	s.Spawn("quiet", func(a *sim.Actor) {
		base, _ := q.Claim(ring.Unit)
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
		q.AwaitDrained(a, q.QuietTarget())
	})
	err = s.Run()
	var h *sim.HangError
	require.True(t, errors.As(err, &h), "%v", err)
	require.Contains(t, h.Text(), "quiet on sdma gpu0→gpu1 q0: rptr ≥ 0x20, rptr = 0x0")
}

// Under PaceWallClock a waiter's virtual time follows the real time the
// engine, outside the simulator, takes.
func TestWallClockPace(t *testing.T) {
	// The wait's virtual time follows the real time it took (each poll
	// advances by the real time since the previous one), within a
	// scheduling slack. On a loaded machine a goroutine can be run late by
	// tens of milliseconds between its last poll and its return, which no
	// poll sees: such an attempt measures the machine, not the pacing, so
	// the property must hold on one of a few attempts.
	const attempts = 10
	var done sim.Time
	var realWait time.Duration
	for i := range attempts {
		done, realWait = wallClockWait(t)
		t.Logf("attempt %d: %v virtual for a %v real wait", i+1, done, realWait)
		if done+sim.Millisecond >= sim.Time(realWait.Nanoseconds())*sim.Nanosecond/2 {
			return
		}
	}
	t.Fatalf("virtual time did not keep up with the wall clock on %d attempts: last %v virtual for a %v real wait", attempts, done, realWait)
}

// wallClockWait is one quiet under PaceWallClock whose engine, outside the
// simulator, takes 3 ms of real time: the wait's virtual and real time.
func wallClockWait(t *testing.T) (sim.Time, time.Duration) {
	// Virtual time follows the wall clock here, so a loaded machine that
	// runs the engine goroutine late moves it on with no progress: the
	// watchdog must allow for that (the default's 100 ms tripped under CI).
	s, si, d := rig(t, 1, rocm.Config{Pace: rocm.PaceWallClock}, sim.Config{Seed: 5, Watchdog: 60 * sim.Second})
	q, err := d.HWQueue(0, 0, 0)
	require.NoError(t, err)
	var done sim.Time
	var realWait time.Duration
	engineDone := make(chan struct{})
	started := make(chan time.Time, 1)
	go func() { // the engine: 3 ms of real time from the quiet's start, then rptr written back
		defer close(engineDone)
		time.Sleep(time.Until((<-started).Add(3 * time.Millisecond)))
		si.Queues()[0].Advance(0)
	}()
	s.Spawn("quiet", func(a *sim.Actor) {
		base, _ := q.Claim(ring.Unit)
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
		// The engine's 3 ms count from here, just before the wait, so a
		// machine that runs this goroutine late does not eat into them.
		r0, v0 := time.Now(), a.Now()
		started <- r0
		q.AwaitDrained(a, q.QuietTarget())
		done, realWait = a.Now()-v0, time.Since(r0)
	})
	require.NoError(t, s.Run())
	<-engineDone
	return done, realWait
}

// Through cco's seam a hardware queue names its GPU, peer and queue id as
// an emulated one does (cco's diagnosis reads them; a queue's GPU used to
// be −1 on hardware).
func TestQueueIDThroughTheSeam(t *testing.T) {
	_, _, hw := rig(t, 3, rocm.Config{}, sim.Config{})
	node, err := engine.NewNode(sim.New(sim.Config{}), engine.Config{GPUs: 3})
	require.NoError(t, err)
	for _, dev := range []cco.Device{hw, cco.Emulated(node)} {
		q, err := dev.Queue(2, 1, 3)
		require.NoError(t, err)
		require.Equal(t, engine.QueueID{GPU: 2, Peer: 1, Q: 3}, q.ID())
		require.Equal(t, "sdma gpu2→gpu1 q3", q.ID().String())
	}
}

// A hang on hardware names the queue its issuers wait on, with the
// pointers the issuer sees and the issuer side's cause: here reservations
// that were never rung fill the ring.
func TestHangReportNamesTheQueue(t *testing.T) {
	s, _, d := rig(t, 2, rocm.Config{}, sim.Config{Seed: 6, Watchdog: 50 * sim.Microsecond})
	q, err := d.HWQueue(0, 1, 0)
	require.NoError(t, err)
	s.Spawn("batch", func(a *sim.Actor) {
		for range 32 { // 1 KiB ring, capacity 31 units: the 32nd waits forever
			_, err := q.Reserve(a, ring.Unit)
			require.NoError(t, err)
		}
	})
	var h *sim.HangError
	require.ErrorAs(t, s.Run(), &h)
	var names []string
	for _, w := range h.Waiters {
		names = append(names, w.Name)
	}
	require.Contains(t, names, "sdma gpu0→gpu1 q0")
	require.NotEmpty(t, h.Causes)
	require.Equal(t, issuer.CauseRingFull, h.Causes[0].Kind)
	require.Equal(t, "sdma gpu0→gpu1 q0", h.Causes[0].Queue)
	require.Contains(t, h.Text(), "rptr=0x0 wptr=0x0 doorbell=0x0 cachedWptr=0x400 committedWptr=0x0")
}
