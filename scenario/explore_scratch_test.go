package scenario_test

import (
	"slices"
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
// another order, other scenarios, shapes and the race detector in
// between.
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			order := make([]uint64, 0, seeds)
			for seed := uint64(seeds); seed >= 1; seed-- {
				order = append(order, seed)
			}
			order = append(order, 3, 1) // again, after all the others
			sc := engine.NewScratch()
			for _, seed := range order {
				tc.between(sc, seed)
				assert.Equal(t, fresh[seed], run("alltoall", a2a, seed, sc), "seed %d after %v", seed, order)
			}
			assert.NotZero(t, sc.Held(), "the worker's buffers were kept")
		})
	}
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
