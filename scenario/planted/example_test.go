package planted_test

import (
	"fmt"

	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/planted"
)

// Hunt runs one planted bug under many seeds with one strategy; the fixed
// twin is the control.
func ExampleHunt() {
	b, _ := scenario.Lookup("late-rank-snapshot")
	for _, name := range []string{"ties", "perturb"} {
		st, _ := scenario.LookupStrategy(name)
		r := scenario.Hunt(b, st, 1, 20, false)
		twin := scenario.Hunt(b, st, 1, 20, true)
		fmt.Printf("%s: detected %v, twin failed %d of 20\n", name, r.Detected > 0, twin.Detected)
	}
	// Output:
	// ties: detected false, twin failed 0 of 20
	// perturb: detected true, twin failed 0 of 20
}
