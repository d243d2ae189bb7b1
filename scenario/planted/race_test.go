package planted_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// With the race detector on, the corpus's data-race bugs fail with a race
// report on every seed (the ordering is missing whatever the timing), and
// no fixed twin is reported: the detector's edges are the programs'.
func TestRaceDetectorOnCorpus(t *testing.T) {
	races := map[string]bool{
		"bcast-per-queue": true, "block-slot-mismatch": true, "early-source-reuse": true,
		"ge-u32-wrap": true, "late-rank-snapshot": true, "no-quiet-across-kernels": true, "refill-without-wait": true,
	}
	seen := 0
	for _, b := range corpus() {
		for seed := uint64(1); seed <= 2; seed++ {
			err := exec(t, b, seed, sim.LevelExact, true, true).Err
			var re *race.Error
			require.False(t, errors.As(err, &re), "%s fixed, seed %d: %v", b.Name, seed, err)
			if !races[b.Name] {
				continue
			}
			err = exec(t, b, seed, sim.LevelExact, true, false).Err
			require.True(t, errors.As(err, &re), "%s, seed %d: %v", b.Name, seed, err)
			assert.NotEmpty(t, re.Reports[0].Missing)
		}
		if races[b.Name] {
			seen++
		}
	}
	assert.Equal(t, len(races), seen, "every named race bug is in the corpus")
}
