package cco

import (
	"fmt"
	"iter"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Teams and the LSA barrier session of MORI's cco.hpp (sections 3 and 4,
// https://github.com/ROCm/mori include/mori/cco/cco.hpp).
//
// A team is {nRanks, rank, stride}: worldRank = commRank + (teamRank −
// team.rank) × stride. The built-in teams: World (every rank), Lsa (the
// ranks of this node), CrossNode (the other nodes' ranks, rank −1: the caller
// is not a member) and Rail (the same LSA rank on every other node, stride
// lsaSize, rank −1). emud emulates one node, so its comms' CrossNode and
// Rail teams are empty; the mapping functions take any DevComm, so they
// can be checked on multi-node shapes too.
//
// The LSA barrier: each rank's dev comm holds, in its own GPU memory,
// uint32 state[nBarriers] (the epoch each barrier slot is at) followed by
// uint32 inbox[nBarriers][lsaSize]. A session on slot index reads its
// epoch; arrive stores epoch+1 into every peer's inbox[index][me] (after a
// system-scope fence: a release); wait polls its own inbox[index][peer] for
// every peer until (got − (epoch+1)) as an unsigned 32-bit number is at most
// 2^31−1 (wrap-safe "reached"), acquiring it, then advances the epoch; the
// timeout form gives up after timeoutCycles CU cycles and returns 1, leaving
// the epoch where it was; Close persists the epoch for the next session.
// The session's cooperative group is MORI's Coop: ccoCoopThread (each lane
// runs its session alone: NewLsaBarrierSession), ccoCoopWarp or
// ccoCoopBlock (NewLsaBarrierSessionGroup with t.WarpGroup() or
// t.BlockGroup()): every lane of the group builds the session, arrive and
// wait sync the group and split the peers among its lanes (lane r takes
// peers r, r + size, ...), and each lane's wait returns its own status, as
// MORI's waitInternal does; Close persists the epoch from the group's
// rank 0.

// Team is ccoTeam.
type Team struct{ NRanks, Rank, Stride int }

// TeamWorld is ccoTeamWorld.
func TeamWorld(c DevComm) Team { return Team{NRanks: c.NRanks, Rank: c.Rank, Stride: 1} }

// TeamLsa is ccoTeamLsa.
func TeamLsa(c DevComm) Team { return Team{NRanks: c.LsaSize, Rank: c.LsaRank, Stride: 1} }

// TeamCrossNode is ccoTeamCrossNode: the ranks of the other nodes.
func TeamCrossNode(c DevComm) Team { return Team{NRanks: c.NRanks - c.LsaSize, Rank: -1, Stride: 1} }

// TeamRail is ccoTeamRail: this LSA rank on every other node.
func TeamRail(c DevComm) Team {
	return Team{NRanks: c.NRanks/max(c.LsaSize, 1) - 1, Rank: -1, Stride: c.LsaSize}
}

// TeamRankToWorld is ccoTeamRankToWorld, for contiguous teams (rank ≥ 0).
func TeamRankToWorld(c DevComm, tm Team, teamRank int) int {
	return c.Rank + (teamRank-tm.Rank)*tm.Stride
}

// myNodeStart is the world rank of this node's first rank (ranks are laid
// out node by node, LSA rank fastest).
func myNodeStart(c DevComm) int { return c.Rank - c.LsaRank }

// CrossNodeTeamRankToWorld is ccoCrossNodeTeamRankToWorld.
func CrossNodeTeamRankToWorld(c DevComm, teamRank int) int {
	if teamRank < myNodeStart(c) {
		return teamRank
	}
	return teamRank + c.LsaSize
}

// RailTeamRankToWorld is ccoRailTeamRankToWorld.
func RailTeamRankToWorld(c DevComm, teamRank int) int {
	myNode := c.Rank / max(c.LsaSize, 1)
	other := teamRank
	if teamRank >= myNode {
		other++
	}
	return other*c.LsaSize + c.LsaRank
}

// TeamRankToGdaRank is ccoTeamRankToGdaRank: the world rank of a team rank
// for any built-in team.
func TeamRankToGdaRank(c DevComm, tm Team, teamRank int) int {
	switch {
	case tm.Rank >= 0:
		return TeamRankToWorld(c, tm, teamRank)
	case tm.Stride == 1:
		return CrossNodeTeamRankToWorld(c, teamRank)
	}
	return RailTeamRankToWorld(c, teamRank)
}

// LsaBarrierHandle is ccoLsaBarrierHandle: where the barrier state lives.
// NBarriers 0 means disabled. A dev comm has two: LsaBarrier
// (reqs.lsaBarrierCount) and HybridLsaBarrier, the intra-node half of
// MORI's hybrid LSA + rail barrier (reqs.barrierCount), whose rail half
// one node does not need.
type LsaBarrierHandle struct {
	NBarriers int
	base      uint64 // this rank's state buffer
	hybrid    bool   // which of the dev comm's handles
}

// Base is the address of this rank's barrier state (epochs, then inboxes).
func (h LsaBarrierHandle) Base() uint64 { return h.base }

// LsaBarrierSession is ccoLsaBarrierSession<Coop>.
type LsaBarrierSession struct {
	t     *kernel.Thread
	g     kernel.Group // the Coop
	dc    DevComm
	h     LsaBarrierHandle // dc.LsaBarrier or dc.HybridLsaBarrier
	team  Team
	index int
	epoch uint32
	mem   Mem
	// timing, when set, times the arrival signals (SetTiming); nil: an
	// arrival is visible at once, as MORI's barrier has always been.
	timing SignalTiming
}

// SignalTiming times an LSA barrier's arrival signals: LsaSignal books
// GPU src's 4-byte signal issued at now into GPU dst's inbox and returns
// when dst sees it. package fabric's Ports implements it (NCCL's LSA
// barrier in C++ and its Go twin, on the fabric's model); cco does not
// import fabric, whose model MORI's node does not have.
type SignalTiming interface {
	LsaSignal(now sim.Time, src, dst int) sim.Time
}

// SetTiming makes tm time the session's arrival signals: a peer's wait
// sees this rank's arrival when tm says, not at the store. nil: at once.
func (s *LsaBarrierSession) SetTiming(tm SignalTiming) { s.timing = tm }

// arrival is when a signal of value val becomes visible in an inbox.
type arrival struct {
	val uint32
	at  sim.Time
}

// noteArrival records that the signal val into owner's inbox word addr
// is visible at at: the two newest per word, as a peer may arrive at the
// next epoch before owner's wait for this one has run.
func (s *LsaBarrierSession) noteArrival(owner int, addr uint64, val uint32, at sim.Time) {
	st := s.ownerState(owner)
	if st == nil {
		return
	}
	if st.arrivals == nil {
		st.arrivals = map[uint64][2]arrival{}
	}
	a := st.arrivals[addr]
	st.arrivals[addr] = [2]arrival{a[1], {val: val, at: at}}
}

// visibleAt is when the signal val in this rank's inbox word addr
// becomes visible: 0 when no timed arrival of that value was recorded.
func (s *LsaBarrierSession) visibleAt(addr uint64, val uint32) sim.Time {
	st := s.ownerState(s.team.Rank)
	if st == nil {
		return 0
	}
	for _, a := range st.arrivals[addr] {
		if a.val == val {
			return a.at
		}
	}
	return 0
}

// ownerState is LSA rank owner's dev state of this session's dev comm.
func (s *LsaBarrierSession) ownerState(owner int) *devState {
	st := s.dc.st
	if owner < 0 || owner >= len(st.c.w.comms) {
		return nil
	}
	if o := st.c.w.comms[owner]; o != nil && len(o.devs) > st.idx {
		return o.devs[st.idx]
	}
	return nil
}

// NewLsaBarrierSession opens barrier slot index of the dev comm's LSA
// barrier for lane t (ccoLsaBarrierSession's constructor): it reads the
// slot's epoch. index must be below LsaBarrier.NBarriers (MORI leaves it
// unchecked; emud stops the kernel naming it).
func NewLsaBarrierSession(t *kernel.Thread, dc DevComm, team Team, index int) *LsaBarrierSession {
	return NewLsaBarrierSessionGroup(t.ThreadGroup(), dc, team, index)
}

// NewLsaBarrierSessionGroup is ccoLsaBarrierSession<Coop> for cooperative
// group g: t.ThreadGroup() (ccoCoopThread), t.WarpGroup() (ccoCoopWarp) or
// t.BlockGroup() (ccoCoopBlock). Every lane of the group calls it.
func NewLsaBarrierSessionGroup(g kernel.Group, dc DevComm, team Team, index int) *LsaBarrierSession {
	return NewLsaBarrierSessionOn(g, dc, team, dc.LsaBarrier, index)
}

// NewLsaBarrierSessionOn is ccoLsaBarrierSession<Coop> over handle h,
// which must be one of dc's: dc.LsaBarrier or dc.HybridLsaBarrier (the
// intra-node half of the hybrid barrier, which a one-node job syncs
// alone).
func NewLsaBarrierSessionOn(g kernel.Group, dc DevComm, team Team, h LsaBarrierHandle, index int) *LsaBarrierSession {
	t := g.Thread()
	s := &LsaBarrierSession{t: t, g: g, dc: dc, h: h, team: team, index: index, mem: NewMem(t, dc)}
	field, count := "lsaBarrier", "LsaBarrierCount"
	if h.hybrid {
		field, count = "hybridLsaBarrier", "BarrierCount"
	}
	if dc.st == nil || (h != dc.LsaBarrier && h != dc.HybridLsaBarrier) {
		t.Fail("ccoLsaBarrierSession", fmt.Errorf("a barrier handle that is neither this dev comm's lsaBarrier nor its hybridLsaBarrier"))
		return s
	}
	if index < 0 || index >= h.NBarriers {
		t.Fail("ccoLsaBarrierSession", fmt.Errorf("barrier index %d outside the dev comm's %d LSA barriers (%s, DevCommRequirements.%s)", index, h.NBarriers, field, count))
		return s
	}
	if team.NRanks > dc.LsaSize || team.Rank < 0 || team.Rank >= max(team.NRanks, 1) {
		t.Fail("ccoLsaBarrierSession", fmt.Errorf("team {nRanks %d, rank %d} is not an LSA team of this %d-rank node: the LSA barrier indexes peers by LSA rank", team.NRanks, team.Rank, dc.LsaSize))
		return s
	}
	s.epoch = s.mem.Load32(h.base + 4*uint64(index))
	return s
}

// inbox is the address of owner's inbox[index][peer].
func (s *LsaBarrierSession) inbox(owner, peer int) (uint64, error) {
	st := s.dc.st
	o := st.c.w.comms[owner]
	var h LsaBarrierHandle
	if o != nil && len(o.devs) > st.idx {
		h = o.devs[st.idx].barrier
		if s.h.hybrid {
			h = o.devs[st.idx].hybrid
		}
	}
	if h.NBarriers <= s.index {
		return 0, fmt.Errorf("LSA rank %d has no LSA barrier %d in dev comm #%d (every rank creates it with the same LsaBarrierCount and BarrierCount)", owner, s.index, st.idx)
	}
	return h.base + 4*uint64(h.NBarriers+s.index*s.dc.LsaSize+peer), nil
}

// lanePeers are the team members other than this rank that the calling
// lane handles: the group's lanes share them, lane r taking the r-th, the
// (r+size)-th, ….
func (s *LsaBarrierSession) lanePeers() iter.Seq[int] {
	return func(yield func(int) bool) {
		me := s.team.Rank
		for i := s.g.ThreadRank(); i < s.team.NRanks-1; i += s.g.Size() {
			peer := i
			if i >= me {
				peer++
			}
			if !yield(peer) {
				return
			}
		}
	}
}

// Arrive syncs the group, then stores epoch+1 into every other team
// member's inbox slot for this rank, after a release (the system-scope
// fence before MORI's relaxed stores); the group's lanes share the peers.
func (s *LsaBarrierSession) Arrive() {
	s.g.Sync()
	me := s.team.Rank
	for peer := range s.lanePeers() {
		addr, err := s.inbox(peer, me)
		if err != nil {
			s.t.Fail("ccoLsaBarrierSession::arrive", err)
			return
		}
		if s.timing != nil {
			if o := s.ownerState(peer); o != nil {
				s.noteArrival(peer, addr, s.epoch+1, s.timing.LsaSignal(s.t.Now(), s.dc.LsaRank, o.c.LsaRank))
			}
		}
		s.mem.StoreRelease32(addr, s.epoch+1)
	}
}

// Wait waits until every other member has arrived at this epoch (each lane
// of the group for its share of the peers), advances the epoch and syncs
// the group.
func (s *LsaBarrierSession) Wait() { s.wait("ccoLsaBarrierSession::wait", -1) }

// WaitTimeout is wait(coop, timeoutCycles): 0 when every member this lane
// waits for arrived, 1 when timeoutCycles CU cycles passed first (this
// lane's epoch does not advance; in a group, the other lanes' statuses are
// their own, as in MORI).
func (s *LsaBarrierSession) WaitTimeout(timeoutCycles uint64) int {
	return s.wait("ccoLsaBarrierSession::wait", int64(timeoutCycles))
}

// Sync is Arrive then Wait.
func (s *LsaBarrierSession) Sync() { s.Arrive(); s.Wait() }

// SyncTimeout is Arrive then WaitTimeout.
func (s *LsaBarrierSession) SyncTimeout(timeoutCycles uint64) int {
	s.Arrive()
	return s.WaitTimeout(timeoutCycles)
}

// Epoch is the session's epoch (barriers passed on this slot).
func (s *LsaBarrierSession) Epoch() uint32 { return s.epoch }

// Close is the destructor: the group's rank 0 persists the epoch for the
// next session on the slot, then the group syncs.
func (s *LsaBarrierSession) Close() {
	if s.dc.st != nil && s.index >= 0 && s.index < s.h.NBarriers && s.g.ThreadRank() == 0 {
		s.mem.Store32(s.h.base+4*uint64(s.index), s.epoch)
	}
	s.g.Sync()
}

// awaitTimeout is a Memory that can give up waiting (the emulator's).
type awaitTimeout interface {
	AwaitTimeout(a *sim.Actor, addr, n uint64, pred func() bool, what func() string, d sim.Time) bool
}

type barrierWait struct {
	s        *LsaBarrierSession
	deadline sim.Time // < 0 none
	status   int
}

var barrierWaitCall = &kernel.Call[*barrierWait]{Name: "ccoLsaBarrierSession::wait", Run: runBarrierWait}

func (s *LsaBarrierSession) wait(call string, timeout int64) int {
	w := &barrierWait{s: s, deadline: -1}
	if timeout >= 0 && s.dc.st != nil {
		ghz := 2.4
		if m := s.dc.st.c.h.dev.Model(); m != nil {
			ghz = m.CUClockGHz()
		}
		// clock64 starts when the lane enters the wait (every lane of a
		// wave at once).
		w.deadline = s.t.Now() + sim.Time(float64(timeout)/ghz*float64(sim.Nanosecond))
	}
	kernel.Converge(s.t, barrierWaitCall, w)
	s.g.Sync()
	return w.status
}

// runBarrierWait waits, lane by lane in lane order, for each lane's peers.
func runBarrierWait(g *kernel.Active, ws []*barrierWait) error {
	for i, t := range g.Lanes() {
		w := ws[i]
		if err := w.run(g.Actor()); err != nil {
			return t.Error("ccoLsaBarrierSession::wait", err)
		}
	}
	return nil
}

func (w *barrierWait) run(a *sim.Actor) error {
	s := w.s
	mem := s.dc.st.c.h.dev.Memory()
	want := s.epoch + 1
	reached := func(addr uint64) bool {
		v, err := mem.Load32(addr)
		return err == nil && v-want <= 1<<31-1
	}
	deadline := w.deadline
	me := s.team.Rank
	for peer := range s.lanePeers() {
		addr, err := s.inbox(me, peer)
		if err != nil {
			return err
		}
		if !reached(addr) {
			what := func() string {
				v, _ := mem.Load32(addr)
				return fmt.Sprintf("ccoLsaBarrierSession::wait on LSA rank %d, barrier %d: inbox[%d][%d] at %#x is %d, waiting for epoch %d (LSA rank %d has not arrived)",
					s.dc.LsaRank, s.index, s.index, peer, addr, v, want, peer)
			}
			if deadline < 0 {
				mem.Await(a, addr, 4, func() bool { return reached(addr) }, what)
			} else {
				at, ok := mem.(awaitTimeout)
				if !ok {
					return fmt.Errorf("the device's memory cannot time a wait")
				}
				if !at.AwaitTimeout(a, addr, 4, func() bool { return reached(addr) }, what, max(deadline-a.Now(), 0)) {
					w.status = 1
					return nil
				}
			}
		}
		if s.timing != nil {
			// The value is stored at once; the waiter sees it when the
			// signal has crossed the fabric.
			if at := s.visibleAt(addr, want); at > a.Now() {
				if deadline >= 0 && at > deadline {
					a.Sleep(max(deadline-a.Now(), 0))
					w.status = 1
					return nil
				}
				a.Sleep(at - a.Now())
			}
		}
		s.mem.LoadAcquire32(addr) // the acquire that orders what follows after the peer's arrive
	}
	s.epoch++
	return nil
}

// allocBarrier allocates dev comm st's barrier state (zeroed), n for
// lsaBarrier and hybrid for hybridLsaBarrier, in one buffer as MORI lays
// them out in the resource window: each has nBarriers epochs and
// nBarriers × lsaSize inbox slots.
func (st *devState) allocBarrier(n, hybrid int) error {
	if n <= 0 && hybrid <= 0 {
		return nil
	}
	c := st.c
	n, hybrid = max(n, 0), max(hybrid, 0)
	size := 4 * uint64(n+n*c.LsaSize+hybrid+hybrid*c.LsaSize)
	base, err := c.h.dev.Memory().Alloc(c.LsaRank, size, fmt.Sprintf("cco rank %d LSA barrier state %d", c.Rank, st.idx))
	if err != nil {
		return fmt.Errorf("LSA barrier state: %w", err)
	}
	if n > 0 {
		st.barrier = LsaBarrierHandle{NBarriers: n, base: base}
	}
	if hybrid > 0 {
		st.hybrid = LsaBarrierHandle{NBarriers: hybrid, base: base + 4*uint64(n+n*c.LsaSize), hybrid: true}
	}
	return nil
}
