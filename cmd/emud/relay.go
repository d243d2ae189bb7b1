package main

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// The relay scenario forwards rank 0's buffer down the chain 0 → 1 → … →
// n−1 in relayChunks pipelined chunks, with no compute unit waiting in the
// middle: each inner rank's kernel posts, per chunk, postWaitSignal (park
// the queue to its successor until the chunk's signal from its predecessor
// has landed) and then the put that forwards the chunk, and returns. The
// engines do the rest. The last rank waits for the chunks with waitSignal.
//
// A rank's finish time is when its last forwarded chunk landed at its
// successor (for the last rank: when its last chunk arrived); host actors
// watch the signal slots to time it, as hipEvents would.

// relayChunks is how many pieces the payload is pipelined in.
const relayChunks = 4

func init() {
	register(&scenario{
		name:    "relay",
		summary: fmt.Sprintf("rank 0's buffer relayed along 0 → 1 → … in %d chunks, forwarded by engine-side waits (postWaitSignal)", relayChunks),
		bytes:   "payload",
		check:   checkPayload("relay"),
		usage:   payloadUsage,
		run:     runRelay,
	})
}

// checkPayload bounds --bytes for the scenarios that move one payload.
func checkPayload(name string) func(options) error {
	return func(o options) error {
		if o.Bytes > maxMessageBytes {
			return fmt.Errorf("invalid --bytes %s: the %s payload is at most %s", formatBytes(o.Bytes), name, formatBytes(maxMessageBytes))
		}
		return nil
	}
}

// payloadUsage: one window of bytes per rank, the payload and a read-back
// buffer on the host, up to two queues and two actors per rank.
func payloadUsage(o options) usage {
	u := usage{Backed: uint64(o.Ranks) * o.Bytes, Queues: 2 * o.Ranks, Lanes: 2 * o.Ranks}
	if !o.Phantom {
		u.Host = 2 * o.Bytes
	}
	return u
}

// chunkSpan is piece i of k of an n-byte payload: pieces differ by at most
// one byte and none is empty when n ≥ k.
func chunkSpan(n uint64, k, i int) (off, size uint64) {
	off = n * uint64(i) / uint64(k)
	return off, n*uint64(i+1)/uint64(k) - off
}

// payload fills b with the pattern every rank must end up holding.
func payload(b []byte) { fillBlock(b, 0, 0) }

// newPayloadJob sets up a scenario that spreads rank 0's payload: a window
// of o.Bytes on every rank, rank 0's holding the payload, dev comms made.
func newPayloadJob(o options) (*job, []cco.Window, []byte, error) {
	j, err := newJob(o)
	if err != nil {
		return nil, nil, nil, err
	}
	buf, err := j.window(o.Bytes)
	if err != nil {
		return nil, nil, nil, err
	}
	var data []byte // nil in a phantom run: no payload to write or check
	if !o.Phantom {
		data = make([]byte, o.Bytes)
		payload(data)
		if err := j.mem.Write(buf[0].LocalPtr(0), data); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := j.devComms(); err != nil {
		return nil, nil, nil, err
	}
	return j, buf, data, nil
}

// verifyPayload checks, after the run, that every rank holds the payload
// (unless data is nil: a phantom run) and that every rank but 0 got exactly signals signals from parent(r) on
// queue id q.
func (j *job) verifyPayload(name string, buf []cco.Window, data []byte, q int, parent func(r int) int, signals uint64) error {
	var c checker
	got := make([]byte, len(data))
	for r := range j.o.Ranks {
		if data != nil {
			if err := j.mem.Read(buf[r].LocalPtr(0), got); err != nil {
				return err
			}
			c.block(fmt.Sprintf("rank %d's buffer", r), got, data)
		}
		if r > 0 {
			if err := c.signal(j.dcs[r], r, parent(r), q, signals); err != nil {
				return err
			}
		}
	}
	return c.err(name, j.o.Seed)
}

func runRelay(o options) (*outcome, error) {
	j, buf, data, err := newPayloadJob(o)
	if err != nil {
		return nil, err
	}
	n, b := o.Ranks, o.Bytes
	k := int(min(relayChunks, b))
	const q = 0
	for r := range n {
		prev, next := r-1, r+1
		var err error
		switch {
		case r == 0:
			err = j.launch(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				for i := range k {
					off, size := chunkSpan(b, k, i)
					sdma.Put(next, buf[r], off, buf[r], off, size, q, cco.RemoteSignal)
				}
			})
		case r < n-1:
			err = j.launch(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				for i := range k {
					off, size := chunkSpan(b, k, i)
					sdma.PostWaitSignal(next, q, prev, q, uint64(i+1)) // chunk i from prev has landed
					sdma.Put(next, buf[r], off, buf[r], off, size, q, cco.RemoteSignal)
				}
				// The kernel is done; the engine forwards as the chunks land.
			})
		default:
			err = j.launch(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				sdma.WaitSignal(prev, q, uint64(k))
				j.done(r, t)
			})
		}
		if err != nil {
			return nil, err
		}
		if r < n-1 {
			pool := j.dcs[next].SignalPool()
			j.s.Spawn(fmt.Sprintf("timer/rank%d", r), func(a *sim.Actor) {
				if err := j.n.AwaitSignal(a, pool, r, q, uint64(k)); err != nil {
					j.s.Fail(err)
					return
				}
				j.finish[r] = a.Now()
			})
		}
	}
	if err := j.s.Run(); err != nil {
		return nil, err
	}
	if err := j.verifyPayload("relay", buf, data, q, func(r int) int { return r - 1 }, uint64(k)); err != nil {
		return nil, err
	}
	return j.outcome(
		func(r int) uint64 { return b * uint64(min(1, n-1-r)) },
		func(r int) uint64 { return b * uint64(min(1, r)) }), nil
}
