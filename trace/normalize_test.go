package trace

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// track.layout puts a track's slices on lanes where they nest or are
// disjoint and start at distinct times; each row gives slices as start-end
// in ns (a third number: the index of the slice's parent) and the result
// as name:start-end@lane.
func TestTrackLayout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slices [][]ns
		want   []string
	}{
		{"sequential, touching", [][]ns{{0, 5}, {5, 9}, {9, 9}, {12, 20}},
			[]string{"s0:0-5@0", "s1:5-9@0", "s2:9-9@0", "s3:12-20@0"}},
		{"sorted by start, longer first", [][]ns{{3, 4}, {0, 10}},
			[]string{"s1:0-10@0", "s0:3-4@0"}},
		{"a child ending with its parent", [][]ns{{0, 10}, {4, 10}},
			[]string{"s0:0-10@0", "s1:4-10@0"}},
		{"an overlap goes to an overflow lane", [][]ns{{0, 10}, {5, 15}, {12, 13}},
			[]string{"s0:0-10@0", "s1:5-15@1", "s2:12-13@0"}},
		{"zero-length at a longer one's start", [][]ns{{5, 5}, {5, 9}},
			[]string{"s1:5-9@0", "s0:5-5@1"}},
		{"three zero-length at one time", [][]ns{{5, 5}, {5, 5}, {5, 5}, {6, 7}},
			[]string{"s0:5-5@0", "s1:5-5@1", "s2:5-5@2", "s3:6-7@0"}},
		{"a child follows its parent to its lane", [][]ns{{5, 5}, {5, 9}, {5, 8}, {6, 8, 2}},
			[]string{"s1:5-9@0", "s2:5-8@1", "s0:5-5@2", "s3:6-8@1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &track{pid: 1, tid: 100001, name: "q"}
			var all []*slice
			for i, s := range tc.slices {
				sl := &slice{name: fmt.Sprintf("s%d", i), start: s[0], end: s[1], args: map[string]any{}}
				if len(s) > 2 {
					sl.parent = all[s[2]]
				}
				all = append(all, tr.add(sl))
			}
			next := 100
			tr.layout(func(int) int { next++; return next })
			lanes := map[*lane]int{}
			for i, l := range tr.lanes {
				lanes[l] = i
				if i > 0 {
					assert.Equal(t, fmt.Sprintf("q (+%d)", i), l.name)
					assert.Equal(t, 100+i, l.tid)
				}
			}
			var got []string
			for _, s := range tr.slices {
				got = append(got, fmt.Sprintf("%s:%d-%d@%d", s.name, s.start, s.end, lanes[s.lane]))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
