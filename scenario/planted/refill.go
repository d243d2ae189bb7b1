package planted

import (
	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
)

// refillBytes is the block rank 0 sends; refill's own put (a header of
// refillHeader bytes) goes on the same queue.
const (
	refillBytes  = 16 << 10
	refillHeader = 256
)

// refill-without-wait: rank 0's send kernel puts its block to rank 1 with
// a remote signal; the host launches the refill kernel right after, not
// waiting for the send kernel, and the refill kernel overwrites the block
// with the next iteration's data and puts a small header on the same
// queue. When the refill's packet is rung first the send's COPY, behind it
// in the ring, reads the new data. The fix quiets the send in its kernel
// and has the host wait for it before launching the refill.
func refillWithoutWait(p *prog) func() error {
	w := p.sender(2*refillBytes+refillHeader, refillBytes)
	send := p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], refillBytes, w[0], 0, refillBytes, 0, cco.RemoteSignal)
		if p.fixed {
			sdma.QuietQueue(1, 0)
		}
	})
	refill := func(t *kernel.Thread, sdma *cco.Sdma) {
		fillLane(sdma, w[0], 0, refillBytes, 0, 1)
		sdma.Put(1, w[1], 2*refillBytes, w[0], 0, refillHeader, 0)
		sdma.QuietQueue(1, 0)
	}
	if p.fixed {
		p.launchAfter(send, 0, 0, refill)
	} else {
		p.launch(0, 1, 1, refill)
	}
	return p.receive(w, refillBytes, refillBytes)
}
