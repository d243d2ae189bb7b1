package cco

import (
	"fmt"

	"github.com/emud-dev/emud/signal"
)

// A dev comm whose device code is not emud's: a program built against the
// user's own MORI header (capi, cxx/mori.go) writes raw packets into the
// rings of the dev comm's queues and rings their doorbells itself. These
// two accessors give such a producer the queues and the peers' signal
// pools that emud's own device calls would have used.

// QueueOf returns the dev comm's queue toward LSA peer p with queue id q,
// making it if need be.
func (d DevComm) QueueOf(p, q int) (*Queue, error) {
	if d.st == nil || d.st.n == 0 {
		return nil, fmt.Errorf("cco: rank %d's dev comm has no SDMA queues (SDMA off)", d.Rank)
	}
	if p < 0 || p >= d.LsaSize || q < 0 || q >= d.st.n {
		return nil, fmt.Errorf("cco: queue (peer %d, queueId %d) outside the dev comm's %d peers × %d queues", p, q, d.LsaSize, d.st.n)
	}
	return d.st.queue(p, q)
}

// PeerSignalPool is LSA peer p's signal pool of the same dev comm (the
// pool a remote signal lands in).
func (d DevComm) PeerSignalPool(p int) (signal.Pool, error) {
	if d.st == nil || d.st.n == 0 {
		return signal.Pool{}, fmt.Errorf("cco: rank %d's dev comm has no signal pool (SDMA off)", d.Rank)
	}
	if p < 0 || p >= d.LsaSize {
		return signal.Pool{}, fmt.Errorf("cco: peer %d outside the dev comm's %d LSA peers", p, d.LsaSize)
	}
	return d.st.peerPool(p)
}
