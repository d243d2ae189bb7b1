package race

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type world struct {
	d    *Detector
	now  int64
	sp   SpaceID
	a, b *Thread
}

func newWorld() *world {
	w := &world{}
	w.d = New(func() int64 { return w.now })
	w.sp = w.d.Space("mem", "test memory")
	w.a, w.b = w.d.NewThread("a"), w.d.NewThread("b")
	return w
}

var (
	laneInfo = &Info{Kind: KindLane, OpKind: OpLane, Who: "lane", Op: "store"}
	loadInfo = &Info{Kind: KindLane, OpKind: OpLane, Who: "reader", Op: "load"}
	copyInfo = &Info{Kind: KindSDMA, OpKind: OpPacket, Who: "sdma q0", Op: "COPY destination write", Queue: "sdma q0"}
)

// The advice the layer above would give (cco registers its own; it is not
// linked into this package's tests).
func init() {
	RegisterAdvice(OpPacket, OpLane, func(e Edge) string {
		return "it did not waitSignal on a slot that " + e.PrevQueue + " signals before the " + e.Cur.Op
	})
}

func (w *world) wr(t *Thread, lo, hi uint64, i *Info) {
	w.now++
	w.d.Access(t, w.sp, lo, hi, Access{Info: i, Write: true})
}

func (w *world) rd(t *Thread, lo, hi uint64, i *Info) {
	w.now++
	w.d.Access(t, w.sp, lo, hi, Access{Info: i})
}

func TestOrderings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   func(w *world)
		races int
	}{
		{"write then unordered read", func(w *world) { w.wr(w.a, 0, 64, copyInfo); w.rd(w.b, 32, 40, loadInfo) }, 1},
		{"read then unordered write", func(w *world) { w.rd(w.b, 0, 8, loadInfo); w.wr(w.a, 0, 64, copyInfo) }, 1},
		{"two reads do not race", func(w *world) { w.rd(w.a, 0, 8, copyInfo); w.rd(w.b, 0, 8, loadInfo) }, 0},
		{"disjoint ranges do not race", func(w *world) { w.wr(w.a, 0, 64, copyInfo); w.rd(w.b, 64, 128, loadInfo) }, 0},
		{"same thread is ordered", func(w *world) { w.wr(w.a, 0, 64, copyInfo); w.rd(w.a, 0, 64, loadInfo) }, 0},
		{"release then acquire orders", func(w *world) {
			s := &Sync{}
			w.wr(w.a, 0, 64, copyInfo)
			w.a.Release(s)
			w.b.Acquire(s)
			w.rd(w.b, 0, 64, loadInfo)
		}, 0},
		{"an access after the release is not ordered", func(w *world) {
			s := &Sync{}
			w.a.Release(s)
			w.wr(w.a, 0, 64, copyInfo)
			w.b.Acquire(s)
			w.rd(w.b, 0, 64, loadInfo)
		}, 1},
		{"snapshot orders what came before only", func(w *world) {
			w.wr(w.a, 0, 8, laneInfo)
			v := w.a.Snapshot()
			w.wr(w.a, 8, 16, laneInfo)
			v2 := w.a.Snapshot()
			v3 := w.a.Snapshot()
			if &v2[0] != &v3[0] || &v[0] == &v2[0] {
				panic("a snapshot is reused exactly while nothing happened")
			}
			w.b.AcquireVC(v)
			w.rd(w.b, 0, 16, loadInfo)
		}, 1},
		{"fork orders the child", func(w *world) {
			w.wr(w.a, 0, 64, laneInfo)
			c := w.d.NewThread("child")
			w.d.Fork(w.a, c)
			w.rd(c, 0, 64, loadInfo)
			w.wr(w.a, 0, 64, laneInfo)
		}, 1},
		{"atomics do not race with atomics", func(w *world) {
			w.d.Access(w.a, w.sp, 0, 8, Access{Info: copyInfo, Write: true, Atomic: true})
			w.d.Access(w.b, w.sp, 0, 8, Access{Info: laneInfo, Write: true, Atomic: true})
		}, 0},
		{"a plain read races with an unordered atomic write", func(w *world) {
			w.d.Access(w.a, w.sp, 0, 8, Access{Info: copyInfo, Write: true, Atomic: true})
			w.rd(w.b, 0, 8, loadInfo)
		}, 1},
		{"cross-proxy read needs an acquire fence", func(w *world) {
			s := &Sync{}
			w.d.Access(w.a, w.sp, 0, 16, Access{Info: copyInfo, Write: true, Proxy: ProxyFabric})
			w.a.Release(s)
			w.b.Acquire(s)
			w.d.Access(w.b, w.sp, 0, 16, Access{Info: loadInfo, Proxy: ProxyGeneric})
		}, 1},
		{"release and acquire fences Fabric→Generic make it visible", func(w *world) {
			s := &Sync{}
			w.d.Access(w.a, w.sp, 0, 16, Access{Info: copyInfo, Write: true, Proxy: ProxyFabric})
			w.a.FenceRelease(ProxyFabric, ProxyGeneric)
			w.a.Release(s)
			w.b.Acquire(s)
			w.b.FenceAcquire(ProxyFabric, ProxyGeneric)
			w.d.Access(w.b, w.sp, 0, 16, Access{Info: loadInfo, Proxy: ProxyGeneric})
		}, 0},
		{"the reader's acquire fence without the writer's release does not", func(w *world) {
			s := &Sync{}
			w.d.Access(w.a, w.sp, 0, 16, Access{Info: copyInfo, Write: true, Proxy: ProxyFabric})
			w.a.Release(s)
			w.b.Acquire(s)
			w.b.FenceAcquire(ProxyFabric, ProxyGeneric)
			w.d.Access(w.b, w.sp, 0, 16, Access{Info: loadInfo, Proxy: ProxyGeneric})
		}, 1},
		{"unless the writer is the reader's own endpoint", func(w *world) {
			s := &Sync{}
			w.d.Access(w.a, w.sp, 0, 16, Access{Info: copyInfo, Write: true, Proxy: ProxyFabric})
			w.a.Release(s)
			w.b.Acquire(s)
			w.b.FenceAcquire(ProxyFabric, ProxyGeneric, w.a)
			w.d.Access(w.b, w.sp, 0, 16, Access{Info: loadInfo, Proxy: ProxyGeneric})
		}, 0},
		{"the wrong fence pair does not", func(w *world) {
			s := &Sync{}
			w.d.Access(w.a, w.sp, 0, 16, Access{Info: copyInfo, Write: true, Proxy: ProxyFabric})
			w.a.FenceRelease(ProxyFabric, ProxyGeneric)
			w.a.Release(s)
			w.b.Acquire(s)
			w.b.FenceAcquire(ProxyGeneric, ProxyFabric)
			w.d.Access(w.b, w.sp, 0, 16, Access{Info: loadInfo, Proxy: ProxyGeneric})
		}, 1},
		{"relaxed load then acquire fence synchronises", func(w *world) {
			op := &Info{Kind: KindFabric, Who: "put", Op: "put write", VC: w.a.Snapshot()}
			w.wr(w.a, 0, 8, laneInfo)
			op.VC = w.a.Snapshot()
			w.d.Access(w.a, w.sp, 64, 80, Access{Info: op, Write: true})
			w.d.AcquireRelaxed(w.b, w.sp, 64, 80)
			w.b.FenceAcquire(ProxyNone, ProxyNone)
			w.rd(w.b, 0, 8, loadInfo)
		}, 0},
		{"a relaxed load alone does not", func(w *world) {
			op := &Info{Kind: KindFabric, Who: "put", Op: "put write"}
			w.wr(w.a, 0, 8, laneInfo)
			op.VC = w.a.Snapshot()
			w.d.Access(w.a, w.sp, 64, 80, Access{Info: op, Write: true})
			w.d.AcquireRelaxed(w.b, w.sp, 64, 80)
			w.rd(w.b, 0, 8, loadInfo)
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			tc.run(w)
			assert.Len(t, w.d.Reports(), tc.races)
			if tc.races == 0 {
				assert.NoError(t, w.d.Err())
			} else {
				var e *Error
				require.ErrorAs(t, w.d.Err(), &e)
			}
		})
	}
}

// One report per pair of sites, counting repeats, across page boundaries.
func TestReportsDedupAndName(t *testing.T) {
	w := newWorld()
	for c := uint64(0); c < 4; c++ {
		w.wr(w.a, c*pageSize, (c+1)*pageSize+10, copyInfo)
	}
	w.rd(w.b, 0, 4*pageSize, loadInfo)
	rs := w.d.Reports()
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Greater(t, r.Count, 1)
	assert.True(t, r.First.Write)
	assert.False(t, r.Second.Write)
	assert.Equal(t, "sdma", r.First.Kind)
	assert.Equal(t, "the load by reader is not ordered after the COPY destination write by sdma q0: it did not waitSignal on a slot that sdma q0 signals before the load", r.Missing,
		"the advice registered for (OpPacket, OpLane)")
	assert.Contains(t, r.String(), "test memory")
	var e *Error
	require.ErrorAs(t, w.d.Err(), &e)
	j, err := e.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(j), `"missing"`)
	assert.Contains(t, e.Text(), "conflicts between these two sites")
}

// Byte-granular stores by one thread merge into few segments.
func TestSegmentsMerge(t *testing.T) {
	w := newWorld()
	for i := uint64(0); i < pageSize; i += 4 {
		w.now = 1
		w.d.Access(w.a, w.sp, i, i+4, Access{Info: laneInfo, Write: true})
	}
	p := w.d.spaces[w.sp].pages[0]
	assert.Less(t, len(p.segs), 3*int(pageSize/4), "bounded")
	w.now = 7
	w.d.Access(w.a, w.sp, 0, pageSize, Access{Info: laneInfo, Write: true})
	assert.Len(t, p.segs, 1)
}

// Without advice for the pair, and for a missing proxy crossing without
// proxy advice, the words are generic; a pair has one advisor.
func TestAdviceFallbackAndOneAdvisor(t *testing.T) {
	w := newWorld()
	w.wr(w.a, 0, 8, laneInfo)
	w.wr(w.b, 0, 8, copyInfo)
	require.Len(t, w.d.Reports(), 1)
	assert.Equal(t, "the COPY destination write by sdma q0 is not ordered after the store by lane: no release and acquire pair between their actors orders them", w.d.Reports()[0].Missing)
	assert.Panics(t, func() { RegisterAdvice(OpPacket, OpLane, func(Edge) string { return "" }) })
}
