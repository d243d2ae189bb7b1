package model

import (
	"fmt"
	"math"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Params is the mechanistic timing model: a label, one value per row of
// the parameter table ([Parameters]; each row's typed accessor reads it,
// as LinkGBps.Of(p)) and, optionally, a platform's engine-link map. Every
// duration is computed from these (see the package doc). It implements
// [Model]; the presets (MI355X, the placeholder) are values of it, and
// model files are its JSON form.
type Params struct {
	Label string
	// EngineLinks, if set, lists the engines each peer link is served by
	// (model.Engines.Links), instead of KFD's rule: a platform's own map.
	// A layout, not a number: no fit varies it.
	EngineLinks [][]int
	// FusedOffEngines lists the engines fused off on the part
	// (model.Engines.FusedOff): absent from KFD's masks. A layout too.
	FusedOffEngines []int
	v               []float64 // by Parameter.i
}

func (p *Params) get(i int) float64 {
	if i < len(p.v) {
		return p.v[i]
	}
	return 0
}

func (p *Params) set(i int, v float64) {
	for len(p.v) <= i {
		p.v = append(p.v, 0)
	}
	p.v[i] = v
}

// LinkChunkBytes is the granule in which copies sharing a path interleave
// and land (an emulation resolution, not a device parameter: a lone copy's
// time does not depend on it).
const LinkChunkBytes = 256 << 10

// MI355X returns the calibrated MI355X preset: every parameter at its
// table value (the fixed ones from their cited sources, the fitted ones
// from "emud calibrate"'s fit to the documented table; see [Parameters]).
func MI355X() *Params {
	p := &Params{Label: "mi355x", v: make([]float64, len(table))}
	for _, r := range table {
		p.v[r.i] = r.Value
	}
	return p
}

// NewPlaceholder returns the placeholder preset: the first, uncalibrated
// model. Engine costs only (3 µs from doorbell to fetch and for an
// engine memory round trip, 2 µs per packet, 60 GB/s between GPUs and for
// a broadcast stream, 500 GB/s locally), every queue on an engine of its
// own, and CU-side issuing, reads and host stores free: protocol tests
// that need issuers to outrun the engine use it.
func NewPlaceholder() *Params {
	p := MI355X()
	p.Label = "placeholder"
	for _, s := range []struct {
		x Parameter
		v float64
	}{
		{IssueBase.Parameter, 0}, {IssueScan.Parameter, 0}, {IssueQueue.Parameter, 0}, {SubmitCycles.Parameter, 0},
		{UncachedRead.Parameter, 0}, {HostStoreUs.Parameter, 0}, {HBM.Parameter, 5000},
		{VisibleUs.Parameter, 3}, {PacketUs.Parameter, 2}, {LocalPacketUs.Parameter, 2}, {HostPacketUs.Parameter, 2},
		{LinkGBps.Parameter, 60}, {LinkReadGBps.Parameter, 60}, {LocalGBps.Parameter, 500}, {BcastLinkGBps.Parameter, 60},
		{EnginesPerLink.Parameter, 0},
	} {
		s.x.Set(p, s.v)
	}
	return p
}

// MaxStepUs bounds every parameter's contribution to one step (µs, or CU
// cycles): 1000 s of virtual time. Far beyond any real device, and far
// enough inside the virtual clock's range (int64 picoseconds, 106 days)
// that sums over a run's steps cannot wrap.
const MaxStepUs = 1e9

// Validate reports the first parameter outside its physical range, in
// table order, then an impossible engine layout.
func (p *Params) Validate() error {
	for _, r := range table {
		if err := r.check(p.Label, r.Get(p)); err != nil {
			return err
		}
	}
	// A positive rate can still be so small that one step's time overflows
	// the virtual clock (int64 picoseconds) and wraps: every single step,
	// like every time parameter, must stay within MaxStepUs.
	for _, r := range table {
		v := r.Get(p)
		switch r.Range {
		case RangeRate:
			if step := float64(ring.MaxCopyBytes) / v / 1e3; step > MaxStepUs { // bytes / (bytes/ns) = ns
				return fmt.Errorf("model %q: %s %v is too small: one COPY of %d B would take %.3g µs, more than the %g µs (1000 s) any one step may take; need at least %.3g",
					p.Label, r.Name, v, ring.MaxCopyBytes, step, float64(MaxStepUs), float64(ring.MaxCopyBytes)/MaxStepUs/1e3)
			}
		case RangeClock:
			if step := MaxStepUs / v / 1e3; step > MaxStepUs { // the largest cycle count, in µs
				return fmt.Errorf("model %q: %s %v is too small: %g cycles would take %.3g µs, more than the %g µs any one step may take; need at least 0.001",
					p.Label, r.Name, v, float64(MaxStepUs), step, float64(MaxStepUs))
			}
		case RangeFraction:
			if v >= 1 {
				return fmt.Errorf("model %q: %s must be below 1 (a relative spread), got %v", p.Label, r.Name, v)
			}
		}
	}
	if err := p.Engines().Validate(); err != nil {
		return fmt.Errorf("model %q: %w", p.Label, err)
	}
	return nil
}

func us(v float64) sim.Time { return sim.Time(math.Round(v * float64(sim.Microsecond))) }

func (p *Params) cycles(c float64) sim.Time {
	return sim.Time(math.Round(c / ClockGHz.Of(p) * float64(sim.Nanosecond)))
}

// Name implements Model.
func (p *Params) Name() string { return p.Label }

// Cost implements Model: the mechanism of the package doc.
//   - Doorbell and SignalVisible are one memory visibility, VisibleUs.
//   - A packet's gap: padding NOPs are free; a POLL that holds costs two
//     engine memory round trips, each what VisibleUs is (the poll's read
//     completing, the next packet's fetch); a COPY with an end in host
//     memory HostPacketUs and one whose data stays on its GPU
//     LocalPacketUs (its path's fixed cost); every other packet PacketUs
//     (a peer COPY and an ATOMIC alike, seed document).
//   - A POLL's interval field's unit is undocumented (docs/sdma-hardware.md
//     §2.5); emud takes it as a quarter of an engine memory round trip
//     (VisibleUs / 4), so the interval 4 that ROCr and MORI write
//     re-reads once per round trip: back to back, the fastest an engine
//     can poll. Interval 0 still takes one read.
//   - Issue is IssueCycles; Submit SubmitCycles; an issuer that waited
//     on the commit chain sees its predecessor's commit at no extra cost
//     (the waiter spins on the commit word, which the predecessor's store
//     updates); an rptr read and each read of a CU's flag poll are one
//     UncachedRead.
//   - A host store is visible HostStoreUs after it is made; a CU copy of
//     Bytes streams at HBM.
func (p *Params) Cost(c Cost) sim.Time {
	switch c.Kind {
	case CostDoorbell, CostSignalVisible:
		return us(VisibleUs.Of(p))
	case CostPacketGap:
		switch c.Packet {
		case ring.KindNop:
			return 0
		case ring.KindPoll:
			return us(2 * VisibleUs.Of(p))
		case ring.KindCopy:
			switch {
			case c.Host:
				return us(HostPacketUs.Of(p))
			case c.Local:
				return us(LocalPacketUs.Of(p))
			}
		}
		return us(PacketUs.Of(p))
	case CostPollInterval:
		return us(float64(max(c.Interval, 1)) * VisibleUs.Of(p) / 4)
	case CostIssue:
		return p.cycles(p.IssueCycles(c.Shape))
	case CostSubmit:
		return p.cycles(SubmitCycles.Of(p))
	case CostRptrRead, CostMemRead:
		return p.cycles(UncachedRead.Of(p))
	case CostHostStore:
		return us(HostStoreUs.Of(p))
	case CostCUCopy:
		return sim.Time(float64(c.Bytes) / HBM.Of(p) * float64(sim.Nanosecond))
	case CostCopyLatency:
		switch {
		case c.Host:
			return us(HostCopyUs.Of(p))
		case c.Local:
			return us(LocalCopyUs.Of(p))
		}
		return us(PeerCopyUs.Of(p))
	}
	return 0 // CostChainObserve
}

// Rate implements Model: a copy (or broadcast stream) with an end in host
// memory at HostGBps, a local one at LocalGBps, a peer copy at LinkGBps,
// a broadcast stream to a peer at BcastLinkGBps.
func (p *Params) Rate(src, dst int, broadcast bool) float64 {
	return p.StreamRate(Stream{Src: src, Dst: dst, Broadcast: broadcast})
}

// StreamRate implements Model: Rate's paths; a pulled peer copy at
// LinkReadGBps; and a peer stream sharing its directed link with k−1
// others at 1/(1 + LinkShare·(k−1)) of its rate (so k of them move
// LinkGBps/(1 + LinkShare·(k−1)) together). Local and host paths share
// without loss: no row has shown otherwise.
func (p *Params) StreamRate(s Stream) float64 {
	switch {
	case s.Src == Host || s.Dst == Host:
		return HostGBps.Of(p)
	case s.Src == s.Dst:
		return LocalGBps.Of(p)
	}
	r := LinkGBps.Of(p)
	switch {
	case s.Broadcast:
		r = BcastLinkGBps.Of(p)
	case s.Pull:
		r = LinkReadGBps.Of(p)
	}
	if k := s.Sharing; k > 1 {
		r /= 1 + LinkShare.Of(p)*float64(k-1)
	}
	return r
}

// Engines implements Model.
// The architecture's loopback rule comes with it (ArchOf): on gfx1250
// loopback channels spread over the host-link engines, which MORI's anvil
// says are all 16 there, and engine 0 holds one queue of ROCr's before the
// program makes any (MORI: pinning every loopback channel to engine 0 "hits
// NO_MEMORY at the sixth channel" of its 6).
func (p *Params) Engines() Engines {
	e := Engines{General: GeneralEngines.Of(p), XGMI: XGMIEngines.Of(p), PerLink: EnginesPerLink.Of(p),
		QueuesPerEngine: QueuesPerEngine.Of(p), Slice: p.cycles(QuantumKCycles.Of(p) * 1024), Links: p.EngineLinks,
		FusedOff: p.FusedOffEngines}
	if ArchOf(p).SpreadLoopback {
		e.SpreadLoopback = true
		for id := range e.General + e.XGMI {
			e.HostLink = append(e.HostLink, id)
		}
		e.Runtime = []int{1}
	}
	return e
}

// IssueCycles is the Issue cost in CU cycles: IssueBase; plus IssueScan
// per doubling of lanes when lanes share one queue; plus IssueQueue ×
// (1 − 1/Q) when they post to Q distinct queues.
func (p *Params) IssueCycles(s IssueShape) float64 {
	c := IssueBase.Of(p)
	if s.Lanes > 1 && s.Queues <= 1 {
		c += IssueScan.Of(p) * math.Log2(float64(s.Lanes))
	}
	if s.Queues > 1 {
		c += IssueQueue.Of(p) * (1 - 1/float64(s.Queues))
	}
	return c
}

// CUClockGHz implements Model.
func (p *Params) CUClockGHz() float64 { return ClockGHz.Of(p) }

// Jitter implements Model.
func (p *Params) Jitter() float64 { return JitterFrac.Of(p) }

// Clone returns a copy that can be changed without touching p.
func (p *Params) Clone() *Params {
	c := &Params{Label: p.Label, v: append([]float64(nil), p.v...), FusedOffEngines: append([]int(nil), p.FusedOffEngines...)}
	if p.EngineLinks != nil {
		c.EngineLinks = make([][]int, len(p.EngineLinks))
		for i, l := range p.EngineLinks {
			c.EngineLinks[i] = append([]int(nil), l...)
		}
	}
	return c
}
