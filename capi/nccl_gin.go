package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/sim"
)

// NCCL's GIN in C++ (include/nccl_device/gin.h) over SDMA, as RCCL's Anvil
// backend (NCCL_GIN_TYPE=7) runs it inside a node: a context is a queue
// per peer of the dev comm (context mod the comm's queue count), a put is
// a COPY on the queue toward its peer, its remote signal an ATOMIC ADD64
// on the peer's signal word and its local counter an ATOMIC ADD64 on this
// rank's counter word, both after the copy on the same queue
// (cco.Sdma.PutSignals); a wait is cco.Sdma.WaitWord, waitSignal's twin
// on a named word. So timing, hang reports and the race detector's edges
// are the SDMA queues' (an ATOMIC releases its word, a wait acquires it
// and pays the CU's SignalVisible). A GIN barrier is a signal to each member's barrier word
// and a wait for the epoch's count on this rank's own.
//
// Each rank's GIN words of a dev comm lie in one cco.MemAlloc'd block of
// its GPU: signals, counters, signal shadows, then barrier words (rail,
// world, hybrid rail). Lanes read signals and counters and reset them
// with atomics natively (the header); waits and posts are device calls.

// ginRank is one rank's GIN resources of one dev comm.
type ginRank struct {
	c                *cco.Comm
	dc               cco.DevComm
	nCtx, nSig, nCtr int
	nBar             [3]int // rail, world, hybrid rail barrier slots
	sig, ctr, shadow uint64 // word bases in the rank's GPU memory
	bar              [3]uint64
	epochs           map[ginBarKey]uint64 // the barrier epochs sessions persist
}

type ginBarKey struct{ kind, index int }

// ginKey is one collective dev comm creation: the comm's id and how many
// GIN dev comms its ranks made before.
type ginKey struct {
	uid cco.UniqueId
	seq int
}

var gins = newGinTable()

type ginTable struct {
	byHandle map[uint64]*ginRank          // by dev comm handle
	byKey    map[ginKey][]*ginRank        // by world rank
	made     map[cco.UniqueId]map[int]int // comm -> rank -> GIN dev comms made
	key      map[uint64]ginKey            // dev comm handle -> its creation
}

func newGinTable() ginTable {
	return ginTable{byHandle: map[uint64]*ginRank{}, byKey: map[ginKey][]*ginRank{}, made: map[cco.UniqueId]map[int]int{}, key: map[uint64]ginKey{}}
}

var ginBarNames = [3]string{"railGinBarrier", "worldGinBarrier", "hybridRailGinBarrier"}

// ginCreate is ncclDevCommCreate's GIN part (EMUD_H_GIN_CREATE), collective
// as the dev comm's creation: every rank's words exist before any rank's
// kernel can signal them.
func ginCreate(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	const call = "ncclDevCommCreate (GIN)"
	c, err := commOf(a[0])
	if err != nil {
		return bad(call, 1, err)
	}
	hd := a[1]
	if hd == 0 || hd > uint64(len(rt.devcomms)) {
		return bad(call, 1, fmt.Errorf("dev comm handle %d: not one ncclDevCommCreate made", hd))
	}
	dc := rt.devcomms[hd-1]
	n := func(i int) int { return int(int32(a[i])) }
	g := &ginRank{c: c, dc: dc, nCtx: n(2), nSig: n(3), nCtr: n(4), nBar: [3]int{n(5), n(6), n(7)}, epochs: map[ginBarKey]uint64{}}
	for i, v := range []int{g.nCtx, g.nSig, g.nCtr, g.nBar[0], g.nBar[1], g.nBar[2]} {
		if v < 0 {
			name := []string{"ginContextCount", "ginSignalCount", "ginCounterCount", "railGinBarrierCount", "worldGinBarrierCount", "barrierCount"}[i]
			return bad(call, 1, fmt.Errorf("%s %d is negative", name, v))
		}
	}
	if dc.Sdma.SdmaNumQueue == 0 {
		return bad(call, 1, fmt.Errorf("rank %d's dev comm has no SDMA queues (MORI_ENABLE_SDMA=0): emud runs GIN over SDMA", dc.Rank))
	}
	words := uint64(2*g.nSig + g.nCtr + g.nBar[0] + g.nBar[1] + g.nBar[2])
	base, err := cco.MemAlloc(c, max(words, 1)*8)
	if err != nil {
		return bad(call, 1, err)
	}
	if err := rt.mem.Fill(base, max(words, 1)*8, 0); err != nil {
		return bad(call, 1, err)
	}
	// The words' writers are remembered, so a race report can say which
	// put's signal released a wait (cco.WaitWord records it); shadows are the
	// program's own.
	if l := rt.mem.Log(); l != nil {
		for i := range words {
			if (i < uint64(g.nSig+g.nCtr) || i >= uint64(2*g.nSig+g.nCtr)) && !l.Track(base+i*8, 8) {
				break // the log is full (sim.MaxTrackedWords): reports say the rest's history is unknown
			}
		}
	}
	g.sig = base
	g.ctr = g.sig + uint64(g.nSig)*8
	g.shadow = g.ctr + uint64(g.nCtr)*8
	at := g.shadow + uint64(g.nSig)*8
	for k := range g.bar {
		g.bar[k] = at
		at += uint64(g.nBar[k]) * 8
	}
	uid := rt.commUID[a[0]-1]
	if gins.made[uid] == nil {
		gins.made[uid] = map[int]int{}
	}
	key := ginKey{uid, gins.made[uid][c.Rank]}
	gins.made[uid][c.Rank]++
	if gins.byKey[key] == nil {
		gins.byKey[key] = make([]*ginRank, c.NRanks)
	}
	gins.byKey[key][c.Rank] = g
	gins.byHandle[hd] = g
	gins.key[hd] = key
	a[8], a[9], a[10] = g.sig, g.ctr, g.shadow
	if err := barrierAll(act, c, uid, call); err != nil {
		return bad(call, 1, err)
	}
	return hipSuccess
}

// ginFree gives dev comm handle hd's GIN words back to its comm's heap
// (ncclDevCommDestroy, collective: no rank's kernel still waits on them).
func ginFree(hd uint64) error {
	g := gins.byHandle[hd]
	if g == nil {
		return nil
	}
	delete(gins.byHandle, hd)
	return cco.MemFree(g.c, g.sig)
}

// ginOf is the GIN state of dev comm handle hd, or the lane fails naming it.
func (ln *lane) ginOf(call string, hd uint64) *ginRank {
	if hd == 0 || hd > uint64(len(rt.devcomms)) {
		ln.t.Fail(call, fmt.Errorf("dev comm handle %d: not one ncclDevCommCreate made", hd))
	}
	if rt.devDead[hd-1] {
		ln.t.Fail(call, fmt.Errorf("dev comm handle %d was destroyed (ncclDevCommDestroy) before this kernel used it", hd))
	}
	g := gins.byHandle[hd]
	if g == nil {
		ln.t.Fail(call, fmt.Errorf("dev comm handle %d has no GIN resources (ncclDevCommCreate with ginSignalCount, ginCounterCount or GIN barriers)", hd))
	}
	return g
}

// peer is world rank r's GIN state of the same dev comm.
func (ln *lane) ginPeer(call string, hd uint64, r int) *ginRank {
	ps := gins.byKey[gins.key[hd]]
	if r < 0 || r >= len(ps) || ps[r] == nil {
		ln.t.Fail(call, fmt.Errorf("peer %d is not a world rank of the dev comm's %d", r, len(ps)))
	}
	return ps[r]
}

// gin runs an EMUD_OP_GIN call: a[0] which, a[1] the coop, a[2] the dev
// comm, a[3] the context; then, by call:
//
//	PUT, SIGNAL: a[4] world peer, a[5] dst window, a[6] dst offset, a[7]
//	  src window, a[8] src offset, a[9] bytes, a[10] signal (or ^0), a[11]
//	  its value, a[12] counter (or ^0), a[13] 1 for a strong signal
//	WAIT_SIGNAL, WAIT_COUNTER: a[4] index, a[5] least, a[6] bits, a[7]
//	  timeout cycles when a[8] is 1 -> 1 timed out
//	BARRIER_OPEN: a[7] kind (rail, world, hybrid rail), a[8] index, a[9]
//	  the handle's nBarriers -> the slot's epoch
//	BARRIER_SYNC: a[4:7] team (nRanks, rank, stride), a[7] kind, a[8]
//	  index, a[9] epoch, a[10] timeout cycles when a[11] is 1 -> 1 timed out
//	BARRIER_CLOSE: a[7] kind, a[8] index, a[9] epoch
func (ln *lane) gin(a []uint64) {
	t := ln.t
	coop := cco.Coop(a[1])
	switch a[0] {
	case C.EMUD_GIN_OPEN:
		g := ln.ginOf("ncclGin", a[2])
		if int(int64(a[3])) < 0 || int(int64(a[3])) >= max(g.nCtx, 1) {
			t.Fail("ncclGin", fmt.Errorf("contextIndex %d outside the dev comm's ginContextCount %d", int64(a[3]), g.nCtx))
		}
	case C.EMUD_GIN_PUT, C.EMUD_GIN_SIGNAL:
		ln.ginPost(a, coop)
	case C.EMUD_GIN_WAIT_SIGNAL, C.EMUD_GIN_WAIT_COUNTER:
		g := ln.ginOf("ncclGin::waitSignal", a[2])
		sig := a[0] == C.EMUD_GIN_WAIT_SIGNAL
		what, n, base := "signal", g.nSig, g.sig
		if !sig {
			what, n, base = "counter", g.nCtr, g.ctr
		}
		call := "ncclGin::wait" + strings.ToUpper(what[:1]) + what[1:]
		idx := int(int64(a[4]))
		if idx < 0 || idx >= n {
			t.Fail(call, fmt.Errorf("%s %d outside the dev comm's %d (gin%sCount)", what, idx, n, strings.ToUpper(what[:1])+what[1:]))
		}
		w := &cco.WordWait{Call: call, What: fmt.Sprintf("%s %d of rank %d", what, idx, g.dc.Rank), Addr: base + uint64(idx)*8,
			Least: a[5], Bits: int(int64(a[6])), Deadline: ln.ginDeadline(a[7], a[8] != 0)}
		ln.sdma(a[2]).WaitWord(w)
		if w.TimedOut {
			ln.l.ret = 1
		}
	case C.EMUD_GIN_FLUSH:
		g := ln.ginOf("ncclGin::flush", a[2])
		s := ln.sdma(a[2])
		q := int(a[3]) % g.dc.Sdma.SdmaNumQueue
		// Every queue of the context: what this lane's coop posted on it
		// has been read (and, on SDMA, written) once each has drained.
		for p := range g.dc.LsaSize {
			t.AtNative(ln.site()) // each park of the call is at the program's line
			s.QuietQueue(p, q, coop)
		}
	case C.EMUD_GIN_BARRIER_OPEN:
		g := ln.ginOf("ncclGinBarrierSession", a[2])
		k, idx := ln.ginBarSlot("ncclGinBarrierSession", g, a[7], a[8])
		if nb := int(int32(a[9])); nb != g.nBar[k] {
			t.Fail("ncclGinBarrierSession", fmt.Errorf("a barrier handle with nBarriers %d that is not this dev comm's %s (%d)", nb, ginBarNames[k], g.nBar[k]))
		}
		ln.l.ret = C.uint64_t(g.epochs[ginBarKey{k, idx}])
	case C.EMUD_GIN_BARRIER_SYNC:
		ln.ginBarrier(a, coop)
	case C.EMUD_GIN_BARRIER_CLOSE:
		g := ln.ginOf("ncclGinBarrierSession", a[2])
		k, idx := ln.ginBarSlot("ncclGinBarrierSession", g, a[7], a[8])
		g.epochs[ginBarKey{k, idx}] = a[9] // every lane of the coop stores the same epoch
	default:
		t.Fail("ncclGin", fmt.Errorf("unknown GIN call %d (headers and library out of step?)", a[0]))
	}
}

// ginBarSlot checks a GIN barrier's kind and index. An index past the
// handle's count fails the kernel (NCCL checks nothing there: its
// barrier would use words past the barriers).
func (ln *lane) ginBarSlot(call string, g *ginRank, kind, index uint64) (int, int) {
	if kind > 2 {
		ln.t.Fail(call, fmt.Errorf("unknown barrier kind %d (headers and library out of step?)", kind))
	}
	k, idx := int(kind), int(int64(index))
	if idx < 0 || idx >= g.nBar[k] {
		ln.t.Fail(call, fmt.Errorf("index %d outside the dev comm's %s (%d slots: ncclDevCommRequirements)", idx, ginBarNames[k], g.nBar[k]))
	}
	return k, idx
}

// ginPost is ncclGin::put (bytes > 0) or ::signal: the copy and then the
// ATOMICs on the queue (peer, context) of this rank.
func (ln *lane) ginPost(a []uint64, coop cco.Coop) {
	call := "ncclGin::put"
	if a[0] == C.EMUD_GIN_SIGNAL {
		call = "ncclGin::signal"
	}
	t := ln.t
	g := ln.ginOf(call, a[2])
	p := ln.ginPeer(call, a[2], int(int64(a[4])))
	var dst, src uint64
	bytes := a[9]
	if a[0] == C.EMUD_GIN_PUT && bytes > 0 {
		dw, sw := ln.window(call, a[5]), ln.window(call, a[7])
		if a[6] > dw.Bytes || bytes > dw.Bytes-a[6] {
			t.Fail(call, fmt.Errorf("destination [%d, %d) past the window's %d bytes", a[6], a[6]+bytes, dw.Bytes))
		}
		if a[8] > sw.Bytes || bytes > sw.Bytes-a[8] {
			t.Fail(call, fmt.Errorf("source [%d, %d) past the window's %d bytes", a[8], a[8]+bytes, sw.Bytes))
		}
		dst, src = dw.LsaPtr(p.dc.LsaRank, a[6]), sw.LocalPtr(a[8])
	} else {
		bytes = 0
	}
	var sigs []cco.SignalAt
	if a[10] != ^uint64(0) {
		idx := int(int64(a[10]))
		if idx < 0 || idx >= p.nSig {
			t.Fail(call, fmt.Errorf("signal %d outside the dev comm's %d (ginSignalCount)", idx, p.nSig))
		}
		sigs = append(sigs, cco.SignalAt{Addr: p.sig + uint64(idx)*8, Value: a[11]})
	}
	if a[12] != ^uint64(0) {
		idx := int(int64(a[12]))
		if idx < 0 || idx >= g.nCtr {
			t.Fail(call, fmt.Errorf("counter %d outside the dev comm's %d (ginCounterCount)", idx, g.nCtr))
		}
		sigs = append(sigs, cco.SignalAt{Addr: g.ctr + uint64(idx)*8, Value: 1})
	}
	ln.sdma(a[2]).PutSignals(call, p.dc.LsaRank, dst, src, bytes, int(a[3]), coop, sigs...)
}

// ginBarrier is one GIN barrier sync: each member's word of the slot gets
// +1 from every member, and each waits for (epoch+1) × nRanks on its own.
func (ln *lane) ginBarrier(a []uint64, coop cco.Coop) {
	const call = "ncclGinBarrierSession::sync"
	t := ln.t
	g := ln.ginOf(call, a[2])
	k, idx := ln.ginBarSlot(call, g, a[7], a[8])
	n, rank, stride := int(int32(a[4])), int(int32(a[5])), int(int32(a[6]))
	if n < 1 || rank < 0 || rank >= n {
		t.Fail(call, fmt.Errorf("team {nRanks %d, rank %d, stride %d}: rank outside [0, nRanks)", n, rank, stride))
	}
	s := ln.sdma(a[2])
	grp := coopGroup(t, uint64(coop))
	site := ln.site()
	t.AtNative(site) // each park of the call is at the program's line
	grp.Sync()       // the coop's work before the barrier is posted before its signals
	for m := range n {
		wr := g.dc.Rank + (m-rank)*stride
		p := ln.ginPeer(call, a[2], wr)
		t.AtNative(site)
		s.PutSignals(call, p.dc.LsaRank, 0, 0, 0, int(a[3]), coop, cco.SignalAt{Addr: p.bar[k] + uint64(idx)*8, Value: 1})
	}
	w := &cco.WordWait{Call: call, What: fmt.Sprintf("%s %d of rank %d (team of %d, epoch %d)", ginBarNames[k], idx, g.dc.Rank, n, a[9]),
		Addr: g.bar[k] + uint64(idx)*8, Least: (a[9] + 1) * uint64(n), Bits: 64, Deadline: ln.ginDeadline(a[10], a[11] != 0)}
	t.AtNative(site)
	s.WaitWord(w)
	t.AtNative(site)
	grp.Sync()
	if w.TimedOut {
		ln.l.ret = 1
	}
}

// ginDeadline is when a wait of timeout SM cycles from now gives up
// (-1: never), at the model's CU clock.
func (ln *lane) ginDeadline(cycles uint64, timed bool) sim.Time {
	if !timed {
		return -1
	}
	ghz := 2.4
	if m := rt.j.Node.Model(); m != nil {
		ghz = m.CUClockGHz()
	}
	return ln.t.Now() + sim.Time(float64(cycles)/ghz*float64(sim.Nanosecond))
}
