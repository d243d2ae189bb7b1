package emutest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

var (
	onlySeed = flag.Uint64("emutest.seed", 0, "emutest: run only this seed (0: all)")
	numSeeds = flag.Int("emutest.seeds", 0, "emutest: run this many seeds instead of each test's own count (0: the test's)")
	perturb  = flag.Int("emutest.perturb", int(sim.LevelRealistic), "emutest: timing perturbation level of NewJob's runs (0 = the model's exact timing, 1 = realistic, 2 = stress)")
	raceFlag = flag.Bool("emutest.race", false, "emutest: turn on the happens-before race detector in NewJob's runs: a run with data races fails with a report naming both accesses")
)

// Race reports whether NewJob turns on the race detector: the
// -emutest.race flag.
func Race() bool { return *raceFlag }

// Level is the timing perturbation level NewJob gives its runs: the
// -emutest.perturb flag, realistic (1) unless set. A level outside 0..2
// counts as the highest.
func Level() sim.Level {
	return sim.Level(min(max(*perturb, 0), int(sim.MaxLevel)))
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

// Races returns the race detector's reports when the seed had data races,
// else nil.
func (f *Failure) Races() *race.Error {
	var r *race.Error
	if errors.As(f.Err, &r) {
		return r
	}
	return nil
}

// Report is what a reader needs: a hang's full report (who waits on what,
// the likely causes, seed and digest), every data race the detector found,
// or the error.
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
	if k < 1 {
		t.Fatalf("emutest.Seeds: k = %d, need at least 1 seed", k)
	}
	if *numSeeds > 0 {
		k = *numSeeds
	}
	var f *Failure
	if *onlySeed != 0 {
		if err := call(body, *onlySeed); err != nil {
			f = &Failure{Seed: *onlySeed, Err: err}
		}
	} else {
		f = Find(k, body)
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
	t.Fatalf("emutest: seed %d %s (timing perturbation level %v):\n%sreproduce: %s", f.Seed, kind, Level(), f.Report(), Command(t.Name(), f.Seed))
}

// Command is the go test command that reruns test with one seed at the
// current perturbation level, from the module root (the package directory
// is found from the test's working directory, which go test sets to the
// package's).
func Command(test string, seed uint64) string {
	top, _, _ := strings.Cut(test, "/")
	race := ""
	if Race() {
		race = " -emutest.race"
	}
	return fmt.Sprintf("go test -run '^%s$' %s -emutest.seed=%d -emutest.perturb=%d%s", top, packageDir(), seed, Level(), race)
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
