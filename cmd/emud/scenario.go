package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// options are the knobs every scenario takes from the command line (or
// from a request to the daemon).
type options struct {
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

	// registry receives the node's engine counters (nil: a registry of the
	// run's own); observe sees the node and its host before anything runs (the trace
	// recorder attaches there).
	registry *prometheus.Registry
	observe  func(*engine.Node, *cco.Host)
	// traced says a trace recorder will hold every packet and call of the
	// run (--trace, replay, the daemon's "trace"): the footprint counts it.
	traced bool
}

// Ranges of the common flags. 64 ranks is well past one MI355X node (8 GPUs)
// but still small enough to run in seconds; 8 queue ids is MORI's cap per
// GPU pair (engine.DefaultQueuesPerPeer). The CFT fabric is built for
// scale: an NVL72 domain and beyond, thousands of ranks in phantom mode.
const (
	minRanks, maxRanks   = 2, 64
	maxFabricRanks       = 4096
	minQueues, maxQueues = 1, 8
)

// maxRanksOf is the --ranks limit of sc.
func maxRanksOf(sc *scenario) int {
	if sc != nil && sc.noSDMA {
		return maxFabricRanks
	}
	return maxRanks
}

// validate checks the ranges every scenario shares, for sc. Errors name
// the flag.
func (o options) validate(sc *scenario) error {
	hi := maxRanksOf(sc)
	switch {
	case o.Ranks < minRanks || o.Ranks > hi:
		return fmt.Errorf("invalid --ranks %d: need %d..%d", o.Ranks, minRanks, hi)
	case o.Queues < minQueues || o.Queues > maxQueues:
		return fmt.Errorf("invalid --queues %d: need %d..%d", o.Queues, minQueues, maxQueues)
	case o.Bytes == 0:
		return fmt.Errorf("invalid --bytes 0: need at least 1 byte")
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
	if err := o.Faults.Plan.Check(o.Ranks, maxQueues); err != nil {
		return fmt.Errorf("invalid --faults: %w", err)
	}
	if sc != nil && !sc.noSDMA {
		for _, f := range []struct {
			name string
			v    int
		}{{"lsa-size", o.LsaSize}, {"cft-size", o.CftSize}, {"mc-size", o.McSize}} {
			if f.v != 0 {
				return fmt.Errorf("invalid --%s %d: %s has no CFT fabric; the topology flags are for cft-* scenarios", f.name, f.v, sc.name)
			}
		}
	}
	if sc != nil && sc.noSDMA {
		if _, err := o.topology().Normalize(); err != nil {
			return fmt.Errorf("invalid --lsa-size/--cft-size/--mc-size: %w", err)
		}
	}
	if o.Phantom && o.Debug && sc != nil && sc.noSDMA {
		return fmt.Errorf("invalid --phantom with --debug: the fabric's fence checker tracks every byte, phantom memory has none")
	}
	return nil
}

// topology is the fabric topology the CFT scenarios run on.
func (o options) topology() fabric.Topology {
	return fabric.Topology{NRanks: o.Ranks, LsaSize: o.LsaSize, CftSize: o.CftSize, CftMcSize: o.McSize}
}

// rankResult is one rank's row of the summary.
type rankResult struct {
	Rank          int      `json:"rank"`
	Finish        sim.Time `json:"finish_ps"` // emulated time the rank's work was done
	BytesSent     uint64   `json:"bytes_sent"`
	BytesReceived uint64   `json:"bytes_received"`
}

// Micros is the finish time in microseconds.
func (r rankResult) Micros() float64 { return r.Finish.Micros() }

// GBps is the bytes the rank moved (the larger of sent and received) per
// emulated nanosecond (= GB/s); 0 if the rank finished at time 0.
func (r rankResult) GBps() float64 {
	if r.Finish <= 0 {
		return 0
	}
	return float64(max(r.BytesSent, r.BytesReceived)) / (float64(r.Finish) / float64(sim.Nanosecond))
}

// outcome is what a run that finished and passed its checks reports.
type outcome struct {
	Model string // timing model name
	// Injected lists the SDMA faults the run's plan injected.
	Injected []engine.Fault
	// Steps is how many scheduling steps the run took (PCT's k).
	Steps  int
	End    sim.Time
	Ranks  []rankResult
	Seed   uint64
	Digest string
}

// scenario is one runnable workload. run builds its own simulator from the
// options, runs it and checks its data; it returns *sim.HangError on a hang
// and *mismatchError when data is wrong.
type scenario struct {
	name    string
	summary string
	// planted marks a scenario with a deliberate bug, kept to show what
	// explore finds; it is listed apart.
	planted bool
	// noSDMA marks a scenario with no SDMA node (the CFT fabric): it takes
	// no --model and leaves no trace.
	noSDMA bool
	// bytes says what --bytes means here ("per pair", "per chunk", ...);
	// "" = "per pair".
	bytes string
	// defaultBytes replaces the common --bytes default (1 MiB) when the
	// scenario cannot run it; 0 = the common default.
	defaultBytes uint64
	// check rejects option combinations the scenario cannot run (beyond
	// options.validate), naming the flags. Optional.
	check func(options) error
	run   func(options) (*outcome, error)
	// usage estimates a run's footprint for the memory budget (budget.go);
	// Backed is dropped for phantom runs by the caller.
	usage func(options) usage
}

func (s *scenario) bytesMeaning() string {
	if s.bytes == "" {
		return "per pair"
	}
	return s.bytes
}

// scenarios is the registry "emud run --scenario" picks from. Scenario files
// add themselves in init.
var scenarios = map[string]*scenario{}

func register(s *scenario) {
	if _, dup := scenarios[s.name]; dup {
		panic("emud: scenario " + s.name + " registered twice")
	}
	scenarios[s.name] = s
}

// scenarioNames lists the registry, sorted, for help and errors.
func scenarioNames() string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func lookupScenario(name string) (*scenario, error) {
	if s, ok := scenarios[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("invalid --scenario %q: known scenarios: %s", name, scenarioNames())
}

// mismatchError reports data a scenario found wrong after its run.
type mismatchError struct {
	Scenario string
	Seed     uint64
	Detail   string
	Wrong    int // blocks and signals found wrong
}

func (e *mismatchError) Error() string {
	return fmt.Sprintf("%s data check failed (seed %d): %s", e.Scenario, e.Seed, e.Detail)
}
