// Package testmain is the TestMain of emud's test binaries. After the
// tests pass it fails the binary if a goroutine leaked (goleak; Run only)
// or, with EMUD_TEST_MAX_RSS set (a size such as 2G), if the binary's peak
// resident memory (VmHWM, Linux) went over it. The limit holds
// `go test -race ./...` to what a CI machine gives each package's binary
// (2 GiB is the goal, DefaultMaxRSS): a test that starts to hold its runs'
// memory fails there, naming its figure, instead of pushing the machine
// into swap. It is opt-in until every package's race binary is measured
// under the goal.
package testmain

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/emud-dev/emud/internal/peakrss"
	"github.com/emud-dev/emud/internal/racebuild"
)

// DefaultMaxRSS is the goal for a test binary's peak resident memory.
const DefaultMaxRSS = 2 << 30

// IdleFuncs are the functions in which, under -race only, goroutines wait
// idle for reuse by a later run (racebuild's doc): sim's actor goroutines
// and kernel's lane coroutines. The leak check ignores goroutines in them;
// sim's and kernel's tests check that the names are still theirs. (This
// package imports neither, so that their own tests can use it.)
var IdleFuncs = []string{
	"github.com/emud-dev/emud/sim.pooledGoroutine",
	"github.com/emud-dev/emud/kernel.(*worker).loop",
}

// Run runs the tests, then checks for leaked goroutines (under -race
// ignoring IdleFuncs) and the peak RSS; it exits with the status.
func Run(m *testing.M) { os.Exit(run(m, true, os.Stderr)) }

// RSSOnly runs the tests, then checks only the peak RSS.
func RSSOnly(m *testing.M) { os.Exit(run(m, false, os.Stderr)) }

// CheckRSS is the peak-RSS check alone, for a TestMain that has its own
// work to do after the tests: nil, or the error naming the figure.
func CheckRSS() error { return checkPeak(os.Getenv("EMUD_TEST_MAX_RSS"), peakrss.Self) }

type runner interface{ Run() int }

func run(m runner, leaks bool, stderr io.Writer) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	if leaks {
		var opts []goleak.Option
		if racebuild.Enabled {
			for _, f := range IdleFuncs {
				opts = append(opts, goleak.IgnoreAnyFunction(f))
			}
		}
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(stderr, "goleak: Errors on successful test run: %v\n", err)
			return 1
		}
	}
	if err := checkPeak(os.Getenv("EMUD_TEST_MAX_RSS"), peakrss.Self); err != nil {
		fmt.Fprintf(stderr, "testmain: %v\n", err)
		return 1
	}
	return 0
}

// checkPeak compares the VmHWM line of status (a /proc/PID/status file) with
// the limit env gives (empty or 0: no check). A system without the file is
// not checked.
func checkPeak(env, status string) error {
	var limit uint64
	if env != "" {
		n, err := parseSize(env)
		if err != nil {
			return fmt.Errorf("EMUD_TEST_MAX_RSS=%s: %v", env, err)
		}
		limit = n
	}
	if limit == 0 {
		return nil
	}
	peak, ok, err := peakrss.Read(status)
	if err != nil || !ok {
		return err
	}
	if peak > limit {
		return fmt.Errorf("the test binary's peak RSS was %d MiB, over the limit of %d MiB (EMUD_TEST_MAX_RSS): find the test that holds memory with -test.run and fix it",
			peak>>20, limit>>20)
	}
	return nil
}

// parseSize reads a whole number of bytes with an optional K, M or G
// suffix (powers of 1024).
func parseSize(s string) (uint64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := uint64(1)
	for suffix, m := range map[string]uint64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30} {
		if strings.HasSuffix(t, suffix) {
			t, mult = strings.TrimSuffix(t, suffix), m
		}
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil || n > (1<<63)/mult {
		return 0, fmt.Errorf("want a whole number of bytes with an optional suffix K, M or G, e.g. 3G")
	}
	return n * mult, nil
}
