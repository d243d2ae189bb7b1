package sim

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// race runs n actors that each take turns at the same instants and returns
// the order in which they ran and the digest.
func race(t *testing.T, cfg Config, n, rounds int) (string, string) {
	t.Helper()
	s := New(cfg)
	var order strings.Builder
	for i := range n {
		s.Spawn(fmt.Sprint(i), func(a *Actor) {
			for range rounds {
				fmt.Fprint(&order, i)
				a.Sleep(Microsecond)
			}
		})
	}
	require.NoError(t, s.Run())
	return order.String(), s.Digest()
}

// Without change points PCT runs the highest-priority actor first at every
// tie, so every round has the same order; random tie-breaks vary it.
func TestPCTPriorities(t *testing.T) {
	o, _ := race(t, Config{Seed: 7, Strategy: StrategyPCT, PCT: PCT{Depth: 1}}, 4, 6)
	for i := 4; i < len(o); i += 4 {
		assert.Equal(t, o[:4], o[i:i+4], "fixed priorities: each round in the same order (%s)", o)
	}
	r, _ := race(t, Config{Seed: 7}, 4, 6)
	same := true
	for i := 4; i < len(r); i += 4 {
		same = same && r[:4] == r[i:i+4]
	}
	assert.False(t, same, "random tie-breaks vary the order (%s)", r)
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		o, _ := race(t, Config{Seed: seed, Strategy: StrategyPCT, PCT: PCT{Depth: 1}}, 4, 1)
		orders[o] = true
	}
	assert.Greater(t, len(orders), 5, "the seed draws the priorities")
}

// Change points preempt and defer the item about to run; the run is
// reproducible from the seed and says where it preempted.
func TestPCTChangePoints(t *testing.T) {
	cfg := Config{Seed: 3, Strategy: StrategyPCT, PCT: PCT{Depth: 4, Steps: 20, MaxDelay: 10 * Microsecond}, Record: true}
	s := New(cfg)
	var end [3]Time
	for i := range 3 {
		s.Spawn(fmt.Sprint(i), func(a *Actor) {
			for range 5 {
				a.Sleep(Microsecond)
			}
			end[i] = a.Now()
		})
	}
	require.NoError(t, s.Run())
	var buf bytes.Buffer
	require.NoError(t, s.WriteRecords(&buf))
	assert.Equal(t, 3, strings.Count(buf.String(), "pct preempt"), "depth 4: three change points within the first 20 steps")
	late := 0
	for _, e := range end {
		if e > 5*Microsecond {
			late++
		}
	}
	assert.Greater(t, late, 0, "a preempted actor finishes late: %v", end)
	assert.Greater(t, s.Steps(), 20)

	_, d1 := race(t, Config{Seed: 11, Strategy: StrategyPCT, PCT: PCT{Steps: 30}}, 3, 8)
	_, d2 := race(t, Config{Seed: 11, Strategy: StrategyPCT, PCT: PCT{Steps: 30}}, 3, 8)
	_, d3 := race(t, Config{Seed: 11}, 3, 8)
	assert.Equal(t, d1, d2, "same seed, same PCT run")
	assert.NotEqual(t, d1, d3, "PCT is another run than random under the same seed")
}

func TestPCTCheck(t *testing.T) {
	assert.NoError(t, PCT{}.Check())
	assert.Error(t, PCT{Depth: -1}.Check())
	assert.Error(t, PCT{Steps: -5}.Check())
	assert.Error(t, PCT{MaxDelay: 2 * Second}.Check())
}
