package cco

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/signal"
)

// The four engine-side calls of the seed document (docs/cco-semantics.md §11).
// They post from a single issuer with no lane grouping: at thread scope the
// active lanes post one at a time, so they may share a queue; at warp/block
// scope the leader posts. Only ccoSdmaOptFlagsAggregate is accepted.

// serialCall posts through runPosts, which posts serial posts one lane at a
// time.
var serialCall = &kernel.Call[*post]{Name: "post", Run: runPosts}

// PutBroadcast is ccoSdma::putBroadcast: one broadcast COPY from srcWin+srcOff
// to dstWin+dstOff on peer and dstWin2+dstOff2 on peer2, posted on queue
// (peer, queueId); peer2 may be this rank. localSignal is one ATOMIC for the
// call; remoteSignal bumps each distinct destination peer other than this
// rank once. The destinations must be congruent mod 32: otherwise the second
// receives shifted data (debug traps).
func (s *Sdma) PutBroadcast(peer int, dstWin Window, dstOff uint64, peer2 int, dstWin2 Window, dstOff2 uint64,
	srcWin Window, srcOff uint64, bytes uint64, queueId int, o ...Option) {
	const call = "putBroadcast"
	op := s.parse(call, optsBroadcast, o)
	n := s.n()
	if n == 0 {
		return
	}
	// Non-leaders and no-ops park, EXEC bit off, at the same call.
	idle := queueId < 0 || queueId >= n || bytes == 0 || !s.leader(op.coop) || s.missing(call, peer, queueId)
	var d1, d2, src uint64
	if !idle {
		s.checkPeer(call, peer)
		s.checkPeer(call, peer2)
		d1, d2, src = dstWin.LsaPtr(peer, dstOff), dstWin2.LsaPtr(peer2, dstOff2), srcWin.LocalPtr(srcOff)
		if s.st.debug && (d1^d2)&31 != 0 {
			s.fail(call, "destinations %#x and %#x are not congruent mod 32 ((dst1 ^ dst2) & 31 = %d): the second would receive the data shifted and up to 31 neighbouring bytes overwritten",
				d1, d2, (d1^d2)&31)
		}
	}
	s.chunked(&post{call: call, o: op, peer: peer, peer2: peer2, q: queueId, dst: d1, dst2: d2,
		src: src, bytes: bytes, copy: true, broad: true, serial: true, idle: idle}, serialCall)
}

// PostWaitMem is ccoSdma::postWaitMem: park queue (peer, queueId) until
// (*local(win, off) & mask) <cmp> value, 32-bit unsigned; everything posted
// behind it on that queue waits too. The C++ defaults are cmp = SdmaCmpEq and
// mask = 0xFFFFFFFF. win/off must be this GPU's memory.
func (s *Sdma) PostWaitMem(peer, queueId int, win Window, off uint64, value uint32, cmp Cmp, mask uint32, o ...Option) {
	const call = "postWaitMem"
	op := s.parse(call, optsWait, o)
	n := s.n()
	if n == 0 {
		return
	}
	// Non-leaders and no-ops park, EXEC bit off, at the same call.
	idle := queueId < 0 || queueId >= n || !s.leader(op.coop) || s.missing(call, peer, queueId)
	var flag uint64
	if !idle {
		s.checkPeer(call, peer)
		s.checkCmp(call, cmp)
		flag = win.LocalPtr(off)
		s.checkLocalFlag(call, flag)
		writeLog(s.st.c.h.dev.Memory()).Track(flag, 4)
	}
	s.converge(&post{call: call, o: op, peer: peer, q: queueId, wait: true, flag: flag, value: value, mask: mask, cmp: cmp, serial: true, idle: idle}, serialCall)
}

// PostWaitSignal is ccoSdma::postWaitSignal: PostWaitMem on the low dword
// of this rank's signalBuf[srcRank × n + sigQueueId] with SdmaCmpGe. The
// engine compares 32 bits: expected ≥ 2^32 is truncated and releases early
// (debug traps).
func (s *Sdma) PostWaitSignal(peer, queueId, srcRank, sigQueueId int, expected uint64, o ...Option) {
	const call = "postWaitSignal"
	op := s.parse(call, optsWait, o)
	n := s.n()
	if n == 0 {
		return
	}
	// Non-leaders and no-ops park, EXEC bit off, at the same call.
	idle := queueId < 0 || queueId >= n || !s.leader(op.coop) || s.missing(call, peer, queueId)
	low, truncated := signal.Truncated32(expected)
	if !idle {
		s.checkPeer(call, peer)
	}
	if !idle && s.st.debug {
		if truncated {
			s.fail(call, "expected %d (%#x) is 2^32 or more: the engine compares 32 bits, so it would wait for low32 ≥ %d and release early", expected, expected, low)
		}
		if srcRank < 0 || srcRank >= s.dc.LsaSize || sigQueueId < 0 || sigQueueId >= n {
			s.fail(call, "signal slot [%d, %d] outside [0, %d) × [0, %d)", srcRank, sigQueueId, s.dc.LsaSize, n)
		}
	}
	flag := s.st.pool.Base + uint64(srcRank*n+sigQueueId)*signal.SlotBytes
	s.converge(&post{call: call, o: op, peer: peer, q: queueId, wait: true, flag: flag, value: low, mask: 0xFFFFFFFF, cmp: SdmaCmpGe, serial: true, idle: idle}, serialCall)
}

// PostWaitMemPutPtr is ccoSdma::postWaitMemPutPtr<localSignal, remoteSignal>:
// postWaitMem + putPtr + commit in one reservation and one doorbell, laid
// out [POLL][COPY][ATOMIC local]?[ATOMIC remote]?. dst is the peer's memory
// as mapped here (an LSA pointer), src is local, win/off the local flag.
// bytes == 0 posts the wait and the signals (nothing without signals). Over
// MaxCopyBytes it posts the wait, the chunked put and a commit. Thread scope
// only; lanes post one at a time, so on a shared queue each lane's copy
// also waits for the flags of the lanes posted before it. Use SdmaCmpEq on a
// per-call epoch: a Ge on a running total misbehaves across the u32 wrap.
func (s *Sdma) PostWaitMemPutPtr(peer, queueId int, win Window, off uint64, value uint32, cmp Cmp, mask uint32,
	dst, src uint64, bytes uint64, o ...Option) {
	const call = "postWaitMemPutPtr"
	op := s.parse(call, optsWaitPut, o)
	n := s.n()
	if n == 0 || queueId < 0 || queueId >= n || s.missing(call, peer, queueId) {
		return
	}
	s.checkPeer(call, peer)
	s.checkCmp(call, cmp)
	flag := win.LocalPtr(off)
	s.checkLocalFlag(call, flag)
	writeLog(s.st.c.h.dev.Memory()).Track(flag, 4)
	p := post{call: call, o: op, peer: peer, q: queueId, wait: true, flag: flag, value: value, mask: mask, cmp: cmp,
		dst: dst, src: src, bytes: bytes, copy: bytes > 0, sigs: true, serial: true}
	if bytes == 0 && !op.local && !op.remote {
		return
	}
	if bytes <= MaxCopyBytes {
		s.converge(&p, serialCall)
		return
	}
	// wait<Aggregate>, chunked put<Aggregate>, commit: one lane at a time.
	agg := op
	agg.flags |= SdmaOptFlagsAggregate
	s.converge(&post{call: call, o: agg, peer: peer, q: queueId, wait: true, flag: flag, value: value, mask: mask, cmp: cmp, serial: true}, serialCall)
	s.chunked(&post{call: call, o: agg, peer: peer, q: queueId, dst: dst, src: src, bytes: bytes, copy: true, serial: true}, serialCall)
	if !op.aggregate() {
		s.syncConverge(syncArgs{call: call, coop: CoopThread, peer: peer, q: queueId}, commitCall)
	}
}

func (s *Sdma) checkCmp(call string, c Cmp) {
	if c > SdmaCmpGt {
		s.fail(call, "compare function %d is not one of ccoSdmaCmp{Always, Lt, Le, Eq, Ne, Ge, Gt}", c)
	}
}

// checkLocalFlag is the seed's debug check: an engine-side wait must poll
// memory on this GPU. In release the queue parks for good instead.
func (s *Sdma) checkLocalFlag(call string, flag uint64) {
	if !s.st.debug {
		return
	}
	if g := s.st.c.h.dev.Memory().GPUOf(flag); g != s.t.GPU() {
		where := fmt.Sprintf("GPU %d's memory", g)
		if g < 0 {
			where = "no GPU's memory"
		}
		s.fail(call, "flag %#x is in %s, not this GPU's (%d): win/offset must address local memory, or the queue parks forever", flag, where, s.t.GPU())
	}
}
