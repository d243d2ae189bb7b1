package cco

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// The issuer-side protocol steps, with MORI's debug checks (docs/cco-semantics.md
// §10) and the bookkeeping the hang diagnosis reads.

func queueName(st *devState, peer, q int) string {
	return fmt.Sprintf("rank %d → %d queue %d", st.c.LsaRank, peer, q)
}

// claim is the reservation fetch-add. Under debug it traps at once when the
// reservation can only fit after a commit that this wave itself owes: the
// unrung bytes ahead of it are the wave's own uncommitted Aggregate batch
// (check 1, and the seed's "aggregate batch that cannot fit the ring").
func claim(t *kernel.Thread, p *post, q *Queue, bytes uint64) (uint64, error) {
	st := p.s.st
	if r := q.Pointers(); st.debug && bytes <= r.Capacity && r.CachedWptr+bytes > r.Capacity {
		base := r.CachedWptr
		need := base + bytes - r.Capacity // the rptr the reservation needs
		own := st.c.h.diag.aggOf(q, t.Wave())
		if need > r.CommittedWptr && own > 0 && own >= base-r.CommittedWptr {
			return 0, t.Error(p.call, fmt.Errorf("debug check 1 (ring full): %s holds %d B of this wave's uncommitted Aggregate posts; %d B more cannot fit the ring's %d B before a commit (a batch must fit in 256 KiB − 32 B with one unit to spare): commit sooner",
				queueName(st, p.peer, p.q), own, bytes, r.Capacity))
		}
	}
	base, err := q.Claim(bytes)
	if err != nil {
		return 0, t.Error(p.call, err)
	}
	return base, nil
}

func awaitSpace(a *sim.Actor, t *kernel.Thread, p *post, q *Queue, base, bytes uint64) {
	if q.Fits(base, bytes) {
		return
	}
	d := p.s.st.c.h.diag
	d.enter(t.Wave(), waitInfo{kind: waitSpace, call: p.call, st: p.s.st, q: q, peer: p.peer, qid: p.q, base: base, end: base + bytes})
	q.AwaitSpace(a, base, bytes)
	d.leave(t.Wave())
}

// awaitChain is the commit-chain spin. Under debug it traps when the chain
// waits on this wave's own uncommitted Aggregate posts (check 2): an
// Aggregate batch followed by a put without Aggregate before commit.
func awaitChain(a *sim.Actor, t *kernel.Thread, p *post, q *Queue, base, end uint64) error {
	st := p.s.st
	d := st.c.h.diag
	if !q.CanSubmit(base) && st.debug {
		if own := d.aggOf(q, t.Wave()); own > 0 {
			return t.Error(p.call, fmt.Errorf("debug check 2 (commit chain stalled): %s has %d B of this wave's Aggregate posts reserved but never committed ahead of this post; its doorbell would wait for them forever: call commit() first",
				queueName(st, p.peer, p.q), own))
		}
	}
	if q.CanSubmit(base) {
		return nil
	}
	d.enter(t.Wave(), waitInfo{kind: waitChain, call: p.call, st: st, q: q, peer: p.peer, qid: p.q, base: base, end: end})
	q.AwaitChain(a, base, end)
	d.leave(t.Wave())
	st.c.h.cuSpend(a, model.ChainObserve, 1)
	return nil
}

// drain is ccoSdmaDrainQueue: target = committedWptr, then wait for rptr.
// Under debug it traps when Aggregate posts on the queue were never
// committed (check 4), since quiet would return without them.
func drain(a *sim.Actor, t *kernel.Thread, s *Sdma, call string, peer, qid int) error {
	st := s.st
	q := st.existing(peer, qid)
	if q == nil {
		return nil // never used: nothing rung, nothing reserved
	}
	d := st.c.h.diag
	if r := q.Pointers(); st.debug && r.CachedWptr > r.CommittedWptr && d.aggTotal(q) > 0 {
		return t.Error(call, fmt.Errorf("debug check 4 (uncommitted Aggregate puts): %s has %d B reserved but not rung at quiet time (cachedWptr %#x > committedWptr %#x); quiet drains only to the last rung packet: call commit() first",
			queueName(st, peer, qid), r.CachedWptr-r.CommittedWptr, r.CachedWptr, r.CommittedWptr))
	}
	target := q.QuietTarget()
	if q.Drained(target) {
		q.AwaitDrained(a, target) // returns at once: the race detector's acquire
		return nil
	}
	d.enter(t.Wave(), waitInfo{kind: waitDrain, call: call, st: st, q: q, peer: peer, qid: qid, end: target})
	q.AwaitDrained(a, target)
	d.leave(t.Wave())
	return nil
}
