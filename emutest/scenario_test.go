package emutest_test

import (
	"testing"

	"github.com/emud-dev/emud/emutest"
	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/all"
)

// A registered scenario runs under emutest's seeds, timing and strategy.
func TestScenarioRunsARegisteredScenario(t *testing.T) {
	emutest.Scenario(t, "alltoall", 3, scenario.Options{Ranks: 3, Bytes: 1 << 10, Queues: 2})
	emutest.Scenario(t, "ring-off-by-one-fixed", 2, scenario.Defaults(mustLookup(t, "ring-off-by-one-fixed")))
}

// The planted bug fails under emutest, with its hang report.
func TestScenarioFindsThePlantedBug(t *testing.T) {
	f := emutest.Find(20, func(seed uint64) error {
		sc := mustLookup(t, "alltoall-shared-expected")
		rep := scenario.RunOnce(sc, scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2, Seed: seed, Perturb: emutest.Level()})
		return rep.Err
	})
	if f == nil || f.Hang() == nil {
		t.Fatalf("no seed in 1..20 hangs alltoall-shared-expected: %v", f)
	}
}

func mustLookup(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
