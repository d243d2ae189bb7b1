//go:build cgo

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"unsafe"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
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
	ringAddr       uint64 // its device address
	rptr, wptr, db uint64 // the words' device addresses
	last           uint64 // the doorbell value the engine saw last
	// With the race detector on: the lane that last stored each 32-byte
	// unit of the ring (by ring offset) and the thread that stored the
	// doorbell, as marks taken when they did.
	marks map[uint64]race.Mark
	bell  race.Mark
	// hd is the dev comm the queue is of (moriFree hands its ring and
	// words back at ccoDevCommDestroy: rptr is the words' base); wh the
	// doorbell watch armed now; dead says the dev comm was destroyed.
	hd   uint64
	wh   sim.WatchHandle
	dead bool
}

// moriMem is a destroyed dev comm's ring and words, kept for the next
// queue of the same GPU and ring size (moriQueueCall).
type moriMem struct {
	ring, size, words uint64
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
	pool, err := moriPeerPool(hd, p)
	if err != nil {
		return err
	}
	start := r.Doorbell()
	if r.Rptr() != start || r.Wptr() != start {
		return fmt.Errorf("queue %v was used before (read pointer %#x, write pointer %#x, doorbell %#x): a MORI header's device code needs a fresh queue", id, r.Rptr(), r.Wptr(), start)
	}
	g := dc.LsaRank
	ringAddr, words, err := moriMemFor(g, r.Size(), id.String())
	if err != nil {
		return err
	}
	for off := uint64(0); off < moriWords; off += 8 {
		if err := rt.mem.Store64(words+off, start); err != nil {
			return err
		}
	}
	mq := &moriQueue{eq: eq, ring: unsafe.Slice((*byte)(ptr(ringAddr)), int(r.Size())), ringAddr: ringAddr,
		rptr: words + moriRptr, wptr: words + moriWptr, db: words + moriDoorbell, last: start, hd: hd}
	eq.OnRptr(func(v uint64) {
		if !mq.dead { // its words may be another dev comm's queue's now
			_ = rt.mem.Store64(mq.rptr, v)
		}
	})
	mq.watch()
	moriRings = append(moriRings, mq)
	a[0], a[1], a[2], a[3] = ringAddr, mq.rptr, mq.wptr, mq.db
	a[4], a[5], a[6], a[7] = words+moriCachedWptr, words+moriCommittedWptr, start, pool
	return nil
}

// The ranks' signal pools of each dev comm, noted as each rank creates
// it, before the collective's barrier. A rank's queues take their peers'
// pool bases after the barrier (ccoDevCommCreate's EMUD_H_MORI_QUEUE
// calls), when a peer that left the barrier first may have destroyed its
// comm already (nothing stops it: MORI's ccoDevCommCreate has every peer
// address by the end of its collective): reading them from the peer's
// comm then failed ("peer 0 has not created dev comm #2", MORI's
// test_gda_modes, whose rank 0 destroys its comm straight after).
type moriDevKey struct {
	uid cco.UniqueId
	seq int // the dev comm's place among its rank's ccoDevCommCreate calls on the comm
}

var (
	moriDevSeq  = map[cco.UniqueId]map[int]int{}
	moriDevOf   = map[uint64]moriDevKey{} // by dev comm handle
	moriPoolsOf = map[moriDevKey][]uint64{}
)

// moriNoteDevComm notes rank c.Rank's dev comm hd and its signal pool.
func moriNoteDevComm(c *cco.Comm, uid cco.UniqueId, hd uint64, pool uint64) {
	s := moriDevSeq[uid]
	if s == nil {
		s = map[int]int{}
		moriDevSeq[uid] = s
	}
	k := moriDevKey{uid: uid, seq: s[c.Rank]}
	s[c.Rank]++
	ps := moriPoolsOf[k]
	if ps == nil {
		ps = make([]uint64, c.NRanks)
		moriPoolsOf[k] = ps
	}
	ps[c.Rank] = pool
	moriDevOf[hd] = k
}

// moriPeerPool is peer p's signal pool base of the dev comm hd is one of.
func moriPeerPool(hd uint64, p int) (uint64, error) {
	k, ok := moriDevOf[hd]
	ps := moriPoolsOf[k]
	if !ok || p < 0 || p >= len(ps) || ps[p] == 0 {
		return 0, fmt.Errorf("peer %d has not created this dev comm (ccoDevCommCreate is collective: every rank creates it before kernels signal)", p)
	}
	return ps[p], nil
}

// moriMemFor returns a ring of size bytes and a words region on GPU g: a
// destroyed dev comm's (moriFree) when one of that GPU and size is kept,
// its ring zeroed as a fresh one is, else new memory. Before, every dev
// comm's queues took new memory and kept their doorbell watches for the
// rest of the run: a program that made and destroyed a dev comm a round
// (MORI's test_lsa_memcheck, 100 rounds) lost device memory each round,
// which hipMemGetInfo showed as a leak MORI does not have, and every
// lane's store and call scanned more watches and rings each round (its
// round 17 took 3.5 s).
func moriMemFor(g int, size uint64, queue string) (ring, words uint64, err error) {
	spare := moriSpare[g]
	for i, m := range spare {
		if m.size != size {
			continue
		}
		moriSpare[g] = append(spare[:i], spare[i+1:]...)
		if err := rt.mem.Fill(m.ring, size, 0); err != nil {
			return 0, 0, err
		}
		return m.ring, m.words, nil
	}
	if ring, err = rt.mem.Alloc(g, size, "MORI ring of queue "+queue); err != nil {
		return 0, 0, err
	}
	if words, err = rt.mem.Alloc(g, moriWords, "MORI rptr/wptr/doorbell words of queue "+queue); err != nil {
		return 0, 0, err
	}
	return ring, words, nil
}

// moriFree is ccoDevCommDestroy for the MORI rings of dev comm hd: their
// doorbell watches end, their memory goes to moriSpare, and lanes' stores
// still pending in them are forgotten (the kernels that made them ended
// before the destroy, or the destroy is the program's bug; either way
// they belong to no ring now).
func moriFree(hd uint64) {
	kept, gone := moriRings[:0], []*moriQueue(nil)
	for _, m := range moriRings {
		if m.hd != hd {
			kept = append(kept, m)
			continue
		}
		m.dead = true
		m.wh.Cancel()
		g := rt.mem.GPUOf(m.ringAddr)
		moriSpare[g] = append(moriSpare[g], moriMem{ring: m.ringAddr, size: uint64(len(m.ring)), words: m.rptr - moriRptr})
		gone = append(gone, m)
	}
	clear(moriRings[len(kept):])
	moriRings = kept
	for ln, ss := range moriPending {
		left := slices.DeleteFunc(ss, func(st moriStore) bool {
			return slices.ContainsFunc(gone, func(m *moriQueue) bool { return m.holds(st.lo, st.hi) })
		})
		if len(left) == 0 {
			delete(moriPending, ln)
		} else {
			moriPending[ln] = left
		}
	}
}

// holds reports whether the device range [lo, hi) overlaps m's ring.
func (m *moriQueue) holds(lo, hi uint64) bool {
	return lo < m.ringAddr+uint64(len(m.ring)) && hi > m.ringAddr
}

// watch waits for the next doorbell store that changes the word.
func (m *moriQueue) watch() {
	m.wh = rt.mem.Watch().Watch(m.db, m.db+8, func() bool {
		v, err := rt.mem.Load64(m.db)
		rang := err == nil && v != m.last
		if t := rt.s.RaceCurrent(); rang && t != nil {
			m.bell = t.Mark() // the writer of the doorbell, as it stores it
		}
		return rang
	}, m.rang)
}

// rang is the engine seeing a doorbell store: it reads wptr, fetches the
// rung bytes [last doorbell, doorbell) from the device ring into the
// engine's, and rings the engine queue. A doorbell that moves back or past
// a whole ring is handed to the engine as it is, which reports it
// (DOORBELL_INVALID), without a fetch. Fetched bytes a lane stored but had
// not published are the publish edge's (moriPending).
func (m *moriQueue) rang() {
	if m.dead {
		return
	}
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
		var stale []moriStore
		for at := m.last; at < v; {
			off := at & (size - 1)
			n := min(v-at, size-off)
			r.Write(at, m.ring[off:off+n])
			for u := off &^ 31; u < off+n && len(m.marks) > 0; u += 32 {
				if mk, ok := m.marks[u]; ok {
					m.eq.RaceWrittenBy(at+(u-off), mk)
					delete(m.marks, u)
				}
			}
			for _, s := range unpublished(m.ringAddr+off, m.ringAddr+off+n) {
				if rt.s.Race() != nil {
					rt.s.Fail(&MoriPublishError{Queue: m.eq.ID().String(), Doorbell: v, DbAddr: m.db, Lo: s.lo, Hi: s.hi,
						Store: s.at, Lane: s.who, Arch: os.Getenv("EMUD_ARCH")})
					return
				}
				stale = append(stale, moriStore{lo: at + (s.lo - m.ringAddr - off), hi: at + (s.hi - m.ringAddr - off)})
			}
			at += n
		}
		m.perturb(stale)
		m.eq.RaceRangBy(v, m.bell)
		// The issuer side of emud's ring follows the raw frontier, so the
		// queue's drain and destruction see the rung work as its own. A
		// header that fills the whole ring (MORI's full-ring rule) rings
		// more than one reservation of emud's ring may take (its capacity
		// leaves a unit spare): it is followed in pieces.
		for at := m.last; at < v; {
			n := min(v-at, r.Capacity())
			if base, err := r.Reserve(n); err != nil || base != at || r.Submit(base, at+n) != nil {
				break
			}
			at += n
		}
		m.last = v
	}
	m.eq.StoreWptr(w)
	m.eq.RingDoorbell(v)
	m.watch()
}

// perturb makes each unpublished store the engine fetched (ring pointers
// [lo, hi)) not yet landed with even odds under timing perturbation: the
// engine's copy holds zero bytes there, as a fresh ring does.
func (m *moriQueue) perturb(stale []moriStore) {
	if len(stale) == 0 || !rt.s.Perturb().On() {
		return
	}
	if moriRng == nil {
		moriRng = rt.s.Rand(0x6d6f7269) // "mori"
	}
	r := m.eq.Ring()
	for _, s := range stale {
		if moriRng.IntN(2) == 0 {
			r.Write(s.lo, make([]byte, s.hi-s.lo))
		}
	}
}

// The publish edge. A lane's ring stores reach the engine in order only
// through MORI's publish sequence: the storing lane's own s_waitcnt(0)
// (gfx9) or release fence (gfx1250), then a doorbell store. moriPending
// keeps, per lane, its plain stores into a MORI ring since its last
// publish (a fence of emud's: what emud/amdgcn.h makes s_waitcnt and the
// AMDGCN fence); a fetch of ring bytes one of them covers is, with the
// race detector on, a *MoriPublishError naming the store, the doorbell
// and the missing wait, and under timing perturbation without the
// detector, the store may not have landed yet: the engine then fetches
// the bytes as they were (zero, a fresh ring's), so a release run can
// decode a corrupt packet, as #502's missing s_waitcnt let hardware do.
var (
	moriRings   []*moriQueue          // every live MORI ring, for moriNoteStore's filter
	moriSpare   = map[int][]moriMem{} // destroyed dev comms' rings by GPU (moriFree)
	moriPending = map[*lane][]moriStore{}
	moriRng     *rand.Rand // perturbation's draws of which unpublished stores landed
)

// moriPendingMax bounds a lane's list: a lane that writes a ring without
// ever publishing keeps its newest stores.
const moriPendingMax = 1024

type moriStore struct {
	lo, hi uint64 // device addresses stored
	at     string // the store's file:line
	who    string // the lane
}

// moriNoteStore records a lane's plain store of [lo, hi) at pc if it lies
// in a MORI ring (a cheap no-op when no program built against a MORI
// header made one).
func moriNoteStore(ln *lane, lo, hi uint64, at string) {
	if len(moriRings) == 0 {
		return
	}
	for _, r := range moriRings {
		if r.holds(lo, hi) {
			if t := ln.t.RaceThread(); t != nil {
				if r.marks == nil {
					r.marks = map[uint64]race.Mark{}
				}
				mk := t.Mark()
				for u := (max(lo, r.ringAddr) - r.ringAddr) &^ 31; u < min(hi, r.ringAddr+uint64(len(r.ring)))-r.ringAddr; u += 32 {
					r.marks[u] = mk
				}
			}
			p := append(moriPending[ln], moriStore{lo: lo, hi: hi, at: at, who: ln.who()})
			if len(p) > moriPendingMax {
				p = p[len(p)-moriPendingMax:]
			}
			moriPending[ln] = p
			return
		}
	}
}

// moriPublished is the lane's publish: its stores so far have landed.
func moriPublished(ln *lane) {
	if len(moriPending) > 0 {
		delete(moriPending, ln)
	}
}

// MoriPublishError is an engine fetch of ring bytes a lane stored but had
// not published before the doorbell that rang them.
type MoriPublishError struct {
	Queue    string // the engine queue
	Doorbell uint64 // the doorbell value that rang the bytes
	DbAddr   uint64 // the doorbell word
	Lo, Hi   uint64 // the unpublished bytes fetched
	Store    string // the lane's store, file:line
	Lane     string // the storing lane
	Arch     string
}

func (e *MoriPublishError) Error() string {
	wait := "s_waitcnt(0) (__builtin_amdgcn_s_waitcnt, MORI's ccoSdmaPublishStores on gfx9)"
	if e.Arch == "gfx1250" {
		wait = "release fence (__builtin_amdgcn_fence(__ATOMIC_RELEASE, \"agent\"), MORI's ccoSdmaPublishStores on gfx1250)"
	}
	return fmt.Sprintf("MORI ring publish: the engine of queue %s fetched ring bytes [%#x, %#x) that %s stored at %s and had not published: "+
		"the doorbell store of %#x to %#x rang them with no %s by the storing lane between its store and the doorbell; on hardware the engine may fetch them before they land",
		e.Queue, e.Lo, e.Hi, e.Lane, e.Store, e.Doorbell, e.DbAddr, wait)
}

// unpublished returns the pending stores that overlap the device range
// [lo, hi), in a fixed order (lanes by name, stores in program order).
func unpublished(lo, hi uint64) []moriStore {
	var out []moriStore
	for _, ss := range moriPending {
		for _, s := range ss {
			if s.lo < hi && s.hi > lo {
				out = append(out, moriStore{lo: max(s.lo, lo), hi: min(s.hi, hi), at: s.at, who: s.who})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].who != out[j].who {
			return out[i].who < out[j].who
		}
		return out[i].lo < out[j].lo
	})
	return out
}

// moriRptrIn is the live MORI queue whose read-pointer word lies in
// [lo, hi), or nil.
func moriRptrIn(lo, hi uint64) *moriQueue {
	for _, m := range moriRings {
		if m.rptr >= lo && m.rptr < hi && !m.dead {
			return m
		}
	}
	return nil
}

// drainedBy orders lane thread t, which loaded the queue's read-pointer
// word, after the retired packets up to the read pointer that it knew of
// (its own posts, and those ordered before it): a MORI header's quiet
// and ring-full waits poll that word, and the engine's write-back of it
// was no edge, so every put a quiet drained raced with its reader (MORI's
// test_sdma_put under EMUD_RACE=1). The word is read when the lane's
// access log is flushed, at its next device call: it may have grown since
// the load, an over-approximation that can hide a race, never invent one.
func (m *moriQueue) drainedBy(t *race.Thread) {
	if v, err := rt.mem.Load64(m.rptr); err == nil {
		m.eq.RaceDrainedBy(t, v)
	}
}
