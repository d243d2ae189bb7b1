package emutest

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// Scenario runs the registered scenario called name (package scenario's
// registry: import scenario/all for the built-in ones, or register your
// own) under seeds 1..k as Seeds does, with o's shape and NewJob's timing
// perturbation, strategy and race detector, and fails t at the first seed
// that hangs, races, fails its data check or fails otherwise; under pct
// without -emutest.pct-steps the change points spread over one run of
// seed 1 without PCT, as "emud explore" does. o is checked
// as "emud run" checks its flags (scenario.Admit, without a memory
// budget).
func Scenario(t testing.TB, name string, k int, o scenario.Options) {
	t.Helper()
	sc, err := scenario.Lookup(name)
	if err != nil {
		t.Fatalf("emutest.Scenario: %v", err)
		return
	}
	st, pct, err := Schedule()
	if err != nil {
		t.Fatalf("%v", err)
		return
	}
	o.Perturb, o.Strategy, o.PCT, o.Race = Level(), st, pct, o.Race || Race()
	if err := scenario.Admit(sc, o, 0); err != nil {
		t.Fatalf("emutest.Scenario %s: %v", name, err)
		return
	}
	if st == sim.StrategyPCT && o.PCT.Steps == 0 {
		o.PCT.Steps = scenario.PCTSteps(sc, o, 1) // explore's probe: one run of seed 1 without PCT
	}
	seeds(t, k, func(seed uint64) error {
		ro := o
		ro.Seed = seed
		rep := scenario.RunOnce(sc, ro)
		if rep.Status == scenario.StatusOK {
			return nil
		}
		if rep.Err == nil {
			return fmt.Errorf("%s: %s", rep.Status, rep.Error)
		}
		return rep.Err
	}, false)
}
