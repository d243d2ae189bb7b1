package trace

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// track.normalize makes a track's slices nest or be disjoint and marks
// which of them a flow can bind to; each row gives slices as start-end in
// ns and the result as name:start-end with "*" for a flow target and "i"
// for a zero-length slice drawn as an instant.
func TestTrackNormalize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slices [][2]ns
		want   []string
		cut    int
	}{
		{"sequential, touching", [][2]ns{{0, 5}, {5, 9}, {9, 9}, {12, 20}},
			[]string{"s0:0-5*", "s1:5-9*", "s2:9-9*", "s3:12-20*"}, 0},
		{"sorted by start, longer first", [][2]ns{{3, 4}, {0, 10}},
			[]string{"s1:0-10*", "s0:3-4*"}, 0},
		{"a child ending with its parent", [][2]ns{{0, 10}, {4, 10}},
			[]string{"s0:0-10*", "s1:4-10*"}, 0},
		{"an overlap is cut at the enclosing end", [][2]ns{{0, 10}, {5, 15}},
			[]string{"s0:0-10*", "s1:5-10*"}, 1},
		{"zero-length after a longer one at its start", [][2]ns{{5, 5}, {5, 9}},
			[]string{"s1:5-9*", "s0:5-5i"}, 0},
		{"two zero-length at one time", [][2]ns{{5, 5}, {5, 5}},
			[]string{"s0:5-5*", "s1:5-5"}, 0},
		{"two with length at one start: no target", [][2]ns{{5, 9}, {5, 7}},
			[]string{"s0:5-9", "s1:5-7"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &track{}
			for i, s := range tc.slices {
				tr.add(&slice{name: fmt.Sprintf("s%d", i), start: s[0], end: s[1], args: map[string]any{}})
			}
			assert.Equal(t, tc.cut, tr.normalize())
			var got []string
			for _, s := range tr.slices {
				mark := ""
				if s.target {
					mark = "*"
				}
				if s.instant {
					mark += "i"
				}
				got = append(got, fmt.Sprintf("%s:%d-%d%s", s.name, s.start, s.end, mark))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
