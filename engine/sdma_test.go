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

// Placement over KFD's masks with fused-off engines, and loopback as MORI's
// anvil places it (connect): a fused-off engine is absent from the link's
// mask, so the link's channels all use the engine left; a link whose
// recommended engines are all fused off falls back to the static OAM map;
// gfx950 pins loopback to engine 0 (so a fused-off engine 0 refuses it),
// gfx1250 spreads loopback over the host-link engines, and pinned there it
// would fail at the sixth channel, ROCr's blit queue holding one of
// engine 0's six.
func TestPlacementMaskFusedOffLoopback(t *testing.T) {
	m := model.MI355X()
	m.FusedOffEngines = []int{3, 4, 5}
	lay := m.Engines()
	assert.Equal(t, uint64(1<<2), lay.Mask(0, 1), "link 0's engines 2, 3: 3 is fused off")
	assert.Zero(t, lay.Mask(0, 2), "link 1's engines 4, 5 are both fused off")
	assert.Zero(t, lay.Mask(0, 0), "no self io link")
	assert.True(t, lay.IsFusedOff(4))
	r := newRig(t, 1, Config{GPUs: 8, Model: m})
	for _, tc := range []struct{ gpu, peer, q, engine int }{
		{0, 1, 0, 2}, {0, 1, 1, 2}, {0, 1, 5, 2}, // the mask's one engine takes every channel
		{0, 3, 0, 6}, {0, 3, 1, 7}, // untouched link
		{1, 0, 1, 2}, // GPU 1's link 0 is engines 2, 3 too: 3 is fused off on every GPU of the part
	} {
		q, err := r.n.Queue(tc.gpu, tc.peer, tc.q)
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, tc.engine, q.Engine().ID(), "%+v", tc)
	}
	// GPU 0 → 2: both recommended engines fused off; MORI falls back to
	// mi300xOamMap[0][2] × 2 = engine 12.
	q, err := r.n.Queue(0, 2, 0)
	require.NoError(t, err)
	assert.Equal(t, 12, q.Engine().ID())
	// GPU 2 → 1 (its link 1, engines 4, 5): mi300xOamMap[2][1] × 2 = 2.
	q, err = r.n.Queue(2, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, q.Engine().ID())
	// A fallback onto a fused-off engine fails, saying why it was chosen.
	m12 := model.MI355X()
	m12.FusedOffEngines = []int{4, 5, 12}
	_, err = newRig(t, 1, Config{GPUs: 8, Model: m12}).n.Queue(0, 2, 0)
	assert.ErrorContains(t, err, "GPU 0's SDMA engine 12 is fused off (absent from KFD's masks) and cannot take a queue: every engine KFD recommends for the link to GPU 2 is fused off, so the static OAM map chose it")

	// Engine 0 fused off: gfx950's loopback still pins it, and fails.
	m0 := model.MI355X()
	m0.FusedOffEngines = []int{0}
	r0 := newRig(t, 1, Config{GPUs: 2, Model: m0})
	_, err = r0.n.Queue(1, 1, 0)
	assert.ErrorContains(t, err, "GPU 1's SDMA engine 0 is fused off (absent from KFD's masks) and cannot take a queue: loopback channels use engine 0")

	// gfx1250: loopback channel c on engine c (the host-link mask is all
	// 16 engines); engine 0 keeps one slot for ROCr.
	g := newRig(t, 1, Config{GPUs: 2, Model: model.GFX1250Preset()})
	for c := range 8 {
		q, err := g.n.Queue(0, 0, c)
		require.NoError(t, err)
		assert.Equal(t, c, q.Engine().ID())
	}
	pinned := model.GFX1250Preset().Engines()
	pinned.SpreadLoopback = false
	for c := range 8 {
		assert.Zero(t, pinned.Place(0, 0, c), "pinned loopback: engine 0")
	}
	assert.Equal(t, 1, pinned.Held(0))
	assert.Zero(t, pinned.Held(1))
}

// Layouts no part has are refused, naming the field.
func TestEnginesValidateMasks(t *testing.T) {
	base := model.MI355X().Engines()
	for _, tc := range []struct {
		name string
		edit func(*model.Engines)
		want string
	}{
		{"fused-off out of range", func(e *model.Engines) { e.FusedOff = []int{16} }, "fused-off engine 16: the GPU has engines 0..15"},
		{"host link out of range", func(e *model.Engines) { e.HostLink = []int{-1} }, "host-link engine -1"},
		{"runtime over the cap", func(e *model.Engines) { e.Runtime = []int{9} }, "runtime queues on engine 0: 9, need 0..8"},
		{"too many engines", func(e *model.Engines) { e.XGMI = 64 }, "66 SDMA engines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := base
			tc.edit(&e)
			assert.ErrorContains(t, e.Validate(), tc.want)
		})
	}
	assert.NoError(t, base.Validate())
}
