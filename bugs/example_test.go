package bugs_test

import (
	"fmt"

	"github.com/emud-dev/emud/bugs"
)

// Hunt runs one planted bug under many seeds with one strategy; the fixed
// twin is the control.
func ExampleHunt() {
	b, _ := bugs.Lookup("late-rank-snapshot")
	for _, name := range []string{"ties", "perturb"} {
		st, _ := bugs.LookupStrategy(name)
		r := bugs.Hunt(b, st, 1, 20, false)
		twin := bugs.Hunt(b, st, 1, 20, true)
		fmt.Printf("%s: detected %v, twin failed %d of 20\n", name, r.Detected > 0, twin.Detected)
	}
	// Output:
	// ties: detected false, twin failed 0 of 20
	// perturb: detected true, twin failed 0 of 20
}
