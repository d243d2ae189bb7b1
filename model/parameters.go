package model

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Parameter is one row of the parameter table: a parameter of [Params]
// with its model-file name, unit, whether the calibration fits it, the
// prior a fit starts from, its MI355X value and where that value comes
// from. A fixed parameter's value is a cited hardware or software fact; a
// fitted one is found by "emud calibrate"'s least-squares fit over every
// documented row it moves (never set to one row's value).
//
// Adding a parameter is one row below (a [Float] or [Count] made by
// define) plus its use in the mechanism (params.go): the model file,
// Validate, the calibration's table and fits, [Prior] and every preset
// read the table.
type Parameter struct {
	Name   string
	Unit   string
	Fitted bool
	// Prior is a fitted parameter's start: a round, uninformed magnitude
	// that knows nothing of the documented table (fixed ones start at
	// Value).
	Prior float64
	// Value is the parameter's value in the MI355X preset: the fit of the
	// documented table from Prior for a fitted parameter, the cited fact
	// for a fixed one.
	Value float64
	// Source says what fixes the value, or which documented rows the fit
	// reads it from.
	Source string
	// Int parameters are counts: Set rounds.
	Int bool
	// Range is the physical range Validate checks.
	Range Range
	// Follows names the row whose value a model file that gives that row
	// but not this one sets this one to (a per-path split of a parameter
	// that files written before the split gave once), and which the
	// documented table's fit moves this one with when it fits that row
	// and not this one (calibrate: link_read_gbps is link_gbps there).
	Follows string
	i       int // index in the table and in Params' values
}

// Range is the physical range a parameter's value must lie in; Validate
// names the parameter and the range when it does not.
type Range uint8

const (
	// RangeStep is a time or cycle count of one step: 0..MaxStepUs.
	RangeStep Range = iota
	// RangeRate is a bandwidth (GB/s): positive, and large enough that one
	// COPY of ring.MaxCopyBytes takes at most MaxStepUs.
	RangeRate
	// RangeClock is a clock (GHz): positive, and fast enough that MaxStepUs
	// cycles take at most MaxStepUs.
	RangeClock
	// RangeFraction is a relative spread: 0 ≤ v < 1.
	RangeFraction
	// RangeQuantum is a time slice in kcycles: 0..1e6.
	RangeQuantum
	// RangeLayout is an engine count, checked with the engine layout
	// (Engines.Validate).
	RangeLayout
)

// Float is a parameter whose value is a number; Of reads it.
type Float struct{ Parameter }

// Of returns the parameter's value in p.
func (x Float) Of(p *Params) float64 { return p.get(x.i) }

// Count is a parameter whose value is a count; Of reads it.
type Count struct{ Parameter }

// Of returns the parameter's value in p.
func (x Count) Of(p *Params) int { return int(p.get(x.i)) }

// table is the parameter table, in model-file order: every define below
// appends its row.
var table []Parameter

// define adds row r to the table and returns its typed accessor.
func define[T Float | Count](r Parameter) T {
	r.i = len(table)
	var x T
	switch any(x).(type) {
	case Count:
		r.Int, r.Range = true, RangeLayout
	}
	if !r.Fitted {
		r.Prior = r.Value
	}
	table = append(table, r)
	return T{Parameter: r}
}

// The parameter table. Each row is one parameter, in model-file order.
var (
	ClockGHz = define[Float](Parameter{Name: "cu_clock_ghz", Unit: "GHz", Value: 2.4, Range: RangeClock,
		Source: "AMD MI355X specification: 2.4 GHz peak engine clock (it also turns the seed's 64-packet issue, 3220 cycles, into its 1.3 µs)"})
	// IssueBase is one lane posting one packet on one queue, up to the
	// commit chain: ballot, reservation fetch-add, read-pointer check,
	// packet stores.
	IssueBase = define[Float](Parameter{Name: "issue_base_cycles", Unit: "cycles", Fitted: true, Prior: 1000, Value: 1580,
		Source: "issue.* trigger-cycle rows (one lane, one queue) with the bw.* intercepts"})
	// IssueScan is per doubling of lanes that share one queue (one
	// reservation for all): leader election and the wave-wide prefix of
	// packet offsets.
	IssueScan = define[Float](Parameter{Name: "issue_scan_cycles", Unit: "cycles", Fitted: true, Prior: 100, Value: 135.7,
		Source: "issue.samequeue.* (lanes sharing one queue) and engine.issue.64"})
	// IssueQueue is what posting to Q distinct queues from one wave adds,
	// times (1 − 1/Q): each lane's own uncached reservation and doorbell,
	// overlapped in the memory pipeline.
	IssueQueue = define[Float](Parameter{Name: "issue_queue_cycles", Unit: "cycles", Fitted: true, Prior: 1000, Value: 1334,
		Source: "issue.spread8.* (lanes spread over distinct queues)"})
	// SubmitCycles is write pointer, release fence and doorbell store: the
	// section the in-order commit chain serialises.
	SubmitCycles = define[Float](Parameter{Name: "submit_cycles", Unit: "cycles", Fitted: true, Prior: 500, Value: 723,
		Source: "chain.8warps (the commit chain serialises Submit) with issue.*"})
	// UncachedRead is one uncached, system-scope read or round trip: a
	// queue's read pointer (quiet), one read of a flag a CU polls, the
	// acquire after it, a system-scope release.
	UncachedRead = define[Float](Parameter{Name: "uncached_read_cycles", Unit: "cycles", Value: 2600,
		Source: "MORI include/mori/cco/cco.hpp: about 2600 GPU cycles per uncached rptr read (docs/sdma-hardware.md §8); also each read of a CU's flag poll, the acquire after it, and a system-scope release"})
	// HostStoreUs is from a host store to device memory to the store being
	// visible to device readers (the CPU's posted write crossing PCIe).
	HostStoreUs = define[Float](Parameter{Name: "host_store_us", Unit: "µs", Fitted: true, Prior: 1, Value: 2.375,
		Source: "postwait.* (flag set by the host to copy complete)"})
	// HBM is the GPU's memory bandwidth: what a CU kernel's local copy
	// (pack, gather) streams at.
	HBM = define[Float](Parameter{Name: "hbm_gbps", Unit: "GB/s", Value: 8000, Range: RangeRate,
		Source: "AMD MI355X specification: 8 TB/s HBM3E peak bandwidth (a CU pack kernel streams at it)"})
	// VisibleUs is the latency of one agent of the GPU seeing another's
	// write through memory: the engine seeing a doorbell store (and
	// fetching the first packet of an idle queue), a CU spinning on a
	// signal slot seeing the engine's ATOMIC.
	VisibleUs = define[Float](Parameter{Name: "visible_us", Unit: "µs", Fitted: true, Prior: 1, Value: 0.8397,
		Source: "bw.* intercepts, postwait.*, postwaitputptr.holds and wait.vs.quiet.8 (doorbell to fetch, ATOMIC to a spinning CU; a POLL that holds costs the engine two such round trips)"})
	// PacketUs is the engine's gap after a COPY, ATOMIC, ... before the
	// next packet.
	PacketUs = define[Float](Parameter{Name: "packet_us", Unit: "µs", Fitted: true, Prior: 1, Value: 2.004,
		Source: "engine.packet.64, scatter.64x4k, signal.* (about 2 µs per packet, COPY and ATOMIC alike)"})
	// LocalPacketUs is the engine's gap after a COPY whose data stays on
	// its own GPU (source and destination local): the per-path fixed cost
	// of a local copy, where PacketUs is a peer copy's.
	LocalPacketUs = define[Float](Parameter{Name: "local_packet_us", Unit: "µs", Value: 2.004,
		Source:  "no documented MI355X row times a local COPY's fixed cost, so the preset takes packet_us's value (the same engine and handshake); a user's local rows fit it (emud fit --params all)",
		Follows: "packet_us"})
	// HostPacketUs is the engine's gap after a COPY with an end in host
	// (system) memory, across the GPU's PCIe link to the CPU: the per-path
	// fixed cost of a host copy.
	HostPacketUs = define[Float](Parameter{Name: "host_packet_us", Unit: "µs", Value: 2.004,
		Source:  "no documented MI355X row is a host copy, so the preset takes packet_us's value (the same engine and handshake); a user's host rows fit it (emud fit --params all)",
		Follows: "packet_us"})
	// LocalCopyUs is a local COPY's fixed latency: from the engine
	// starting the packet (decoded, addresses translated) to its first
	// bytes landing (the first read of source memory and the write's
	// round trip before the stream runs at local_gbps). Unlike
	// local_packet_us, the gap after the COPY, it delays the copy's own
	// completion, so it moves a one-copy row.
	LocalCopyUs = define[Float](Parameter{Name: "local_copy_us", Unit: "µs", Value: 0,
		Source: "no documented MI355X row is a local COPY, so the preset keeps 0 (its timing before the parameter existed); a user's local rows fit it (emud fit --params all probes it at 1 µs)"})
	// PeerCopyUs is a peer COPY's fixed latency: from the engine starting
	// the packet to its first bytes landing in the peer's memory (the
	// first read, the first write crossing xGMI and its completion).
	PeerCopyUs = define[Float](Parameter{Name: "peer_copy_us", Unit: "µs", Value: 0,
		Source: "the bw.* intercepts see it only summed with visible_us (every documented peer row has one doorbell before its first COPY), so the preset keeps 0 and visible_us carries the intercept; rows that tell them apart (local or host rows beside peer ones) fit it (emud fit --params all)"})
	// HostCopyUs is a host COPY's fixed latency: from the engine starting
	// the packet to its first bytes landing across the GPU's PCIe link
	// (a non-posted read of host memory, or a posted write's completion).
	HostCopyUs = define[Float](Parameter{Name: "host_copy_us", Unit: "µs", Value: 0,
		Source: "no documented MI355X row is a host copy, so the preset keeps 0; a user's host rows fit it (emud fit --params all)"})
	// LinkGBps is one direction of one GPU pair (xGMI).
	LinkGBps = define[Float](Parameter{Name: "link_gbps", Unit: "GB/s", Fitted: true, Prior: 50, Value: 60.84, Range: RangeRate,
		Source: "bw.* slopes, bw.split.2x4m, bcast.ref.*"})
	// LinkReadGBps is one direction of one GPU pair when the engine at
	// the far end pulls: a COPY that an engine of GPU dst runs from a peer
	// src (a get), whose reads cross the link as non-posted requests
	// rather than posted writes. The one parameter that lets a link's
	// two uses (push and pull) differ.
	LinkReadGBps = define[Float](Parameter{Name: "link_read_gbps", Unit: "GB/s", Value: 60.84, Range: RangeRate,
		Source:  "bw.get.8m (get over put 1.00 at 8 MB: a pull is as fast as a push on MI355X), so the preset takes link_gbps's value; a user's pull rows (TransferBench's G1->D0->G0) fit it",
		Follows: "link_gbps"})
	// LinkShare is what sharing one link direction costs: k copies
	// streaming over one directed peer path at once move
	// link_gbps / (1 + link_share·(k−1)) together (arbitration and
	// reordering between their streams), instead of link_gbps.
	LinkShare = define[Float](Parameter{Name: "link_share", Unit: "", Value: 0, Range: RangeFraction,
		Source: "bw.split.2x4m (two 4 MB puts on two queues: 57 GB/s against 59 for one) is within tolerance with none, so the preset keeps 0 (its timing before the parameter existed); rows of several streams on one link (split copies, TransferBench's multi-stream transfers) fit it"})
	// LocalGBps is an engine writing its own GPU's memory (a copy, a
	// broadcast stream).
	LocalGBps = define[Float](Parameter{Name: "local_gbps", Unit: "GB/s", Fitted: true, Prior: 100, Value: 66.71, Range: RangeRate,
		Source: "bcast.local2, bcast.local_remote (an engine writing its own GPU's memory)"})
	// HostGBps is one direction of the GPU's PCIe link to the CPU: a copy
	// between the GPU's memory and host (system) memory.
	HostGBps = define[Float](Parameter{Name: "host_gbps", Unit: "GB/s", Value: 63, Range: RangeRate,
		Source: "MI355X's host interface is PCIe 5.0 x16 (https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html): 16 lanes × 32 GT/s with 128b/130b encoding (PCI-SIG PCIe 5.0, https://pcisig.com/specifications) is 63 GB/s each way, the preset's value (no documented MI355X row is a host copy); a user's host rows fit it (emud fit --params all)"})
	// BcastLinkGBps is one broadcast stream to a peer.
	BcastLinkGBps = define[Float](Parameter{Name: "bcast_link_gbps", Unit: "GB/s", Fitted: true, Prior: 50, Value: 36.02, Range: RangeRate,
		Source: "bcast.remote2, bcast.local_remote"})
	// JitterFrac is the relative spread of engine gaps, 0 = none.
	JitterFrac = define[Float](Parameter{Name: "jitter", Unit: "", Value: 0, Range: RangeFraction,
		Source: "a run setting (relative spread of engine gaps), 0 in every calibration; timing perturbation is sim.Perturber's"})
	// GeneralEngines is the number of host-link and loopback engines.
	GeneralEngines = define[Count](Parameter{Name: "sdma_engines", Unit: "engines", Value: 2,
		Source: "KFD topology NumSdmaEngines on MI300X/MI355X: 2 (MORI anvil.cpp: gfx950 engines 0-1 general)"})
	// XGMIEngines is the number of peer-link engines.
	XGMIEngines = define[Count](Parameter{Name: "sdma_xgmi_engines", Unit: "engines", Value: 14,
		Source: "KFD topology NumSdmaXgmiEngines on MI300X/MI355X: 14"})
	// EnginesPerLink is how many engines KFD recommends per peer link (0:
	// every queue has an engine of its own).
	EnginesPerLink = define[Count](Parameter{Name: "engines_per_link", Unit: "engines", Value: 2,
		Source: "KFD recommended_sdma_engine_id_mask as MORI anvil.cpp reads it: 2 engines per peer link on MI350 (docs/sdma-hardware.md §4.4)"})
	// QueuesPerEngine is how many queues one engine holds.
	QueuesPerEngine = define[Count](Parameter{Name: "queues_per_engine", Unit: "queues", Value: 8,
		Source: "KFD NumSdmaQueuesPerEngine: 8 on gfx950 (MORI anvil.cpp)"})
	// QuantumKCycles is an engine's time slice per queue in 1K clock
	// cycles at ClockGHz.
	QuantumKCycles = define[Float](Parameter{Name: "engine_quantum_kcycles", Unit: "kcycles", Value: 32, Range: RangeQuantum,
		Source: "amdgpu_sdma_phase_quantum default 32 (×1K cycles), which KFD programs as every SDMA user queue's CONTEXT_QUANTUM (kfd_mqd_manager_v9.c)"})
)

// Prior returns the MI355X preset with every fitted parameter at its
// prior: a round, uninformed magnitude (1000 cycles, 1 µs, 50 GB/s, ...)
// that knows nothing of the documented table. The calibration's fit and
// each cross-validation refit start here, so a parameter the rows they
// see do not identify stays at a value no documented row chose.
func Prior() *Params {
	p := MI355X()
	p.Label = "mi355x-prior"
	for _, r := range table {
		r.Set(p, r.Prior)
	}
	return p
}

// Parameters lists every parameter of Params, in model-file order.
func Parameters() []Parameter { return append([]Parameter(nil), table...) }

// FittedParameters lists the names of the parameters the calibration fits.
func FittedParameters() []string {
	var n []string
	for _, p := range table {
		if p.Fitted {
			n = append(n, p.Name)
		}
	}
	return n
}

// LookupParameter returns the parameter with model-file name name
// (exactly: a model file's keys are matched the same way). The error
// lists the names there are.
func LookupParameter(name string) (Parameter, error) {
	for _, p := range table {
		if p.Name == name {
			return p, nil
		}
	}
	return Parameter{}, fmt.Errorf("unknown parameter %q; parameters: %s", name, strings.Join(parameterNames(), ", "))
}

// parameterNames is every parameter's name, sorted.
func parameterNames() []string {
	names := make([]string, len(table))
	for i, p := range table {
		names[i] = p.Name
	}
	sort.Strings(names)
	return names
}

// Get returns the parameter's value in p.
func (x Parameter) Get(p *Params) float64 { return p.get(x.i) }

// Set sets the parameter's value in p; a count is rounded to the nearest
// integer.
func (x Parameter) Set(p *Params, v float64) {
	if x.Int {
		v = math.Round(math.Max(-1<<31, math.Min(v, 1<<31))) // NaN stays NaN → 0 below; Validate refuses what is out of range
		if math.IsNaN(v) {
			v = 0
		}
	}
	p.set(x.i, v)
}

// check reports v outside the parameter's range (Validate's message).
func (x Parameter) check(label string, v float64) error {
	switch x.Range {
	case RangeRate, RangeClock:
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("model %q: %s must be a positive number, got %v", label, x.Name, v)
		}
	case RangeStep, RangeFraction:
		if !(v >= 0) || math.IsInf(v, 0) || v > MaxStepUs {
			return fmt.Errorf("model %q: %s must be a number from 0 to %g, got %v", label, x.Name, float64(MaxStepUs), v)
		}
	case RangeQuantum:
		if !(v >= 0) || v > 1e6 {
			return fmt.Errorf("model %q: %s must be 0..1e6, got %v", label, x.Name, v)
		}
	}
	return nil
}
