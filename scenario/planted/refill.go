package planted

import (
	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// refillBytes is the block rank 0 sends; refill's own put (a header of
// refillHeader bytes) goes on the same queue.
const (
	refillBytes  = 16 << 10
	refillHeader = 256
)

func init() {
	bug{name: "refill-without-wait", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runRefillWithoutWait,
		planted: scenario.Planted{Class: "the host launches a refill kernel without waiting for the send kernel; both post to one queue, so the order of their packets is a launch tie",
			Source: "issue 23: a race the detector saw corrupt data yet did not report, taking a queue's in-order execution of two unordered posts as an ordering"}}.register()
}

// refill-without-wait: rank 0's send kernel puts its block to rank 1 with
// a remote signal; the host launches the refill kernel right after, not
// waiting for the send kernel, and the refill kernel overwrites the block
// with the next iteration's data and puts a small header on the same
// queue. When the refill's packet is rung first the send's COPY, behind it
// in the ring, reads the new data. The fix quiets the send in its kernel
// and has the host wait for it before launching the refill.
func runRefillWithoutWait(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	r, w, err := sender(o, 2, 1, 2*refillBytes+refillHeader, refillBytes)
	if err != nil {
		return nil, err
	}
	send, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], refillBytes, w[0], 0, refillBytes, 0, cco.RemoteSignal)
		if fixed {
			sdma.QuietQueue(1, 0)
		}
	})
	if err != nil {
		return nil, err
	}
	refill := func(t *kernel.Thread, sdma *cco.Sdma) {
		fillLane(sdma, w[0], 0, refillBytes, 0, 1)
		sdma.Put(1, w[1], 2*refillBytes, w[0], 0, refillHeader, 0)
		sdma.QuietQueue(1, 0)
	}
	if fixed {
		r.Sim.Spawn("host0", func(a *sim.Actor) {
			if err := send.Wait(a); err != nil {
				return
			}
			if _, err := r.Launch(0, 1, 1, refill); err != nil {
				r.Sim.Fail(err)
			}
		})
	} else if _, err := r.Launch(0, 1, 1, refill); err != nil {
		return nil, err
	}
	return receive(r, w, refillBytes, refillBytes)
}
