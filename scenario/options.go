package scenario

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// Options are the knobs every scenario takes from the command line (or
// from a request to the daemon).
type Options struct {
	Ranks  int    // GPUs of the emulated node, one rank each
	Bytes  uint64 // bytes per message: per pair (alltoall), per chunk (all-gather), the payload (relay, broadcast)
	Queues int    // SDMA queue ids per GPU pair
	Seed   uint64
	Debug  bool   // MORI_CCO_SDMA_DEBUG's checks on every dev comm
	Race   bool   // the happens-before race detector (package race)
	Model  string // timing model: a preset name (model.Load); "" = the default preset
	// Perturb is the timing perturbation level (0 = the model's exact
	// timing); Strategy and PCT how scheduling choices are made; Faults the
	// SDMA faults injected.
	Perturb  sim.Level
	Strategy sim.Strategy
	PCT      sim.PCT
	Faults   engine.InjectSpec
	// Phantom runs on memory without bytes: timing only, data checks
	// skipped (signals, which live in real memory, are still checked).
	Phantom bool
	// The fabric's topology (CFT scenarios): ranks per NVLink domain, per
	// CFT flat team and per multicast group; 0 = fabric.Topology's default.
	LsaSize, CftSize, McSize int

	// Registry receives the node's engine counters (nil: a registry of the
	// run's own); Observe sees the node and its host before anything runs
	// (the trace recorder attaches there, see TraceInto).
	Registry *prometheus.Registry          `json:"-"`
	Observe  func(*engine.Node, *cco.Host) `json:"-"`
	// Traced says a trace recorder will hold every packet and call of the
	// run: the footprint counts it.
	Traced bool `json:"-"`
	// Scratch is the buffers the run's node borrows and gives back when
	// it closes (engine.Scratch): an explore worker's, kept across its
	// seeds. Nil: the node makes its own.
	Scratch *engine.Scratch `json:"-"`
	// Stop, if set, stops the run from another goroutine (the daemon's
	// DELETE): SDMA and CFT runs alike end at their next event.
	Stop *sim.Stopper `json:"-"`
}

// Ranges of the common flags. 64 ranks is well past one MI355X node (8 GPUs)
// but still small enough to run in seconds; 8 queue ids is MORI's cap per
// GPU pair (engine.DefaultQueuesPerPeer). The CFT fabric is built for
// scale: an NVL72 domain and beyond, thousands of ranks in phantom mode.
const (
	MinRanks, MaxRanks   = 2, 64
	MaxFabricRanks       = 4096
	MinQueues, MaxQueues = 1, 8
	// DefaultRanks, DefaultBytes and DefaultQueues are the common
	// defaults: an all-to-all of 1 MiB per pair over 2 queue ids on an
	// 8-GPU MI355X node.
	DefaultRanks  = 8
	DefaultBytes  = 1 << 20
	DefaultQueues = 2
)

// Defaults are the options sc runs with when nothing is given: the common
// defaults, sc's DefaultBytes and Shape, seed 1.
func Defaults(sc *Scenario) Options {
	o := Options{Ranks: DefaultRanks, Bytes: DefaultBytes, Queues: DefaultQueues, Seed: 1}
	if sc.DefaultBytes != 0 {
		o.Bytes = sc.DefaultBytes
	}
	if sc.Shape != nil {
		o.Ranks, o.Queues = sc.Shape.Ranks, sc.Shape.Queues
	}
	return o
}

// MaxRanksOf is the --ranks limit of sc.
func MaxRanksOf(sc *Scenario) int {
	if sc != nil && sc.Fabric {
		return MaxFabricRanks
	}
	return MaxRanks
}

// Validate checks the ranges every scenario shares, for sc. Errors name
// the flag.
func (o Options) Validate(sc *Scenario) error {
	hi := MaxRanksOf(sc)
	switch {
	case o.Ranks < MinRanks || o.Ranks > hi:
		return fmt.Errorf("invalid --ranks %d: need %d..%d", o.Ranks, MinRanks, hi)
	case o.Queues < MinQueues || o.Queues > MaxQueues:
		return fmt.Errorf("invalid --queues %d: need %d..%d", o.Queues, MinQueues, MaxQueues)
	case o.Bytes == 0:
		return fmt.Errorf("invalid --bytes 0: need at least 1 byte")
	case o.Race && o.Phantom:
		// The detector's shadow memory follows stored bytes; a phantom run
		// stores none, so it would report nothing and pass.
		return fmt.Errorf("invalid --race with --phantom: the race detector watches stored bytes and a phantom run stores none; drop one of them")
	}
	if _, err := model.Load(o.Model); err != nil {
		return fmt.Errorf("invalid --model: %w", err)
	}
	if o.Perturb > sim.MaxLevel {
		return fmt.Errorf("invalid --perturb %d: need 0..%d", o.Perturb, sim.MaxLevel)
	}
	if err := o.PCT.Check(); err != nil {
		return fmt.Errorf("invalid --pct-depth or --pct-steps: %w", err)
	}
	if err := o.Faults.Plan.Check(o.Ranks, MaxQueues); err != nil {
		return fmt.Errorf("invalid --faults: %w", err)
	}
	if sc == nil {
		return nil
	}
	return o.validateFor(sc)
}

// validateFor is Validate's part that depends on the kind of scenario.
func (o Options) validateFor(sc *Scenario) error {
	if sh := sc.Shape; sh != nil {
		switch {
		case o.Ranks != sh.Ranks:
			return fmt.Errorf("invalid --ranks %d: %s runs on exactly %d ranks", o.Ranks, sc.Name, sh.Ranks)
		case o.Queues != sh.Queues:
			return fmt.Errorf("invalid --queues %d: %s runs with exactly %d queue ids per pair", o.Queues, sc.Name, sh.Queues)
		case !o.Faults.Empty():
			return fmt.Errorf("invalid --faults %s: %s runs under its own faults (if any)", o.Faults, sc.Name)
		case o.Phantom:
			return fmt.Errorf("invalid --phantom: %s checks its data, it needs real bytes", sc.Name)
		}
	}
	if sc.Opens != nil {
		if err := CheckEngines(o, sc.Name, sc.Opens(o)); err != nil {
			return err
		}
	}
	if !sc.Fabric {
		for _, f := range []struct {
			name string
			v    int
		}{{"lsa-size", o.LsaSize}, {"cft-size", o.CftSize}, {"mc-size", o.McSize}} {
			if f.v != 0 {
				return fmt.Errorf("invalid --%s %d: %s has no CFT fabric; the topology flags are for cft-* scenarios", f.name, f.v, sc.Name)
			}
		}
		return nil
	}
	if _, err := o.Topology().Normalize(); err != nil {
		return fmt.Errorf("invalid --lsa-size/--cft-size/--mc-size: %w", err)
	}
	if o.Phantom && o.Debug {
		return fmt.Errorf("invalid --phantom with --debug: the fabric's fence checker tracks every byte, phantom memory has none")
	}
	return nil
}

// Topology is the fabric topology the CFT scenarios run on.
func (o Options) Topology() fabric.Topology {
	return fabric.Topology{NRanks: o.Ranks, LsaSize: o.LsaSize, CftSize: o.CftSize, CftMcSize: o.McSize}
}

// Admit is the admission every front end (run, explore, perf, the daemon)
// applies before a run starts: the common ranges (Validate), then the
// scenario's own Check, then the memory budget (CheckBudget; 0 = none).
// Every error names the flag at fault.
func Admit(sc *Scenario, o Options, budget uint64) error {
	if err := o.Validate(sc); err != nil {
		return err
	}
	if sc.Check != nil {
		if err := sc.Check(o); err != nil {
			return err
		}
	}
	return CheckBudget(sc, o, budget)
}
