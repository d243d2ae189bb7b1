package sdma

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/scenario"
)

// The alltoall scenario is the seed's worked alltoall on the ccoSdma API:
// every rank launches one wave in which lane i puts its block to peer
// (rank+1+i) mod ranks (loopback last) with a remote signal, quiets that
// peer and waits for the peer's signal, then loads the block it received
// (cco.Mem), as the consumer of the data would. Lanes target distinct
// peers, so the Independent thread mode posts them in parallel.
//
// alltoall-early-reuse is a planted bug: each lane overwrites its send
// block right after the put, before quiet, so the COPY may send the new
// bytes. Its data check fails on the seeds where the engine read the block
// after the overwrite; with --race the detector reports the unordered
// store and COPY read on every seed.

func init() {
	scenario.Register(&scenario.Scenario{
		Name:    "alltoall",
		Perf:    scenario.PerfAllToAll,
		Summary: "every rank puts a block to every rank (itself included) with ccoSdma put + remote signal",
		Check:   checkAlltoall,
		Opens:   alltoallOpens,
		Run:     func(o scenario.Options) (*scenario.Outcome, error) { return runAlltoall(o, false) },
		Usage:   alltoallUsage,
	})
	scenario.Register(&scenario.Scenario{
		Name:    "alltoall-early-reuse",
		Summary: "PLANTED BUG: alltoall where each rank overwrites its send block right after put, before quiet",
		Planted: &scenario.Planted{Fixed: "alltoall", Ranks: 4, Bytes: 4 << 10, Class: "early source reuse: the send block overwritten before quiet",
			Source: "seed document, Completion: do not reuse a source buffer before the op completes"},
		Check: checkAlltoall,
		Opens: alltoallOpens,
		Run:   func(o scenario.Options) (*scenario.Outcome, error) { return runAlltoall(o, true) },
		Usage: alltoallUsage,
	})
}

// alltoallUsage: send and receive windows of ranks × bytes per rank, the
// host's fill and read-back buffers, one queue and one lane per pair.
func alltoallUsage(o scenario.Options) scenario.Usage {
	r, b := uint64(o.Ranks), o.Bytes
	return scenario.Usage{Backed: 2 * r * r * b, Queues: o.Ranks * o.Ranks, Lanes: o.Ranks * o.Ranks, Host: 2*r*b + b}
}

// maxMessageBytes caps one message (a block, a chunk, a payload) of the
// SDMA scenarios, whatever the budget: it keeps every size product far from
// overflow. The memory a run needs is checked against --mem-budget.
const maxMessageBytes = 4 << 30

func checkAlltoall(o scenario.Options) error {
	if o.Bytes > ring.MaxCopyBytes {
		return fmt.Errorf("invalid --bytes %s: alltoall moves each block in one COPY packet, at most %d bytes", scenario.FormatBytes(o.Bytes), ring.MaxCopyBytes)
	}
	return nil
}

// alltoallOpens: rank r puts to every rank p, itself included, on queue
// id p mod --queues (queueID).
func alltoallOpens(o scenario.Options) func(g, p int) []int {
	return func(_, p int) []int { return []int{p % o.Queues} }
}

func runAlltoall(o scenario.Options, earlyReuse bool) (*scenario.Outcome, error) {
	x, err := newAlltoall(o)
	if err != nil {
		return nil, err
	}
	defer x.Close() // the checks are done when the run returns
	x.earlyReuse = earlyReuse
	if err := x.spawn(); err != nil {
		return nil, err
	}
	if err := x.Sim.Run(); err != nil {
		return nil, err
	}
	if err := x.verify("alltoall", x.oneSignal); err != nil {
		return nil, err
	}
	per := uint64(o.Ranks) * o.Bytes
	each := func(int) uint64 { return per }
	return x.Outcome(each, each), nil
}

// alltoall is one run's state: the job and every rank's buffers.
type alltoall struct {
	*scenario.Env
	ranks      []a2aRank
	recv       []cco.Window // every rank's receive window
	earlyReuse bool         // the planted bug: overwrite the send block before quiet
}

// a2aRank is what rank r owns: its windows (send[p] is the block for rank p,
// recv[p] the block from rank p, each o.Bytes long, p-major) and its dev
// comm, whose signal pool row p counts rank p's signals.
type a2aRank struct {
	sendWin, recvWin cco.Window
	dc               cco.DevComm
}

func newAlltoall(o scenario.Options) (*alltoall, error) {
	j, err := scenario.NewEnv(o)
	if err != nil {
		return nil, err
	}
	send, recv, err := j.SendRecv(o.Bytes)
	if err != nil {
		return nil, err
	}
	x := &alltoall{Env: j, ranks: make([]a2aRank, o.Ranks), recv: recv}
	for r := range x.ranks {
		x.ranks[r] = a2aRank{sendWin: send[r], recvWin: recv[r], dc: j.DevComms[r]}
	}
	return x, nil
}

// queueID is the queue id rank r uses toward peer p: peers spread over the
// queue ids, so the receiver knows which signal column to watch.
func (x *alltoall) queueID(p int) int { return p % x.O.Queues }

func (x *alltoall) spawn() error {
	for r := range x.ranks {
		if err := x.spawnRank(r); err != nil {
			return err
		}
	}
	return nil
}

// spawnRank launches rank r's kernel: one wave, lane i serving peer
// (r+1+i) mod ranks.
func (x *alltoall) spawnRank(r int) error {
	// The lanes read the rank's entry in place and two numbers of the
	// options: copies of both would be two allocations a launch.
	ranks, b, me := x.O.Ranks, x.O.Bytes, &x.ranks[r]
	return x.LaunchRank(r, 1, ranks, func(t *kernel.Thread, sdma *cco.Sdma) {
		p := (r + 1 + t.ThreadIdx()) % ranks
		m := cco.NewMem(t, me.dc)
		sdma.Put(p, me.recvWin, uint64(r)*b, me.sendWin, uint64(p)*b, b, x.queueID(p), cco.RemoteSignal)
		if x.earlyReuse {
			m.Fill(me.sendWin.LocalPtr(uint64(p)*b), b, 0) // BUG: the COPY may not have read it yet
		}
		sdma.Quiet(p)                       // our send to p is out
		sdma.WaitSignal(p, x.queueID(r), 1) // p's block to us has landed
		x.Consume(m, me.recvWin.LocalPtr(uint64(p)*b), b)
		x.Done(r, t)
	})
}

// verify checks every byte of every receive buffer (not in a phantom run)
// and every signal slot of rank r's pool: (p, q) holds signals(r, p, q).
func (x *alltoall) verify(name string, signals func(r, p, q int) uint64) error {
	var c scenario.Checker
	if err := x.CheckBlocks(&c, x.recv, x.O.Ranks, x.O.Bytes, fromPeer, receiveBlock); err != nil {
		return err
	}
	err := x.CheckSignals(&c, func(r, p, q int) (uint64, bool) { return signals(r, p, q), true })
	if err != nil {
		return err
	}
	return c.Err(name, x.O.Seed)
}

// fromPeer is an all-to-all's receive check: block p of rank r's receive
// window is what rank p sent it.
func fromPeer(r, p int) (src, dst int, ok bool) { return p, r, true }

func receiveBlock(r, p int) string { return fmt.Sprintf("rank %d's receive block from rank %d", r, p) }

// oneSignal is alltoall's signal check: one signal on queueID(r).
func (x *alltoall) oneSignal(r, _, q int) uint64 {
	if q == x.queueID(r) {
		return 1
	}
	return 0
}
