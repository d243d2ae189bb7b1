package issuer

import (
	"fmt"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Kinds of the hang causes a queue's issuer side can name (sim.Cause.Kind).
const (
	// CauseRingFull: a reservation waits for ring space that only bytes
	// reserved but never rung could free.
	CauseRingFull sim.CauseKind = "ring-full"
	// CauseChainStalled: an issuer waits to ring behind bytes reserved and
	// never rung.
	CauseChainStalled sim.CauseKind = "chain-stalled"
	// CauseChainJumped: a commit rang past an issuer's unwritten
	// reservation, so the commit chain can never reach it.
	CauseChainJumped sim.CauseKind = "chain-jumped"
)

// Causes names, in plain words, what keeps the queue's waiting issuers
// from ever going on, judged from the issuer's pointers alone, so on every
// backend. Higher layers that know why the bytes were never rung (an
// Aggregate batch) may say it better, giving a cause of the same Kind and
// Queue from their layer (sim.MergeCauses keeps theirs). Every cause here
// is of sim.LayerIssuer.
func (q *Queue) Causes() []sim.Cause {
	var c []sim.Cause
	name := q.id.String()
	committed := q.r.CommittedWptr()
	if unrung := q.r.Unrung(); unrung > 0 {
		for _, end := range q.spaceEnds {
			if end > q.r.Capacity() && end-q.r.Capacity() > committed {
				c = append(c, sim.Cause{Kind: CauseRingFull, Layer: sim.LayerIssuer, Queue: name, Text: fmt.Sprintf(
					"ring full on %v: %d B (%d packets' units) reserved but never rung — doorbell %#x is behind cachedWptr %#x by %d B, so the engine has nothing to run and never frees space; an Aggregate batch must be committed before it exceeds the ring (%d B)",
					q.id, unrung, unrung/ring.Unit, q.r.Doorbell(), q.r.CachedWptr(), unrung, q.r.Capacity())})
				break
			}
		}
	}
	for _, base := range q.chainBases {
		if committed > base {
			c = append(c, sim.Cause{Kind: CauseChainJumped, Layer: sim.LayerIssuer, Queue: name, Text: fmt.Sprintf(
				"commit chain on %v: an issuer waits to ring its reservation at %#x, but committedWptr already jumped to %#x — a commit rang everything reserved, including this unwritten slot, so its issuer can never ring",
				q.id, base, committed)})
		} else {
			c = append(c, sim.Cause{Kind: CauseChainStalled, Layer: sim.LayerIssuer, Queue: name, Text: fmt.Sprintf(
				"commit chain on %v stalled: an issuer waits to ring its reservation at %#x, but bytes [%#x, %#x) were reserved and never rung",
				q.id, base, committed, base)})
		}
	}
	return c
}
