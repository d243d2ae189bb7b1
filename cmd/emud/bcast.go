package main

import (
	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
)

// The broadcast-tree scenario sends rank 0's buffer down a binary tree
// (children of r are 2r+1 and 2r+2). A rank with two children reaches both
// with one putBroadcast, a single COPY that writes both destinations and
// signals each child once; a rank with one child uses put. Every non-root
// rank first waits for its parent's signal. The buffers are symmetric
// windows at the same offset, so the two destinations are congruent mod 32
// as putBroadcast requires.

func init() {
	register(&scenario{
		name:    "broadcast-tree",
		summary: "rank 0's buffer down a binary tree, one putBroadcast per parent reaching both children",
		bytes:   "payload",
		check:   checkPayload("broadcast-tree"),
		usage:   payloadUsage,
		run:     runBroadcastTree,
	})
}

func runBroadcastTree(o options) (*outcome, error) {
	j, buf, data, err := newPayloadJob(o)
	if err != nil {
		return nil, err
	}
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
		err := j.launch(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
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
			j.done(r, t)
		})
		if err != nil {
			return nil, err
		}
	}
	if err := j.s.Run(); err != nil {
		return nil, err
	}
	if err := j.verifyPayload("broadcast-tree", buf, data, q, func(r int) int { return (r - 1) / 2 }, 1); err != nil {
		return nil, err
	}
	return j.outcome(
		func(r int) uint64 { return b * uint64(len(children(r))) },
		func(r int) uint64 { return b * uint64(min(1, r)) }), nil
}
