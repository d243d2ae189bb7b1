//go:build cgo

package main

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/sim"
)

// ncclCommSplit's rendezvous (EMUD_H_COMM_SPLIT). Every rank of the
// parent comm brings its color and key; once all have (a barrier of its
// own, so a rank that never calls is a hang naming the split and how
// many arrived), the ranks of one color form a new comm, ordered by key
// and then by parent rank, and each color gets a unique id of its own,
// in ascending color order, so the ids are the same whichever rank reads
// first. The header then makes the rank's comm with ncclCommInitRank's
// own call on the parent rank's device (include/nccl.h), so a split
// comm's ranks keep their GPUs, which need not be GPUs 0..n-1
// (cco.CommCreateOn). A rank of color NCCL_SPLIT_NOCOLOR (-1) takes part
// and gets no comm. ncclCommShrink is a split of one color, keyed by
// parent rank, that only the ranks not excluded make: a[6] says how many
// take part and a[7] is a digest of the excluded ranks, which every
// caller must give alike.

// splitKey names one split of a parent comm: the seq-th its ranks made.
type splitKey struct {
	uid cco.UniqueId
	seq int
}

// commSplitState is one split's colors and keys by parent rank, and the
// ids of its new comms by color once every rank has arrived.
type commSplitState struct {
	color, key []int64
	uids       map[int64]cco.UniqueId
	want       int    // the ranks taking part
	digest     uint64 // ncclCommShrink's excluded ranks
	first      int    // the rank that arrived first
	bar        hostBarrier
	read       int // the ranks that took their answer: the last deletes it
}

// noColor is NCCL_SPLIT_NOCOLOR.
const noColor = -1

func commSplit(act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	call := "ncclCommSplit"
	if a[6] != 0 {
		call = "ncclCommShrink"
	}
	c, err := commOf(a[0])
	if err != nil {
		return bad(call, 1, err)
	}
	color, key := int64(int32(a[1])), int64(int32(a[2]))
	if color < 0 && color != noColor {
		return bad(call, 1, fmt.Errorf("rank %d: color %d is negative and not NCCL_SPLIT_NOCOLOR (-1)", c.Rank, color))
	}
	want := c.NRanks
	if a[6] != 0 {
		want = int(a[6])
	}
	if want < 1 || want > c.NRanks {
		return bad(call, 1, fmt.Errorf("rank %d: %d of the comm's %d ranks take part", c.Rank, want, c.NRanks))
	}
	uid := rt.commUID[a[0]-1]
	k := splitKey{uid, rt.splitSeq[a[0]]}
	rt.splitSeq[a[0]]++
	sp := rt.splits[k]
	if sp == nil {
		sp = &commSplitState{color: make([]int64, c.NRanks), key: make([]int64, c.NRanks), want: want, digest: a[7], first: c.Rank,
			bar: hostBarrier{wl: rt.s.NewWatchList(call)}}
		for r := range sp.color {
			sp.color[r] = noColor // a rank a shrink excludes is in no comm
		}
		rt.splits[k] = sp
	}
	if sp.want != want || sp.digest != a[7] {
		return bad(call, 1, fmt.Errorf("rank %d's call does not match rank %d's: %d ranks taking part against %d, or other excluded ranks (every rank of one split or shrink passes the same)",
			c.Rank, sp.first, want, sp.want))
	}
	sp.color[c.Rank], sp.key[c.Rank] = color, key
	sp.bar.arrive(act, want, func() string {
		return fmt.Sprintf("%s (rank %d): %d of %d ranks arrived", call, c.Rank, sp.bar.arrived, want)
	})
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
		slices.SortFunc(members, func(x, y int) int { return cmp.Or(cmp.Compare(sp.key[x], sp.key[y]), cmp.Compare(x, y)) })
		a[3] = uint64(sp.uids[color])
		a[4] = uint64(slices.Index(members, c.Rank))
		a[5] = uint64(len(members))
	}
	if sp.read++; sp.read == want {
		delete(rt.splits, k)
	}
	return hipSuccess
}
