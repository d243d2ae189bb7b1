package main

import (
	"fmt"
	"unsafe"

	"github.com/emud-dev/emud/engine"
)

// A program built against the user's own MORI header (emud c++ finds
// mori/cco/cco.hpp on its -I path, cxx/mori.go) runs MORI's device code
// natively: lanes reserve ring slots, write packet dwords into the ring,
// store wptr and ring the doorbell with plain atomics, as on hardware.
// emud's host control plane for that header (include/emud/mori_host.cpp)
// asks here, queue by queue, for the memory MORI's
// ccoSdmaQueueDeviceHandle points at: the ring and its words live in
// device memory of the rank's GPU, where lanes reach them natively, and
// the engine queue behind them is the dev comm's own.
//
// The doorbell is as hardware sees it: a watch on the doorbell word fires
// on every write that changes it (a lane's atomic store, a plain store
// announced at the lane's next device call, or a fence), and the engine
// then reads wptr and fetches the ring bytes between the last doorbell and
// the new one, as they are at that instant, into the engine's ring, whose
// decoder runs them. The engine's read-pointer write-backs land in the
// rptr word, so MORI's drain and ring-full spins see them.

// moriQueue is one queue whose ring MORI's device code writes.
type moriQueue struct {
	eq             *engine.Queue
	ring           []byte // the device ring lanes write, mapped at its address
	rptr, wptr, db uint64 // the words' device addresses
	last           uint64 // the doorbell value the engine saw last
}

// Word offsets in a queue's words region.
const (
	moriRptr = 8 * iota
	moriWptr
	moriDoorbell
	moriCachedWptr
	moriCommittedWptr
	moriWords
)

// moriQueueCall is EMUD_H_MORI_QUEUE: a = dev comm handle, peer, queueId,
// the header's ring size (CCO_SDMA_QUEUE_SIZE); it returns the ring's
// address, then rptr, wptr, doorbell, cachedWptr and committedWptr's, the
// pointers' start value and the peer's signal pool base, in a[0..7].
func moriQueueCall(a []uint64) error {
	hd := a[0]
	if hd == 0 || hd > uint64(len(rt.devcomms)) || rt.devDead[hd-1] {
		return fmt.Errorf("dev comm handle %d: not a live dev comm", hd)
	}
	dc := rt.devcomms[hd-1]
	p, q := int(a[1]), int(a[2])
	iq, err := dc.QueueOf(p, q)
	if err != nil {
		return err
	}
	id := iq.ID()
	eq := rt.j.Node.LookupQueue(id.GPU, id.Peer, id.Q)
	if eq == nil {
		return fmt.Errorf("queue %v: the engine has no such queue", id)
	}
	r := eq.Ring()
	if a[3] != r.Size() {
		return fmt.Errorf("the header's ring (CCO_SDMA_QUEUE_SIZE) is %d bytes, emud's SDMA rings are %d", a[3], r.Size())
	}
	pool, err := dc.PeerSignalPool(p)
	if err != nil {
		return err
	}
	start := r.Doorbell()
	if r.Rptr() != start || r.Wptr() != start {
		return fmt.Errorf("queue %v was used before (read pointer %#x, write pointer %#x, doorbell %#x): a MORI header's device code needs a fresh queue", id, r.Rptr(), r.Wptr(), start)
	}
	g := dc.LsaRank
	ringAddr, err := rt.mem.Alloc(g, r.Size(), fmt.Sprintf("MORI ring of queue %v", id))
	if err != nil {
		return err
	}
	words, err := rt.mem.Alloc(g, moriWords, fmt.Sprintf("MORI rptr/wptr/doorbell words of queue %v", id))
	if err != nil {
		return err
	}
	for off := uint64(0); off < moriWords; off += 8 {
		if err := rt.mem.Store64(words+off, start); err != nil {
			return err
		}
	}
	mq := &moriQueue{eq: eq, ring: unsafe.Slice((*byte)(ptr(ringAddr)), int(r.Size())),
		rptr: words + moriRptr, wptr: words + moriWptr, db: words + moriDoorbell, last: start}
	eq.OnRptr(func(v uint64) { _ = rt.mem.Store64(mq.rptr, v) })
	mq.watch()
	a[0], a[1], a[2], a[3] = ringAddr, mq.rptr, mq.wptr, mq.db
	a[4], a[5], a[6], a[7] = words+moriCachedWptr, words+moriCommittedWptr, start, pool.Base
	return nil
}

// watch waits for the next doorbell store that changes the word.
func (m *moriQueue) watch() {
	rt.mem.Watch().Watch(m.db, m.db+8, func() bool {
		v, err := rt.mem.Load64(m.db)
		return err == nil && v != m.last
	}, m.rang)
}

// rang is the engine seeing a doorbell store: it reads wptr, fetches the
// rung bytes [last doorbell, doorbell) from the device ring into the
// engine's, and rings the engine queue. A doorbell that moves back or past
// a whole ring is handed to the engine as it is, which reports it
// (DOORBELL_INVALID), without a fetch.
func (m *moriQueue) rang() {
	v, err := rt.mem.Load64(m.db)
	if err != nil {
		return
	}
	w, err := rt.mem.Load64(m.wptr)
	if err != nil {
		return
	}
	r := m.eq.Ring()
	size := r.Size()
	if v > m.last && v-m.last <= size {
		for at := m.last; at < v; {
			off := at & (size - 1)
			n := min(v-at, size-off)
			r.Write(at, m.ring[off:off+n])
			at += n
		}
		// The issuer side of emud's ring follows the raw frontier, so the
		// queue's drain and destruction see the rung work as its own.
		if base, err := r.Reserve(v - m.last); err == nil && base == m.last {
			_ = r.Submit(base, v)
		}
		m.last = v
	}
	m.eq.StoreWptr(w)
	m.eq.RingDoorbell(v)
	m.watch()
}
