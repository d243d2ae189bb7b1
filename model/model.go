package model

import (
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Copy describes a data movement for CopyTime: Bytes from GPU Src to each
// GPU in Dst (one entry for a plain copy, two for a broadcast).
type Copy struct {
	Bytes uint64
	Src   int
	Dst   []int
}

// Model gives the engine its durations.
type Model interface {
	// Name identifies the model in reports ("placeholder", "mi355x", ...).
	Name() string
	// DoorbellLatency is the time from a doorbell store to the engine
	// fetching the first new packet of an idle queue.
	DoorbellLatency() sim.Time
	// PacketOverhead is the engine's fixed cost to fetch, decode and retire
	// one packet of kind k, before any data movement.
	PacketOverhead(k ring.Kind) sim.Time
	// CopyTime is the data-movement time of a COPY or broadcast COPY.
	CopyTime(c Copy) sim.Time
	// PollInterval is the time between two reads of a POLL_REGMEM packet
	// whose interval field is iv.
	PollInterval(iv uint16) sim.Time
}

// Placeholder is a simple, uncalibrated model (see the package doc).
type Placeholder struct {
	Doorbell   sim.Time // doorbell to fetch
	Packet     sim.Time // per packet, COPY and ATOMIC alike
	Nop        sim.Time // per NOP (padding dwords)
	LinkGBps   float64  // GPU-to-GPU bandwidth (GB/s = bytes/ns)
	LocalGBps  float64  // same-GPU copy bandwidth
	PollUnit   sim.Time // duration of one unit of the POLL interval field
	MinPollGap sim.Time // interval 0 still takes one memory read
}

// NewPlaceholder returns the placeholder with its default numbers.
func NewPlaceholder() *Placeholder {
	return &Placeholder{
		Doorbell:   3 * sim.Microsecond,
		Packet:     2 * sim.Microsecond,
		LinkGBps:   60,
		LocalGBps:  500,
		PollUnit:   100 * sim.Nanosecond,
		MinPollGap: 50 * sim.Nanosecond,
	}
}

// Name implements Model.
func (p *Placeholder) Name() string { return "placeholder" }

// DoorbellLatency implements Model.
func (p *Placeholder) DoorbellLatency() sim.Time { return p.Doorbell }

// PacketOverhead implements Model.
func (p *Placeholder) PacketOverhead(k ring.Kind) sim.Time {
	if k == ring.KindNop {
		return p.Nop
	}
	return p.Packet
}

// CopyTime implements Model: a broadcast's two writes do not overlap on one
// engine (seed document), so each destination costs its own transfer.
func (p *Placeholder) CopyTime(c Copy) sim.Time {
	var t float64
	for _, d := range c.Dst {
		bw := p.LinkGBps
		if d == c.Src {
			bw = p.LocalGBps
		}
		t += float64(c.Bytes) / bw // bytes / (bytes/ns) = ns
	}
	return sim.Time(t * float64(sim.Nanosecond))
}

// PollInterval implements Model.
func (p *Placeholder) PollInterval(iv uint16) sim.Time {
	return max(sim.Time(iv)*p.PollUnit, p.MinPollGap)
}
