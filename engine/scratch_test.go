package engine

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/hostmem"
	"github.com/emud-dev/emud/internal/racebuild"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// TestScratchReusesSmallRegions: a node given a Scratch backs its small
// regions with the buffers an earlier node's Close gave back, zeroed
// whatever that node wrote; a second Close gives nothing back twice, a
// node never closed keeps its buffers, and regions the default backing
// maps (1 MiB and more) are not the Scratch's.
func TestScratchReusesSmallRegions(t *testing.T) {
	sizes := []uint64{4096, 8192, 4096}
	sc := NewScratch()
	run := func(close bool) []uint64 {
		t.Helper()
		n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2, Scratch: sc})
		require.NoError(t, err)
		var addrs []uint64
		for i, size := range sizes {
			a, err := n.Memory().Alloc(i%2, size, "r")
			require.NoError(t, err)
			b, err := n.Memory().Bytes("read", a, size)
			require.NoError(t, err)
			require.Equal(t, make([]byte, size), b, "region %d is zeroed", i)
			for j := range b {
				b[j] = 0xEE
			}
			addrs = append(addrs, a)
		}
		big, err := n.Memory().Alloc(1, offHeapMin, "big")
		require.NoError(t, err)
		require.NoError(t, n.Memory().Store64(big, 1))
		if close {
			n.Close()
			n.Close()
		}
		return addrs
	}
	held := uint64(4096 + 8192 + 4096)
	if !hostmem.OffHeap {
		held += offHeapMin // the heap backs the big region too
	}
	run(true)
	assert.Equal(t, held, sc.Held(), "the first node's small regions are kept")
	run(true)
	assert.Equal(t, held, sc.Held(), "the second node took them and gave them back, once")
	run(false)
	assert.Equal(t, uint64(0), sc.Held(), "an unclosed node keeps what it took")
	run(true)
	assert.Equal(t, held, sc.Held())
}

// TestScratchBound: a Scratch keeps at most its bound; the rest goes to
// the collector.
func TestScratchBound(t *testing.T) {
	sc := NewScratch()
	sc.max = 3 * 4096
	sc.put([][]byte{make([]byte, 4096), make([]byte, 8192), make([]byte, 4096)})
	assert.Equal(t, uint64(3*4096), sc.Held(), "4 KiB + 8 KiB fit, the last 4 KiB does not")
	assert.Len(t, sc.take(8192), 8192)
	assert.Equal(t, uint64(4096), sc.Held())
	assert.Len(t, sc.take(16384), 16384, "a size it has none of is made")
}

// TestKeptRingsClearedWhereWritten: a kept ring goes back to the pool,
// or to the node's Scratch, with what its writes reached cleared
// (ring.Ring.Dirty), so the next node's rings read zero wherever the last
// node's packets were, ring wraps included. A Scratch's second node takes
// the very buffers its first gave back, not the shared pool's (whose lock
// explore's workers contended for), and Scratch.Close returns them.
func TestKeptRingsClearedWhereWritten(t *testing.T) {
	if !hostmem.OffHeap {
		t.Skip("rings are on the heap here")
	}
	junk := make([]byte, 96)
	for i := range junk {
		junk[i] = 0xAB
	}
	for _, tc := range []struct {
		name  string
		write func(r *ring.Ring)
	}{
		{"packets", func(r *ring.Ring) { r.Write(1024, junk) }},
		{"a later lap", func(r *ring.Ring) { r.Write(5*r.Size()+4096, junk) }},
		{"across the end", func(r *ring.Ring) { r.Write(r.Size()-32, junk) }},
	} {
		for _, withScratch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/scratch=%v", tc.name, withScratch), func(t *testing.T) {
				var sc *Scratch
				if withScratch {
					sc = NewScratch()
				}
				var first []*byte // round 0's ring buffers
				for round := range 2 {
					n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 4, Scratch: sc})
					require.NoError(t, err)
					for p := 1; p < 4; p++ {
						q, err := n.Queue(0, p, 0)
						require.NoError(t, err)
						b := make([]byte, q.Ring().Size())
						q.Ring().Read(0, b) // a read, which marks nothing dirty
						require.Equal(t, make([]byte, len(b)), b, "round %d: a kept ring reads zero", round)
						tc.write(q.Ring())
					}
					if withScratch {
						require.Len(t, n.mem.scratchRings, 3)
						assert.Empty(t, n.mem.mapped.rings, "no ring from the shared pool's list")
						var bufs []*byte
						for _, k := range n.mem.scratchRings {
							bufs = append(bufs, &k.b[0])
						}
						if round == 0 {
							first = bufs
						} else {
							assert.ElementsMatch(t, first, bufs, "the second node has the first node's rings")
						}
					}
					n.Close()
				}
				if withScratch {
					size := int(ring.DefaultSize)
					assert.Equal(t, uint64(3*size), sc.rings.Bytes(), "the Scratch holds the rings")
					sc.Close()
					assert.Zero(t, sc.rings.Bytes(), "Close gives them to the pool")
				}
			})
		}
	}
}

// TestEightGPUNodeRingsKept: an 8-GPU node's rings, two queues a GPU
// pair (cco.DefaultSdmaQueues, a C++ program's default; loopback
// included, as explore's 1 MiB all-to-all), all come from the rings kept
// across nodes, so a seed maps no slab of its own (mapping and unmapping
// 16 MiB a seed cost the 8-rank 1 MiB explore 0.3-0.7 s of system time
// per 40 seeds, and a C++ seed's writes to the slab's rings faulted 34
// pages in).
func TestEightGPUNodeRingsKept(t *testing.T) {
	if !hostmem.OffHeap {
		t.Skip("rings are on the heap here")
	}
	n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 8})
	require.NoError(t, err)
	defer n.Close()
	for g := range 8 {
		for p := range 8 {
			for q := range 2 {
				_, err := n.Queue(g, p, q)
				require.NoError(t, err)
			}
		}
	}
	assert.Zero(t, len(n.mem.mapped.bufs), "no slab mapped") // the slab itself, 16 MiB, would be the message
	assert.Len(t, n.mem.mapped.rings, 128)
}

// TestScratchReusesQueueObjects: a node given a Scratch makes its queues
// in the arenas the last closed node gave back, and each comes back as a
// fresh queue (pointers at zero, whatever the last node's queue in that
// memory did); a node closed twice gives them back once and leaves the
// rings it had alone (the next node's by then), so it cannot take them
// from the node after it, and a node never closed keeps them.
// The node's lists of queues and engines start empty too.
func TestScratchReusesQueueObjects(t *testing.T) {
	sc := NewScratch()
	type made struct {
		n *Node
		q *Queue
	}
	build := func() made {
		t.Helper()
		n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2, Scratch: sc})
		require.NoError(t, err)
		q, err := n.Queue(0, 1, 0)
		require.NoError(t, err)
		assert.Equal(t, []*Queue{q}, n.Queues(), "the node's queues are its own")
		assert.Len(t, n.Engines(), 1, "and so are its engines")
		r := q.Ring()
		assert.Equal(t, []uint64{0, 0, 0, 0}, []uint64{r.Wptr(), r.CachedWptr(), r.CommittedWptr(), r.Doorbell()},
			"a queue starts with its pointers at zero")
		_, err = r.Reserve(64) // the ring moves on: the next node's queue must not see it
		require.NoError(t, err)
		r.StoreDoorbell(64)
		return made{n, q}
	}
	first := build()
	first.n.Close()
	second := build()
	assert.Same(t, first.q, second.q, "the second node's queue is the first one's memory")
	first.n.Close() // again, while the second node holds the arenas
	require.NotNil(t, second.q.Ring().Bytes(), "a second Close of the first node released the second's ring")
	third := build()
	assert.NotSame(t, second.q, third.q, "a second Close gave nothing back")
	second.n.Close()
	third.n.Close()
	fourth := build() // takes the arenas one of them gave back
	assert.True(t, fourth.q == second.q || fourth.q == third.q)
	fifth := build() // the fourth is not closed: new arenas
	assert.NotSame(t, fourth.q, fifth.q)
}

// TestScratchKeepsRegionMappings: a Scratch's next node backs its large
// regions with the mappings the last node's regions had, not hostmem's
// shared kept buffers (bounded for all callers at once: past that bound
// 16 explore workers mapped and faulted their windows in every seed). A
// plain region comes back reading zero whatever the last node wrote, a
// Prefill'd one still holding its content is a hit (no fill), and one
// whose content a write reached is filled again. Close hands them to
// hostmem.
func TestScratchKeepsRegionMappings(t *testing.T) {
	if !hostmem.OffHeap {
		t.Skip("large regions are on the heap here")
	}
	sc := NewScratch()
	const size = offHeapMin
	fills := 0
	fill := func(b []byte) {
		fills++
		for i := range b {
			b[i] = 0x5A
		}
	}
	type seen struct {
		plain, send, dirty *byte
		prefilled          [2]bool
	}
	node := func(write bool) seen {
		t.Helper()
		n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2, Scratch: sc})
		require.NoError(t, err)
		m := n.Memory()
		plain, err := m.Alloc(0, size, "plain")
		require.NoError(t, err)
		b, err := m.Bytes("read", plain, size)
		require.NoError(t, err)
		require.Equal(t, make([]byte, size), b, "a fresh region reads zero")
		var s seen
		s.plain = &b[0]
		var keyed [2]uint64
		for i, name := range []string{"send", "dirty"} {
			m.Prefill(func() string { return "content-" + name }, fill)
			keyed[i], err = m.Alloc(1, size, name)
			require.NoError(t, err)
			kb, err := m.Bytes("read", keyed[i], size)
			require.NoError(t, err)
			require.Equal(t, byte(0x5A), kb[size-1])
			s.prefilled[i] = m.Prefilled(keyed[i])
			if i == 0 {
				s.send = &kb[0]
			} else {
				s.dirty = &kb[0]
			}
		}
		if write {
			for i := range b {
				b[i] = 0xEE // the next node's plain region must not see it
			}
			m.WatchWrites(mustRegion(t, m, keyed[1]))
			require.NoError(t, m.Write(keyed[1], []byte{1}))
		}
		n.Close()
		return s
	}
	first := node(true)
	assert.Equal(t, [2]bool{false, false}, first.prefilled, "nothing kept yet: both filled")
	assert.Equal(t, 2, fills)
	assert.Equal(t, uint64(3*size), sc.maps.Bytes(), "the node's three mappings are the Scratch's")
	second := node(false)
	assert.Contains(t, []*byte{first.plain, first.dirty}, second.plain, "a mapping of the last node's with no content kept")
	assert.Equal(t, first.send, second.send, "the unwritten Prefill's mapping, under its content")
	assert.Equal(t, [2]bool{true, false}, second.prefilled, "the written one's content is gone: filled again")
	assert.Equal(t, 3, fills)
	sc.Close()
	assert.Zero(t, sc.maps.Bytes(), "Close hands them to hostmem")
	b, _ := sc.maps.Take(size, "")
	assert.Nil(t, b)
}

func mustRegion(t *testing.T, m *Memory, addr uint64) *Region {
	t.Helper()
	r, err := m.Region("", addr, 1)
	require.NoError(t, err)
	return r
}

// A Scratch's nodes keep their tracked ranges (Memory.TrackSum) in its
// storage one node at a time: a node closed gives it to the next, which
// tracks a seed's ranges without allocating them again; a node made
// while another still holds it gets its own, and neither sees the
// other's ranges.
func TestScratchSumRanges(t *testing.T) {
	sc := NewScratch()
	defer sc.Close()
	node := func() (*Node, uint64) {
		t.Helper()
		n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2, Scratch: sc})
		require.NoError(t, err)
		a, err := n.Memory().Alloc(0, 64*4096, "recv")
		require.NoError(t, err)
		return n, a
	}
	track := func(n *Node, a uint64) {
		t.Helper()
		for i := range uint64(64) {
			require.NoError(t, n.Memory().TrackSum(a+i*4096, 4096))
		}
	}
	n, a := node()
	track(n, a)
	n.Close()
	n, a = node()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	track(n, a)
	runtime.ReadMemStats(&after)
	if !racebuild.Enabled {
		assert.Zero(t, after.Mallocs-before.Mallocs, "the closed node's storage, reused")
	}
	other, b := node()                                          // n still holds the storage
	require.NoError(t, other.Memory().TrackSum(b+2*4096, 4096)) // b is a: the nodes' layouts are the same
	_, ok := n.Memory().LandedSum(a, 4096)
	assert.False(t, ok, "nothing landed")
	assert.ErrorContains(t, n.Memory().TrackSum(a, 4096), "meets the tracked range", "n's ranges are its own")
	assert.NoError(t, other.Memory().TrackSum(b, 4096), "other's ranges are its own")
	other.Close()
	n.Close()
}

// Move announces the whole destination range however it lands: from and
// to phantom memory (no bytes move), overlapping (one memmove) or through
// lsa.Space.Land (real bytes both sides), with a tracked range or not.
// Landing through Land announced a phantom destination as 0 bytes, so
// its waiters slept on.
func TestMoveNotifiesWholeRange(t *testing.T) {
	const n = 3 * 4096
	tests := []struct {
		name                   string
		srcPhantom, dstPhantom bool
		overlap, track         bool
	}{
		{name: "real bytes"},
		{name: "real bytes into a tracked range", track: true},
		{name: "to phantom memory", dstPhantom: true},
		{name: "from phantom memory", srcPhantom: true},
		{name: "overlapping", overlap: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2})
			require.NoError(t, err)
			defer node.Close()
			m := node.Memory()
			alloc := func(phantom bool) uint64 {
				a, err := m.Alloc(0, 2*n, "real")
				if phantom {
					a, err = m.AllocPhantom(0, 2*n, "phantom")
				}
				require.NoError(t, err)
				return a
			}
			src, dst := alloc(tc.srcPhantom), alloc(tc.dstPhantom)
			if tc.overlap {
				dst = src + 4096
			}
			if tc.track {
				require.NoError(t, m.TrackSum(dst, n))
			}
			var got [][2]uint64
			m.SetOnNotify(func(addr, size uint64) { got = append(got, [2]uint64{addr, size}) })
			_, err = m.Move(dst, src, n)
			require.NoError(t, err)
			assert.Equal(t, [][2]uint64{{dst, n}}, got)
		})
	}
}

// A node whose memory is its Config.Backing (native lanes read and write
// it without notifying) tracks no sums: its receive checks read the
// bytes.
func TestTrackSumRefusedOnBacking(t *testing.T) {
	back := func(_, size uint64) ([]byte, error) { return make([]byte, size), nil }
	n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2, Backing: back})
	require.NoError(t, err)
	defer n.Close()
	a, err := n.Memory().Alloc(0, 4096, "recv")
	require.NoError(t, err)
	assert.ErrorContains(t, n.Memory().TrackSum(a, 4096), "Config.Backing, which native code writes unseen")
}
