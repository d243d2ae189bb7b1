package model

import (
	"github.com/emud-dev/emud/sim"
)

// Perturbed returns m with the run's timing perturbation (sim.Perturber)
// applied to the costs a model alone can key: link and broadcast rates by
// directed path, CU issue and read costs by kind, host store and signal
// visibility. The engine perturbs its own per-queue costs (packet gaps,
// doorbell latency, poll phase), which need the queue as key, so those
// pass through unchanged here. At perturbation level 0 it returns m itself.
func Perturbed(m Model, p *sim.Perturber) Model {
	if p == nil || !p.On() {
		return m
	}
	return &perturbed{Model: m, p: p}
}

// perturbed wraps the base model's Cost and Rate; everything else passes
// through.
type perturbed struct {
	Model
	p *sim.Perturber
}

// CU cost kinds, the A of a sim.KeyCU key.
const (
	cuIssue uint32 = iota
	cuSubmit
	cuChain
	cuRptr
	cuMemRead
)

func (x *perturbed) Cost(c Cost) sim.Time {
	d := x.Model.Cost(c)
	var k sim.Key
	switch c.Kind {
	case CostIssue:
		k = sim.Key{Kind: sim.KeyCU, A: cuIssue}
	case CostSubmit:
		k = sim.Key{Kind: sim.KeyCU, A: cuSubmit}
	case CostChainObserve:
		k = sim.Key{Kind: sim.KeyCU, A: cuChain}
	case CostRptrRead:
		k = sim.Key{Kind: sim.KeyCU, A: cuRptr}
	case CostMemRead:
		k = sim.Key{Kind: sim.KeyCU, A: cuMemRead}
	case CostHostStore:
		k = sim.Key{Kind: sim.KeyHostStore}
	case CostSignalVisible:
		k = sim.Key{Kind: sim.KeySignal}
	default:
		return d // the engine's own costs (it keys them by queue) and a CU copy
	}
	return x.p.Duration(k, d)
}

func (x *perturbed) Rate(src, dst int, broadcast bool) float64 {
	return x.StreamRate(Stream{Src: src, Dst: dst, Broadcast: broadcast})
}

// StreamRate perturbs a stream by its directed path, as Rate does: a pull
// and a push over one path share the path's spread.
func (x *perturbed) StreamRate(s Stream) float64 {
	k := sim.Key{Kind: sim.KeyLink, A: uint32(s.Src), B: uint32(s.Dst)}
	if s.Broadcast {
		k = sim.Key{Kind: sim.KeyLink, A: ^uint32(0)}
		if s.Src == s.Dst {
			k.B = 1
		}
	}
	return x.p.Rate(k, x.Model.StreamRate(s))
}
