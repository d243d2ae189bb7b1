package model

import (
	"github.com/emud-dev/emud/lsa"
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

// Model gives the engine and the CU-side API their durations and rates:
// Cost for every step's duration, Rate for every data stream. A model
// with zero CU costs (the placeholder) makes issuing free, as emud's first
// releases did. [Params] implements it (every preset and model file is
// one); [Perturbed] wraps one for a run's timing perturbation.
type Model interface {
	// Name identifies the model in reports ("placeholder", "mi355x", ...).
	Name() string
	// Cost is how long one step of kind c takes (see [CostKind]).
	Cost(c Cost) sim.Time
	// Rate is the bandwidth (GB/s = bytes/ns) of one destination stream of
	// a copy from GPU src to GPU dst (src == dst is a local copy; Host is
	// an end in host memory):
	// concurrent copies on one path share it. A broadcast COPY's streams
	// (one engine runs its two one after the other) have a rate of their
	// own.
	Rate(src, dst int, broadcast bool) float64
	// StreamRate is Rate for one stream as the engine runs it: who runs
	// the copy (a pull, Stream.Pull, may be slower than a push) and how
	// many streams share its directed path now (Stream.Sharing). Rate is
	// StreamRate of a push alone on its path.
	StreamRate(s Stream) float64
	// Engines is each GPU's set of SDMA engines: how many, which links
	// they serve, how many queues each holds and its time slice.
	Engines() Engines
	// Jitter is the relative spread (0 = none) applied, from the run's
	// seed, to engine gaps and doorbell latencies.
	Jitter() float64
	// CUClockGHz is the CU clock, for reporting CU times in cycles.
	CUClockGHz() float64
}

// CostKind is a kind of step a Model times.
type CostKind uint8

// The steps a Model times. Engine steps describe one SDMA queue's engine;
// CU steps what a wave spends issuing, draining and polling.
const (
	// CostDoorbell is from a doorbell store to the engine having fetched
	// the first new packet of an idle queue.
	CostDoorbell CostKind = iota
	// CostPacketGap is the engine's gap after a packet of kind
	// Cost.Packet before it starts the next one of the same burst: the
	// completion handshake and the fetch and decode of its successor. A
	// packet's own effect (and its read-pointer write-back) happens before
	// the gap.
	CostPacketGap
	// CostPollInterval is the time between two reads of a POLL_REGMEM
	// packet whose interval field is Cost.Interval.
	CostPollInterval
	// CostIssue is the CU time of a put-family post of shape Cost.Shape
	// from the call up to the commit chain: ballot, grouping, reservation,
	// space check, packet writes.
	CostIssue
	// CostSubmit is the CU time from owning the commit chain to the
	// doorbell store: write pointer, release fence, doorbell.
	CostSubmit
	// CostChainObserve is the extra time an issuer that had to wait on the
	// commit chain needs to see its predecessor's commit.
	CostChainObserve
	// CostRptrRead is one uncached read of a queue's read pointer (quiet).
	CostRptrRead
	// CostMemRead is one CU read of a flag another agent sets (what a CU
	// poll loop pays per read).
	CostMemRead
	// CostHostStore is from a host store into device memory to device
	// readers seeing it: for scenario drivers that play the host.
	CostHostStore
	// CostSignalVisible is from an engine's write (a signal ATOMIC, a
	// flag) to a CU that polls it seeing the new value.
	CostSignalVisible
	// CostCUCopy is a CU kernel's local copy (pack, gather) of
	// Cost.Bytes.
	CostCUCopy
	// CostCopyLatency is a COPY's fixed latency on its path (Cost.Local,
	// Cost.Host, else a peer): from the engine starting the packet to its
	// first bytes landing. It delays the copy's own completion, where
	// CostPacketGap comes after it.
	CostCopyLatency
)

// Stream is one destination stream of a COPY as the engine runs it.
type Stream struct {
	Src, Dst  int // GPUs, or Host; Src == Dst is a local copy
	Broadcast bool
	// Pull marks a peer copy the engine of Dst runs, reading from Src
	// across the link (a get), instead of the engine of Src writing.
	Pull bool
	// Sharing is how many streams use the directed path now, this one
	// included (0 counts as 1).
	Sharing int
}

// Cost is one step a Model times: its kind and what the kind depends on.
type Cost struct {
	Kind   CostKind
	Packet ring.Kind // CostPacketGap
	// Local marks a CostPacketGap COPY whose data stays on its GPU, Host
	// one with an end in host memory (its path: the per-path fixed cost).
	Local, Host bool
	Interval    uint16     // CostPollInterval
	Shape       IssueShape // CostIssue
	Bytes       uint64     // CostCUCopy
}

// The steps that depend on nothing else.
var (
	Doorbell      = Cost{Kind: CostDoorbell}
	Submit        = Cost{Kind: CostSubmit}
	ChainObserve  = Cost{Kind: CostChainObserve}
	RptrRead      = Cost{Kind: CostRptrRead}
	MemRead       = Cost{Kind: CostMemRead}
	HostStore     = Cost{Kind: CostHostStore}
	SignalVisible = Cost{Kind: CostSignalVisible}
)

// PacketGap is the engine's gap after a packet of kind k.
func PacketGap(k ring.Kind) Cost { return Cost{Kind: CostPacketGap, Packet: k} }

// LocalCopyGap is the engine's gap after a COPY that stays on its GPU.
func LocalCopyGap() Cost { return Cost{Kind: CostPacketGap, Packet: ring.KindCopy, Local: true} }

// HostCopyGap is the engine's gap after a COPY with an end in host
// memory.
func HostCopyGap() Cost { return Cost{Kind: CostPacketGap, Packet: ring.KindCopy, Host: true} }

// Host is the GPU index Rate takes for an end of a copy in host (system)
// memory, across the GPU's PCIe link: lsa.Host, what the engine's memory
// names the host slice.
const Host = lsa.Host

// CopyLatency is a COPY's fixed latency on the path from src to dst
// (GPUs, or Host).
func CopyLatency(src, dst int) Cost {
	return Cost{Kind: CostCopyLatency, Local: src == dst, Host: src == Host || dst == Host}
}

// PollInterval is the time between two reads of a POLL whose interval
// field is iv.
func PollInterval(iv uint16) Cost { return Cost{Kind: CostPollInterval, Interval: iv} }

// Issue is a put-family post of shape s up to the commit chain.
func Issue(s IssueShape) Cost { return Cost{Kind: CostIssue, Shape: s} }

// CUCopy is a CU kernel's local copy of n bytes.
func CUCopy(n uint64) Cost { return Cost{Kind: CostCUCopy, Bytes: n} }
