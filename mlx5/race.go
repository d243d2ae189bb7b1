package mlx5

import (
	"fmt"

	"github.com/emud-dev/emud/race"
)

// The race detector's view of the NIC. Each WQE runs as a detector
// thread forked from the thread that rang it (so what the ringing lane
// did before its doorbell store is ordered before the operation). Its
// source reads and its writes are accesses as they happen (a packet's
// payload leaving, landing). The edges are the RC queue pair's:
//   - a remote write or atomic whose data has all landed releases into
//     the QP's landed clock, which the next ones acquire as their first
//     packet lands, on an in-order link (Config.InOrder): everything
//     posted before them on the QP has landed then. So a signal after a
//     put orders the put's data for its waiter (the atomic releases into
//     its word, which an atomic load acquires), and two writes of one
//     buffer on one QP land in order (MORI's test_gda_counter);
//   - completions are in order: each completed operation acquires and
//     releases the QP's completed clock, and a CQE releases it into its
//     CQE's last word and the config's DoneWords (MORI's quiet reads the
//     CQE with plain loads, then advances the endpoint's doneIdx with an
//     atomic: the edge is taken there). Partial: a lane that acquires
//     doneIdx sees every completion reported so far, not just those its
//     CQE read named.

func (q *QP) raceStart(o *op, by *race.Thread) {
	d := q.c.Race
	if d == nil || by == nil {
		return
	}
	o.th = d.NewThread(fmt.Sprintf("NIC of GPU %d: queue %s WQE %d", q.c.GPU, q.c.Name, o.w.Index))
	d.Fork(by, o.th)
}

func (q *QP) raceInfo(o *op, what string) *race.Info {
	return &race.Info{Kind: race.KindFabric, OpKind: race.OpFabric,
		Who: fmt.Sprintf("GPU %d's NIC, queue %s", q.c.GPU, q.c.Name), Op: fmt.Sprintf("%s %s (WQE %d)", OpName(o.w.Opcode), what, o.w.Index)}
}

func (q *QP) raceAccess(o *op, addr, n uint64, what string, write, atomic bool) {
	if o.th == nil || n == 0 {
		return
	}
	q.c.Race.Access(o.th, q.c.Space, addr, addr+n, race.Access{Info: q.raceInfo(o, what), Write: write, Atomic: atomic})
}

func (q *QP) raceLanded(o *op) {
	if o.th != nil {
		o.th.Release(&q.landed)
	}
}

// raceFirstLanding: as o's first packet lands at the peer, on an in-order
// link every earlier remote write and atomic of the QP has landed.
func (q *QP) raceFirstLanding(o *op) {
	if o.th == nil || o.landing {
		return
	}
	o.landing = true
	if q.c.InOrder {
		o.th.Acquire(&q.landed)
	}
}

// raceAtomic is o's atomic at addr of the peer, as it lands.
func (q *QP) raceAtomic(o *op, addr uint64) {
	if o.th == nil {
		return
	}
	q.raceFirstLanding(o)
	q.raceAccess(o, addr, 8, "atomic at the peer", true, true)
	o.th.Release(q.c.Race.AddrSync(q.c.Space, addr))
	o.th.Release(&q.landed)
}

func (q *QP) raceCompleted(o *op) {
	if o.th == nil {
		return
	}
	o.th.Acquire(&q.completed)
	o.th.Release(&q.completed)
}

// raceCQE: the CQE at cqe releases o's completion (and every earlier one).
func (q *QP) raceCQE(o *op, cqe uint64) {
	if o.th == nil {
		return
	}
	d := q.c.Race
	for _, a := range append([]uint64{cqe + CQESize - 4}, q.c.DoneWords...) {
		o.th.Release(d.AddrSync(q.c.Space, a))
	}
}

// AddDoneWord makes a word's atomic readers acquire the QP's completions
// (MORI's endpoint doneIdx, known once the endpoints are in memory).
func (q *QP) AddDoneWord(a uint64) { q.c.DoneWords = append(q.c.DoneWords, a) }
