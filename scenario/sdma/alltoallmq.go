package sdma

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/scenario"
)

// The alltoall-mq scenario is an all-to-all of many small messages, the
// shape of an MoE dispatch: every rank sends a2aMsgs messages of --bytes to
// every other rank, round-robin over --queues queue ids per peer (message k
// on queue k mod queues), then quiets. Rank r runs one block per peer
// (block i serves peer (r+1+i) mod ranks), one lane per message, so the
// messages to a peer are posted together and the queues they use run as
// the engines they are placed on allow: with MI355X's 2 engines per peer
// link, 8 queues are no faster than 2 for small messages. Completion is
// each sender's quiet (its messages have landed); the data is checked.
// --bytes is per message, 64 KiB unless given.

// a2aMsgs is how many messages each rank sends each peer: MORI's 8
// channels per peer, one message each at --queues 8.
const a2aMsgs = 8

func init() {
	scenario.Register(&scenario.Scenario{
		Name:    "alltoall-mq",
		Perf:    &scenario.PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: func(n int) uint64 { return uint64(n-1) * a2aMsgs }, Gran: 1, Bus: scenario.FlatBus},
		Summary: fmt.Sprintf("all-to-all of %d messages per peer, round-robin over --queues queue ids (message k on queue k mod queues)", a2aMsgs),
		Bytes:   "per message",
		// MoE dispatch messages are small (a few tokens of a hidden
		// vector each): the common 1 MiB default would make every run
		// move 8 MiB per pair (1 GiB on the default node).
		DefaultBytes: 64 << 10,
		Check:        checkAlltoallMQ,
		Opens:        alltoallMQOpens,
		Run:          runAlltoallMQ,
		Usage:        alltoallMQUsage,
	})
}

func alltoallMQUsage(o scenario.Options) scenario.Usage {
	r, b := uint64(o.Ranks), o.Bytes
	return scenario.Usage{Backed: 2 * r * r * a2aMsgs * b, Queues: o.Ranks * o.Queues, Lanes: o.Ranks * o.Ranks * a2aMsgs, Host: 2 * r * a2aMsgs * b}
}

func checkAlltoallMQ(o scenario.Options) error {
	if o.Bytes > ring.MaxCopyBytes {
		return fmt.Errorf("invalid --bytes %s: alltoall-mq moves each message in one COPY packet, at most %d bytes", scenario.FormatBytes(o.Bytes), ring.MaxCopyBytes)
	}
	if o.Bytes > maxMessageBytes {
		return fmt.Errorf("invalid --bytes %s: at most %s per message", scenario.FormatBytes(o.Bytes), scenario.FormatBytes(maxMessageBytes))
	}
	return nil
}

// alltoallMQOpens: rank r sends every other rank its messages on queue ids
// k mod --queues.
func alltoallMQOpens(o scenario.Options) func(g, p int) []int {
	qs := scenario.QueueRange(min(a2aMsgs, o.Queues))
	return func(g, p int) []int {
		if g == p {
			return nil
		}
		return qs
	}
}

func runAlltoallMQ(o scenario.Options) (*scenario.Outcome, error) {
	j, err := scenario.NewEnv(o)
	if err != nil {
		return nil, err
	}
	defer j.Close()          // the checks are done when the run returns
	blk := a2aMsgs * o.Bytes // what rank r sends rank p, message-major
	send, recv, err := j.SendRecv(blk)
	if err != nil {
		return nil, err
	}
	// Rank r: block i serves peer (r+1+i) mod ranks, lane k its message k.
	err = j.LaunchAll(o.Ranks-1, a2aMsgs, func(r int, t *kernel.Thread, sdma *cco.Sdma) {
		p := (r + 1 + t.BlockIdx()) % o.Ranks
		k := uint64(t.ThreadIdx())
		q := t.ThreadIdx() % o.Queues
		sdma.Put(p, recv[r], uint64(r)*blk+k*o.Bytes, send[r], uint64(p)*blk+k*o.Bytes, o.Bytes, q)
		sdma.QuietQueue(p, q)
		j.Done(r, t)
	})
	if err == nil {
		err = j.Sim.Run()
	}
	if err != nil {
		return nil, err
	}
	var c scenario.Checker
	fromOthers := func(r, p int) (int, int, bool) { return p, r, p != r } // no loopback
	what := func(r, p int) string { return fmt.Sprintf("rank %d's messages from rank %d", r, p) }
	if err := j.CheckBlocks(&c, recv, o.Ranks, blk, fromOthers, what); err != nil {
		return nil, err
	}
	if err := c.Err("alltoall-mq", o.Seed); err != nil {
		return nil, err
	}
	each := func(int) uint64 { return uint64(o.Ranks-1) * blk }
	return j.Outcome(each, each), nil
}
