package sdma

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
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
	scenario.Register(&scenario.Scenario{
		Name:    "allgather-ring",
		Perf:    scenario.PerfAllToAll,
		Summary: "ring all-gather: ranks−1 steps, each rank forwards one chunk to its successor per step with put + remote signal",
		Bytes:   "per chunk",
		Check:   checkAllgather,
		Usage:   allgatherUsage,
		Run:     func(o scenario.Options) (*scenario.Outcome, error) { return runAllgather(o, false) },
	})
	scenario.Register(&scenario.Scenario{
		Name:    "allgather-wrong-queue",
		Summary: "PLANTED BUG: allgather-ring with each chunk on one queue id and its signal on another",
		Planted: &scenario.Planted{Fixed: "allgather-ring", Ranks: 4, Bytes: 4 << 10, Timing: true, Class: "a chunk on one queue id and its signal on another: nothing orders the COPY before the signal",
			Source: "seed document, waitSignal rules: a signal orders only its own queue's earlier packets"},
		Bytes: "per chunk",
		Check: func(o scenario.Options) error {
			if o.Queues < 2 {
				return fmt.Errorf("invalid --queues %d: allgather-wrong-queue signals on the queue after the chunk's, it needs 2 or more", o.Queues)
			}
			return checkAllgather(o)
		},
		Usage: allgatherUsage,
		Run:   func(o scenario.Options) (*scenario.Outcome, error) { return runAllgather(o, true) },
	})
}

func allgatherUsage(o scenario.Options) scenario.Usage {
	r, b := uint64(o.Ranks), o.Bytes
	return scenario.Usage{Backed: r * r * b, Queues: o.Ranks * min(o.Queues, o.Ranks-1), Lanes: o.Ranks, Host: r*b + b}
}

func checkAllgather(o scenario.Options) error {
	if o.Bytes > maxMessageBytes {
		return fmt.Errorf("invalid --bytes %s: allgather-ring chunks are at most %s", scenario.FormatBytes(o.Bytes), scenario.FormatBytes(maxMessageBytes))
	}
	return nil
}

// scratchBytes per step follow the gathered chunks: the wrong-queue bug's
// signal-carrying puts land there, each step in its own slot (so they do
// not race with each other; only the chunks do).
const scratchBytes = 8

func runAllgather(o scenario.Options, wrongQueue bool) (*scenario.Outcome, error) {
	j, err := scenario.NewEnv(o)
	if err != nil {
		return nil, err
	}
	defer j.Close() // the checks are done when the run returns
	n, b := o.Ranks, o.Bytes
	span := uint64(n) * b
	// buf[r] holds the gathered chunks, chunk c at c × bytes; rank r's own
	// chunk is in place before the kernels start.
	buf, err := j.Window(span + uint64(n+1)*scratchBytes)
	if err != nil {
		return nil, err
	}
	for r := range n {
		if o.Phantom {
			break
		}
		if err := j.Mem().Write(buf[r].LocalPtr(uint64(r)*b), scenario.PatternOf(b, 0, r, r)); err != nil {
			return nil, err
		}
	}
	if err := j.SetupDevComms(); err != nil {
		return nil, err
	}
	for r := range n {
		next, prev := (r+1)%n, (r+n-1)%n
		err := j.LaunchRank(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
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
			j.Consume(cco.NewMem(t, j.DevComms[r]), buf[r].LocalPtr(0), span)
			j.Done(r, t)
		})
		if err != nil {
			return nil, err
		}
	}
	if err := j.Sim.Run(); err != nil {
		return nil, err
	}
	var c scenario.Checker
	own := func(r, src int) (int, int, bool) { return src, src, true } // chunk src is rank src's own
	what := func(r, src int) string { return fmt.Sprintf("rank %d's chunk from rank %d", r, src) }
	if err := j.CheckBlocks(&c, buf, n, b, own, what); err != nil {
		return nil, err
	}
	if err := j.CheckSignals(&c, func(r, p, q int) (uint64, bool) { return ringSignals(o, wrongQueue, q), p == (r+n-1)%n }); err != nil {
		return nil, err
	}
	if err := c.Err("allgather-ring", o.Seed); err != nil {
		return nil, err
	}
	moved := func(int) uint64 { return uint64(n-1) * b }
	return j.Outcome(moved, moved), nil
}

// ringSignals is what rank r's slot (prev, q) counts at the end: steps
// 0..n−2 signalled on queue s mod queues (the bug: the queue after it).
func ringSignals(o scenario.Options, wrongQueue bool, q int) uint64 {
	want := uint64(0)
	for s := range o.Ranks - 1 {
		sq := s % o.Queues
		if wrongQueue {
			sq = (sq + 1) % o.Queues
		}
		if sq == q {
			want++
		}
	}
	return want
}
