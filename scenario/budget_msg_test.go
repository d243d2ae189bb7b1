package scenario_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/all"
)

// A budget refusal blames the flag at fault and gives only advice that
// applies: --mem-budget itself when nothing fits, --ranks when the rank
// count alone is over, --bytes otherwise; --phantom only to a run that is
// not phantom already; no dangling clause.
func TestBudgetErrorNamesTheCause(t *testing.T) {
	a2a, err := scenario.Lookup("alltoall")
	require.NoError(t, err)
	cft, err := scenario.Lookup("cft-allreduce")
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		sc     *scenario.Scenario
		o      scenario.Options
		budget uint64
		want   []string
		not    []string
	}{
		{"bytes", a2a, scenario.Options{Ranks: 8, Bytes: 1 << 20, Queues: 2}, 64 << 20,
			[]string{"invalid --bytes 1MiB with --ranks 8: alltoall needs an estimated", "over --mem-budget 64.0MiB; use --phantom for a timing-only run, or raise --mem-budget"}, nil},
		{"ranks of a phantom run", cft, scenario.Options{Ranks: 4096, Bytes: 16, Queues: 2, Phantom: true}, 1 << 30,
			[]string{"invalid --ranks 4096: cft-allreduce needs an estimated", "even at --bytes 1, over --mem-budget 1.00GiB; raise --mem-budget"},
			[]string{"--phantom", "invalid --bytes"}},
		{"a budget nothing fits", a2a, scenario.Options{Ranks: 8, Bytes: 1 << 20, Queues: 2}, 1,
			[]string{"invalid --mem-budget 1B: even the smallest alltoall run (--ranks 2, --bytes 1) needs an estimated", "; raise --mem-budget"},
			[]string{"invalid --bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := scenario.CheckBudget(tc.sc, tc.o, tc.budget)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, err.Error(), n)
			}
		})
	}
}
