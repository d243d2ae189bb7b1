package main

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
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

// a2aMsgs is how many messages each rank sends each peer: MORI's 8
// channels per peer, one message each at --queues 8.
const a2aMsgs = 8

func init() {
	register(&scenario{
		name:    "alltoall-mq",
		summary: fmt.Sprintf("all-to-all of %d messages per peer, round-robin over --queues queue ids (message k on queue k mod queues)", a2aMsgs),
		bytes:   "per message",
		check:   checkAlltoallMQ,
		run:     runAlltoallMQ,
		usage:   alltoallMQUsage,
	})
}

func alltoallMQUsage(o options) usage {
	r, b := uint64(o.Ranks), o.Bytes
	u := usage{Backed: 2 * r * r * a2aMsgs * b, Queues: o.Ranks * o.Queues, Lanes: o.Ranks * o.Ranks * a2aMsgs}
	if !o.Phantom {
		u.Host = 2 * r * a2aMsgs * b
	}
	return u
}

func checkAlltoallMQ(o options) error {
	if o.Bytes > ring.MaxCopyBytes {
		return fmt.Errorf("invalid --bytes %s: alltoall-mq moves each message in one COPY packet, at most %d bytes", formatBytes(o.Bytes), ring.MaxCopyBytes)
	}
	if o.Bytes > maxMessageBytes {
		return fmt.Errorf("invalid --bytes %s: at most %s per message", formatBytes(o.Bytes), formatBytes(maxMessageBytes))
	}
	return nil
}

func runAlltoallMQ(o options) (*outcome, error) {
	j, err := newJob(o)
	if err != nil {
		return nil, err
	}
	blk := a2aMsgs * o.Bytes // what rank r sends rank p, message-major
	send, recv, err := j.sendRecv(blk)
	if err != nil {
		return nil, err
	}
	for r := range o.Ranks {
		r := r
		err := j.launch(r, o.Ranks-1, a2aMsgs, func(t *kernel.Thread, sdma *cco.Sdma) {
			p := (r + 1 + t.BlockIdx()) % o.Ranks
			k := uint64(t.ThreadIdx())
			q := t.ThreadIdx() % o.Queues
			sdma.Put(p, recv[r], uint64(r)*blk+k*o.Bytes, send[r], uint64(p)*blk+k*o.Bytes, o.Bytes, q)
			sdma.QuietQueue(p, q)
			j.done(r, t)
		})
		if err != nil {
			return nil, err
		}
	}
	if err := j.s.Run(); err != nil {
		return nil, err
	}
	var c checker
	if !o.Phantom {
		got, want := make([]byte, blk), make([]byte, blk)
		for r := range o.Ranks {
			for p := range o.Ranks {
				if p == r {
					continue
				}
				if err := j.mem.Read(recv[r].LocalPtr(uint64(p)*blk), got); err != nil {
					return nil, err
				}
				fillBlock(want, p, r)
				c.block(fmt.Sprintf("rank %d's messages from rank %d", r, p), got, want)
			}
		}
	}
	if err := c.err("alltoall-mq", o.Seed); err != nil {
		return nil, err
	}
	each := func(int) uint64 { return uint64(o.Ranks-1) * blk }
	return j.outcome(each, each), nil
}
