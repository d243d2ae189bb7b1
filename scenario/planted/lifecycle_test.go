package planted_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// classes returns the lifecycle classes of a run's race reports.
func classes(err error) map[string]bool {
	out := map[string]bool{}
	var re *race.Error
	if errors.As(err, &re) {
		for _, r := range re.Reports {
			if r.Class != "" {
				out[r.Class] = true
			}
		}
	}
	return out
}

// Each signal-lifecycle check fires on its bug under the detector on some
// seed of every perturbation level, with words naming the case, and never
// on the fixed twin, which has no race report at all (the note's sweep:
// 50 seeds × 3 levels).
func TestLifecycleChecks(t *testing.T) {
	for _, tc := range []struct {
		bug, class, words string
	}{
		{"ge-u32-wrap", race.ClassWrap, "a wrap past 2^32"},
		{"zero-after-signal", race.ClassStoreOverSignal, "erases the signal"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			b, err := scenario.Lookup(tc.bug)
			require.NoError(t, err)
			for lvl := sim.LevelExact; lvl <= sim.MaxLevel; lvl++ {
				found := false
				for seed := uint64(1); seed <= uint64(*soundSeeds)+2; seed++ {
					err := exec(t, b, seed, lvl, true, false).Err
					if classes(err)[tc.class] {
						found = true
						var re *race.Error
						require.True(t, errors.As(err, &re))
						assert.Contains(t, re.Text(), tc.words)
					}
					err = exec(t, b, seed, lvl, true, true).Err
					var re *race.Error
					assert.False(t, errors.As(err, &re), "fixed twin, level %d seed %d: %v", lvl, seed, err)
				}
				assert.True(t, found, "level %d: no %s report", lvl, tc.class)
			}
		})
	}
}
