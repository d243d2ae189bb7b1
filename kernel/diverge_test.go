package kernel

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The divergence matrix: each shape records, per lane, the mask of every
// wave collective it reaches (ActiveMask, Ballot) or the value it is handed
// (ReadFirstLane), and is checked against what structured SIMT execution
// gives: lanes rejoin at the end of an if/else, at a loop's exit and at a
// function's return. CI runs it under the default flags and under
// -gcflags=all=-N -l; the results must not depend on code layout.

// rec is a per-lane log.
type rec [][]uint64

func (r rec) add(t *Thread, v uint64) { r[t.Lane()] = append(r[t.Lane()], v) }

// lanesWhere is the mask of lanes l < n with f(l).
func lanesWhere(n int, f func(l int) bool) uint64 {
	var m uint64
	for l := 0; l < n; l++ {
		if f(l) {
			m |= 1 << uint(l)
		}
	}
	return m
}

// Helpers called from kernel code: named functions so that the compiler may
// inline them (default flags) or not (-l); the results must be the same.

func earlyReturn(t *Thread, r rec) {
	l := t.Lane()
	r.add(t, t.ActiveMask())
	if l%4 == 0 {
		return
	}
	r.add(t, t.ActiveMask())
	if l%4 == 1 {
		return
	}
	r.add(t, t.ActiveMask())
}

func twoCallers(t *Thread, r rec) {
	if t.Lane()%2 == 0 {
		r.add(t, t.ActiveMask())
	}
	r.add(t, t.ActiveMask())
}

func deviceLoop(t *Thread, r rec, n int) {
	for i := 0; i < n; i++ {
		r.add(t, t.Ballot(true))
	}
}

type divCase struct {
	name  string
	lanes int
	fn    func(t *Thread, r rec)
	want  func(l int) []uint64
}

func divergenceCases() []divCase {
	const W = 64
	full := lanesWhere(W, func(int) bool { return true })
	return []divCase{
		{name: "if/else, low lanes in then", lanes: W,
			fn: func(t *Thread, r rec) {
				if t.Lane() < 20 {
					r.add(t, t.ActiveMask())
				} else {
					r.add(t, t.Ballot(t.Lane()%2 == 0))
				}
				r.add(t, t.ActiveMask())
				r.add(t, t.ReadFirstLane(uint64(t.Lane())+100))
			},
			want: func(l int) []uint64 {
				if l < 20 {
					return []uint64{lanesWhere(W, func(l int) bool { return l < 20 }), full, 100}
				}
				return []uint64{lanesWhere(W, func(l int) bool { return l >= 20 && l%2 == 0 }), full, 100}
			}},
		{name: "if/else, high lanes in then", lanes: W,
			fn: func(t *Thread, r rec) {
				if t.Lane() >= 40 {
					r.add(t, t.ActiveMask())
				} else {
					r.add(t, t.ActiveMask())
					r.add(t, t.ActiveMask())
				}
				r.add(t, t.ReadFirstLane(uint64(t.Lane())+7))
			},
			want: func(l int) []uint64 {
				hi := lanesWhere(W, func(l int) bool { return l >= 40 })
				if l >= 40 {
					return []uint64{hi, 7}
				}
				return []uint64{full &^ hi, full &^ hi, 7}
			}},
		{name: "if without else in a loop, calls on both paths", lanes: W,
			fn: func(t *Thread, r rec) {
				l := t.Lane()
				for i := 0; i < 4; i++ {
					r.add(t, t.ActiveMask())
					if (l+i)%3 == 0 {
						r.add(t, t.ActiveMask())
					}
					r.add(t, t.Ballot(l%4 == i))
				}
				r.add(t, t.ReadFirstLane(uint64(l)))
			},
			want: func(l int) []uint64 {
				var out []uint64
				for i := 0; i < 4; i++ {
					out = append(out, full)
					if (l+i)%3 == 0 {
						out = append(out, lanesWhere(W, func(m int) bool { return (m+i)%3 == 0 }))
					}
					out = append(out, lanesWhere(W, func(m int) bool { return m%4 == i }))
				}
				return append(out, 0)
			}},
		{name: "early loop exit", lanes: W,
			fn: func(t *Thread, r rec) {
				l := t.Lane()
				for i := 0; i < 64; i++ {
					if i == l%8 {
						break
					}
					r.add(t, t.ActiveMask())
				}
				r.add(t, t.Ballot(true))
			},
			want: func(l int) []uint64 {
				var out []uint64
				for i := 0; i < l%8; i++ {
					out = append(out, lanesWhere(W, func(m int) bool { return m%8 > i }))
				}
				return append(out, full)
			}},
		{name: "per-lane trip counts", lanes: W,
			fn: func(t *Thread, r rec) {
				for i := t.Lane(); i < 80; i += 16 {
					r.add(t, t.ActiveMask())
				}
				r.add(t, t.ActiveMask())
			},
			want: func(l int) []uint64 {
				var out []uint64
				for k, i := 0, l; i < 80; k, i = k+1, i+16 {
					out = append(out, lanesWhere(W, func(m int) bool { return m+16*k < 80 }))
				}
				return append(out, full)
			}},
		{name: "nested loops", lanes: W,
			fn: func(t *Thread, r rec) {
				l := t.Lane()
				for i := 0; i < 3; i++ {
					for j := 0; j < (l+i)%4; j++ {
						r.add(t, t.ActiveMask())
					}
					r.add(t, t.ActiveMask())
				}
				r.add(t, t.ReadFirstLane(uint64(l)+1))
			},
			want: func(l int) []uint64 {
				var out []uint64
				for i := 0; i < 3; i++ {
					for j := 0; j < (l+i)%4; j++ {
						out = append(out, lanesWhere(W, func(m int) bool { return (m+i)%4 > j }))
					}
					out = append(out, full)
				}
				return append(out, 1)
			}},
		{name: "early return from a helper", lanes: W,
			fn: func(t *Thread, r rec) {
				earlyReturn(t, r)
				r.add(t, t.Ballot(t.Lane()%2 == 1))
			},
			want: func(l int) []uint64 {
				out := []uint64{full}
				if l%4 != 0 {
					out = append(out, lanesWhere(W, func(m int) bool { return m%4 != 0 }))
				}
				if l%4 > 1 {
					out = append(out, lanesWhere(W, func(m int) bool { return m%4 > 1 }))
				}
				return append(out, lanesWhere(W, func(m int) bool { return m%2 == 1 }))
			}},
		{name: "switch", lanes: W,
			fn: func(t *Thread, r rec) {
				switch t.Lane() % 3 {
				case 0:
					r.add(t, t.ActiveMask())
				case 1:
					r.add(t, t.ActiveMask())
					r.add(t, t.Ballot(t.Lane() < 32))
				default:
					r.add(t, t.MatchAny(uint64(t.Lane()%2)))
				}
				r.add(t, t.ActiveMask())
			},
			want: func(l int) []uint64 {
				c := func(k int) uint64 { return lanesWhere(W, func(m int) bool { return m%3 == k }) }
				switch l % 3 {
				case 0:
					return []uint64{c(0), full}
				case 1:
					return []uint64{c(1), c(1) & lanesWhere(W, func(m int) bool { return m < 32 }), full}
				}
				return []uint64{c(2) & lanesWhere(W, func(m int) bool { return m%2 == l%2 }), full}
			}},
		{name: "divergence in a function called from two places", lanes: W,
			fn: func(t *Thread, r rec) {
				if t.Lane() < 24 {
					twoCallers(t, r)
				} else {
					r.add(t, t.ActiveMask())
					twoCallers(t, r)
				}
				r.add(t, t.ActiveMask())
			},
			want: func(l int) []uint64 {
				lo := lanesWhere(W, func(m int) bool { return m < 24 })
				even := lanesWhere(W, func(m int) bool { return m%2 == 0 })
				side := lo
				var out []uint64
				if l >= 24 {
					side = full &^ lo
					out = append(out, side)
				}
				if l%2 == 0 {
					out = append(out, side&even)
				}
				return append(out, side, full)
			}},
		{name: "loop around a helper with its own loop", lanes: W,
			fn: func(t *Thread, r rec) {
				for i := 0; i < 3; i++ {
					if t.Lane() >= 8*i {
						deviceLoop(t, r, 1+t.Lane()%2)
					}
					r.add(t, t.ActiveMask())
				}
			},
			want: func(l int) []uint64 {
				var out []uint64
				for i := 0; i < 3; i++ {
					if l >= 8*i {
						for k := 0; k < 1+l%2; k++ {
							out = append(out, lanesWhere(W, func(m int) bool { return m >= 8*i && 1+m%2 > k }))
						}
					}
					out = append(out, full)
				}
				return out
			}},
		{name: "loop exit through a call", lanes: W,
			fn: func(t *Thread, r rec) {
				l := t.Lane()
				for i := 0; ; i++ {
					if i >= l%4 {
						r.add(t, t.ActiveMask())
						break
					}
					r.add(t, t.ActiveMask())
				}
				r.add(t, t.ActiveMask())
			},
			want: func(l int) []uint64 {
				var out []uint64
				for i := 0; i < l%4; i++ {
					out = append(out, lanesWhere(W, func(m int) bool { return m%4 > i }))
				}
				out = append(out, lanesWhere(W, func(m int) bool { return m%4 == l%4 }))
				return append(out, full)
			}},
		{name: "inner loop behind an if", lanes: W,
			fn: func(t *Thread, r rec) {
				for i := 0; i < 2; i++ {
					if t.Lane() < 24 {
						for j := 0; j < 2; j++ {
							r.add(t, t.ActiveMask())
						}
					}
					r.add(t, t.ActiveMask())
				}
			},
			want: func(l int) []uint64 {
				lo := lanesWhere(W, func(m int) bool { return m < 24 })
				var out []uint64
				for i := 0; i < 2; i++ {
					if l < 24 {
						out = append(out, lo, lo)
					}
					out = append(out, full)
				}
				return out
			}},
		{name: "wave of 32: lanes that returned early do not take part", lanes: 32,
			fn: func(t *Thread, r rec) {
				if t.Lane() == 5 {
					return
				}
				r.add(t, t.ActiveMask())
			},
			want: func(l int) []uint64 {
				if l == 5 {
					return nil
				}
				return []uint64{lanesWhere(32, func(m int) bool { return m != 5 })}
			}},
	}
}

func TestDivergenceMatrix(t *testing.T) {
	for _, tc := range divergenceCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := make(rec, tc.lanes)
			ws := tc.lanes
			_, err := run(t, 5, Config{Grid: 1, Block: tc.lanes, WaveSize: ws}, func(th *Thread) { tc.fn(th, r) })
			require.NoError(t, err)
			for l := 0; l < tc.lanes; l++ {
				assert.Equal(t, hexes(tc.want(l)), hexes(r[l]), "lane %d", l)
			}
		})
	}
}

func hexes(v []uint64) string {
	var sb strings.Builder
	for _, x := range v {
		fmt.Fprintf(&sb, "%#x ", x)
	}
	return sb.String()
}

// ConvergeIf: inactive lanes park with the group and resume after the
// call has run, which sees only the active lanes; a group with no active
// lane does not run the call.
func TestConvergeIf(t *testing.T) {
	var runs []uint64
	var got [][]int
	probe := &Call[int]{Name: "probe", Run: func(g *Active, args []int) error {
		runs = append(runs, g.Mask())
		got = append(got, slices.Clone(args))
		return nil
	}}
	after := make([]uint64, 64)
	_, err := run(t, 1, Config{Grid: 1, Block: 64}, func(th *Thread) {
		ConvergeIf(th, probe, 100+th.Lane(), th.Lane() == 0)
		if th.Lane() >= 32 {
			ConvergeIf(th, probe, 200+th.Lane(), false)
		}
		after[th.Lane()] = th.ActiveMask()
	})
	require.NoError(t, err)
	assert.Equal(t, []uint64{1}, runs, "one run, lane 0 only; the all-inactive group runs nothing")
	assert.Equal(t, [][]int{{100}}, got, "Run gets the active lanes' arguments only")
	for l := range after {
		assert.Equal(t, ^uint64(0), after[l], "lane %d", l)
	}
}

// A hang report names each parked group with its lanes and source
// position.
func TestHangReportNamesGroupsAndPositions(t *testing.T) {
	block := &Call[None]{Name: "block", Run: func(g *Active, _ []None) error {
		g.Actor().Await(sim.Wait{List: g.Actor().Sim().NewWatchList("never"), Pred: func() bool { return false }, What: "a flag nobody sets"})
		return nil
	}}
	_, err := run(t, 1, Config{Grid: 1, Block: 64}, func(th *Thread) {
		if th.Lane() < 4 {
			Converge(th, block, None{})
		}
		th.SyncWarp()
	})
	var he *sim.HangError
	require.ErrorAs(t, err, &he)
	msg := he.Text()
	assert.Regexp(t, `block by lanes 0-3 at diverge_test\.go:\d+`, msg)
	assert.Regexp(t, `lanes 4-63 parked at syncwarp \(diverge_test\.go:\d+\)`, msg)
}

// The same kernel gives the same results whichever way Go lays out its
// code: pinned by running the matrix under -gcflags=all=-N -l in CI. Here,
// the order of points within one line and across files is checked to be
// independent of return addresses: a site's key is its logical frames.
func TestSiteIsLogical(t *testing.T) {
	var sites [2]*site
	_, err := run(t, 1, Config{Grid: 1, Block: 2}, func(th *Thread) {
		th.SyncWarp()
		sites[th.Lane()] = th.site
	})
	require.NoError(t, err)
	require.NotNil(t, sites[0])
	assert.Same(t, sites[0], sites[1])
	fr := sites[0].frames
	require.NotEmpty(t, fr)
	assert.Contains(t, fr[0].fn, "TestSiteIsLogical")
	assert.Equal(t, "SyncWarp", fr[len(fr)-1].fn[strings.LastIndex(fr[len(fr)-1].fn, ".")+1:])
}
