//go:build cgo

package main

import (
	"fmt"
	"os"

	"github.com/emud-dev/emud/cco"
)

// printSteps prints, with EMUD_STEPS=1, the run's length in scheduling
// steps (sim.Sim.Steps: the decisions PCT counts) at its end, as "emud:
// seed N: K steps" on stderr; a failed run's count is its steps up to the
// failure. emud explore and hunt read it from
// one run of the sweep's first seed without PCT and pass it back as
// EMUD_PCT_STEPS, so PCT's change points fall within the program's own
// length, as they do for a scenario (scenario.PCTSteps).
func printSteps() {
	if cco.Truthy(os.Getenv("EMUD_STEPS")) {
		fmt.Fprintf(os.Stderr, "emud: seed %d: %d steps\n", rt.seed, rt.s.Steps())
	}
}
