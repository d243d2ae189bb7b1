package main

import (
	"fmt"
	"slices"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/sim"
)

// ncclCommSplit's rendezvous (EMUD_H_COMM_SPLIT). Every rank of the
// parent comm brings its color and key; once all have (the parent's
// collective barrier, so a rank that never calls is a hang naming it),
// the ranks of one color form a new comm, ordered by key and then by
// parent rank, and each color gets a unique id of its own, in ascending
// color order, so the ids are the same whichever rank reads first. The
// header then makes the rank's comm with ncclCommInitRank's own call on
// the parent rank's device (include/nccl.h), so a split comm's ranks
// keep their GPUs, which need not be GPUs 0..n-1 (cco.CommCreateOn).
// A rank of color NCCL_SPLIT_NOCOLOR (-1) takes part and gets no comm.

// splitKey names one split of a parent comm: the seq-th its ranks made.
type splitKey struct {
	uid cco.UniqueId
	seq int
}

// commSplitState is one split's colors and keys by parent rank, and the ids of
// its new comms by color once every rank has arrived.
type commSplitState struct {
	color, key []int64
	uids       map[int64]cco.UniqueId
	read       int // the ranks that took their answer: the last deletes it
}

// noColor is NCCL_SPLIT_NOCOLOR.
const noColor = -1

func commSplit(act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	const call = "ncclCommSplit"
	c, err := commOf(a[0])
	if err != nil {
		return bad(call, 1, err)
	}
	color, key := int64(int32(a[1])), int64(int32(a[2]))
	if color < 0 && color != noColor {
		return bad(call, 1, fmt.Errorf("rank %d: color %d is negative and not NCCL_SPLIT_NOCOLOR (-1)", c.Rank, color))
	}
	uid := rt.commUID[a[0]-1]
	k := splitKey{uid, rt.splitSeq[a[0]]}
	rt.splitSeq[a[0]]++
	sp := rt.splits[k]
	if sp == nil {
		sp = &commSplitState{color: make([]int64, c.NRanks), key: make([]int64, c.NRanks)}
		rt.splits[k] = sp
	}
	sp.color[c.Rank], sp.key[c.Rank] = color, key
	if err := barrierAll(act, c, uid, call); err != nil {
		return bad(call, 1, err)
	}
	if sp.uids == nil {
		colors := slices.Clone(sp.color)
		slices.Sort(colors)
		sp.uids = map[int64]cco.UniqueId{}
		for _, col := range slices.Compact(colors) {
			if col != noColor {
				sp.uids[col] = cco.GetUniqueId(rt.j.Host)
			}
		}
	}
	a[3], a[4], a[5] = 0, 0, 0
	if color != noColor {
		var members []int
		for r, col := range sp.color {
			if col == color {
				members = append(members, r)
			}
		}
		slices.SortStableFunc(members, func(x, y int) int {
			if sp.key[x] != sp.key[y] {
				if sp.key[x] < sp.key[y] {
					return -1
				}
				return 1
			}
			return x - y
		})
		a[3] = uint64(sp.uids[color])
		a[4] = uint64(slices.Index(members, c.Rank))
		a[5] = uint64(len(members))
	}
	if sp.read++; sp.read == c.NRanks {
		delete(rt.splits, k)
	}
	return hipSuccess
}
