package sdma

import (
	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
)

// The broadcast-tree scenario sends rank 0's buffer down a binary tree
// (children of r are 2r+1 and 2r+2). A rank with two children reaches both
// with one putBroadcast, a single COPY that writes both destinations and
// signals each child once; a rank with one child uses put. Every non-root
// rank first waits for its parent's signal. The buffers are symmetric
// windows at the same offset, so the two destinations are congruent mod 32
// as putBroadcast requires.

func init() {
	scenario.Register(&scenario.Scenario{
		Name:    "broadcast-tree",
		Perf:    &scenario.PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: scenario.One, Gran: 1, Bus: scenario.FlatBus},
		Summary: "rank 0's buffer down a binary tree, one putBroadcast per parent reaching both children",
		Bytes:   "payload",
		Check:   checkPayload("broadcast-tree"),
		Usage:   payloadUsage,
		Run:     runBroadcastTree,
	})
}

func runBroadcastTree(o scenario.Options) (*scenario.Outcome, error) {
	j, buf, err := newPayloadJob(o)
	if err != nil {
		return nil, err
	}
	defer j.Close() // the checks are done when the run returns
	n, b := o.Ranks, o.Bytes
	const q = 0
	children := func(r int) (kids []int) {
		for _, c := range []int{2*r + 1, 2*r + 2} {
			if c < n {
				kids = append(kids, c)
			}
		}
		return kids
	}
	for r := range n {
		kids := children(r)
		err := j.LaunchRank(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			if r > 0 {
				sdma.WaitSignal((r-1)/2, q, 1) // the parent's copy has landed
			}
			switch len(kids) {
			case 2:
				sdma.PutBroadcast(kids[0], buf[r], 0, kids[1], buf[r], 0, buf[r], 0, b, q, cco.RemoteSignal)
			case 1:
				sdma.Put(kids[0], buf[r], 0, buf[r], 0, b, q, cco.RemoteSignal)
			}
			if len(kids) > 0 {
				sdma.QuietQueue(kids[0], q) // both children's copies are out
			}
			j.Done(r, t)
		})
		if err != nil {
			return nil, err
		}
	}
	if err := j.Sim.Run(); err != nil {
		return nil, err
	}
	if err := verifyPayload(j, "broadcast-tree", buf, q, func(r int) int { return (r - 1) / 2 }, 1); err != nil {
		return nil, err
	}
	return j.Outcome(
		func(r int) uint64 { return b * uint64(len(children(r))) },
		func(r int) uint64 { return b * uint64(min(1, r)) }), nil
}
