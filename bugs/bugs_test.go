package bugs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/emud-dev/emud/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// firstDetection is the first seed in 1..n under st that detects b (or its
// twin), 0 if none: Hunt, stopping early, to keep CI cheap.
func firstDetection(b *Bug, st Strategy, n int, fixed bool) (uint64, error) {
	c := Config{Perturb: st.Perturb, Strategy: st.Schedule}
	if st.Schedule == sim.StrategyPCT {
		out, _ := b.Exec(Config{Seed: 1, Perturb: st.Perturb}, fixed)
		c.PCT.Steps = max(out.Steps, 1)
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		c.Seed = seed
		if _, err := b.Exec(c, fixed); err != nil {
			return seed, err
		}
	}
	return 0, nil
}

func TestCorpusShape(t *testing.T) {
	list := Corpus()
	require.GreaterOrEqual(t, len(list), 12, "at least 12 planted bugs")
	names := map[string]bool{}
	timing := 0
	for _, b := range list {
		assert.False(t, names[b.Name], "duplicate %s", b.Name)
		names[b.Name] = true
		assert.NotEmpty(t, b.Class, b.Name)
		assert.NotEmpty(t, b.Source, b.Name)
		if b.Timing {
			timing++
		}
	}
	assert.GreaterOrEqual(t, timing, 3, "several bugs need timing the model alone does not produce")
	_, err := Lookup("no-such-bug")
	assert.ErrorContains(t, err, "ring-off-by-one", "the error lists the corpus")
	_, err = LookupStrategy("dfs")
	assert.Error(t, err)
}

// The reduced hunt CI runs (the full table is "emud hunt", in the README):
// the default strategy detects every bug within a few seeds; the fixed
// twins pass under every strategy; the bugs marked Timing are invisible to
// seeded tie-breaks at exact timing and the others are not.
func TestHuntReduced(t *testing.T) {
	def, err := LookupStrategy(DefaultStrategy)
	require.NoError(t, err)
	ties, err := LookupStrategy("ties")
	require.NoError(t, err)
	for _, b := range Corpus() {
		t.Run(b.Name, func(t *testing.T) {
			seed, err := firstDetection(b, def, 12, false)
			require.NotZero(t, seed, "%s: the default strategy finds it within 12 seeds", b.Name)
			var h *sim.HangError
			var wrong *WrongData
			assert.True(t, errors.As(err, &h) || errors.As(err, &wrong), "a detection is a hang or wrong data: %v", err)
			assert.NotEmpty(t, Explain(err))

			for _, st := range Strategies {
				seed, err := firstDetection(b, st, 3, true)
				assert.Zero(t, seed, "%s's fixed twin under %s: %v", b.Name, st.Name, err)
			}

			seed, _ = firstDetection(b, ties, 6, false)
			if b.Timing {
				assert.Zero(t, seed, "%s needs timing exact runs never have", b.Name)
			} else {
				assert.NotZero(t, seed, "%s shows without perturbation", b.Name)
			}
		})
	}
}

// Hunt counts over all its seeds and reports the first; PCT's k is
// measured from the program.
func TestHuntCounts(t *testing.T) {
	b, err := Lookup("lost-completion") // 3% of ATOMICs lost: some seeds, not all
	require.NoError(t, err)
	pct, _ := LookupStrategy("pct")
	r := Hunt(b, pct, 1, 12, false)
	assert.Equal(t, 12, r.Seeds)
	assert.Greater(t, r.Detected, 0)
	assert.Less(t, r.Detected, 12)
	assert.NotZero(t, r.First)
	assert.Equal(t, int(r.First), r.SeedsToFirst(1))
	assert.InDelta(t, float64(r.Detected)/12, r.Rate(), 1e-12)
	assert.Greater(t, r.PCTSteps, 10)
	again := Hunt(b, pct, 1, 12, false)
	assert.Equal(t, r.Detected, again.Detected, "deterministic")
	assert.Equal(t, r.First, again.First)
	var h *sim.HangError
	require.True(t, errors.As(r.Example, &h))
	assert.Contains(t, h.Text(), "INJECTED_SIGNAL_DROP", "the hang names the injected fault")
}

// A panic in a program's host code is an error, not a crash.
func TestRunRecoversPanics(t *testing.T) {
	b := &Bug{Name: "boom", run: func(Config, bool) (Outcome, error) { panic("boom") }}
	assert.ErrorContains(t, b.Run(Config{Seed: 1}), "panic: boom")
}
