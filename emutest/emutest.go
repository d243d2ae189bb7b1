package emutest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

var (
	onlySeed = flag.Uint64("emutest.seed", 0, "emutest: run only this seed (0: all)")
	numSeeds = flag.Int("emutest.seeds", 0, "emutest: run this many seeds instead of each test's own count (0: the test's)")
	perturb  = flag.Int("emutest.perturb", int(sim.LevelRealistic), "emutest: timing perturbation level of NewJob's runs (0 = the model's exact timing, 1 = realistic, 2 = stress)")
	raceFlag = flag.Bool("emutest.race", false, "emutest: turn on the happens-before race detector in NewJob's runs: a run with data races fails with a report naming both accesses")
	strategy = flag.String("emutest.strategy", sim.StrategyRandom.String(), "emutest: scheduling strategy of NewJob's runs: random (seeded tie-breaks) or pct (random priorities with change points that preempt a wave or an engine, as emud explore --strategy pct)")
	pctDepth = flag.Int("emutest.pct-depth", 0, fmt.Sprintf("emutest: with -emutest.strategy=pct, PCT's bug depth d (d−1 change points; 0 = %d)", sim.DefaultPCTDepth))
	pctSteps = flag.Int("emutest.pct-steps", 0, fmt.Sprintf("emutest: with -emutest.strategy=pct, the scheduling steps the change points are spread over (0 = %d); best near one run's step count (Job.Sim.Steps())", sim.DefaultPCTSteps))
)

// Schedule is the scheduling strategy NewJob gives its runs and, for
// sim.StrategyPCT, PCT's configuration: the -emutest.strategy,
// -emutest.pct-depth and -emutest.pct-steps flags, random unless set. The
// error names the flag at fault: an unknown strategy, a depth or step
// count out of range, or a PCT flag without -emutest.strategy=pct (it
// would be ignored).
//
// Under pct without -emutest.pct-steps, Seeds, Find and Rate measure the
// step count with a probe run of the body (see probe.go); while they run,
// Schedule returns it.
func Schedule() (sim.Strategy, sim.PCT, error) {
	st, c, err := flagSchedule()
	if err == nil && st == sim.StrategyPCT && c.Steps == 0 {
		c.Steps = probed()
	}
	return st, c, err
}

// flagSchedule is Schedule as the flags alone say.
func flagSchedule() (sim.Strategy, sim.PCT, error) {
	st, err := sim.ParseStrategy(*strategy)
	if err != nil {
		return 0, sim.PCT{}, fmt.Errorf("emutest: -emutest.strategy: %w", err)
	}
	c := sim.PCT{Depth: *pctDepth, Steps: *pctSteps}
	if st != sim.StrategyPCT {
		if c != (sim.PCT{}) {
			return 0, sim.PCT{}, fmt.Errorf("emutest: -emutest.pct-depth=%d -emutest.pct-steps=%d without -emutest.strategy=pct (they apply only to pct)", c.Depth, c.Steps)
		}
		return st, c, nil
	}
	if err := c.Check(); err != nil {
		return 0, sim.PCT{}, fmt.Errorf("emutest: -emutest.pct-depth/-emutest.pct-steps: %w", err)
	}
	return st, c, nil
}

// Race reports whether NewJob turns on the race detector: the
// -emutest.race flag, or MORI_CCO_SDMA_RACE (MORI's own switch) or
// EMUD_RACE set truthy in the environment (cco.Truthy).
func Race() bool {
	return *raceFlag || cco.Truthy(os.Getenv("MORI_CCO_SDMA_RACE")) || cco.Truthy(os.Getenv("EMUD_RACE"))
}

// Level is the timing perturbation level NewJob gives its runs: the
// -emutest.perturb flag, else EMUD_PERTURB in the environment, realistic
// (1) unless either says otherwise. A flag level outside 0..2 counts as
// the highest; a bad EMUD_PERTURB counts as realistic here, and NewJob
// and Seeds refuse it, naming it.
func Level() sim.Level {
	l, _ := level()
	return l
}

// Failure is the first seed a search found failing.
type Failure struct {
	Seed uint64
	Err  error
}

// Hang returns the hang report when the seed hung, else nil.
func (f *Failure) Hang() *sim.HangError {
	var h *sim.HangError
	if errors.As(f.Err, &h) {
		return h
	}
	return nil
}

// Races returns the race detector's reports when the seed had data races
// (also those found before a hang), else nil.
func (f *Failure) Races() *race.Error {
	var r *race.Error
	if errors.As(f.Err, &r) {
		return r
	}
	if h := f.Hang(); h != nil {
		return h.Races // found before the hang; the report carries them
	}
	return nil
}

// Report is what a reader needs: a hang's full report (who waits on what,
// the likely causes, the data races found before it, seed and digest),
// every data race the detector found, or the error.
func (f *Failure) Report() string {
	if h := f.Hang(); h != nil {
		return h.Text()
	}
	if r := f.Races(); r != nil {
		return r.Text()
	}
	return f.Err.Error() + "\n"
}

// Find runs body under seeds 1..k in order and returns the first that
// fails, or nil when all pass. A panic in body is that seed's failure.
func Find(k int, body func(seed uint64) error) *Failure {
	defer probePCT(body)()
	return find(k, body)
}

func find(k int, body func(seed uint64) error) *Failure {
	for seed := uint64(1); seed <= uint64(max(k, 0)); seed++ {
		if err := call(body, seed); err != nil {
			return &Failure{Seed: seed, Err: err}
		}
	}
	return nil
}

func call(body func(uint64) error, seed uint64) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return body(seed)
}

// Seeds runs body under seeds 1..k (or what -emutest.seed and
// -emutest.seeds say) and fails t at the first seed that fails, printing
// the seed, the report and the command that reproduces it.
func Seeds(t testing.TB, k int, body func(seed uint64) error) {
	t.Helper()
	seeds(t, k, body, true)
}

// seeds is Seeds; probe false skips PCT's probe run (a caller that
// measured the step count itself).
func seeds(t testing.TB, k int, body func(seed uint64) error, probe bool) {
	t.Helper()
	if k < 1 {
		t.Fatalf("emutest.Seeds: k = %d, need at least 1 seed", k)
	}
	if *numSeeds > 0 {
		k = *numSeeds
	}
	if err := checkFlags(); err != nil {
		t.Fatalf("%v", err)
		return
	}
	if probe {
		defer probePCT(body)()
	}
	var f *Failure
	if one, _ := only(); one != 0 {
		if err := call(body, one); err != nil {
			f = &Failure{Seed: one, Err: err}
		}
	} else {
		f = find(k, body)
	}
	if f == nil {
		return
	}
	kind := "fails"
	switch {
	case f.Hang() != nil:
		kind = "hangs"
	case f.Races() != nil:
		kind = "has data races"
	}
	t.Fatalf("emutest: seed %d %s (%s):\n%sreproduce: %s", f.Seed, kind, timing(), f.Report(), Command(t.Name(), f.Seed))
}

// timing says what fixed the runs' timing beyond the seed: the
// perturbation level always, the strategy when it is not random.
func timing() string {
	s := fmt.Sprintf("timing perturbation level %v", Level())
	st, c, err := Schedule()
	if err != nil || st == sim.StrategyRandom {
		return s
	}
	s += ", strategy " + st.String()
	if c.Depth != 0 {
		s += fmt.Sprintf(" depth %d", c.Depth)
	}
	if c.Steps != 0 {
		s += fmt.Sprintf(" steps %d", c.Steps)
	}
	return s
}

// Command is the go test command that reruns test (a subtest named as
// t.Name() names it, each level anchored: '^TestTop$/^sub$', so that its
// siblings do not run) with one seed at the current perturbation level and
// strategy (named when not random, with the PCT flags that were set), from
// the module root (the package directory is found from the test's working
// directory, which go test sets to the package's). Settings only the
// environment carries (EMUD_ARCH, MORI_*) lead the command.
func Command(test string, seed uint64) string {
	extra := ""
	if st, c, err := Schedule(); err == nil && st != sim.StrategyRandom {
		extra += " -emutest.strategy=" + st.String()
		if c.Depth != 0 {
			extra += fmt.Sprintf(" -emutest.pct-depth=%d", c.Depth)
		}
		if c.Steps != 0 {
			extra += fmt.Sprintf(" -emutest.pct-steps=%d", c.Steps)
		}
	}
	if Race() {
		extra += " -emutest.race"
	}
	return fmt.Sprintf("%sgo test -run '%s' %s -emutest.seed=%d -emutest.perturb=%d%s", envPrefix(), runPattern(test), packageDir(), seed, Level(), extra)
}

// runPattern is go test's -run pattern for exactly test: each level of the
// name quoted and anchored.
func runPattern(test string) string {
	parts := strings.Split(test, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// packageDir is the working directory relative to the module root, as
// ./path; "." when no go.mod is found above it.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}
