package all_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// sweepOptions is sc's default run at n ranks with small messages.
func sweepOptions(sc *scenario.Scenario, n int) scenario.Options {
	o := scenario.Defaults(sc)
	if sc.Shape == nil {
		o.Ranks, o.Bytes = n, 256
		if sc.Fabric {
			o.Bytes = 16 // cft-alltoall stages a block per peer in shared memory
		}
	}
	return o
}

// rankRange is what --ranks allows sc.
func rankRange(sc *scenario.Scenario) (lo, hi int) {
	if sc.Shape != nil {
		return sc.Shape.Ranks, sc.Shape.Ranks
	}
	return scenario.MinRanks, scenario.MaxRanksOf(sc)
}

// Every scenario at every rank count --ranks allows is admitted, or refused
// with the real limit and why: the admitted counts run from the least up
// to a limit, and a refusal names the SDMA engines' queue limit and the
// most ranks that fit. The other tests here show the refusal is the
// engine's own limit, neither looser nor tighter, and that what a
// scenario declares it opens covers what it opens.
func TestEveryRankCountAdmittedOrItsLimitNamed(t *testing.T) {
	limited := 0
	for _, sc := range scenario.All() {
		if strings.HasPrefix(sc.Name, "test-") {
			continue // a throwaway scenario of another test
		}
		lo, hi := rankRange(sc)
		top := 0
		for n := lo; n <= hi; n++ {
			err := scenario.Admit(sc, sweepOptions(sc, n), 0)
			if err == nil {
				require.Equal(t, n-1, max(top, lo-1), "%s: %d ranks admitted above a refused count", sc.Name, n)
				top = n
				continue
			}
			// A refusal names --ranks, why, and the limit.
			require.ErrorContains(t, err, fmt.Sprintf("invalid --ranks %d: ", n), sc.Name)
			require.ErrorContains(t, err, "at most", "%s at %d ranks: the refusal states the limit", sc.Name, n)
			if sc.Opens != nil {
				require.ErrorContains(t, err, fmt.Sprintf("invalid --ranks %d: %s opens", n, sc.Name))
				require.ErrorContains(t, err, "over the 8 queues one engine holds (KFD NumSdmaQueuesPerEngine)")
				require.ErrorContains(t, err, fmt.Sprintf("at most %d ranks with these flags", top))
			}
		}
		if top < hi {
			limited++
		}
		assert.GreaterOrEqual(t, top, min(hi, 8), "%s runs on a full MI355X node", sc.Name)
	}
	// At least alltoall-split (and its planted twin) and alltoall-mq stop
	// below --ranks' 64 at their defaults; alltoall spreads its peers over
	// the queue ids and fits.
	assert.GreaterOrEqual(t, limited, 3, "scenarios whose limit is below MaxRanksOf")
}

// openAll creates on a real node every queue opens declares for n ranks:
// the engine's own placement and its own limit.
func openAll(t *testing.T, n int, opens func(g, p int) []int) error {
	t.Helper()
	s := sim.New(sim.Config{})
	node, err := engine.NewNode(s, cco.MI355X(n))
	require.NoError(t, err)
	tiny := ring.Options{Size: 2 * ring.Unit} // the smallest ring: placement is all that is tested
	for g := range n {
		for p := range n {
			for _, q := range opens(g, p) {
				if node.LookupQueue(g, p, q) != nil {
					continue
				}
				if _, err := node.NewQueue(g, p, q, tiny); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// At a scenario's limit the engine creates every queue it opens, and one
// rank more the engine itself refuses one: the admission's limit is the
// engine's. (Queue creation only; nothing runs.)
func TestEngineLimitIsTheEngines(t *testing.T) {
	for _, sc := range scenario.All() {
		if sc.Opens == nil || sc.Planted != nil {
			continue // a planted bug opens what its fixed twin opens
		}
		lo, hi := rankRange(sc)
		top := lo
		for n := lo; n <= hi && scenario.Admit(sc, sweepOptions(sc, n), 0) == nil; n++ {
			top = n
		}
		o := sweepOptions(sc, top)
		require.NoError(t, openAll(t, top, sc.Opens(o)), "%s at its limit of %d ranks", sc.Name, top)
		if top < hi {
			o.Ranks = top + 1
			err := openAll(t, top+1, sc.Opens(o))
			require.ErrorContains(t, err, "the most one engine holds", "%s one past its limit", sc.Name)
		}
	}
}

// What a scenario declares it opens (Opens) covers every queue a run
// creates, and a scenario that declares nothing opens as many queues per
// GPU at 8 ranks as at 4: its queues do not grow with --ranks. Runs at 4
// and 8 ranks with small messages.
func TestOpensCoversTheRun(t *testing.T) {
	for _, sc := range scenario.All() {
		if sc.Fabric || strings.HasPrefix(sc.Name, "test-") {
			continue
		}
		perGPU := map[int]int{}
		for _, n := range []int{4, 8} {
			if sc.Shape != nil && n != sc.Shape.Ranks {
				continue
			}
			o := sweepOptions(sc, n)
			var node *engine.Node
			o.Observe = func(nd *engine.Node, _ *cco.Host) { node = nd }
			rep := scenario.RunOnce(sc, o)
			require.NotNil(t, node, "%s at %d ranks built no node: %v", sc.Name, n, rep.Err)
			most := 0
			count := map[int]int{}
			for _, q := range node.Queues() {
				id := q.ID()
				count[id.GPU]++
				most = max(most, count[id.GPU])
				if sc.Opens != nil {
					assert.Contains(t, sc.Opens(o)(id.GPU, id.Peer), id.Q, "%s at %d ranks opened %v, which Opens does not declare", sc.Name, n, lsa.QueueID(id))
				}
			}
			perGPU[n] = most
		}
		if sc.Opens == nil && sc.Shape == nil {
			assert.Equal(t, perGPU[4], perGPU[8], "%s declares no Opens, yet its queues per GPU grow with --ranks", sc.Name)
		}
	}
}
