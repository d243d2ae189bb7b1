package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWatchListRanges(t *testing.T) {
	for _, tc := range []struct {
		name           string
		wlo, whi       uint64 // watched
		nlo, nhi       uint64 // written
		fires          bool
		wantWatchesAft int
	}{
		{"same word", 0x1000, 0x1008, 0x1000, 0x1008, true, 0},
		{"overlap low", 0x1000, 0x1008, 0x0ff8, 0x1001, true, 0},
		{"adjacent below", 0x1000, 0x1008, 0x0ff8, 0x1000, false, 1},
		{"adjacent above", 0x1000, 0x1008, 0x1008, 0x1010, false, 1},
		{"other page", 0x1000, 0x1008, 0x5000, 0x5008, false, 1},
		{"straddles pages", 0x1ffc, 0x2004, 0x2000, 0x2001, true, 0},
		{"wide watch", 0x1000, 0x9000, 0x8000, 0x8004, true, 0},
		{"wide write", 0x3000, 0x3008, 0x0, 0x100000, true, 0},
		{"empty write", 0x1000, 0x1008, 0x1004, 0x1004, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Seed: 1})
			wl := s.NewWatchList("m")
			fired := false
			wl.Watch(tc.wlo, tc.whi, func() bool { return true }, func() { fired = true })
			// A decoy on another page keeps the page map non-trivial.
			wl.Watch(0x7770000, 0x7770008, func() bool { return true }, func() {})
			wl.Notify(tc.nlo, tc.nhi)
			require.NoError(t, s.Run())
			assert.Equal(t, tc.fires, fired)
			assert.Equal(t, tc.wantWatchesAft+1, wl.Len())
		})
	}
}

// wideWake registers 50 watches scattered over pages, satisfies them all
// with one wide write and returns the order their callbacks ran in.
func wideWake(t *testing.T, seed uint64) []int {
	s := New(Config{Seed: seed})
	wl := s.NewWatchList("m")
	var order []int
	for i := range 50 {
		p := uint64((i * 7919) % 97)
		wl.Watch(p<<12, p<<12+8, func() bool { return true }, func() { order = append(order, i) })
	}
	wl.Notify(0, 1<<30)
	require.NoError(t, s.Run())
	return order
}

// Watches live in a map of pages, whose iteration order is random; the
// wake order must still depend on the seed alone.
func TestWatchWakeOrderDependsOnlyOnSeed(t *testing.T) {
	order := wideWake(t, 1)
	require.Len(t, order, 50)
	for range 5 {
		assert.Equal(t, order, wideWake(t, 1))
	}
}

func TestCancelledWatchesDoNotAccumulate(t *testing.T) {
	s := New(Config{Seed: 1})
	wl := s.NewWatchList("m")
	for range 1000 {
		h := wl.Watch(0x1000, 0x1008, func() bool { return true }, func() {})
		h.Cancel()
		h.Cancel()
	}
	assert.Equal(t, 0, wl.Len())
	assert.LessOrEqual(t, len(wl.pages[1]), 1, "cancelled watches are compacted away")
	s.Spawn("w", func(a *Actor) {
		for range 100 {
			a.AwaitTimeout(Wait{List: wl, Lo: 0x1000, Hi: 0x1008, Pred: func() bool { return false }, What: "x"}, Nanosecond)
		}
	})
	require.NoError(t, s.Run())
	assert.Equal(t, 0, wl.Len())
	assert.LessOrEqual(t, len(wl.pages[1]), 1)
}

// BenchmarkNotifyManyWaiters: 4096 actors' worth of watches on distinct
// signal slots; each write wakes nobody but must not scan them all.
func BenchmarkNotifyManyWaiters(b *testing.B) {
	s := New(Config{Seed: 1})
	wl := s.NewWatchList("m")
	for i := range uint64(4096) {
		wl.Watch(i*64, i*64+8, func() bool { return false }, func() {})
	}
	b.ResetTimer()
	for i := range b.N {
		a := uint64(1<<30) + uint64(i%512)*4096
		wl.Notify(a, a+64)
	}
}
