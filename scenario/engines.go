package scenario

import (
	"fmt"

	"github.com/emud-dev/emud/model"
)

// CheckEngines reports whether the SDMA queues a scenario opens fit the
// GPUs' SDMA engines of o's model: opens(g, p) is the queue ids rank g
// opens toward rank p (p == g: loopback). The engine places queues as MORI
// does (model.Engines.Place: channel c toward a peer on the c-th of the
// link's recommended engines) and an engine holds at most
// QueuesPerEngine of them (KFD's NumSdmaQueuesPerEngine), so an
// all-to-all over many ranks runs out of engine slots before --ranks
// reaches MaxRanks. The error names the flag, the first engine over its
// limit and the most ranks that fit with these flags. A model without
// shared engines (one per queue) fits any count.
func CheckEngines(o Options, name string, opens func(g, p int) []int) error {
	m, err := model.Load(o.Model)
	if err != nil {
		return nil // Validate names a bad --model
	}
	lay := m.Engines()
	if lay.Dedicated() {
		return nil
	}
	g, e, n := overfull(lay, o.Ranks, opens)
	if n == 0 {
		return nil
	}
	fit := o.Ranks - 1
	for ; fit >= MinRanks; fit-- {
		if _, _, k := overfull(lay, fit, opens); k == 0 {
			break
		}
	}
	limit := fmt.Sprintf("at most %d ranks with these flags", fit)
	if fit < MinRanks {
		limit = "no rank count fits with these flags"
	}
	return fmt.Errorf("invalid --ranks %d: %s opens %d SDMA queues on GPU %d, placed as MORI places them (channel c toward a peer on the c-th of the link's %d recommended engines), and its engine %d would hold %d, over the %d queues one engine holds (KFD NumSdmaQueuesPerEngine): %s",
		o.Ranks, name, opened(o.Ranks, g, opens), g, lay.PerLink, e, n, lay.QueuesPerEngine, limit)
}

// overfull returns the first GPU and engine of a ranks-GPU node holding
// more queues than one engine may, and how many it would hold (0: none).
func overfull(lay model.Engines, ranks int, opens func(g, p int) []int) (gpu, engine, n int) {
	for g := range ranks {
		count := map[int]int{}
		for p := range ranks {
			seen := map[int]bool{}
			for _, q := range opens(g, p) {
				if seen[q] {
					continue
				}
				seen[q] = true
				e := lay.Place(g, p, q)
				if count[e]++; count[e] > lay.QueuesPerEngine {
					return g, e, count[e]
				}
			}
		}
	}
	return 0, 0, 0
}

// opened counts the distinct queues GPU g opens.
func opened(ranks, g int, opens func(g, p int) []int) int {
	n := 0
	for p := range ranks {
		seen := map[int]bool{}
		for _, q := range opens(g, p) {
			if !seen[q] {
				seen[q] = true
				n++
			}
		}
	}
	return n
}

// QueueRange returns the queue ids 0..n−1, for CheckEngines.
func QueueRange(n int) []int {
	q := make([]int, n)
	for i := range q {
		q[i] = i
	}
	return q
}
