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

// Params is the mechanistic timing model: a handful of physical parameters
// from which every duration is computed (see the package doc for what each
// stands for and where its value comes from). It implements [Model]; the
// MI355X preset is one value of it, and model files are its JSON form.
type Params struct {
	Label string `json:"name"`

	// CU side. Cycles are CU clock cycles at CUClockGHz.
	ClockGHz float64 `json:"cu_clock_ghz"`
	// IssueBase is one lane posting one packet on one queue, up to the
	// commit chain: ballot, reservation fetch-add, read-pointer check,
	// packet stores.
	IssueBase float64 `json:"issue_base_cycles"`
	// IssueGroup is what grouping adds once more than one lane shares a
	// queue: leader election and the broadcast of the base.
	IssueGroup float64 `json:"issue_group_cycles"`
	// IssueScan is per doubling of grouped lanes: the wave-wide prefix of
	// packet offsets.
	IssueScan float64 `json:"issue_scan_cycles"`
	// IssueLane is per extra grouped lane: its packet's stores.
	IssueLane float64 `json:"issue_lane_cycles"`
	// IssueDetect is ccoSdmaThreadIndependent's run-time shape detection.
	IssueDetect float64 `json:"issue_detect_cycles"`
	// IssueQueue is per doubling of distinct queues in one wave's post:
	// each lane's own uncached reservation and doorbell queue up in the
	// memory pipeline...
	IssueQueue float64 `json:"issue_queue_cycles"`
	// ...which overlaps this many of them; more queues add nothing.
	IssueQueueOverlap int `json:"issue_queue_overlap"`
	// Submit is write pointer, release fence and doorbell store.
	SubmitCycles float64 `json:"submit_cycles"`
	// ChainObserve is one uncached re-read of the commit chain by an issuer
	// that had to wait for its predecessor.
	ChainObserveCycles float64 `json:"chain_observe_cycles"`
	// UncachedRead is one uncached, system-scope read: a queue's read
	// pointer (quiet), a flag polled by a CU. MORI's cco.hpp: about 2600.
	UncachedRead float64 `json:"uncached_read_cycles"`
	// FlagRead is one CU read of a flag another agent sets (fine-grained,
	// system-scope memory), in cycles: what a CU poll loop pays per read.
	FlagRead float64 `json:"flag_read_cycles"`
	// HostStoreUs is from a host store to device memory to the store being
	// visible to device readers (the CPU's posted write crossing PCIe).
	HostStoreUs float64 `json:"host_store_us"`
	// SignalVisibleUs is from an engine write (a signal ATOMIC) to a CU
	// spinning on that ordinary-memory slot seeing it.
	SignalVisibleUs float64 `json:"signal_visible_us"`
	// CUCopy is a CU kernel's local copy bandwidth (pack, gather), GB/s.
	CUCopy float64 `json:"cu_copy_gbps"`

	// Engine side.
	DoorbellUs float64 `json:"doorbell_us"` // doorbell store to the first packet fetched
	PacketUs   float64 `json:"packet_us"`   // gap after a COPY/ATOMIC/... before the next packet
	PollGapUs  float64 `json:"poll_gap_us"` // gap after a POLL_REGMEM that holds
	PollUnitUs float64 `json:"poll_unit_us"`
	Link       float64 `json:"link_gbps"`        // one direction of one GPU pair (xGMI)
	Local      float64 `json:"local_gbps"`       // engine copy within one GPU
	BcastLink  float64 `json:"bcast_link_gbps"`  // one broadcast stream to a peer
	BcastLocal float64 `json:"bcast_local_gbps"` // one broadcast stream to this GPU
	ChunkKiB   uint64  `json:"link_chunk_kib"`   // interleaving granularity on a shared path
	JitterFrac float64 `json:"jitter"`           // relative spread of engine gaps, 0 = none

	// SDMA engines per GPU (model.Engines; KFD topology and MORI's
	// placement).
	GeneralEngines  int `json:"sdma_engines"`      // host-link and loopback engines
	XGMIEngines     int `json:"sdma_xgmi_engines"` // peer-link engines
	EnginesPerLink  int `json:"engines_per_link"`  // recommended engines per peer link
	QueuesPerEngine int `json:"queues_per_engine"` // queues one engine holds
	// QuantumKCycles is an engine's time slice per queue in 1K clock
	// cycles at ClockGHz (amdgpu_sdma_phase_quantum).
	QuantumKCycles float64 `json:"engine_quantum_kcycles"`
}

// MI355X returns the calibrated MI355X preset (see the package doc for how
// each value was obtained).
func MI355X() *Params {
	return &Params{
		Label:              "mi355x",
		ClockGHz:           2.4,
		IssueBase:          2000,
		IssueGroup:         180,
		IssueScan:          60,
		IssueLane:          6,
		IssueDetect:        86,
		IssueQueue:         541,
		IssueQueueOverlap:  4,
		SubmitCycles:       244,
		ChainObserveCycles: 488,
		UncachedRead:       2600,
		FlagRead:           4540,
		HostStoreUs:        2.15,
		SignalVisibleUs:    0.84,
		CUCopy:             7000,
		DoorbellUs:         0.75,
		PacketUs:           2.02,
		PollGapUs:          1.6,
		PollUnitUs:         0.3,
		Link:               60.25,
		Local:              200,
		BcastLink:          35.6,
		BcastLocal:         63.7,
		ChunkKiB:           256,
		GeneralEngines:     2,
		XGMIEngines:        14,
		EnginesPerLink:     2,
		QueuesPerEngine:    8,
		QuantumKCycles:     32,
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
		{"bcast_link_gbps", p.BcastLink}, {"bcast_local_gbps", p.BcastLocal}, {"cu_copy_gbps", p.CUCopy},
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
		{"issue_base_cycles", p.IssueBase}, {"issue_group_cycles", p.IssueGroup}, {"issue_scan_cycles", p.IssueScan},
		{"issue_lane_cycles", p.IssueLane}, {"issue_detect_cycles", p.IssueDetect}, {"issue_queue_cycles", p.IssueQueue},
		{"submit_cycles", p.SubmitCycles}, {"chain_observe_cycles", p.ChainObserveCycles}, {"uncached_read_cycles", p.UncachedRead},
		{"signal_visible_us", p.SignalVisibleUs}, {"flag_read_cycles", p.FlagRead}, {"host_store_us", p.HostStoreUs}, {"doorbell_us", p.DoorbellUs}, {"packet_us", p.PacketUs},
		{"poll_gap_us", p.PollGapUs}, {"poll_unit_us", p.PollUnitUs}, {"jitter", p.JitterFrac},
	}
	for _, f := range nonneg {
		if !(f.v >= 0) || math.IsInf(f.v, 0) || f.v > MaxStepUs {
			return fmt.Errorf("model %q: %s must be a number from 0 to %g, got %v", p.Label, f.name, float64(MaxStepUs), f.v)
		}
	}
	if p.JitterFrac >= 1 {
		return fmt.Errorf("model %q: jitter must be below 1 (a relative spread), got %v", p.Label, p.JitterFrac)
	}
	if p.IssueQueueOverlap < 1 || p.IssueQueueOverlap > 64 {
		return fmt.Errorf("model %q: issue_queue_overlap must be 1..64, got %d", p.Label, p.IssueQueueOverlap)
	}
	if !(p.QuantumKCycles >= 0) || p.QuantumKCycles > 1e6 {
		return fmt.Errorf("model %q: engine_quantum_kcycles must be 0..1e6, got %v", p.Label, p.QuantumKCycles)
	}
	if err := p.Engines().Validate(); err != nil {
		return fmt.Errorf("model %q: %w", p.Label, err)
	}
	if p.ChunkKiB < 1 || p.ChunkKiB > 1<<20 {
		return fmt.Errorf("model %q: link_chunk_kib must be 1..1048576, got %d", p.Label, p.ChunkKiB)
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
func (p *Params) DoorbellLatency() sim.Time { return us(p.DoorbellUs) }

// PacketOverhead implements Model: padding NOPs are free, a POLL that
// holds costs PollGapUs, every other packet PacketUs (COPY and ATOMIC
// alike, seed document).
func (p *Params) PacketOverhead(k ring.Kind) sim.Time {
	switch k {
	case ring.KindNop:
		return 0
	case ring.KindPoll:
		return us(p.PollGapUs)
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
		return p.BcastLocal
	}
	return p.BcastLink
}

// Engines implements Model.
func (p *Params) Engines() Engines {
	return Engines{General: p.GeneralEngines, XGMI: p.XGMIEngines, PerLink: p.EnginesPerLink,
		QueuesPerEngine: p.QueuesPerEngine, Slice: p.cycles(p.QuantumKCycles * 1024)}
}

// LinkChunk implements Model.
func (p *Params) LinkChunk() uint64 { return p.ChunkKiB << 10 }

// PollInterval implements Model.
func (p *Params) PollInterval(iv uint16) sim.Time { return us(float64(max(iv, 1)) * p.PollUnitUs) }

// IssueCycles is Issue in CU cycles.
func (p *Params) IssueCycles(s IssueShape) float64 {
	c := p.IssueBase
	if s.Independent {
		c += p.IssueDetect
	}
	if s.Lanes > 1 && s.Queues <= 1 {
		c += p.IssueGroup + p.IssueScan*math.Log2(float64(s.Lanes)) + p.IssueLane*float64(s.Lanes-1)
	}
	if s.Queues > 1 {
		c += p.IssueQueue * math.Log2(float64(min(s.Queues, p.IssueQueueOverlap)))
	}
	return c
}

// Issue implements Model.
func (p *Params) Issue(s IssueShape) sim.Time { return p.cycles(p.IssueCycles(s)) }

// Submit implements Model.
func (p *Params) Submit() sim.Time { return p.cycles(p.SubmitCycles) }

// ChainObserve implements Model.
func (p *Params) ChainObserve() sim.Time { return p.cycles(p.ChainObserveCycles) }

// RptrRead implements Model.
func (p *Params) RptrRead() sim.Time { return p.cycles(p.UncachedRead) }

// MemRead implements Model: a CU polling a flag another agent sets.
func (p *Params) MemRead() sim.Time { return p.cycles(p.FlagRead) }

// HostStoreVisible implements Model.
func (p *Params) HostStoreVisible() sim.Time { return us(p.HostStoreUs) }

// SignalVisible implements Model.
func (p *Params) SignalVisible() sim.Time { return us(p.SignalVisibleUs) }

// CUClockGHz implements Model.
func (p *Params) CUClockGHz() float64 { return p.ClockGHz }

// CUCopyGBps implements Model.
func (p *Params) CUCopyGBps() float64 { return p.CUCopy }

// Jitter implements Model.
func (p *Params) Jitter() float64 { return p.JitterFrac }

// Clone returns a copy that can be changed without touching p.
func (p *Params) Clone() *Params { c := *p; return &c }

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

// Fields lists the tunable float parameters by JSON name, in declaration
// order, with pointers into p: what a fit varies.
func (p *Params) Fields() []Field {
	var fs []Field
	v := reflect.ValueOf(p).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Float64 {
			fs = append(fs, Field{Name: jsonName(t.Field(i)), Ptr: f.Addr().Interface().(*float64)})
		}
	}
	return fs
}

// Field is one tunable parameter of Params.
type Field struct {
	Name string
	Ptr  *float64
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
