package cco

// GIN over SDMA (RCCL's Anvil backend, NCCL_GIN_TYPE=7), for emud's C++
// nccl_device.h (capi): an ncclGin put is a COPY on the queue of its
// connection (peer, context mod n) followed by ATOMIC ADD64s at addresses
// the caller names (the peer's signal, this rank's counter), not at the
// signal pool's slots a ccoSdma put bumps. The queue runs its packets in
// order, so the ATOMICs land after the copy has read its source and
// written its destination.

// SignalAt is one trailing ATOMIC ADD64 of a GIN post: Value added to the
// 64-bit word at Addr (an address of the flat LSA space).
type SignalAt struct{ Addr, Value uint64 }

// MaxSignalsAt is how many ATOMICs one GIN post may carry (a remote
// signal and a local counter).
const MaxSignalsAt = 2

// PutSignals posts, through queue (peer, queueId), a copy of bytes from
// src to dst (none when bytes is 0) and then one ATOMIC ADD64 per sig.
// call names the post in reports. Each lane that calls it posts its own
// packets (no wave grouping: every lane's signals are its own, as each
// GIN put's are); with CoopWarp or CoopBlock only the group's leader
// posts. Like Put, it does not wait.
func (s *Sdma) PutSignals(call string, peer int, dst, src, bytes uint64, queueId int, coop Coop, sigs ...SignalAt) {
	o := s.parse(call, optsPut, []Option{coop})
	if len(sigs) > MaxSignalsAt {
		s.fail(call, "%d signals on one post; at most %d", len(sigs), MaxSignalsAt)
	}
	n := s.n()
	if n == 0 {
		s.fail(call, "rank %d's dev comm has no SDMA queues (MORI_ENABLE_SDMA=0?): GIN over SDMA needs them", s.dc.Rank)
	}
	idle := (bytes == 0 && len(sigs) == 0) || !s.leader(o.coop) || s.missing(call, peer, queueId%n)
	if !idle {
		s.checkPeer(call, peer)
	}
	s.p = post{call: call, o: o, peer: peer, q: queueId % n, dst: dst, src: src, bytes: bytes, copy: bytes > 0, idle: idle, serial: true}
	s.p.nAt = copy(s.p.at[:], sigs)
	s.p.custom = true
	s.chunked(&s.p, putCall)
}
