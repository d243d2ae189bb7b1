package planted_test

import (
	"errors"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/internal/testmain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/planted"
	"github.com/emud-dev/emud/sim"
)

func TestMain(m *testing.M) { testmain.Run(m) }

// corpus is the planted-bug corpus (this package's planted scenarios).
func corpus() []*scenario.Scenario {
	var out []*scenario.Scenario
	for _, sc := range scenario.PlantedBugs() {
		if sc.Shape != nil {
			out = append(out, sc)
		}
	}
	return out
}

// exec runs bug sc (or its twin) once at seed under perturbation lvl.
func exec(t *testing.T, sc *scenario.Scenario, seed uint64, lvl sim.Level, race, fixed bool) *scenario.Report {
	t.Helper()
	run, err := scenario.Target(sc, fixed)
	require.NoError(t, err)
	o := scenario.Defaults(sc)
	o.Seed, o.Perturb, o.Race = seed, lvl, race
	return scenario.RunOnce(run, o)
}

// firstDetection is the first seed in 1..n under st that detects b (or its
// twin), 0 if none: Hunt, stopping early, to keep CI cheap.
func firstDetection(b *scenario.Scenario, st scenario.Strategy, n int, fixed bool) (uint64, error) {
	k := 0
	if st.Schedule == sim.StrategyPCT {
		k = scenario.PCTStepsFor(b, st, 1, fixed)
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		rep, err := scenario.HuntRun(b, st, seed, k, fixed)
		if err != nil {
			return seed, err
		}
		if rep.Status != scenario.StatusOK {
			return seed, rep.Err
		}
	}
	return 0, nil
}

func TestCorpusShape(t *testing.T) {
	list := corpus()
	require.GreaterOrEqual(t, len(list), 12, "at least 12 planted bugs")
	timing := 0
	for _, b := range list {
		assert.NotEmpty(t, b.Planted.Class, b.Name)
		assert.NotEmpty(t, b.Planted.Source, b.Name)
		twin, err := scenario.Twin(b)
		require.NoError(t, err, b.Name)
		assert.Equal(t, b.Name+"-fixed", twin.Name)
		assert.Nil(t, twin.Planted, "a twin is no bug")
		if b.Planted.Timing {
			timing++
		}
	}
	assert.GreaterOrEqual(t, timing, 3, "several bugs need timing the model alone does not produce")
	_, err := scenario.LookupStrategy("dfs")
	assert.Error(t, err)
}

// The reduced hunt CI runs (the full table is "emud hunt", in the README):
// the default strategy detects every bug within a few seeds; the fixed
// twins pass under every strategy; the bugs marked Timing are invisible to
// seeded tie-breaks at exact timing and the others are not.
func TestHuntReduced(t *testing.T) {
	def, err := scenario.LookupStrategy(scenario.DefaultStrategy)
	require.NoError(t, err)
	ties, err := scenario.LookupStrategy("ties")
	require.NoError(t, err)
	for _, b := range corpus() {
		t.Run(b.Name, func(t *testing.T) {
			seed, err := firstDetection(b, def, 12, false)
			require.NotZero(t, seed, "%s: the default strategy finds it within 12 seeds", b.Name)
			var h *sim.HangError
			var wrong *scenario.MismatchError
			var refused *cco.MisuseError // ccoCommDestroy of a queue with work in flight
			assert.True(t, errors.As(err, &h) || errors.As(err, &wrong) || errors.As(err, &refused), "a detection is a hang, wrong data or a refused misuse: %v", err)
			assert.NotEmpty(t, scenario.Explain(err))

			for _, st := range scenario.Strategies {
				seed, err := firstDetection(b, st, 3, true)
				assert.Zero(t, seed, "%s's fixed twin under %s: %v", b.Name, st.Name, err)
			}

			seed, _ = firstDetection(b, ties, 6, false)
			if b.Planted.Timing {
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
	b, err := scenario.Lookup("lost-completion") // 3% of ATOMICs lost: some seeds, not all
	require.NoError(t, err)
	pct, _ := scenario.LookupStrategy("pct")
	r := scenario.Hunt(b, pct, 1, 12, false)
	assert.Equal(t, 12, r.Seeds)
	assert.Greater(t, r.Detected, 0)
	assert.Less(t, r.Detected, 12)
	assert.NotZero(t, r.First)
	assert.Equal(t, int(r.First), r.SeedsToFirst(1))
	assert.InDelta(t, float64(r.Detected)/12, r.Rate(), 1e-12)
	assert.Greater(t, r.PCTSteps, 10)
	again := scenario.Hunt(b, pct, 1, 12, false)
	assert.Equal(t, r.Detected, again.Detected, "deterministic")
	assert.Equal(t, r.First, again.First)
	var h *sim.HangError
	require.True(t, errors.As(r.Example, &h))
	assert.Contains(t, h.Text(), "INJECTED_SIGNAL_DROP", "the hang names the injected fault")
}

// A corpus program refuses another shape than its own, naming the flag.
func TestShapeIsAdmitted(t *testing.T) {
	b, err := scenario.Lookup("ring-off-by-one")
	require.NoError(t, err)
	o := scenario.Defaults(b)
	require.NoError(t, scenario.Admit(b, o, 0))
	o.Ranks = 8
	assert.ErrorContains(t, scenario.Admit(b, o, 0), "invalid --ranks 8: ring-off-by-one runs on exactly 4 ranks")
}
