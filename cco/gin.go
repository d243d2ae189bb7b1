package cco

// GIN over SDMA (RCCL's Anvil backend, NCCL_GIN_TYPE=7), for emud's C++
// nccl_device.h (capi): an ncclGin put is a COPY on the queue of its
// connection (peer, context mod n) followed by ATOMIC ADD64s at addresses
// the caller names (the peer's signal, this rank's counter), not at the
// signal pool's slots a ccoSdma put bumps. The queue runs its packets in
// order, so the ATOMICs land after the copy has read its source and
// written its destination. A GIN wait (WaitWord) waits for such a word
// as waitSignal waits for a pool slot.

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

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

// WordWait is one lane's wait for the 64-bit word at Addr to reach Least
// in NCCL's rolling compare of Bits bits (the word is at least Least when
// (word - Least) mod 2^Bits is at most 2^(Bits-1) - 1): a GIN waitSignal,
// waitCounter or barrier wait. Call names the wait and What the word in
// hang reports ("ncclGin::waitSignal on signal 3 of rank 2: expects 8, has
// 7"). Deadline < 0 waits for ever; otherwise TimedOut says whether the
// deadline passed first.
type WordWait struct {
	Call, What string
	Addr       uint64
	Least      uint64
	Bits       int
	Deadline   sim.Time
	TimedOut   bool

	mem Memory
	h   *Host
	who string // the waiting wave
}

func (w *WordWait) value() uint64 {
	v, _ := w.mem.Load64(w.Addr)
	return v
}

// done is NCCL's rolling_less_equal(Least, value, Bits).
func (w *WordWait) done() bool {
	m := ^uint64(0) >> (64 - w.Bits)
	return (w.value()-w.Least)&m <= m>>1
}

var wordWaitCall = &kernel.Call[*WordWait]{Name: "ncclGin wait", Run: runWordWait}

// WaitWord waits, as waitSignal does, until w's word has reached its value
// or w's deadline passed: the lanes of a wave that call it together wait
// together, each then acquires the word it waited on (what the ATOMICs
// that raised it released), and the wave pays the CU's SignalVisible.
func (s *Sdma) WaitWord(w *WordWait) {
	if w.Bits < 1 || w.Bits > 64 {
		s.fail(w.Call, "bits %d outside [1, 64]", w.Bits)
	}
	w.mem, w.h, w.TimedOut = s.st.c.h.dev.Memory(), s.st.c.h, false
	w.who = s.t.Who()
	if i := strings.LastIndex(w.who, " lane "); i > 0 {
		w.who = w.who[:i]
	}
	kernel.Converge(s.t, wordWaitCall, w)
}

func runWordWait(g *kernel.Active, ws []*WordWait) error {
	act := g.Actor()
	mem := ws[0].mem
	pending := func() []*WordWait {
		var p []*WordWait
		for _, w := range ws {
			if !w.TimedOut && !w.done() {
				p = append(p, w)
			}
		}
		return p
	}
	for p := pending(); len(p) > 0; p = pending() {
		lo, hi := p[0].Addr, p[0].Addr+8
		deadline := sim.Time(-1)
		for _, w := range p {
			lo, hi = min(lo, w.Addr), max(hi, w.Addr+8)
			if w.Deadline >= 0 && (deadline < 0 || w.Deadline < deadline) {
				deadline = w.Deadline
			}
		}
		what := func() string {
			var parts []string
			seen := map[string]bool{}
			for _, w := range p {
				s := fmt.Sprintf("%s on %s: expects %d, has %d (%s)", w.Call, w.What, w.Least, w.value(), w.who)
				if !seen[s] {
					seen[s] = true
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, "; ")
		}
		all := func() bool { return len(pending()) == 0 }
		at, timed := mem.(awaitTimeout)
		if deadline < 0 || !timed {
			mem.Await(act, lo, hi-lo, all, what)
			continue
		}
		if !at.AwaitTimeout(act, lo, hi-lo, all, what, max(deadline-act.Now(), 0)) {
			for _, w := range p {
				if w.Deadline >= 0 && act.Now() >= w.Deadline && !w.done() {
					w.TimedOut = true
				}
			}
		}
	}
	if d := act.Sim().Race(); d != nil {
		sp := d.Space(mem, "LSA memory")
		t := act.RaceThread()
		now := int64(act.Now())
		for _, w := range ws {
			if !w.TimedOut {
				t.Acquire(d.AddrSync(sp, w.Addr))
				t.Waited(signalWait(mem, w.Addr, fmt.Sprintf("%s on %s ≥ %d", w.Call, w.What, w.Least), now))
			}
		}
	}
	ws[0].h.cuSpend(act, model.SignalVisible, 1) // the wave sees its words once

	return nil
}
