package cco_test

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Property: whatever the shape of a wave's thread-scope put (which lanes
// are active, which peer and queue each targets, how many bytes, which
// signals, Independent or a kept SameQueue promise, SignalPerCopy or not,
// Aggregate then commit), every active lane's bytes land where it asked and
// every signal slot advances by exactly one per group (one per lane with
// SignalPerCopy), groups being the lanes that share a (peer, queue).
func TestPutGroupingProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const ranks, queues, slot = 4, 3, 512
		seed := rapid.Uint64().Draw(rt, "seed")
		lanes := rapid.IntRange(1, 64).Draw(rt, "lanes")
		sameQueue := rapid.Bool().Draw(rt, "sameQueue")
		perCopy := rapid.Bool().Draw(rt, "perCopy")
		aggregate := rapid.Bool().Draw(rt, "aggregate")
		local := rapid.Bool().Draw(rt, "local")
		remote := rapid.Bool().Draw(rt, "remote")
		active := make([]bool, lanes)
		peer := make([]int, lanes)
		queue := make([]int, lanes)
		size := make([]uint64, lanes)
		p0, q0 := rapid.IntRange(0, ranks-1).Draw(rt, "p0"), rapid.IntRange(0, queues-1).Draw(rt, "q0")
		for l := range lanes {
			active[l] = rapid.Bool().Draw(rt, fmt.Sprintf("active%d", l))
			peer[l], queue[l] = p0, q0
			if !sameQueue {
				peer[l] = rapid.IntRange(0, ranks-1).Draw(rt, fmt.Sprintf("peer%d", l))
				queue[l] = rapid.IntRange(0, queues-1).Draw(rt, fmt.Sprintf("queue%d", l))
			}
			size[l] = rapid.Uint64Range(1, slot).Draw(rt, fmt.Sprintf("size%d", l))
		}

		r := newRig(t, seed, rigOpts{ranks: ranks, queues: queues, winBytes: 64 * slot})
		r.fillBytes(r.send[0], 0, patterned(7, 64*slot))
		opts := []cco.Option{}
		if sameQueue {
			opts = append(opts, cco.SdmaThreadSameQueue)
		}
		if perCopy {
			opts = append(opts, cco.SdmaOptFlagsSignalPerCopy)
		}
		if aggregate {
			opts = append(opts, cco.SdmaOptFlagsAggregate)
		}
		if local {
			opts = append(opts, cco.LocalSignal)
		}
		if remote {
			opts = append(opts, cco.RemoteSignal)
		}
		r.launch(0, 1, lanes, func(th *kernel.Thread, sdma *cco.Sdma) {
			l := th.Lane()
			if active[l] {
				off := uint64(l * slot)
				sdma.Put(peer[l], r.recv[0], off, r.send[0], off, size[l], queue[l], opts...)
			}
			// Thread scope: a warp-scope commit from a wave of fewer lanes
			// than queues would leave the higher queues unrung.
			if aggregate {
				for p := range ranks {
					for q := range queues {
						sdma.Commit(p, q)
					}
				}
			}
			for p := range ranks {
				sdma.Quiet(p)
			}
		})
		require.NoError(rt, r.s.Run())

		// Expected signal counts: +1 per group, or per lane with perCopy.
		type key struct{ p, q int }
		groups := map[key]int{}
		for l := range lanes {
			if active[l] {
				groups[key{peer[l], queue[l]}]++
			}
		}
		wantLocal := make([]uint64, queues)
		wantRemote := make([][]uint64, ranks)
		for p := range wantRemote {
			wantRemote[p] = make([]uint64, queues)
		}
		for k, n := range groups {
			inc := uint64(1)
			if perCopy {
				inc = uint64(n)
			}
			if local {
				wantLocal[k.q] += inc
			}
			if remote {
				wantRemote[k.p][k.q] += inc
			}
		}
		for l := range lanes {
			got := r.readBytes(r.recv[peer[l]], uint64(l*slot), size[l])
			want := patterned(7, 64*slot)[l*slot : uint64(l*slot)+size[l]]
			if active[l] {
				require.Equal(rt, want, got, "lane %d → peer %d queue %d", l, peer[l], queue[l])
			}
		}
		for q := range queues {
			for p := range ranks {
				want := wantRemote[p][q]
				if p == 0 {
					want += wantLocal[q] // loopback remote signals share rank 0's own row
				}
				require.Equal(rt, want, r.signal(p, 0, q), "rank %d's slot [0, %d]", p, q)
			}
		}
	})
}
