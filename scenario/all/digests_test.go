package all_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/all"
)

// digestOptions is the run each scenario's digest is pinned at: small
// shapes under realistic perturbation (so the seed's draws count), seed 7.
func digestOptions(sc *scenario.Scenario) scenario.Options {
	o := scenario.Defaults(sc)
	o.Seed = 7
	switch {
	case sc.Shape != nil: // a corpus program: its own shape
		o.Perturb = 1
	case sc.Fabric:
		o.Ranks, o.LsaSize, o.Bytes, o.Perturb = 16, 4, 16<<10, 1
	default:
		o.Ranks, o.Bytes, o.Perturb = 4, 64<<10, 1
	}
	return o
}

// Every registered scenario's outcome and trace digest at one seed, pinned
// in testdata/digests.txt: moving or restructuring scenario code must not
// change a single run (go test -run TestDigests -update rewrites the file
// when a change is meant, and the commit says why).
func TestDigests(t *testing.T) {
	var b strings.Builder
	for _, sc := range scenario.All() {
		if strings.HasPrefix(sc.Name, "test-") {
			continue // a throwaway scenario of another test
		}
		o := digestOptions(sc)
		rep := scenario.RunOnce(sc, o)
		fmt.Fprintf(&b, "%-30s ranks %-2d bytes %-6s perturb %d seed %d: %-8s %s\n",
			sc.Name, o.Ranks, scenario.FormatBytes(o.Bytes), o.Perturb, o.Seed, rep.Status, rep.Digest())
		if rep.Status == scenario.StatusError {
			t.Errorf("%s: %s", sc.Name, rep.Error)
		}
	}
	golden.Check(t, "digests.txt", b.String())
}
