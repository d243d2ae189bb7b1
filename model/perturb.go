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

// perturbed embeds the base model, so costs it does not perturb (and any
// a later model adds) pass through unchanged.
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

func (x *perturbed) cu(kind uint32, d sim.Time) sim.Time {
	return x.p.Duration(sim.Key{Kind: sim.KeyCU, A: kind}, d)
}

func (x *perturbed) LinkGBps(src, dst int) float64 {
	return x.p.Rate(sim.Key{Kind: sim.KeyLink, A: uint32(src), B: uint32(dst)}, x.Model.LinkGBps(src, dst))
}

func (x *perturbed) BroadcastGBps(local bool) float64 {
	b := uint32(0)
	if local {
		b = 1
	}
	return x.p.Rate(sim.Key{Kind: sim.KeyLink, A: ^uint32(0), B: b}, x.Model.BroadcastGBps(local))
}

func (x *perturbed) Issue(s IssueShape) sim.Time { return x.cu(cuIssue, x.Model.Issue(s)) }
func (x *perturbed) Submit() sim.Time            { return x.cu(cuSubmit, x.Model.Submit()) }
func (x *perturbed) ChainObserve() sim.Time      { return x.cu(cuChain, x.Model.ChainObserve()) }
func (x *perturbed) RptrRead() sim.Time          { return x.cu(cuRptr, x.Model.RptrRead()) }
func (x *perturbed) MemRead() sim.Time           { return x.cu(cuMemRead, x.Model.MemRead()) }

func (x *perturbed) HostStoreVisible() sim.Time {
	return x.p.Duration(sim.Key{Kind: sim.KeyHostStore}, x.Model.HostStoreVisible())
}

func (x *perturbed) SignalVisible() sim.Time {
	return x.p.Duration(sim.Key{Kind: sim.KeySignal}, x.Model.SignalVisible())
}
