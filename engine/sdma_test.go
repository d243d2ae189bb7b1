package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// MORI's placement over KFD's recommended engines: loopback on engine 0,
// each peer link its own two xGMI engines, channel c on the (c mod 2)-th.
func TestPlacement(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 8, Model: model.MI355X()})
	for _, tc := range []struct {
		gpu, peer, q int
		engine       int
	}{
		{0, 0, 0, 0}, {0, 0, 7, 0}, // loopback: engine 0
		{0, 1, 0, 2}, {0, 1, 1, 3}, {0, 1, 2, 2}, {0, 1, 7, 3}, // first peer link: engines 2, 3
		{0, 2, 0, 4}, {0, 7, 1, 15}, // last peer link of GPU 0: engines 14, 15
		{3, 0, 0, 2}, {3, 2, 0, 6}, {3, 4, 1, 9}, // GPU 3 skips itself when numbering links
	} {
		q := r.queue(tc.gpu, tc.peer, tc.q)
		assert.Equal(t, tc.engine, q.Engine().ID(), "%v", q.ID())
		assert.Equal(t, tc.gpu, q.Engine().GPU())
		assert.Contains(t, q.Engine().Queues(), q)
	}
	assert.Same(t, r.queue(0, 1, 0).Engine(), r.queue(0, 1, 4).Engine(), "channels 0 and 4 share an engine")
	assert.NotSame(t, r.queue(0, 1, 0).Engine(), r.queue(1, 0, 0).Engine(), "engines belong to one GPU")

	// A platform's own map: every peer link on engines 4 and 5, link 1 on
	// engine 9 alone; links past the map follow the rule.
	m := model.MI355X()
	m.EngineLinks = [][]int{{4, 5}, {9}}
	own := newRig(t, 1, Config{GPUs: 8, Model: m})
	for _, tc := range []struct{ peer, q, engine int }{{1, 0, 4}, {1, 1, 5}, {1, 2, 4}, {2, 0, 9}, {2, 3, 9}, {3, 1, 7}, {0, 5, 0}} {
		assert.Equal(t, tc.engine, own.queue(0, tc.peer, tc.q).Engine().ID(), "%+v", tc)
	}
	c := m.Clone()
	c.EngineLinks[0][0] = 7
	assert.Equal(t, 4, m.EngineLinks[0][0], "a clone's map is its own")

	// The placeholder gives each queue an engine of its own.
	p := newRig(t, 1, Config{GPUs: 2, Model: model.NewPlaceholder()})
	assert.NotSame(t, p.queue(0, 1, 0).Engine(), p.queue(0, 1, 2).Engine())
	assert.Equal(t, -1, p.queue(0, 1, 0).Engine().ID())
}

// An engine holds at most QueuesPerEngine queues, as KFD's queue creation.
func TestEngineQueueLimit(t *testing.T) {
	m := model.MI355X()
	model.QueuesPerEngine.Set(m, 3)
	r := newRig(t, 1, Config{GPUs: 2, Model: m})
	for q := 0; q < 6; q++ { // 3 on each of the link's two engines
		r.queue(0, 1, q)
	}
	_, err := r.n.Queue(0, 1, 6)
	assert.ErrorContains(t, err, "sdma gpu0 engine 2 already holds 3 queues")
	model.EnginesPerLink.Set(m, -1)
	_, err = NewNode(sim.New(sim.Config{}), Config{Model: m})
	assert.ErrorContains(t, err, "engines per link -1")
}

// smallCopies rings per 64 B copies on each of queues queues of GPU 0
// toward GPU 1 at once and returns when the last one finished.
func smallCopies(t *testing.T, m model.Model, queues, per int) sim.Time {
	t.Helper()
	r := newRig(t, 1, Config{GPUs: 2, Model: m})
	src, dst := r.alloc(0, 4096), r.alloc(1, 4096)
	var end sim.Time
	for qi := 0; qi < queues; qi++ {
		q := r.queue(0, 1, qi)
		r.s.Spawn(fmt.Sprintf("issuer%d", qi), func(a *sim.Actor) {
			pkts := make([]ring.Packet, per)
			for i := range pkts {
				pkts[i] = ring.Copy(dst+64*uint64(qi), src, 64)
			}
			require.NoError(t, post(a, q, pkts...))
			q.AwaitDrained(a, q.QuietTarget())
			end = max(end, a.Now())
		})
	}
	require.NoError(t, r.s.Run())
	return end
}

// Queues that share engines share their packet rate: 8 queues on a peer
// link's 2 engines are no faster than 2 queues, one per engine, running
// the same packets, and both run at 2 engines' rate, not 8.
func TestSharedEnginePacketRate(t *testing.T) {
	m := model.MI355X()
	const total = 64
	two := smallCopies(t, m, 2, total/2)
	eight := smallCopies(t, m, 8, total/8)
	t.Logf("64 small copies: 2 queues %v, 8 queues %v", two, eight)
	assert.GreaterOrEqual(t, eight, two, "8 queues on 2 engines cannot beat 2 engines' packet rate")
	// Each engine runs total/2 packets, with a gap between two of them.
	floor := sim.Time(float64(total/2-1) * model.PacketUs.Of(m) * float64(sim.Microsecond))
	assert.GreaterOrEqual(t, eight, floor, "no faster than 2 engines' packet rate")
	assert.Less(t, eight, floor+2*sim.Microsecond, "and at that rate (plus the doorbell)")

	// With an engine per queue (what the model used to assume), 8 queues
	// would run 4× faster than 2: the difference is the sharing.
	ded := m.Clone()
	model.EnginesPerLink.Set(ded, 0)
	assert.Less(t, float64(smallCopies(t, ded, 8, total/8)), 0.3*float64(eight))
}

// An engine passes between its busy queues by time slice: with a slice of
// zero the two queues of one engine alternate packet by packet; with a
// long slice the first queue runs its whole burst before the second starts.
func TestEngineTimeSlice(t *testing.T) {
	order := func(quantumKCycles float64) string {
		m := model.MI355X()
		model.EnginesPerLink.Set(m, 1) // both channels on one engine
		model.QuantumKCycles.Set(m, quantumKCycles)
		r := newRig(t, 1, Config{GPUs: 2, Model: m})
		src, dst := r.alloc(0, 4096), r.alloc(1, 4096)
		q0, q1 := r.queue(0, 1, 0), r.queue(0, 1, 1)
		require.Same(t, q0.Engine(), q1.Engine())
		var seq []byte
		r.n.SetObserver(retireLog(func(q *issuer.Queue, p *ring.Packet) {
			if p.Kind == ring.KindCopy {
				seq = append(seq, byte('0'+q.ID().Q))
			}
		}))
		for i, q := range []*Queue{q0, q1} {
			r.s.Spawn("issuer", func(a *sim.Actor) {
				a.Sleep(sim.Time(i) * sim.Nanosecond) // q0 rings first
				require.NoError(t, post(a, q, ring.Copy(dst, src, 64), ring.Copy(dst, src, 64), ring.Copy(dst, src, 64)))
			})
		}
		require.NoError(t, r.s.Run())
		return string(seq)
	}
	assert.Equal(t, "010101", order(0), "no slice: round robin per packet")
	assert.Equal(t, "000111", order(1000), "a long slice: the holder keeps the engine while it has work")
	assert.Equal(t, "001101", order(3000*2.4/1024), "a 3 µs slice: two 2 µs packets, then the other queue")
}

type retireLog func(q *issuer.Queue, p *ring.Packet)

func (retireLog) Running(*sim.Actor)             {}
func (retireLog) Doorbell(*issuer.Queue, uint64) {}
func (f retireLog) Retired(q *issuer.Queue, _ uint64, _ sim.Time, p *ring.Packet) {
	f(q, p)
}
