package race

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// launch forks waves threads from launcher, wave i writing its own 64
// bytes at 64i with its
// own site, releases them to the returned kernel end and retires them, as
// package kernel and package sim do with a launch's waves.
func (w *world) launch(launcher *Thread, waves int, tag string) *Sync {
	end := &Sync{}
	for i := range waves {
		t := w.d.NewThread(fmt.Sprintf("%s wave %d", tag, i))
		w.d.Fork(launcher, t)
		w.wr(t, uint64(i)*64, uint64(i+1)*64, &Info{Kind: KindLane, OpKind: OpLane, Who: tag, Op: "store", Site: fmt.Sprint(i)})
		t.Release(end)
		w.d.Retire(t)
	}
	return end
}

// A retired thread's slot goes to a later thread ordered after it, so the
// slots (the length of every vector clock) stay near the threads alive at
// once; threads that nothing orders after a retired one get slots of their
// own and still race. Before, every thread of every launch kept a slot:
// 1000 launches of 64 waves made 64002 slots and clocks as long.
func TestRetiredSlotsAreReused(t *testing.T) {
	for _, c := range []struct {
		name     string
		run      func(w *world)
		races    bool
		maxSlots int
	}{
		{"launches joined one after another (one stream)", func(w *world) {
			for k := range 1000 {
				w.a.Acquire(w.launch(w.a, 64, fmt.Sprint("launch ", k)))
			}
		}, false, 2 + 64},
		{"a launch not joined before the next races with it", func(w *world) {
			w.launch(w.a, 4, "first")
			w.launch(w.a, 4, "second")
		}, true, 2 + 8},
		{"two streams with no sync race", func(w *world) {
			s1, s2 := w.d.NewThread("stream 1"), w.d.NewThread("stream 2")
			w.d.Fork(w.a, s1)
			w.d.Fork(w.a, s2)
			for range 10 {
				s1.Acquire(w.launch(s1, 4, "on stream 1"))
			}
			s2.Acquire(w.launch(s2, 4, "on stream 2"))
		}, true, 4 + 8},
		{"two streams joined by the host do not race", func(w *world) {
			s1 := w.d.NewThread("stream 1")
			w.d.Fork(w.a, s1)
			for range 10 {
				s1.Acquire(w.launch(s1, 4, "on stream 1"))
			}
			done := &Sync{}
			s1.Release(done)
			w.d.Retire(s1)
			w.a.Acquire(done) // hipStreamSynchronize
			s2 := w.d.NewThread("stream 2")
			w.d.Fork(w.a, s2)
			s2.Acquire(w.launch(s2, 4, "on stream 2"))
		}, false, 3 + 4},
		{"an old occupant's write races with a thread that did not join it", func(w *world) {
			w.a.Acquire(w.launch(w.a, 1, "old")) // a joins the old wave; b does not
			w.launch(w.a, 1, "new")              // takes the old wave's slot
			w.rd(w.b, 0, 8, loadInfo)
		}, true, 3},
		{"an old occupant's Fabric write needs a fence before the new one's Generic read", func(w *world) {
			old := w.d.NewThread("old")
			w.d.Fork(w.a, old)
			w.d.Access(old, w.sp, 0, 16, Access{Info: copyInfo, Write: true, Proxy: ProxyFabric})
			end := &Sync{}
			old.Release(end)
			w.d.Retire(old)
			w.a.Acquire(end)
			nu := w.d.NewThread("new")
			w.d.Fork(w.a, nu)
			w.d.Access(nu, w.sp, 0, 16, Access{Info: loadInfo, Proxy: ProxyGeneric})
		}, true, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld()
			c.run(w)
			if c.races {
				require.Error(t, w.d.Err())
			} else {
				require.NoError(t, w.d.Err())
			}
			assert.LessOrEqual(t, w.d.Slots(), c.maxSlots)
		})
	}
}

// A thread that recorded something keeps its slot at a fork (its clock is
// known), and a retired thread is not retired twice.
func TestReslotOnlyUnusedThreads(t *testing.T) {
	w := newWorld()
	w.a.Acquire(w.launch(w.a, 1, "old"))
	c := w.d.NewThread("used")
	w.wr(c, 0, 8, laneInfo)
	id := c.id
	w.d.Fork(w.a, c)
	assert.Equal(t, id, c.id)
	w.d.Retire(c)
	w.d.Retire(c)
	assert.Len(t, w.d.free, 2)
}
