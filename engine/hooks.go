package engine

import (
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Observer is told about a node's queue work as it happens; package trace
// implements it to record timelines. Methods run on the simulator's
// current actor or event, one at a time, so an observer needs no locks. The
// packet and queue passed in are the engine's own: read them during the
// call, keep copies.
//
// With no observer set, each hook point costs one nil check: nothing is
// allocated on the packet path.
type Observer interface {
	// Running says actor a runs now: it came back from the commit-chain
	// wait of Submit, so the doorbell that follows is its. (The ring
	// protocol's other waits return to code that rings nothing.)
	Running(a *sim.Actor)
	// Doorbell says q's engine saw a 64-bit doorbell store of v, from
	// Submit, Commit or RingDoorbell (an invalid value included: the engine
	// ignores it, after raising DOORBELL_INVALID).
	Doorbell(q *Queue, v uint64)
	// Retired says q finished the packet at ring pointer off, which the
	// engine fetched and began at start (a POLL_REGMEM's parked time
	// included), now; padding NOPs that take no time are reported too.
	Retired(q *Queue, off uint64, start sim.Time, p *ring.Packet)
}

// SetObserver makes o the node's observer; nil detaches it. A node has one
// observer at a time.
func (n *Node) SetObserver(o Observer) { n.obs = o }

// Observer returns the node's observer, or nil.
func (n *Node) Observer() Observer { return n.obs }
