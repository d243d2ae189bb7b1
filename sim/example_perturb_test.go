package sim_test

import (
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// A perturbation level spreads durations from the seed; level 0 leaves
// them as the model gives them.
func ExamplePerturber() {
	k := sim.Key{Kind: sim.KeyEngine, A: 0}
	for _, l := range []sim.Level{sim.LevelExact, sim.LevelRealistic} {
		p := sim.New(sim.Config{Seed: 1, Perturb: l}).Perturb()
		again := sim.New(sim.Config{Seed: 1, Perturb: l}).Perturb()
		d := p.Duration(k, 2*sim.Microsecond)
		fmt.Printf("level %v: same seed, same draw: %v; exact: %v\n", l, d == again.Duration(k, 2*sim.Microsecond), d == 2*sim.Microsecond)
	}
	// Output:
	// level 0 (exact): same seed, same draw: true; exact: true
	// level 1 (realistic): same seed, same draw: true; exact: false
}
