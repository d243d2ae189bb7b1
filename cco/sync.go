package cco

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
)

// syncArgs is one lane's arguments to commit, quiet, quietQueue and
// waitSignal.
type syncArgs struct {
	s        *Sdma
	call     string
	coop     Coop
	peer     int
	q        int
	src      int
	expected uint64
	idle     bool // a member of the coop group that waits while its leader runs the call
}

// syncConverge parks the lane at c with a, kept in the lane's Sdma: the
// call reads it only while the lane waits there (a copy on the heap was
// two allocations of every sync call).
func (s *Sdma) syncConverge(a syncArgs, c *kernel.Call[*syncArgs]) {
	a.s = s
	s.sa = a
	kernel.ConvergeIf(s.t, c, &s.sa, !a.idle)
}

var commitCall = &kernel.Call[*syncArgs]{Name: "commit", Run: func(g *kernel.Active, args []*syncArgs) error {
	// One doorbell store per ringing lane, in parallel across the wave.
	args[0].s.st.c.h.cuSpend(g.Actor(), model.Submit, 1)
	for i, t := range g.Lanes() {
		a := args[i]
		st := a.s.st
		ring := func(q int) error {
			qu := st.existing(a.peer, q)
			if qu == nil {
				return nil // never used: nothing to ring
			}
			qu.Commit()
			st.c.h.diag.committed(qu)
			return nil
		}
		switch a.coop {
		case CoopThread:
			if err := ring(a.q); err != nil {
				return err
			}
		case CoopWarp: // lane l < n rings queue l; queueId is ignored
			if t.Lane() < st.n {
				if err := ring(t.Lane()); err != nil {
					return err
				}
			}
		case CoopBlock: // thread t < n of the block rings queue t
			if t.ThreadIdx() < st.n {
				if err := ring(t.ThreadIdx()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}}

// Commit is ccoSdma::commit<Coop>(peer, queueId): ring what was posted with
// Aggregate but not yet rung, by anyone: [committedWptr, cachedWptr). It does
// not wait. Thread scope rings queue queueId; warp scope rings every queue of
// the peer (lane l rings queue l; queueId is ignored); block scope the same
// with thread t.
func (s *Sdma) Commit(peer, queueId int, o ...Option) {
	op := s.parse("commit", optsScoped, o)
	n := s.n()
	if n == 0 {
		return
	}
	if op.coop == CoopThread && (queueId < 0 || queueId >= n) {
		return
	}
	s.checkPeer("commit", peer)
	s.syncConverge(syncArgs{call: "commit", coop: op.coop, peer: peer, q: queueId}, commitCall)
}

var quietCall = &kernel.Call[*syncArgs]{Name: "quiet", Run: func(g *kernel.Active, args []*syncArgs) error {
	reads := 0 // most rptr reads any one lane makes; lanes read in parallel
	for i, t := range g.Lanes() {
		a := args[i]
		n := a.s.st.n
		first, step := 0, 1
		switch a.coop {
		case CoopWarp:
			first, step = t.Lane(), t.WarpSize()
		case CoopBlock:
			first, step = t.ThreadIdx(), t.BlockDim()
		}
		r := 0
		for q := first; q < n; q += step {
			if err := drain(g.Actor(), t, a.s, a.call, a.peer, q); err != nil {
				return err
			}
			r++
		}
		reads = max(reads, r)
	}
	rptrReads(g, args, reads)
	return nil
}}

// rptrReads spends the CU time of n uncached read-pointer reads: every
// queue quiet visits costs one, even when idle (MORI cco.hpp).
func rptrReads(g *kernel.Active, args []*syncArgs, n int) {
	if n > 0 {
		args[0].s.st.c.h.cuSpend(g.Actor(), model.RptrRead, n)
	}
}

// Quiet is ccoSdma::quiet<Coop>(peer): wait until every queue toward peer
// has drained to its last rung packet. At thread scope every calling lane
// drains all of them; at warp/block scope thread r drains queues r, r+size,
// …, then the group syncs, so every member must call.
func (s *Sdma) Quiet(peer int, o ...Option) {
	op := s.parse("quiet", optsScoped, o)
	if s.n() == 0 {
		return
	}
	s.checkPeer("quiet", peer)
	s.syncConverge(syncArgs{call: "quiet", coop: op.coop, peer: peer}, quietCall)
	s.coopSync(op.coop)
}

var quietQueueCall = &kernel.Call[*syncArgs]{Name: "quietQueue", Run: func(g *kernel.Active, args []*syncArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if err := drain(g.Actor(), t, a.s, a.call, a.peer, a.q); err != nil {
			return err
		}
	}
	rptrReads(g, args, 1)
	return nil
}}

// QuietQueue is ccoSdma::quietQueue<Coop>(peer, queueId): wait until one
// queue has drained. At warp/block scope only rank 0 polls, then the group
// syncs: every member must call, even with an out-of-range queueId.
func (s *Sdma) QuietQueue(peer, queueId int, o ...Option) {
	op := s.parse("quietQueue", optsScoped, o)
	n := s.n()
	if n == 0 {
		return
	}
	g := s.group(op.coop)
	active := g.ThreadRank() == 0 && queueId >= 0 && queueId < n
	if active {
		s.checkPeer("quietQueue", peer)
	} else if op.coop == CoopThread {
		return
	}
	// The other members wait at the call, EXEC bit off, while rank 0 polls.
	s.syncConverge(syncArgs{call: "quietQueue", coop: op.coop, peer: peer, q: queueId, idle: !active}, quietQueueCall)
	s.coopSync(op.coop)
}

func (s *Sdma) group(c Coop) kernel.Group {
	switch c {
	case CoopWarp:
		return s.t.WarpGroup()
	case CoopBlock:
		return s.t.BlockGroup()
	}
	return s.t.ThreadGroup()
}

func (s *Sdma) coopSync(c Coop) { s.group(c).Sync() }

var waitSignalCall = &kernel.Call[*syncArgs]{Name: "waitSignal", Run: runWaitSignal}

// WaitSignal is ccoSdma::waitSignal(srcRank, queueId, expected): spin until
// this rank's slot signalBuf[srcRank × n + queueId] is at least expected (a
// 64-bit >=, so no increment is missed). expected is the caller's running
// total for (srcRank, queueId); srcRank is an LSA rank.
func (s *Sdma) WaitSignal(srcRank, queueId int, expected uint64) {
	n := s.n()
	if n == 0 || queueId < 0 || queueId >= n {
		return
	}
	if s.st.debug && (srcRank < 0 || srcRank >= s.dc.LsaSize) {
		s.fail("waitSignal", "debug check 5 (bad srcRank): srcRank %d outside the LSA ranks [0, %d) (pass devComm.lsaRank values, not world ranks)", srcRank, s.dc.LsaSize)
	}
	s.syncConverge(syncArgs{call: "waitSignal", src: srcRank, q: queueId, expected: expected}, waitSignalCall)
}

// sigWait is one lane's waitSignal.
type sigWait struct {
	t        *kernel.Thread
	st       *devState
	src, q   int
	addr     uint64
	expected uint64
}

func (w *sigWait) done(mem Memory) bool {
	v, err := mem.Load64(w.addr)
	return err == nil && v >= w.expected
}

// runWaitSignal spins the lanes together until every lane's slot has
// reached its expected value (the loop exits only when all lanes have).
func runWaitSignal(g *kernel.Active, args []*syncArgs) error {
	var ws []*sigWait
	var buf []sigWait
	var mem Memory
	var lo, hi uint64
	for i, t := range g.Lanes() {
		a := args[i]
		st := a.s.st
		mem = st.c.h.dev.Memory()
		// Release builds index the pool without a bound, as MORI does.
		addr := st.pool.Base + uint64(a.src*st.n+a.q)*8
		if err := mem.Check("waitSignal", addr, 8); err != nil {
			return t.Error(a.call, fmt.Errorf("memory access fault reading signal slot [%d × %d + %d] at %#x: %w", a.src, st.n, a.q, addr, err))
		}
		w := sigWait{t: t, st: st, src: a.src, q: a.q, addr: addr, expected: a.expected}
		if w.done(mem) {
			continue
		}
		if ws == nil {
			// The waits of all lanes in two allocations, not one each.
			n := len(g.Lanes())
			buf, ws = make([]sigWait, 0, n), make([]*sigWait, 0, n)
		}
		if len(ws) == 0 || addr < lo {
			lo = addr
		}
		hi = max(hi, addr+8)
		buf = append(buf, w)
		ws = append(ws, &buf[len(buf)-1])
	}
	h := args[0].s.st.c.h
	defer h.cuSpend(g.Actor(), model.SignalVisible, 1)
	defer raceSignalsSeen(g, args)
	if len(ws) == 0 {
		return nil
	}
	all := func() bool {
		for _, w := range ws {
			if !w.done(mem) {
				return false
			}
		}
		return true
	}
	d := ws[0].st.c.h.diag
	d.enter(g.Wave(), waitInfo{kind: waitSig, call: "waitSignal", st: ws[0].st, sigs: ws})
	mem.Await(g.Actor(), lo, hi-lo, all, func() string {
		var parts []string
		for _, w := range ws {
			if !w.done(mem) {
				v, _ := mem.Load64(w.addr)
				parts = append(parts, fmt.Sprintf("lane %d: signalBuf[%d × %d + %d] at %#x ≥ %d, now %d", w.t.Lane(), w.src, w.st.n, w.q, w.addr, w.expected, v))
			}
		}
		return fmt.Sprintf("waitSignal on rank %d: %s", ws[0].st.c.LsaRank, strings.Join(parts, "; "))
	})
	d.leave(g.Wave())
	return nil
}
