package scenario_test

import (
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/all"
	"github.com/emud-dev/emud/sim"
)

// TestScratchSeedsIndependent: a seed run on an explore worker's Scratch
// (engine.Scratch, kept across the worker's seeds) gives the digest it
// gives on fresh memory, whatever the worker ran before it: seeds in
// another order, other scenarios, shapes, the race detector and a failing run
// in between (what the Scratch keeps: region buffers, the event store, idle
// lane workers and the kernels' site cache).
func TestScratchSeedsIndependent(t *testing.T) {
	const seeds = 6
	a2a := scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2, Perturb: sim.MaxLevel}
	run := func(name string, o scenario.Options, seed uint64, sc *engine.Scratch) string {
		t.Helper()
		s, err := scenario.Lookup(name)
		require.NoError(t, err)
		o.Seed, o.Scratch = seed, sc
		rep := scenario.RunOnce(s, o)
		require.Equal(t, scenario.StatusOK, rep.Status, "%s seed %d: %s", name, seed, rep.Error)
		return rep.Summary.Digest
	}
	fresh := map[uint64]string{}
	for seed := uint64(1); seed <= seeds; seed++ {
		fresh[seed] = run("alltoall", a2a, seed, nil)
	}
	// The failing runs' reports, with what they said when their run
	// ended: explore keeps the lowest failing seed's report while its
	// worker runs more seeds on the same Scratch, whose arenas hand the
	// failed run's lanes and handles to them (kernel, job).
	type failedRun struct {
		rep  *scenario.Report
		text string
	}
	var failed []failedRun
	for _, tc := range []struct {
		name    string
		between func(sc *engine.Scratch, seed uint64)
	}{
		{"alone", func(*engine.Scratch, uint64) {}},
		{"other scenarios between", func(sc *engine.Scratch, seed uint64) {
			run("allgather-ring", scenario.Options{Ranks: 8, Bytes: 8 << 10, Queues: 1, Perturb: 1}, seed+100, sc)
			run("alltoall-mq", scenario.Options{Ranks: 2, Bytes: 4 << 10, Queues: 3, Race: true}, seed+200, sc)
			run("alltoall", scenario.Options{Ranks: 3, Bytes: 12 << 10, Queues: 1, Debug: true}, seed+300, sc)
		}},
		// Windows of 64 KiB blocks, which read as the pattern cache's
		// blocks and land by reference (engine.Content's Blocks): the
		// same digest on the worker's Scratch as on fresh memory, also
		// after a run whose lanes overwrote its send windows
		// (alltoall-early-reuse) left their kept mappings written.
		{"windows referred to between", func(sc *engine.Scratch, seed uint64) {
			o := scenario.Options{Ranks: 4, Bytes: 64 << 10, Queues: 2, Perturb: 1}
			assert.Equal(t, run("alltoall", o, seed+500, nil), run("alltoall", o, seed+500, sc), "64 KiB seed %d", seed+500)
			s, err := scenario.Lookup("alltoall-early-reuse")
			require.NoError(t, err)
			o.Seed, o.Scratch, o.Queues = seed+600, sc, 1
			require.NotEqual(t, scenario.StatusOK, scenario.RunOnce(s, o).Status, "the planted bug is seen")
		}},
		// Failing runs between (planted bugs: wrong data or a hang, by
		// seed), whose reports read the kernels' sites, which the
		// worker's kernels share (kernel's site cache in the Scratch).
		// A hang between (expected-per-lane: its report names the signal
		// posts cco's diagnosis kept, which the worker's runs reuse), and
		// one under the race detector (baseline-read-race). Their actors,
		// killed when the run stopped, are the next runs' actors, and
		// their writers' and regions' names the worker's interned ones
		// (sim.Scratch).
		{"failing runs between", func(sc *engine.Scratch, seed uint64) {
			for _, bug := range []struct {
				name          string
				ranks, queues int
				race          bool
			}{{"missing-commit", 2, 2, false}, {"expected-per-lane", 2, 1, false}, {"baseline-read-race", 3, 1, true}} {
				s, err := scenario.Lookup(bug.name)
				require.NoError(t, err)
				o := scenario.Options{Ranks: bug.ranks, Bytes: 4 << 10, Queues: bug.queues, Seed: seed + 400, Race: bug.race}
				alone := reportText(t, scenario.RunOnce(s, o))
				o.Scratch = sc
				rep := scenario.RunOnce(s, o)
				require.NotEqual(t, scenario.StatusOK, rep.Status)
				text := reportText(t, rep)
				assert.Equal(t, alone, text, "%s seed %d: the report on the worker's Scratch is the one on fresh memory", bug.name, o.Seed)
				failed = append(failed, failedRun{rep, text})
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order := make([]uint64, 0, seeds)
			for seed := uint64(seeds); seed >= 1; seed-- {
				order = append(order, seed)
			}
			order = append(order, 3, 1) // again, after all the others
			sc := engine.NewScratch()
			defer sc.Close()
			for _, seed := range order {
				tc.between(sc, seed)
				assert.Equal(t, fresh[seed], run("alltoall", a2a, seed, sc), "seed %d after %v", seed, order)
			}
			assert.NotZero(t, sc.Held(), "the worker's buffers were kept")
			for _, f := range failed {
				assert.Equal(t, f.text, reportText(t, f.rep), "a kept report changed as later seeds reused the Scratch")
			}
		})
	}
	require.NotEmpty(t, failed)
	assert.Equal(t, scenario.StatusHang, failed[len(failed)-2].rep.Status, "expected-per-lane hangs")
	assert.Contains(t, failed[len(failed)-2].text, "signal ATOMICs were ever posted toward it", "its report quotes cco's diagnosis")
	assert.Equal(t, scenario.StatusHang, failed[len(failed)-1].rep.Status, "baseline-read-race hangs")
}

// reportText is rep as the run command prints it, and its error.
func reportText(t *testing.T, rep *scenario.Report) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, rep.Write(&b, false))
	if js := new(strings.Builder); rep.Hang != nil {
		require.NoError(t, rep.Write(js, true))
		b.WriteString(js.String())
	}
	return b.String() + rep.Error
}

// TestExploreSameAtAnyJobs: explore's record of a range of seeds (each
// worker on its own Scratch) is the same at 1, 2 and 3 jobs, and the
// same as the digests of the seeds run one by one on fresh memory.
func TestExploreSameAtAnyJobs(t *testing.T) {
	s, err := scenario.Lookup("alltoall")
	require.NoError(t, err)
	o := scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2, Perturb: sim.MaxLevel}
	var want []string
	for seed := uint64(1); seed <= 12; seed++ {
		o.Seed = seed
		rep := scenario.RunOnce(s, o)
		require.Equal(t, scenario.StatusOK, rep.Status)
		want = append(want, rep.Summary.Digest)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	for _, jobs := range []int{1, 2, 3} {
		x := scenario.Explore(s, o, 1, 12, jobs, nil)
		require.Nil(t, x.Found())
		ends, digests := x.Passed()
		assert.Len(t, ends, 12)
		assert.Equal(t, want, digests, "jobs %d", jobs)
	}
}

// gcPercent is the collector's current target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestExploreGCPercent: explore runs at ExploreGCPercent and restores the
// target before it, also when two explores overlap; a GOGC in the
// environment is left as it is.
func TestExploreGCPercent(t *testing.T) {
	s, err := scenario.Lookup("alltoall")
	require.NoError(t, err)
	o := scenario.Options{Ranks: 2, Bytes: 4 << 10, Queues: 1}
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	for _, tc := range []struct {
		name   string
		gogc   bool
		during int
	}{
		{"default", false, scenario.ExploreGCPercent},
		{"GOGC set", true, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.gogc {
				t.Setenv("GOGC", "150")
			} else {
				// LookupEnv must find nothing: unset it for the test.
				if v, ok := os.LookupEnv("GOGC"); ok {
					require.NoError(t, os.Unsetenv("GOGC"))
					defer os.Setenv("GOGC", v)
				}
			}
			var mu sync.Mutex
			var seen []int
			step := func(bool) {
				mu.Lock()
				seen = append(seen, gcPercent())
				mu.Unlock()
			}
			var wg sync.WaitGroup
			for range 2 { // overlapping explores
				wg.Go(func() { scenario.Explore(s, o, 1, 4, 2, step) })
			}
			wg.Wait()
			assert.Equal(t, 150, gcPercent(), "restored")
			require.Len(t, seen, 8)
			for _, p := range seen {
				assert.Equal(t, tc.during, p)
			}
		})
	}
}
