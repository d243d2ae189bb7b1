package cxx

import (
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

var quietSeeds = flag.Int("cxx.quiet-seeds", 1, "seeds per strategy, perturbation level, mode and build in TestQuietShapes (the issue's sweep: 50)")

// The correct C++ shapes of examples/cxx/quiet stay quiet (issue 37): a
// signal-slot reset between two calls, by a lane store, hipMemset or
// hipMemsetAsync with a stream sync, gives no report with the race
// detector (EMUD_RACE=1) or MORI_CCO_SDMA_DEBUG's checks, built with lane
// instrumentation (emud c++'s default) and without it
// (-fno-sanitize=thread), at every perturbation level under seeded ties
// and under PCT (EMUD_STRATEGY). Without the reset-aware lifecycle checks
// each run reported a stale epoch.
func TestQuietShapes(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "examples", "cxx", "quiet", "reset_epochs.cpp")
	for _, flags := range [][]string{{"-O2"}, {"-O2", "-fno-sanitize=thread"}} { // lane code instrumented (the default) and not
		prog := buildExample(t, src, flags...)
		for _, mode := range []string{"lane", "memset", "memset_async"} {
			for _, strategy := range []string{"ties", "pct"} {
				for lvl := 0; lvl <= 2; lvl++ {
					for seed := 1; seed <= *quietSeeds; seed++ {
						for _, check := range []string{"EMUD_RACE=1", "MORI_CCO_SDMA_DEBUG=1"} {
							out, stderr, code := runExample(t, prog, mode, check, "EMUD_STRATEGY="+strategy,
								fmt.Sprintf("EMUD_SEED=%d", seed), fmt.Sprintf("EMUD_PERTURB=%d", lvl))
							assert.Equal(t, 0, code, "%v %s %s level %d seed %d %s:\n%s\n%s", flags, mode, strategy, lvl, seed, check, out, stderr)
							assert.Contains(t, out, "reset_epochs: PASS")
						}
					}
				}
			}
		}
	}
}
