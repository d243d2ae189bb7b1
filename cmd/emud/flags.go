package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// scenarioFlags are the flags run, explore and replay share, with their
// defaults: the default run is an all-to-all of 1 MiB per pair over SDMA on
// an 8-GPU MI355X node.
type scenarioFlags struct {
	name     string
	o        scenario.Options
	size     byteSize
	asJSON   bool
	perturb  int
	strategy string
	faults   string
	budget   byteSize // --mem-budget
}

func newScenarioFlags() *scenarioFlags {
	f := &scenarioFlags{name: "alltoall", o: scenario.Options{Ranks: scenario.DefaultRanks, Bytes: scenario.DefaultBytes, Queues: scenario.DefaultQueues, Seed: 1}}
	f.size = byteSize(f.o.Bytes)
	f.budget = byteSize(scenario.DefaultMemBudget())
	return f
}

// bind registers the shared flags on cmd; withSeed adds --seed.
// perturb and strategy are the command's defaults of --perturb and
// --strategy.
func (f *scenarioFlags) bind(cmd *cobra.Command, withSeed bool, perturb sim.Level, strategy sim.Strategy) {
	fs := cmd.Flags()
	f.perturb, f.strategy = int(perturb), strategy.String()
	fs.IntVar(&f.perturb, "perturb", f.perturb, "timing perturbation level from the seed: 0 = the model's exact timing, 1 = realistic hardware spreads (launch skew, engine gaps, doorbells, links, poll phase, CU costs, host stores), 2 = stress")
	fs.StringVar(&f.strategy, "strategy", f.strategy, "scheduling strategy: random (seeded tie-breaks) or pct (random priorities with --pct-depth change points)")
	fs.IntVar(&f.o.PCT.Depth, "pct-depth", 0, fmt.Sprintf("PCT bug depth d (d−1 change points; 0 = %d)", sim.DefaultPCTDepth))
	fs.IntVar(&f.o.PCT.Steps, "pct-steps", 0, fmt.Sprintf("PCT: scheduling steps the change points are spread over (0 = %d)", sim.DefaultPCTSteps))
	fs.StringVar(&f.faults, "faults", "none", "SDMA faults to inject: none, seed[=RATE] (drawn from the seed), or a list such as drop-signal=0:1:0#2,stall-bytes=256M,dead=1:0:1,lost-doorbell=0:1:0#0,doorbell-delay=20us@0.2,rptr-lag=5us")
	fs.StringVar(&f.name, "scenario", f.name, "scenario to run ("+scenario.Names()+")")
	fs.IntVar(&f.o.Ranks, "ranks", f.o.Ranks, fmt.Sprintf("ranks, one per emulated GPU (%d..%d; fewer for an all-to-all whose queues do not fit the GPUs' SDMA engines, e.g. alltoall-split up to 57: the refusal names the limit; CFT scenarios up to %d)", scenario.MinRanks, scenario.MaxRanks, scenario.MaxFabricRanks))
	fs.Var(&f.size, "bytes", "bytes per message (per pair, per chunk or the payload, as the scenario says); K, M, G suffixes are powers of 1024")
	fs.IntVar(&f.o.Queues, "queues", f.o.Queues, fmt.Sprintf("SDMA queue ids per GPU pair (%d..%d)", scenario.MinQueues, scenario.MaxQueues))
	fs.BoolVar(&f.o.Debug, "debug", false, "turn on MORI_CCO_SDMA_DEBUG's misuse checks: a misuse stops at the offending call")
	fs.BoolVar(&f.o.Race, "race", false, "turn on the happens-before race detector: a run with unordered conflicting accesses (lanes, SDMA engines, fabric) ends with a report naming both and exit status 5")
	fs.StringVar(&f.o.Model, "model", "", "timing model: a preset name ("+strings.Join(model.Presets(), ", ")+"); empty = the default")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary, or the hang report, as JSON")
	fs.BoolVar(&f.o.Phantom, "phantom", false, "timing only: buffers have no bytes, so nothing is stored and the data checks are skipped (signals are still checked); for runs at scale")
	fs.IntVar(&f.o.LsaSize, "lsa-size", 0, "CFT scenarios: ranks per NVLink (LSA) domain; 0 = all ranks")
	fs.IntVar(&f.o.CftSize, "cft-size", 0, "CFT scenarios: ranks per CFT flat team, a multiple of --lsa-size; 0 = --lsa-size")
	fs.IntVar(&f.o.McSize, "mc-size", 0, "CFT scenarios: ranks per multicast group, dividing --cft-size; 0 = --cft-size")
	fs.Var(&f.budget, "mem-budget", "memory a run may take, by its estimated footprint (checked before it starts; default a quarter of the memory this process may use: physical, or its cgroup's limit; 0 = no limit)")
	if withSeed {
		fs.Uint64Var(&f.o.Seed, "seed", f.o.Seed, "seed that fixes every scheduling choice of the run")
	}
}

// resolve picks the scenario (argument or --scenario) and checks the flags.
// Every error names the flag at fault.
func (f *scenarioFlags) resolve(cmd *cobra.Command, args []string) (*scenario.Scenario, error) {
	f.o.Bytes = uint64(f.size)
	if f.perturb < 0 || f.perturb > int(sim.MaxLevel) {
		return nil, fmt.Errorf("invalid --perturb %d: need 0..%d", f.perturb, sim.MaxLevel)
	}
	f.o.Perturb = sim.Level(f.perturb)
	st, err := sim.ParseStrategy(f.strategy)
	if err != nil {
		return nil, fmt.Errorf("invalid --strategy: %w", err)
	}
	f.o.Strategy = st
	if f.o.Faults, err = engine.ParseInject(f.faults); err != nil {
		return nil, fmt.Errorf("invalid --faults: %w", err)
	}
	if len(args) == 1 {
		if cmd.Flags().Changed("scenario") && args[0] != f.name {
			return nil, fmt.Errorf("scenario given twice: %q as an argument and %q by --scenario", args[0], f.name)
		}
		f.name = args[0]
	}
	sc, err := scenario.Lookup(f.name)
	if err != nil {
		return nil, err
	}
	f.defaults(cmd, sc)
	if err := scenario.Admit(sc, f.o, uint64(f.budget)); err != nil {
		return nil, err
	}
	return sc, nil
}

// defaults applies sc's own defaults to the flags not given.
func (f *scenarioFlags) defaults(cmd *cobra.Command, sc *scenario.Scenario) {
	d := scenario.Defaults(sc)
	for _, v := range []struct {
		flag string
		set  func()
	}{
		{"bytes", func() { f.o.Bytes = d.Bytes }},
		{"ranks", func() { f.o.Ranks = d.Ranks }},
		{"queues", func() { f.o.Queues = d.Queues }},
	} {
		if !cmd.Flags().Changed(v.flag) {
			v.set()
		}
	}
}
