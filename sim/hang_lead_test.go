package sim

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func texts(cs []Cause) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestAddLeadCause(t *testing.T) {
	h := &HangError{}
	h.AddCause(Because("generic"))
	h.AddCause(Because("other"))
	h.AddLeadCause(Because("specific"))
	h.AddLeadCause(Because("other")) // moves, never duplicates
	assert.Equal(t, []string{"other", "specific", "generic"}, texts(h.Causes))
	h.AddLeadCauses(Because("first"), Because("generic"), Because("second"))
	assert.Equal(t, []string{"first", "generic", "second", "other", "specific"}, texts(h.Causes))
}

// Causes that differ only in their ranks are said once, for every rank.
func TestCausesMergeRanks(t *testing.T) {
	h := &HangError{}
	for _, r := range []int{5, 0, 2, 1, 7, 6, 3} {
		h.AddCause(Cause{Kind: "signal-short", Ranks: []int{r}, Row: `failure mode "x"`, Text: "for slot 3"})
	}
	h.AddLeadCause(Cause{Kind: "signal-short", Ranks: []int{9}, Text: "for slot 4"})
	require.Len(t, h.Causes, 2)
	assert.Equal(t, "rank 9 waits for slot 4", h.Causes[0].String())
	assert.Equal(t, []int{0, 1, 2, 3, 5, 6, 7}, h.Causes[1].Ranks)
	assert.Equal(t, `ranks 0–3, 5–7 each wait for slot 3 (failure mode "x")`, h.Causes[1].String())
	b, err := json.Marshal(h.Causes[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"signal-short","ranks":[9],"text":"for slot 4","said":"rank 9 waits for slot 4"}`, string(b))
	assert.Same(t, &h.Causes[0], h.Find("signal-short", ""), "the first of its kind")
	assert.Nil(t, h.Find("ring-full", ""))
}

func TestLocalAndAtEnd(t *testing.T) {
	s := New(Config{Seed: 1})
	type key struct{}
	made := 0
	mk := func() any { made++; return &made }
	a := s.Local(key{}, mk)
	b := s.Local(key{}, mk)
	assert.Same(t, a, b)
	assert.Equal(t, 1, made)
	var order []string
	s.Spawn("x", func(a *Actor) { order = append(order, "actor") })
	s.AtEnd(func() { order = append(order, "end") })
	assert.NoError(t, s.Run())
	assert.Equal(t, []string{"actor", "end"}, order)
}

func TestWho(t *testing.T) {
	for _, tc := range []struct {
		ranks []int
		want  string
	}{
		{nil, "a rank waits"},
		{[]int{3}, "rank 3 waits"},
		{[]int{2, 0, 1, 3}, "ranks 0–3 each wait"},
		{[]int{0, 2, 4, 5, 6}, "ranks 0, 2, 4–6 each wait"},
	} {
		assert.Equal(t, tc.want, Who(tc.ranks), "%v", tc.ranks)
	}
}
