package rocm

import (
	"fmt"
	"sync/atomic"
)

// StandIn is an in-memory Driver: each queue resource is a Go byte slice
// for the ring and three 64-bit words for the write pointer, the read
// pointer and the doorbell, and memory is Go byte slices. It lets the
// backend's queue path run without a GPU, and records what reached the
// "hardware": every doorbell store, in order.
//
// It does not execute packets. Its engine only consumes them: Advance
// moves a queue's read pointer towards the doorbell, as the engine writes
// rptr back after executing, so rings drain and wrap. With AutoDrain each
// doorbell store consumes everything at once.
type StandIn struct {
	gpus int
	// AutoDrain makes every doorbell store move the read pointer to it.
	AutoDrain bool
	queues    []*StandInQueue
	backed    uint64
	mem       []standInRegion
	closed    bool
}

type standInRegion struct {
	addr uint64
	data []byte
}

// NewStandIn returns a stand-in with gpus GPU nodes.
func NewStandIn(gpus int) *StandIn { return &StandIn{gpus: gpus} }

// Name says "stand-in".
func (s *StandIn) Name() string { return "stand-in" }

// GPUs is the number of GPU nodes.
func (s *StandIn) GPUs() int { return s.gpus }

// StandInQueue is one in-memory queue resource.
type StandInQueue struct {
	GPU, Peer, Q int
	ring         []byte
	// words: wptr, rptr, doorbell. An array so each is 8-byte aligned.
	words [3]uint64
	// doorbells is every doorbell value stored, in order.
	doorbells []uint64
	autoDrain bool
	err       error
}

// CreateQueue makes an in-memory queue; its pointers start at 0, as KFD's
// do.
func (s *StandIn) CreateQueue(gpu, peer, q, ringBytes int) (Resource, error) {
	if s.closed {
		return nil, fmt.Errorf("stand-in: closed")
	}
	if gpu < 0 || gpu >= s.gpus || peer < 0 || peer >= s.gpus {
		return nil, fmt.Errorf("stand-in: queue gpu%d→gpu%d: outside the %d GPUs", gpu, peer, s.gpus)
	}
	if ringBytes <= 0 {
		return nil, fmt.Errorf("stand-in: ring of %d bytes", ringBytes)
	}
	qu := &StandInQueue{GPU: gpu, Peer: peer, Q: q, ring: make([]byte, ringBytes), autoDrain: s.AutoDrain}
	s.queues = append(s.queues, qu)
	return qu, nil
}

// Back returns zeroed Go memory.
func (s *StandIn) Back(gpu int, addr, size uint64) ([]byte, error) {
	if s.closed {
		return nil, fmt.Errorf("stand-in: closed")
	}
	if gpu < 0 || gpu >= s.gpus {
		return nil, fmt.Errorf("stand-in: GPU %d outside the %d GPUs", gpu, s.gpus)
	}
	if size > 1<<32 {
		return nil, fmt.Errorf("stand-in: %d B is more than the stand-in backs with Go memory", size)
	}
	s.backed += size
	b := make([]byte, size)
	s.mem = append(s.mem, standInRegion{addr, b})
	return b, nil
}

// Bytes returns the backing of [addr, addr+n) as the engine sees it, or
// nil if no single backed range holds it. Writing it is what an engine
// write looks like to the backend: nothing in the simulator is told.
func (s *StandIn) Bytes(addr, n uint64) []byte {
	for _, r := range s.mem {
		if addr >= r.addr && addr-r.addr <= uint64(len(r.data)) && n <= uint64(len(r.data))-(addr-r.addr) {
			off := addr - r.addr
			return r.data[off : off+n : off+n]
		}
	}
	return nil
}

// Close marks the stand-in closed; the queues stay readable.
func (s *StandIn) Close() error { s.closed = true; return nil }

// Queues returns the queues in creation order.
func (s *StandIn) Queues() []*StandInQueue { return s.queues }

// Backed is the bytes of memory backed so far.
func (s *StandIn) Backed() uint64 { return s.backed }

// RingMemory is the ring buffer.
func (q *StandInQueue) RingMemory() []byte { return q.ring }

// Wptr is the write-pointer word.
func (q *StandInQueue) Wptr() *uint64 { return &q.words[0] }

// Rptr is the read-pointer word.
func (q *StandInQueue) Rptr() *uint64 { return &q.words[1] }

// Doorbell is the doorbell word (what StoreDoorbell stored last).
func (q *StandInQueue) Doorbell() *uint64 { return &q.words[2] }

// StoreDoorbell stores v to the doorbell word and records it. It checks
// what the hardware relies on (docs/sdma-hardware.md §3.4, §3.6, §4.2): the
// write pointer was stored first with the same value, v is a multiple of 4
// and does not move back. The first violation is kept (Err).
func (q *StandInQueue) StoreDoorbell(v uint64) {
	atomic.StoreUint64(&q.words[2], v)
	db, wp := atomic.LoadUint64(&q.words[2]), atomic.LoadUint64(&q.words[0])
	var prev uint64
	if n := len(q.doorbells); n > 0 {
		prev = q.doorbells[n-1]
	}
	switch {
	case q.err != nil:
	case db != v:
		q.err = fmt.Errorf("doorbell word holds %#x after a store of %#x", db, v)
	case wp != v:
		q.err = fmt.Errorf("doorbell %#x rung with the write pointer at %#x", v, wp)
	case v%4 != 0:
		q.err = fmt.Errorf("doorbell %#x is not a multiple of 4", v)
	case v < prev:
		q.err = fmt.Errorf("doorbell %#x is below the previous %#x", v, prev)
	}
	q.doorbells = append(q.doorbells, v)
	if q.autoDrain {
		atomic.StoreUint64(&q.words[1], v)
	}
}

// Doorbells returns every doorbell value stored, in order.
func (q *StandInQueue) Doorbells() []uint64 { return q.doorbells }

// Err is the first protocol violation Rang saw, or nil.
func (q *StandInQueue) Err() error { return q.err }

// Pending is the bytes rung but not consumed: doorbell − rptr.
func (q *StandInQueue) Pending() uint64 {
	return atomic.LoadUint64(&q.words[2]) - atomic.LoadUint64(&q.words[1])
}

// Advance is the stand-in's engine: it consumes up to max bytes (0 = all)
// rung on the queue, moving the read pointer towards the doorbell in whole
// 32-byte units, and returns the bytes consumed.
func (q *StandInQueue) Advance(max uint64) uint64 {
	r, db := atomic.LoadUint64(&q.words[1]), atomic.LoadUint64(&q.words[2])
	n := db - r
	if max != 0 && n > max {
		n = max &^ 31
	}
	atomic.StoreUint64(&q.words[1], r+n)
	return n
}
