package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAddLeadCause(t *testing.T) {
	h := &HangError{}
	h.AddCause("generic")
	h.AddCause("other")
	h.AddLeadCause("specific")
	h.AddLeadCause("other") // moves, never duplicates
	assert.Equal(t, []string{"other", "specific", "generic"}, h.Causes)
	h.AddLeadCauses("first", "generic", "second")
	assert.Equal(t, []string{"first", "generic", "second", "other", "specific"}, h.Causes)
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
