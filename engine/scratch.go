package engine

import (
	"github.com/emud-dev/emud/hostmem"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/sim"
)

// Scratch is the region buffers and queue objects one caller keeps across
// the nodes it builds one after another (an explore worker's seeds): a
// node given a Scratch (Config.Scratch) backs its small regions (under
// offHeapMin, which the default backing would make on the Go heap) with
// buffers the Scratch holds, its large ones with the mappings its last
// node's had (takeMap), and makes its queues, rings, issuer sides,
// engines and links in the Scratch's arenas (nodeSlabs); Node.Close gives
// them back. A 4 KiB all-to-all seed made 140 KiB of such regions (its
// windows and signal pools), half the bytes it allocated, and 24 KiB of
// queue objects.
//
// Each buffer and object comes back zeroed, as a fresh one is, so a
// node's run does not depend on which nodes used the Scratch before it,
// and nothing of a closed node may be used after its Close. A Scratch belongs
// to one goroutine (its nodes run one at a time); it is not safe for
// concurrent use, and a node that is never closed keeps its buffers.
type Scratch struct {
	// Sim is the event store the nodes' simulators borrow
	// (sim.Config.Scratch; the caller builds the Sim, so it passes it).
	Sim *sim.Scratch

	// free is the zeroed buffers of small regions, by length, up to max
	// bytes.
	free hostmem.KeptList
	// rings are zeroed kept ring buffers by length (ringPool's, taken
	// once by the Scratch's first nodes): its later nodes take and give
	// them back without the pool's lock; Close returns them to the pool.
	rings hostmem.KeptList
	// maps are the mappings that backed the last nodes' large regions
	// (hostmem), by length, each with the Prefill content it still holds
	// ("" for none): the next node takes them as hostmem's kept buffers,
	// up to mapMax bytes; Close hands them to hostmem.
	maps   hostmem.KeptList
	mapMax uint64
	// arenas are the per-queue objects the last closed node gave back
	// (nodeArenas), nil while a node holds them.
	arenas *nodeArenas
	max    uint64 // the most bytes free may hold
	// bits is the stale regions' bitmaps (lsa.Space.MarkStale) the last
	// nodes gave back, of any length: MarkStale sets every word it uses.
	bits [][]uint64
	// sums is where its nodes' memories keep their tracked ranges
	// (lsa.Space.UseSums), one node at a time: sumsHeld while a node
	// that is not closed yet has it (its memory's release gives it back).
	sums     lsa.SumRanges
	sumsHeld bool
}

// takeSums returns the storage for a node's tracked ranges: the
// Scratch's, held until that node's Close; nil without a Scratch or
// while another node holds it.
func (s *Scratch) takeSums() *lsa.SumRanges {
	if s == nil || s.sumsHeld {
		return nil
	}
	s.sumsHeld = true
	return &s.sums
}

// scratchMax is a Scratch's bound on the bytes it keeps: a worker's
// small regions of one node fit many times over (a 64-rank all-to-all's
// windows under 1 MiB each stay on the heap past it).
const scratchMax = 32 << 20

// scratchMapMax bounds the bytes of large regions' mappings a Scratch
// keeps between its nodes: a worker's node of 8 ranks with 64 MiB windows
// each way fits; what a worker keeps is never more than its last node
// held, so explore's memory peaks where its running nodes put it.
const scratchMapMax = 1 << 30

// takeMap returns a kept mapping of n bytes (hostmem.KeptList.Take); nil
// for a nil Scratch.
func (s *Scratch) takeMap(n uint64, key string) (b []byte, hit bool) {
	if s == nil {
		return nil, false
	}
	return s.maps.Take(n, key)
}

// keepMap keeps a region's mapping that holds key's content (or, with
// "", whatever its node left) for the next node, or hands it to hostmem
// past the bound.
func (s *Scratch) keepMap(b []byte, key string) {
	if s.maps.Bytes()+uint64(len(b)) > s.mapMax {
		_ = hostmem.UnmapAs(b, key) // a whole buffer hostmem mapped: cannot fail
		return
	}
	s.maps.Put(b, key)
}

// NewScratch returns an empty Scratch.
func NewScratch() *Scratch {
	return &Scratch{Sim: sim.NewScratch(), max: scratchMax, mapMax: scratchMapMax}
}

// take returns a zeroed buffer of n bytes: a kept one, or a new one.
func (s *Scratch) take(n uint64) []byte {
	if b, _ := s.free.Take(n, ""); b != nil {
		return b
	}
	return make([]byte, n)
}

// takeArenas is the arenas a new node makes its queues in: the Scratch's,
// reset, which it holds until its Close; new ones without a Scratch or
// while another node holds them.
func (s *Scratch) takeArenas() *nodeArenas {
	if s == nil || s.arenas == nil {
		return &nodeArenas{}
	}
	a := s.arenas
	s.arenas = nil
	a.reset()
	return a
}

// put clears the buffers and keeps them, up to the Scratch's bound (the
// rest go to the collector).
func (s *Scratch) put(bufs [][]byte) {
	for _, b := range bufs {
		if s.free.Bytes()+uint64(len(b)) > s.max {
			continue
		}
		clear(b)
		s.free.Put(b, "")
	}
}

// takeBits returns a bitmap of words words for a stale region: the
// shortest kept one that is long enough, or a new one.
func (s *Scratch) takeBits(words int) []uint64 {
	best := -1
	for i, b := range s.bits {
		if cap(b) >= words && (best < 0 || cap(b) < cap(s.bits[best])) {
			best = i
		}
	}
	var b []uint64
	if best < 0 {
		b = make([]uint64, words)
	} else {
		b = s.bits[best]
		s.bits[best] = s.bits[len(s.bits)-1]
		s.bits[len(s.bits)-1] = nil
		s.bits = s.bits[:len(s.bits)-1]
	}
	return b[:words]
}

// putBits keeps a closed node's bitmaps, up to scratchBitsMax of them
// (a node of 64 GPUs has thousands of windows; one of 8 has 8 that are
// stale).
func (s *Scratch) putBits(bits [][]uint64) {
	for _, b := range bits {
		if len(s.bits) >= scratchBitsMax {
			return
		}
		s.bits = append(s.bits, b)
	}
}

const scratchBitsMax = 256

// Close ends what the nodes' runs kept in the Scratch (sim.Scratch.Close:
// the kernel's idle lane workers) and gives its kept rings back to the
// pool all nodes share and its kept mappings to hostmem; its small region
// buffers stay for later nodes. An owner that is done with a Scratch
// closes it.
func (s *Scratch) Close() {
	s.Sim.Close()
	var bufs [][]byte
	s.rings.Drain(func(b []byte, _ string) { bufs = append(bufs, b) })
	if len(bufs) > 0 {
		giveRings(bufs) // zeroed when the Scratch took them back
	}
	s.maps.Drain(func(b []byte, key string) { _ = hostmem.UnmapAs(b, key) })
}

// takeRing returns a zeroed kept ring buffer of size bytes the Scratch
// holds, or nil (also for a nil Scratch).
func (s *Scratch) takeRing(size int) []byte {
	if s == nil {
		return nil
	}
	b, _ := s.rings.Take(uint64(size), "")
	return b
}

// putRings clears what the rings wrote of their buffers and keeps them
// for the Scratch's next node.
func (s *Scratch) putRings(kept []keptRing) {
	clearRings(kept)
	for _, k := range kept {
		s.rings.Put(k.b, "")
	}
}

// Held is the bytes the Scratch keeps for the next node.
func (s *Scratch) Held() uint64 { return s.free.Bytes() }
