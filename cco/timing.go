package cco

import (
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// CU-side time (model.Model's CU costs). A wave's actor sleeps for what
// its instructions would take on the CU:
//
//   - a put-family post costs Issue(shape) before it takes part in the
//     commit chain, then Submit (write pointer, fence, doorbell) right
//     before the doorbell; an issuer that found the chain blocked adds
//     ChainObserve, one uncached re-read, after its predecessor committed;
//   - commit costs Submit;
//   - quiet costs one uncached RptrRead per queue a lane visits, after the
//     wait (lanes of a warp/block quiet read in parallel);
//   - waitSignal costs SignalVisible after the slot reached expected.
//
// On a device without a timing model (real hardware), nothing sleeps: time
// passes by itself there.

// cuSpend sleeps the wave's actor for n of the model's cost c, if the
// device has a model.
func (h *Host) cuSpend(a *sim.Actor, c model.Cost, n int) {
	if h.timing == nil {
		return
	}
	if d := sim.Time(n) * h.timing.Cost(c); d > 0 {
		a.Sleep(d)
	}
}

// issueShape describes a post of lanes ps for model.Issue.
func issueShape(ps []*post, grouped bool) model.IssueShape {
	p0 := ps[0]
	s := model.IssueShape{Lanes: len(ps), Queues: 1,
		Independent: p0.o.coop == CoopThread && p0.o.mode == SdmaThreadIndependent && !p0.serial}
	if !grouped && len(ps) > 1 {
		// Solo posts of several lanes target distinct queues (Independent
		// checked that), except under the legacy per-lane mode.
		s.Queues = len(ps)
		if p0.o.mode == SdmaThreadLegacyPerLane {
			s.Queues = 0
			for i, p := range ps {
				dup := false
				for _, o := range ps[:i] {
					dup = dup || (o.peer == p.peer && o.q == p.q)
				}
				if !dup {
					s.Queues++
				}
			}
		}
	}
	return s
}
