package issuer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

type who string

func (w who) Who() string               { return string(w) }
func (w who) AppendWho(b []byte) []byte { return append(b, w...) }

// Labels come back for the packet the engine starts, posted in ring order
// or not, the last label of a unit winning; a label is taken once, and
// one the engine passed without asking for is dropped.
func TestPosterLabels(t *testing.T) {
	type post struct {
		at  uint64
		who string
	}
	type start struct {
		pos, end uint64
		want     string // "" for nil
	}
	cases := []struct {
		name   string
		posts  []post
		starts []start
	}{
		{"in order", []post{{0, "a"}, {32, "b"}, {64, "c"}},
			[]start{{0, 32, "a"}, {32, 64, "b"}, {64, 96, "c"}, {96, 128, ""}}},
		{"posted out of order", []post{{64, "c"}, {0, "a"}, {32, "b"}},
			[]start{{0, 32, "a"}, {32, 64, "b"}, {64, 96, "c"}}},
		{"relabelled", []post{{0, "a"}, {0, "b"}}, []start{{0, 32, "b"}}},
		{"a unit's label taken once", []post{{0, "a"}}, []start{{0, 32, "a"}, {0, 32, ""}}},
		{"a longer packet takes its last unit's label", []post{{0, "a"}, {32, "b"}, {64, "c"}},
			[]start{{0, 64, "b"}, {64, 96, "c"}}},
		{"a label the engine passed is dropped", []post{{0, "a"}, {32, "b"}}, []start{{32, 64, "b"}, {0, 32, ""}}},
		{"a label within a unit counts for the unit", []post{{40, "a"}}, []start{{32, 64, "a"}}},
		{"no labels", nil, []start{{0, 32, ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, p, q, _ := newQueue(t, 4096)
			for _, ps := range tc.posts {
				q.Posted(ps.at, who(ps.who))
			}
			for _, st := range tc.starts {
				got := p.be.Poster(st.pos, st.end)
				if st.want == "" {
					assert.Nil(t, got, "start [%d, %d)", st.pos, st.end)
					continue
				}
				if assert.NotNil(t, got, "start [%d, %d)", st.pos, st.end) {
					assert.Equal(t, st.want, got.Who(), "start [%d, %d)", st.pos, st.end)
				}
			}
		})
	}
}

// Many labels in flight stay in order while the engine keeps up.
func TestPosterLabelsLongRun(t *testing.T) {
	_, p, q, _ := newQueue(t, 4096)
	names := []who{"a", "b", "c"}
	for i := uint64(0); i < 1000; i++ {
		q.Posted(32*(i+3), names[(i+3)%3]) // three packets ahead of the engine
		got := p.be.Poster(32*i, 32*(i+1))
		if i < 3 {
			assert.Nil(t, got)
			continue
		}
		if assert.NotNil(t, got, "packet %d", i) {
			assert.Equal(t, names[i%3].Who(), got.Who())
		}
	}
}
