package cco

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
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
}

func (s *Sdma) syncConverge(a syncArgs, c *kernel.Call) {
	a.s = s
	s.t.Arg = &a
	s.t.Converge(c)
}

var commitCall = &kernel.Call{Name: "commit", Run: func(g *kernel.Active) error {
	for _, t := range g.Lanes() {
		a := t.Arg.(*syncArgs)
		st := a.s.st
		ring := func(q int) error {
			qu, err := st.queue(a.peer, q)
			if err != nil {
				return t.Error(a.call, err)
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

var quietCall = &kernel.Call{Name: "quiet", Run: func(g *kernel.Active) error {
	for _, t := range g.Lanes() {
		a := t.Arg.(*syncArgs)
		n := a.s.st.n
		first, step := 0, 1
		switch a.coop {
		case CoopWarp:
			first, step = t.Lane(), t.WarpSize()
		case CoopBlock:
			first, step = t.ThreadIdx(), t.BlockDim()
		}
		for q := first; q < n; q += step {
			if err := drain(g.Actor(), t, a.s, a.call, a.peer, q); err != nil {
				return err
			}
		}
	}
	return nil
}}

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

var quietQueueCall = &kernel.Call{Name: "quietQueue", Run: func(g *kernel.Active) error {
	for _, t := range g.Lanes() {
		a := t.Arg.(*syncArgs)
		if err := drain(g.Actor(), t, a.s, a.call, a.peer, a.q); err != nil {
			return err
		}
	}
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
	if g.ThreadRank() == 0 && queueId >= 0 && queueId < n {
		s.checkPeer("quietQueue", peer)
		s.syncConverge(syncArgs{call: "quietQueue", coop: op.coop, peer: peer, q: queueId}, quietQueueCall)
	}
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

var waitSignalCall = &kernel.Call{Name: "waitSignal", Run: func(g *kernel.Active) error {
	for _, t := range g.Lanes() {
		a := t.Arg.(*syncArgs)
		if err := waitSignal(g, t, a); err != nil {
			return err
		}
	}
	return nil
}}

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

func waitSignal(g *kernel.Active, t *kernel.Thread, a *syncArgs) error {
	st := a.s.st
	// Release builds index the pool without a bound, as MORI does.
	addr := st.pool.Base + uint64(a.src*st.n+a.q)*8
	mem := st.c.h.dev.Memory()
	if err := mem.Check("waitSignal", addr, 8); err != nil {
		return t.Error(a.call, fmt.Errorf("memory access fault reading signal slot [%d × %d + %d] at %#x: %w", a.src, st.n, a.q, addr, err))
	}
	load := func() uint64 { v, _ := mem.Load64(addr); return v }
	if load() >= a.expected {
		return nil
	}
	d := st.c.h.diag
	d.enter(t.Wave(), &waitInfo{kind: waitSig, call: a.call, st: st, src: a.src, qid: a.q, addr: addr, expected: a.expected})
	mem.Await(g.Actor(), addr, 8, func() bool { return load() >= a.expected }, func() string {
		return fmt.Sprintf("waitSignal on rank %d: signalBuf[%d × %d + %d] at %#x ≥ %d, now %d", st.c.LsaRank, a.src, st.n, a.q, addr, a.expected, load())
	})
	d.leave(t.Wave())
	return nil
}
