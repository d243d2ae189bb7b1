package issuer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// fakePort is an engine that consumes nothing by itself: the test moves
// its read pointer, as a real engine would write it back outside the
// simulator, and its waits poll.
type fakePort struct {
	be        issuer.Backend
	published []uint64
	rptr      uint64
	waits     []issuer.Op
}

func (p *fakePort) Publish(end uint64) {
	p.published = append(p.published, end)
	p.be.Rang(end) // a backend tells the observer of every doorbell store
}
func (p *fakePort) ReadRptr() uint64    { return p.rptr }
func (p *fakePort) EngineState() string { return "fake" }
func (p *fakePort) AwaitEngine(a *sim.Actor, op issuer.Op, w sim.Wait) {
	p.waits = append(p.waits, op)
	for !a.AwaitTimeout(w, sim.Microsecond) {
	}
}

type bells struct{ v []uint64 }

func (b *bells) Running(*sim.Actor)                                    {}
func (b *bells) Doorbell(_ *issuer.Queue, v uint64)                    { b.v = append(b.v, v) }
func (b *bells) Retired(*issuer.Queue, uint64, sim.Time, *ring.Packet) {}

func newQueue(t *testing.T, size int) (*sim.Sim, *fakePort, *issuer.Queue, *bells) {
	t.Helper()
	s := sim.New(sim.Config{Seed: 1, Watchdog: 100 * sim.Microsecond})
	r, err := ring.New(ring.Options{Size: size})
	require.NoError(t, err)
	p, b := &fakePort{}, &bells{}
	q, be := issuer.New(s, issuer.QueueID{GPU: 1, Peer: 2, Q: 3}, r, p, &issuer.Hook{O: b})
	p.be = be
	return s, p, q, b
}

// Issuers that reserved in one order ring in that order, whatever order
// they finish writing in; Commit rings everything reserved at once.
func TestCommitChainOrdersDoorbells(t *testing.T) {
	s, p, q, b := newQueue(t, 1<<10)
	first, err := q.Claim(ring.Unit)
	require.NoError(t, err)
	second, err := q.Claim(2 * ring.Unit)
	require.NoError(t, err)
	s.Spawn("second", func(a *sim.Actor) { require.NoError(t, q.Submit(a, second, second+2*ring.Unit)) })
	s.Spawn("first", func(a *sim.Actor) {
		a.Sleep(sim.Microsecond)
		require.NoError(t, q.Submit(a, first, first+ring.Unit))
		a.Sleep(sim.Microsecond) // second rings now, released by the chain
		_, err := q.Claim(ring.Unit)
		require.NoError(t, err)
		assert.True(t, q.Commit())
		assert.False(t, q.Commit(), "nothing left to ring")
	})
	require.NoError(t, s.Run())
	assert.Equal(t, []uint64{0x20, 0x60, 0x80}, p.published)
	assert.Equal(t, p.published, b.v, "the observer sees every doorbell")
	assert.Empty(t, p.waits, "the commit chain is a subscription, not an engine wait")
	assert.ErrorContains(t, q.Submit(nil, 0x80, 0x100), "not a reserved range")
}

// A reservation that finds the ring full reads the read pointer the engine
// writes back; one the engine never frees is a hang with a cause.
func TestSpaceWaitsAndRingFullCause(t *testing.T) {
	s, p, q, _ := newQueue(t, 128) // capacity 96 B: three units
	s.Spawn("issuer", func(a *sim.Actor) {
		for range 3 {
			base, err := q.Reserve(a, ring.Unit)
			require.NoError(t, err)
			require.NoError(t, q.Submit(a, base, base+ring.Unit))
		}
		base, err := q.Reserve(a, ring.Unit) // waits for the engine
		require.NoError(t, err)
		assert.GreaterOrEqual(t, a.Now(), 5*sim.Microsecond)
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
		q.AwaitDrained(a, q.QuietTarget())
	})
	s.Spawn("engine", func(a *sim.Actor) {
		a.Sleep(5 * sim.Microsecond)
		p.rptr = 0x20
		a.Sleep(5 * sim.Microsecond)
		p.rptr = 0x80
	})
	require.NoError(t, s.Run())
	assert.Equal(t, 1, q.SpaceWaits())
	assert.Equal(t, []issuer.Op{issuer.OpReserve, issuer.OpQuiet}, p.waits)
	assert.Equal(t, uint64(0x80), q.Pointers().Rptr)

	s, _, q, _ = newQueue(t, 128)
	s.Spawn("batch", func(a *sim.Actor) {
		for range 4 { // reserved, never rung: nothing can free the ring
			_, err := q.Reserve(a, ring.Unit)
			require.NoError(t, err)
		}
	})
	var h *sim.HangError
	require.ErrorAs(t, s.Run(), &h)
	require.Len(t, h.Causes, 0, "the backend's inspector adds the queue's causes")
	cs := q.Causes()
	require.Len(t, cs, 1)
	assert.Equal(t, issuer.CauseRingFull, cs[0].Kind)
	assert.Equal(t, "sdma gpu1→gpu2 q3", cs[0].Queue)
	assert.Contains(t, cs[0].Text, "128 B (4 packets' units) reserved but never rung")
	assert.Equal(t, issuer.Waiters{Space: 1}, q.Waiters())
}

// An engine that writes back a read pointer beyond the doorbell fails the
// run, naming the queue.
func TestBadReadPointerFails(t *testing.T) {
	s, p, q, _ := newQueue(t, 1<<10)
	s.Spawn("issuer", func(a *sim.Actor) {
		base, _ := q.Reserve(a, ring.Unit)
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
		p.rptr = 0x1000
		q.AwaitDrained(a, q.QuietTarget())
	})
	err := s.Run()
	require.ErrorContains(t, err, "sdma gpu1→gpu2 q3: engine read pointer")
	require.ErrorContains(t, err, "beyond the doorbell")
}

// Quiets of one queue at once each wait for their own target (the first
// waiter's condition lives in the queue, the others make theirs), and a
// quiet the engine never drains is a hang whose waiter says what it
// waits for, with its detail.
func TestQuietWaitersOwnTargets(t *testing.T) {
	s, p, q, _ := newQueue(t, 1<<10)
	left, target := map[string]sim.Time{}, map[string]uint64{}
	for i, name := range []string{"a", "b", "c"} {
		s.Spawn(name, func(a *sim.Actor) {
			base, err := q.Reserve(a, ring.Unit)
			require.NoError(t, err)
			require.NoError(t, q.Submit(a, base, base+ring.Unit))
			a.Sleep(sim.Time(3-i) * 100 * sim.Nanosecond) // c waits first, a last
			target[name] = base + ring.Unit
			q.AwaitDrained(a, target[name])
			left[name] = a.Now()
		})
	}
	s.Spawn("engine", func(a *sim.Actor) {
		for step := range 3 {
			a.Sleep(sim.Microsecond)
			p.rptr = uint64(step+1) * ring.Unit
		}
	})
	require.NoError(t, s.Run())
	assert.Equal(t, []issuer.Op{issuer.OpQuiet, issuer.OpQuiet, issuer.OpQuiet}, p.waits)
	for _, name := range []string{"a", "b", "c"} {
		drained := sim.Time(target[name]/ring.Unit) * sim.Microsecond // when the engine reached it
		assert.GreaterOrEqual(t, left[name], drained, "%s waited for its own target %#x", name, target[name])
		assert.Less(t, left[name], drained+sim.Microsecond, "%s: one poll after", name)
	}
	assert.Equal(t, issuer.Waiters{}, q.Waiters())

	s, _, q, _ = newQueue(t, 1<<10)
	s.Spawn("stuck", func(a *sim.Actor) {
		base, err := q.Reserve(a, ring.Unit)
		require.NoError(t, err)
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
		q.AwaitDrained(a, base+ring.Unit)
	})
	var h *sim.HangError
	require.ErrorAs(t, s.Run(), &h)
	require.Len(t, h.Waiters, 1)
	assert.Equal(t, "quiet on sdma gpu1→gpu2 q3: rptr ≥ 0x20, rptr = 0x0 (engine fake)", h.Waiters[0].WaitsFor)
	assert.NotNil(t, h.Waiters[0].Detail)
}
