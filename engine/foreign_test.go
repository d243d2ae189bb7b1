package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

func TestAllocAt(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	mem := r.n.Memory()
	fixed := uint64(DefaultBase + 0x2000)
	got, err := mem.AllocAt(fixed, 100, "fixed")
	require.NoError(t, err)
	assert.Equal(t, fixed, got)
	// Bump allocations step over it: [0, 0x2000) fits below, the next
	// does not and lands after it.
	a, err := mem.Alloc(0, 0x2000, "below")
	require.NoError(t, err)
	assert.Equal(t, uint64(DefaultBase), a)
	b, err := mem.Alloc(0, 0x10, "after")
	require.NoError(t, err)
	assert.Equal(t, fixed+0x1000, b)
	require.NoError(t, mem.Write(fixed, []byte{1, 2, 3}))

	for _, tc := range []struct {
		name       string
		addr, size uint64
		want       string
	}{
		{"overlap", fixed, 8, `overlaps region "fixed"`},
		{"overlap a bump region", DefaultBase + 0x1000, 8, `overlaps region "below"`},
		{"unaligned", DefaultBase + 0x10_0010, 8, "not a multiple of the 4096 B page"},
		{"outside every slice", 0x1000, 8, "outside every GPU's slice"},
		{"past the slice", DefaultBase + DefaultStride - 0x1000, 0x2000, "runs past the end of GPU 0's slice"},
		{"size 0", DefaultBase + 0x10_0000, 0, "size 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mem.AllocAt(tc.addr, tc.size, tc.name)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestNewQueueRing(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	q, err := r.n.NewQueue(0, 1, 0, ring.Options{Size: 4096, Start: 0x1000})
	require.NoError(t, err)
	assert.Equal(t, uint64(4096), q.Ring().Size())
	assert.Equal(t, uint64(0x1000), q.Start())
	same, err := r.n.Queue(0, 1, 0)
	require.NoError(t, err)
	assert.Same(t, q, same, "Queue returns the queue NewQueue made")
	other, err := r.n.Queue(0, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, uint64(ring.DefaultSize), other.Ring().Size(), "other queues keep Config.Ring")

	_, err = r.n.NewQueue(0, 1, 0, ring.Options{Size: 4096})
	require.ErrorContains(t, err, "exists already")
	_, err = r.n.NewQueue(0, 1, 2, ring.Options{Size: 1000})
	require.ErrorContains(t, err, "not a power of two")
	_, err = r.n.NewQueue(0, 2, 0, ring.Options{Size: 4096})
	require.ErrorContains(t, err, "peer 2 outside [0, 2)")
	assert.Nil(t, r.n.LookupQueue(0, 1, 2), "a refused queue is not kept")
}

// A raw producer's write pointer shows in the queue's report beside the
// doorbell (it used to read 0 there).
func TestRawProducerWptrInReport(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1})
	flag := r.alloc(0, 64)
	q, err := r.n.NewQueue(0, 0, 0, ring.Options{Size: 1024})
	require.NoError(t, err)
	p := ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 4, ring.RetryForever)
	raw := p.AppendTo(nil)
	r.s.Spawn("producer", func(a *sim.Actor) {
		q.Ring().Write(0, raw)
		q.StoreWptr(uint64(len(raw)))
		q.RingDoorbell(uint64(len(raw)))
	})
	var h *sim.HangError
	require.ErrorAs(t, r.s.Run(), &h)
	rep := q.Report()
	assert.Equal(t, uint64(24), rep.Wptr)
	assert.Equal(t, uint64(24), rep.Doorbell)
	assert.Equal(t, "parked", rep.State)
	assert.Contains(t, h.Text(), "rptr=0x0 wptr=0x18 doorbell=0x18")
}
