package planted_test

import (
	"errors"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/gin"  // the planted GIN scenarios
	_ "github.com/emud-dev/emud/scenario/sdma" // the planted SDMA scenarios
	"github.com/emud-dev/emud/sim"
)

var soundSeeds = flag.Int("planted.sound-seeds", 3, "seeds per bug and perturbation level in TestDetectorSound (the note's full sweep: 50)")

// notDataRaces are the corpus bugs whose wrong data no data race explains:
// the bytes are never written (missing-commit: the batch is never rung),
// the algorithm moves the wrong block with every access ordered
// (ring-off-by-one), or the hardware misroutes packets whose accesses are
// all ordered (samequeue-broken: debug mode names the broken promise).
var notDataRaces = map[string]bool{"missing-commit": true, "ring-off-by-one": true, "samequeue-broken": true}

// The detector is sound on the corpus: under every perturbation level,
// each seed whose data comes out wrong without the detector has a race
// report with it (the detector changes no choice: the run is the same),
// unless the bug is named as not a data race; and those do go wrong.
func TestDetectorSound(t *testing.T) {
	for _, b := range scenario.PlantedBugs() { // the corpus and the planted SDMA and GIN scenarios
		t.Run(b.Name, func(t *testing.T) {
			wrongs := 0
			for lvl := sim.LevelExact; lvl <= sim.MaxLevel; lvl++ {
				for seed := uint64(1); seed <= uint64(*soundSeeds); seed++ {
					err := huntExec(t, b, seed, lvl, false).Err
					var wd *scenario.MismatchError
					if !errors.As(err, &wd) {
						continue
					}
					wrongs++
					if notDataRaces[b.Name] {
						continue
					}
					err = huntExec(t, b, seed, lvl, true).Err
					var re *race.Error
					assert.True(t, errors.As(err, &re), "level %d seed %d: wrong data (%v) and no race report: %v", lvl, seed, wd, err)
				}
			}
			if notDataRaces[b.Name] {
				assert.NotZero(t, wrongs, "a bug named as not a data race gives wrong data")
			}
		})
	}
}

// huntExec runs planted bug sc once as hunt does (its hunt options: the
// corpus's own sizes, the SDMA scenarios at hunt's), at seed under lvl.
func huntExec(t *testing.T, sc *scenario.Scenario, seed uint64, lvl sim.Level, race bool) *scenario.Report {
	t.Helper()
	run, err := scenario.Target(sc, false)
	require.NoError(t, err)
	o := scenario.HuntOptions(sc, scenario.Strategy{Perturb: lvl, Schedule: sim.StrategyRandom}, seed)
	o.Race = race
	return scenario.RunOnce(run, o)
}
