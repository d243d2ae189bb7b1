package model

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Params is the mechanistic timing model: a dozen physical parameters from
// which every duration is computed (see the package doc, and [Parameters]
// for each one's source and whether the calibration fits it). It
// implements [Model]; the MI355X preset is one value of it, and model
// files are its JSON form.
type Params struct {
	Label string `json:"name"`

	// CU side. Cycles are CU clock cycles at ClockGHz.
	ClockGHz float64 `json:"cu_clock_ghz"`
	// IssueBase is one lane posting one packet on one queue, up to the
	// commit chain: ballot, reservation fetch-add, read-pointer check,
	// packet stores.
	IssueBase float64 `json:"issue_base_cycles"`
	// IssueScan is per doubling of lanes that share one queue (one
	// reservation for all): leader election and the wave-wide prefix of
	// packet offsets.
	IssueScan float64 `json:"issue_scan_cycles"`
	// IssueQueue is what posting to Q distinct queues from one wave adds,
	// times (1 − 1/Q): each lane's own uncached reservation and doorbell,
	// overlapped in the memory pipeline.
	IssueQueue float64 `json:"issue_queue_cycles"`
	// Submit is write pointer, release fence and doorbell store: the
	// section the in-order commit chain serialises.
	SubmitCycles float64 `json:"submit_cycles"`
	// UncachedRead is one uncached, system-scope read or round trip: a
	// queue's read pointer (quiet), one read of a flag a CU polls, the
	// acquire after it, a system-scope release. MORI's cco.hpp: about 2600.
	UncachedRead float64 `json:"uncached_read_cycles"`
	// HostStoreUs is from a host store to device memory to the store being
	// visible to device readers (the CPU's posted write crossing PCIe).
	HostStoreUs float64 `json:"host_store_us"`
	// HBM is the GPU's memory bandwidth, GB/s: what a CU kernel's local
	// copy (pack, gather) streams at.
	HBM float64 `json:"hbm_gbps"`

	// Engine side.
	// VisibleUs is the latency of one agent of the GPU seeing another's
	// write through memory: the engine seeing a doorbell store (and
	// fetching the first packet of an idle queue), a CU spinning on a
	// signal slot seeing the engine's ATOMIC.
	VisibleUs  float64 `json:"visible_us"`
	PacketUs   float64 `json:"packet_us"`       // engine gap after a COPY/ATOMIC/... before the next packet
	Link       float64 `json:"link_gbps"`       // one direction of one GPU pair (xGMI)
	Local      float64 `json:"local_gbps"`      // an engine writing its own GPU's memory (a copy, a broadcast stream)
	BcastLink  float64 `json:"bcast_link_gbps"` // one broadcast stream to a peer
	JitterFrac float64 `json:"jitter"`          // relative spread of engine gaps, 0 = none (a run setting, not fitted)

	// SDMA engines per GPU (model.Engines; KFD topology and MORI's
	// placement).
	GeneralEngines  int `json:"sdma_engines"`      // host-link and loopback engines
	XGMIEngines     int `json:"sdma_xgmi_engines"` // peer-link engines
	EnginesPerLink  int `json:"engines_per_link"`  // recommended engines per peer link
	QueuesPerEngine int `json:"queues_per_engine"` // queues one engine holds
	// QuantumKCycles is an engine's time slice per queue in 1K clock
	// cycles at ClockGHz (amdgpu_sdma_phase_quantum).
	QuantumKCycles float64 `json:"engine_quantum_kcycles"`
	// EngineLinks, if set, lists the engines each peer link is served by
	// (model.Engines.Links), instead of KFD's rule: a platform's own map.
	// A layout, not a number: no fit varies it.
	EngineLinks [][]int `json:"engine_links,omitempty"`
}

// LinkChunkBytes is the granule in which copies sharing a path interleave
// and land (an emulation resolution, not a device parameter: a lone copy's
// time does not depend on it).
const LinkChunkBytes = 256 << 10

// MI355X returns the calibrated MI355X preset: the fixed parameters from
// their cited sources, the fitted ones from "emud calibrate"'s fit to the
// documented table (see [Parameters]).
func MI355X() *Params {
	return &Params{
		Label:           "mi355x",
		ClockGHz:        2.4,
		IssueBase:       1580,
		IssueScan:       135.7,
		IssueQueue:      1334,
		SubmitCycles:    723,
		UncachedRead:    2600,
		HostStoreUs:     2.375,
		HBM:             8000,
		VisibleUs:       0.8397,
		PacketUs:        2.004,
		Link:            60.84,
		Local:           66.71,
		BcastLink:       36.02,
		GeneralEngines:  2,
		XGMIEngines:     14,
		EnginesPerLink:  2,
		QueuesPerEngine: 8,
		QuantumKCycles:  32,
	}
}

// MaxStepUs bounds every parameter's contribution to one step (µs, or CU
// cycles): 1000 s of virtual time. Far beyond any real device, and far
// enough inside the virtual clock's range (int64 picoseconds, 106 days)
// that sums over a run's steps cannot wrap.
const MaxStepUs = 1e9

// Validate reports the first parameter outside its physical range.
func (p *Params) Validate() error {
	pos := []struct {
		name string
		v    float64
	}{
		{"cu_clock_ghz", p.ClockGHz}, {"link_gbps", p.Link}, {"local_gbps", p.Local},
		{"bcast_link_gbps", p.BcastLink}, {"hbm_gbps", p.HBM},
	}
	for _, f := range pos {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("model %q: %s must be a positive number, got %v", p.Label, f.name, f.v)
		}
	}
	// A positive rate can still be so small that one step's time overflows
	// the virtual clock (int64 picoseconds) and wraps: every single step,
	// like every time parameter, must stay within MaxStepUs.
	rates := pos[1:]
	for _, f := range rates {
		if step := float64(ring.MaxCopyBytes) / f.v / 1e3; step > MaxStepUs { // bytes / (bytes/ns) = ns
			return fmt.Errorf("model %q: %s %v is too small: one COPY of %d B would take %.3g µs, more than the %g µs (1000 s) any one step may take; need at least %.3g",
				p.Label, f.name, f.v, ring.MaxCopyBytes, step, float64(MaxStepUs), float64(ring.MaxCopyBytes)/MaxStepUs/1e3)
		}
	}
	if step := MaxStepUs / p.ClockGHz / 1e3; step > MaxStepUs { // the largest cycle count, in µs
		return fmt.Errorf("model %q: cu_clock_ghz %v is too small: %g cycles would take %.3g µs, more than the %g µs any one step may take; need at least 0.001",
			p.Label, p.ClockGHz, float64(MaxStepUs), step, float64(MaxStepUs))
	}
	nonneg := []struct {
		name string
		v    float64
	}{
		{"issue_base_cycles", p.IssueBase}, {"issue_scan_cycles", p.IssueScan}, {"issue_queue_cycles", p.IssueQueue},
		{"submit_cycles", p.SubmitCycles}, {"uncached_read_cycles", p.UncachedRead},
		{"host_store_us", p.HostStoreUs}, {"visible_us", p.VisibleUs}, {"packet_us", p.PacketUs},
		{"jitter", p.JitterFrac},
	}
	for _, f := range nonneg {
		if !(f.v >= 0) || math.IsInf(f.v, 0) || f.v > MaxStepUs {
			return fmt.Errorf("model %q: %s must be a number from 0 to %g, got %v", p.Label, f.name, float64(MaxStepUs), f.v)
		}
	}
	if p.JitterFrac >= 1 {
		return fmt.Errorf("model %q: jitter must be below 1 (a relative spread), got %v", p.Label, p.JitterFrac)
	}
	if !(p.QuantumKCycles >= 0) || p.QuantumKCycles > 1e6 {
		return fmt.Errorf("model %q: engine_quantum_kcycles must be 0..1e6, got %v", p.Label, p.QuantumKCycles)
	}
	if err := p.Engines().Validate(); err != nil {
		return fmt.Errorf("model %q: %w", p.Label, err)
	}
	return nil
}

func us(v float64) sim.Time { return sim.Time(math.Round(v * float64(sim.Microsecond))) }

func (p *Params) cycles(c float64) sim.Time {
	return sim.Time(math.Round(c / p.ClockGHz * float64(sim.Nanosecond)))
}

// Name implements Model.
func (p *Params) Name() string { return p.Label }

// DoorbellLatency implements Model.
func (p *Params) DoorbellLatency() sim.Time { return us(p.VisibleUs) }

// PacketOverhead implements Model: padding NOPs are free; a POLL that
// holds costs two engine memory round trips, each what VisibleUs is (the
// poll's read completing, the next packet's fetch); every other packet
// PacketUs (COPY and ATOMIC alike, seed document).
func (p *Params) PacketOverhead(k ring.Kind) sim.Time {
	switch k {
	case ring.KindNop:
		return 0
	case ring.KindPoll:
		return us(2 * p.VisibleUs)
	}
	return us(p.PacketUs)
}

// LinkGBps implements Model.
func (p *Params) LinkGBps(src, dst int) float64 {
	if src == dst {
		return p.Local
	}
	return p.Link
}

// BroadcastGBps implements Model.
func (p *Params) BroadcastGBps(local bool) float64 {
	if local {
		return p.Local
	}
	return p.BcastLink
}

// Engines implements Model.
func (p *Params) Engines() Engines {
	return Engines{General: p.GeneralEngines, XGMI: p.XGMIEngines, PerLink: p.EnginesPerLink,
		QueuesPerEngine: p.QueuesPerEngine, Slice: p.cycles(p.QuantumKCycles * 1024), Links: p.EngineLinks}
}

// LinkChunk implements Model.
func (p *Params) LinkChunk() uint64 { return LinkChunkBytes }

// PollInterval implements Model. The interval field's unit is
// undocumented (docs/sdma-hardware.md §2.5); emud takes it as a quarter of an
// engine memory round trip (VisibleUs / 4), so the interval 4 that ROCr
// and MORI write re-reads once per round trip: back to back, the fastest
// an engine can poll.
func (p *Params) PollInterval(iv uint16) sim.Time { return us(float64(max(iv, 1)) * p.VisibleUs / 4) }

// IssueCycles is Issue in CU cycles.
func (p *Params) IssueCycles(s IssueShape) float64 {
	c := p.IssueBase
	if s.Lanes > 1 && s.Queues <= 1 {
		c += p.IssueScan * math.Log2(float64(s.Lanes))
	}
	if s.Queues > 1 {
		c += p.IssueQueue * (1 - 1/float64(s.Queues))
	}
	return c
}

// Issue implements Model.
func (p *Params) Issue(s IssueShape) sim.Time { return p.cycles(p.IssueCycles(s)) }

// Submit implements Model.
func (p *Params) Submit() sim.Time { return p.cycles(p.SubmitCycles) }

// ChainObserve implements Model: nothing beyond the predecessor's Submit
// (the waiter spins on the commit word, which the predecessor's store
// updates).
func (p *Params) ChainObserve() sim.Time { return 0 }

// RptrRead implements Model.
func (p *Params) RptrRead() sim.Time { return p.cycles(p.UncachedRead) }

// MemRead implements Model: one read of a CU loop polling a flag another
// agent sets is an uncached, system-scope read, as the rptr read is.
func (p *Params) MemRead() sim.Time { return p.cycles(p.UncachedRead) }

// HostStoreVisible implements Model.
func (p *Params) HostStoreVisible() sim.Time { return us(p.HostStoreUs) }

// SignalVisible implements Model.
func (p *Params) SignalVisible() sim.Time { return us(p.VisibleUs) }

// CUClockGHz implements Model.
func (p *Params) CUClockGHz() float64 { return p.ClockGHz }

// CUCopyGBps implements Model.
func (p *Params) CUCopyGBps() float64 { return p.HBM }

// Jitter implements Model.
func (p *Params) Jitter() float64 { return p.JitterFrac }

// Clone returns a copy that can be changed without touching p.
func (p *Params) Clone() *Params {
	c := *p
	if p.EngineLinks != nil {
		c.EngineLinks = make([][]int, len(p.EngineLinks))
		for i, l := range p.EngineLinks {
			c.EngineLinks[i] = append([]int(nil), l...)
		}
	}
	return &c
}

// LoadFile reads a model file: the JSON form of Params. Unknown fields are
// errors (a misspelt parameter must not silently keep its default), and
// missing ones keep the MI355X preset's value.
func LoadFile(path string) (*Params, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model file: %w", err)
	}
	defer f.Close()
	p := MI355X()
	p.Label = ""
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	// One JSON object and nothing after it: trailing text is a damaged or
	// concatenated file, not something to ignore.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("model file %s: data after the JSON object (at byte %d)", path, dec.InputOffset())
	}
	if p.Label == "" {
		p.Label = path
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("model file %s: %w", path, err)
	}
	return p, nil
}

// WriteFile writes p as a model file LoadFile reads back.
func (p *Params) WriteFile(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	return tag
}
