package planted_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// blame matches the words that blame the hardware for a missing write.
var blame = regexp.MustCompile(`(?i)\b(dropped|lost)\b`)

// No report says a signal or write was dropped or lost unless the
// program runs under a fault plan that drops things: every planted
// scenario (corpus bugs and the CLI's planted scenarios) and its fixed
// twin under seeds 1..blameSeeds (20; 4 in a -race build), with emud's race
// detector on so that hang reports carry its reports too (issue 29).
func TestReportsBlameNoHardwareWithoutFaults(t *testing.T) {
	start := time.Now()
	for _, sc := range scenario.PlantedBugs() {
		for _, fixed := range []bool{false, true} {
			if sc.Planted.Faults != "" && !fixed {
				continue // the fault plan may drop: the words are then true
			}
			run, err := scenario.Target(sc, fixed)
			require.NoError(t, err)
			// One subtest per scenario, in parallel: the sweep is over a
			// thousand detector runs, minutes under -race on one core.
			t.Run(run.Name, func(t *testing.T) {
				t.Parallel()
				for seed := uint64(1); seed <= blameSeeds; seed++ {
					o := scenario.Defaults(sc)
					o.Seed, o.Perturb, o.Race = seed, sim.LevelExact, true
					rep := scenario.RunOnce(run, o)
					var text string
					switch {
					case rep.Hang != nil:
						text = rep.Hang.Text()
					case rep.Races != nil:
						text = rep.Races.Text()
					default:
						text = rep.Error
					}
					assert.False(t, blame.MatchString(text), "%s (fixed %v) seed %d blames the hardware with no fault plan:\n%s", sc.Name, fixed, seed, text)
				}
			})
		}
	}
	t.Cleanup(func() {
		t.Logf("%d planted scenarios × 2 × %d seeds in %v", len(scenario.PlantedBugs()), blameSeeds, time.Since(start).Round(time.Millisecond))
	})
}
