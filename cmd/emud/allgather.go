package main

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
)

// The allgather-ring scenario is the ring all-gather: every rank owns one
// chunk of --bytes, and after ranks−1 steps every rank holds all of them in
// rank order. At step s, rank r forwards chunk (r−s) mod n to its successor
// with a remote signal, then waits for its predecessor's step-s chunk before
// forwarding it at step s+1. Steps rotate over the queue ids (step s uses
// queue s mod queues), so the receiver keeps one running total per
// (srcRank, queueId), as ccoSdma requires, rather than one per source.
// At the end every rank loads what it gathered (cco.Mem), as the data's
// consumer would.
//
// allgather-wrong-queue is a planted bug: the chunk goes on queue q without
// a signal and the signal on queue q+1, carried by an 8-byte put into a
// scratch slot after the gathered chunks. Nothing orders the chunk's COPY
// before the signal, so the receiver may forward (and load) a chunk that
// has not landed: stale data on the seeds and sizes where queue q+1 is
// faster. With --race the detector reports it at every size and seed.

func init() {
	register(&scenario{
		name:    "allgather-ring",
		summary: "ring all-gather: ranks−1 steps, each rank forwards one chunk to its successor per step with put + remote signal",
		bytes:   "per chunk",
		check:   checkAllgather,
		usage:   allgatherUsage,
		run:     func(o options) (*outcome, error) { return runAllgather(o, false) },
	})
	register(&scenario{
		name:    "allgather-wrong-queue",
		summary: "PLANTED BUG: allgather-ring with each chunk on one queue id and its signal on another",
		planted: true,
		bytes:   "per chunk",
		check: func(o options) error {
			if o.Queues < 2 {
				return fmt.Errorf("invalid --queues %d: allgather-wrong-queue signals on the queue after the chunk's, it needs 2 or more", o.Queues)
			}
			return checkAllgather(o)
		},
		usage: allgatherUsage,
		run:   func(o options) (*outcome, error) { return runAllgather(o, true) },
	})
}

func allgatherUsage(o options) usage {
	r, b := uint64(o.Ranks), o.Bytes
	u := usage{Backed: r * r * b, Queues: o.Ranks * min(o.Queues, o.Ranks-1), Lanes: o.Ranks}
	if !o.Phantom {
		u.Host = r*b + b
	}
	return u
}

func checkAllgather(o options) error {
	if o.Bytes > maxMessageBytes {
		return fmt.Errorf("invalid --bytes %s: allgather-ring chunks are at most %s", formatBytes(o.Bytes), formatBytes(maxMessageBytes))
	}
	return nil
}

// scratchBytes per step follow the gathered chunks: the wrong-queue bug's
// signal-carrying puts land there, each step in its own slot (so they do
// not race with each other; only the chunks do).
const scratchBytes = 8

func runAllgather(o options, wrongQueue bool) (*outcome, error) {
	j, err := newJob(o)
	if err != nil {
		return nil, err
	}
	n, b := o.Ranks, o.Bytes
	span := uint64(n) * b
	// buf[r] holds the gathered chunks, chunk c at c × bytes; rank r's own
	// chunk is in place before the kernels start.
	buf, err := j.window(span + uint64(n+1)*scratchBytes)
	if err != nil {
		return nil, err
	}
	own := make([]byte, b)
	for r := range n {
		if o.Phantom {
			break
		}
		fillBlock(own, r, r)
		if err := j.mem.Write(buf[r].LocalPtr(uint64(r)*b), own); err != nil {
			return nil, err
		}
	}
	if err := j.devComms(); err != nil {
		return nil, err
	}
	for r := range n {
		next, prev := (r+1)%n, (r+n-1)%n
		err := j.launch(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			expected := make([]uint64, o.Queues) // running total per queue id from prev
			for s := range n - 1 {
				c := uint64((r - s + n) % n)
				q := s % o.Queues
				if wrongQueue {
					// BUG: the chunk on q, its signal on q+1.
					sdma.Put(next, buf[r], c*b, buf[r], c*b, b, q)
					q = (q + 1) % o.Queues
					// Step s's slot; the bytes come from the last slot, which
					// nothing writes.
					slot := span + uint64(s)*scratchBytes
					sdma.Put(next, buf[r], slot, buf[r], span+uint64(n)*scratchBytes, 8, q, cco.RemoteSignal)
				} else {
					sdma.Put(next, buf[r], c*b, buf[r], c*b, b, q, cco.RemoteSignal)
				}
				expected[q]++
				sdma.WaitSignal(prev, q, expected[q]) // chunk (r−s−1) mod n has landed
			}
			sdma.Quiet(next) // our last forward is out
			j.consume(cco.NewMem(t, j.dcs[r]), buf[r].LocalPtr(0), span)
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
	var got []byte
	if !o.Phantom {
		got = make([]byte, span)
	}
	for r := range n {
		for src := range n {
			if o.Phantom {
				break // no bytes to check; the signals below are real
			}
			if src == 0 {
				if err := j.mem.Read(buf[r].LocalPtr(0), got); err != nil {
					return nil, err
				}
			}
			fillBlock(own, src, src)
			c.block(fmt.Sprintf("rank %d's chunk from rank %d", r, src), got[uint64(src)*b:uint64(src+1)*b], own)
		}
		prev := (r + n - 1) % n
		for q := range o.Queues {
			// Steps 0..n−2 signalled on queue s mod queues (the bug: the
			// queue after it).
			want := uint64(0)
			for s := range n - 1 {
				sq := s % o.Queues
				if wrongQueue {
					sq = (sq + 1) % o.Queues
				}
				if sq == q {
					want++
				}
			}
			if err := c.signal(j.dcs[r], r, prev, q, want); err != nil {
				return nil, err
			}
		}
	}
	if err := c.err("allgather-ring", o.Seed); err != nil {
		return nil, err
	}
	moved := func(int) uint64 { return uint64(n-1) * b }
	return j.outcome(moved, moved), nil
}
