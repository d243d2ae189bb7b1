package model

import (
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// IssueShape is what a CU-side post looks like to the issue-cost mechanism:
// how many lanes of one wave post together, over how many distinct queues,
// and whether the wave had to detect its shape at run time
// (ccoSdmaThreadIndependent with more than one lane).
type IssueShape struct {
	Lanes       int
	Queues      int
	Independent bool
}

// Model gives the engine and the CU-side API their durations. Engine
// methods describe one SDMA queue's engine; CU methods describe what a wave
// spends issuing, draining and polling. A model with zero CU costs (the
// Placeholder) makes issuing free, as emud's first releases did.
type Model interface {
	// Name identifies the model in reports ("placeholder", "mi355x", ...).
	Name() string

	// DoorbellLatency is the time from a doorbell store to the engine
	// having fetched the first new packet of an idle queue.
	DoorbellLatency() sim.Time
	// PacketOverhead is the engine's gap after a packet of kind k before it
	// starts the next one of the same burst: the completion handshake of k
	// and the fetch and decode of its successor. A packet's own effect (and
	// its read-pointer write-back) happens before the gap.
	PacketOverhead(k ring.Kind) sim.Time
	// LinkGBps is the bandwidth (GB/s = bytes/ns) of the path that carries
	// a copy's data from GPU src to GPU dst; src == dst is a local copy.
	// Concurrent copies on one path share it.
	LinkGBps(src, dst int) float64
	// BroadcastGBps is the rate of one destination stream of a broadcast
	// COPY; one engine runs its two streams one after the other.
	BroadcastGBps(local bool) float64
	// Engines is each GPU's set of SDMA engines: how many, which links
	// they serve, how many queues each holds and its time slice.
	Engines() Engines
	// LinkChunk is how many bytes a copy moves per turn on a shared path;
	// concurrent copies interleave at this granularity.
	LinkChunk() uint64
	// PollInterval is the time between two reads of a POLL_REGMEM packet
	// whose interval field is iv.
	PollInterval(iv uint16) sim.Time

	// Issue is the CU time of a put-family post from the call up to the
	// commit chain: ballot, grouping, reservation, space check, packet
	// writes.
	Issue(s IssueShape) sim.Time
	// Submit is the CU time from owning the commit chain to the doorbell
	// store: write pointer, release fence, doorbell.
	Submit() sim.Time
	// ChainObserve is the extra time an issuer that had to wait on the
	// commit chain needs to see its predecessor's commit (one uncached
	// re-read).
	ChainObserve() sim.Time
	// RptrRead is one uncached read of a queue's read pointer (quiet).
	RptrRead() sim.Time
	// MemRead is one CU read of a flag another agent sets (what a CU poll
	// loop pays per read).
	MemRead() sim.Time
	// HostStoreVisible is from a host store into device memory to device
	// readers seeing it: for scenario drivers that play the host.
	HostStoreVisible() sim.Time
	// SignalVisible is the time from an engine's write (a signal ATOMIC, a
	// flag) to a CU that polls it seeing the new value.
	SignalVisible() sim.Time
	// CUClockGHz is the CU clock, for reporting CU times in cycles.
	CUClockGHz() float64
	// CUCopyGBps is a CU kernel's local copy bandwidth (pack, gather).
	CUCopyGBps() float64
	// Jitter is the relative spread (0 = none) applied, from the run's
	// seed, to engine gaps and doorbell latencies.
	Jitter() float64
}

// StreamGBps is the rate of one destination stream of a copy from GPU src
// to GPU dst: the path's bandwidth, or a broadcast stream's.
func StreamGBps(m Model, src, dst int, broadcast bool) float64 {
	if broadcast {
		return m.BroadcastGBps(dst == src)
	}
	return m.LinkGBps(src, dst)
}

// Placeholder is a simple, uncalibrated model (see the package doc): engine
// costs only, CU-side issuing takes no time.
type Placeholder struct {
	Doorbell   sim.Time // doorbell to fetch
	Packet     sim.Time // per packet, COPY and ATOMIC alike
	Nop        sim.Time // per NOP (padding dwords)
	Link       float64  // GPU-to-GPU bandwidth (GB/s = bytes/ns)
	LocalGBps  float64  // same-GPU copy bandwidth
	PollUnit   sim.Time // duration of one unit of the POLL interval field
	MinPollGap sim.Time // interval 0 still takes one memory read
}

// NewPlaceholder returns the placeholder with its default numbers.
func NewPlaceholder() *Placeholder {
	return &Placeholder{
		Doorbell:   3 * sim.Microsecond,
		Packet:     2 * sim.Microsecond,
		Link:       60,
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

// LinkGBps implements Model.
func (p *Placeholder) LinkGBps(src, dst int) float64 {
	if src == dst {
		return p.LocalGBps
	}
	return p.Link
}

// BroadcastGBps implements Model: each stream at its path's plain rate.
func (p *Placeholder) BroadcastGBps(local bool) float64 {
	if local {
		return p.LocalGBps
	}
	return p.Link
}

// Engines implements Model: every queue has an engine of its own (the
// uncalibrated simplification; no engine is shared).
func (p *Placeholder) Engines() Engines { return Engines{} }

// LinkChunk implements Model.
func (p *Placeholder) LinkChunk() uint64 { return 256 << 10 }

// PollInterval implements Model.
func (p *Placeholder) PollInterval(iv uint16) sim.Time {
	return max(sim.Time(iv)*p.PollUnit, p.MinPollGap)
}

// Issue implements Model: free.
func (p *Placeholder) Issue(IssueShape) sim.Time { return 0 }

// Submit implements Model: free.
func (p *Placeholder) Submit() sim.Time { return 0 }

// ChainObserve implements Model: free.
func (p *Placeholder) ChainObserve() sim.Time { return 0 }

// RptrRead implements Model: free.
func (p *Placeholder) RptrRead() sim.Time { return 0 }

// MemRead implements Model: free.
func (p *Placeholder) MemRead() sim.Time { return 0 }

// HostStoreVisible implements Model: immediate.
func (p *Placeholder) HostStoreVisible() sim.Time { return 0 }

// SignalVisible implements Model: immediate.
func (p *Placeholder) SignalVisible() sim.Time { return 0 }

// CUClockGHz implements Model: MI355X's peak engine clock.
func (p *Placeholder) CUClockGHz() float64 { return 2.4 }

// CUCopyGBps implements Model.
func (p *Placeholder) CUCopyGBps() float64 { return 5000 }

// Jitter implements Model: none.
func (p *Placeholder) Jitter() float64 { return 0 }
