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

// TestWatchRecycling: an actor's watch, its page list and the list's page
// map go back to the run's free store once nothing holds them (fired and
// its await over; timed out and dropped by a later sweep; a watch on two
// pages once both pages dropped it), and the next runs on the Scratch
// wait and wake as on fresh memory: the same wake order and times, with
// a late Cancel of a fired callback watch harmless.
func TestWatchRecycling(t *testing.T) {
	run := func(sc *Scratch) (log []string, s *Sim) {
		s = New(Config{Seed: 3, Scratch: sc})
		l := s.NewWatchList("m")
		var x [3]uint64
		note := func(a *Actor, what string) { log = append(log, a.Name()+" "+what+" at "+s.Now().String()) }
		for i := range 3 {
			s.Spawn(string(rune('a'+i)), func(a *Actor) {
				for round := uint64(1); round <= 4; round++ {
					lo := uint64(i)*0x1000 + 0xffc // across two pages
					ok := a.AwaitTimeout(Wait{List: l, Lo: lo, Hi: lo + 8, Pred: func() bool { return x[i] >= round }, What: "x"},
						Time(i+1)*Microsecond)
					note(a, map[bool]string{true: "woke", false: "timed out"}[ok])
				}
			})
		}
		h := l.Watch(0x1000, 0x1008, func() bool { return x[0] >= 1 }, func() { log = append(log, "callback at "+s.Now().String()) })
		for k := range 6 {
			s.At(Time(k+1)*700*Nanosecond, func() {
				i := k % 3
				x[i]++
				l.Notify(uint64(i)*0x1000+0xffc, uint64(i)*0x1000+0x1004)
				h.Cancel() // late, after it fired: must not touch a recycled watch
			})
		}
		// A last write over everything sweeps the dead watches out: the
		// pages and the map empty.
		end := false
		s.SpawnAfter(50*Microsecond, "z", func(a *Actor) {
			a.Await(Wait{List: l, Lo: 0xff0, Hi: 0x1010, Pred: func() bool { return end }, What: "end"})
			note(a, "woke")
		})
		s.At(100*Microsecond, func() { end = true; l.Notify(0, 1<<20) })
		require.NoError(t, s.Run())
		return log, s
	}
	want, _ := run(nil)
	require.Len(t, want, 14, "12 waits, the callback and the end")
	sc := NewScratch()
	for r := range 3 {
		got, _ := run(sc)
		assert.Equal(t, want, got, "run %d on the Scratch", r)
	}
	assert.NotEmpty(t, sc.freeWatches, "watches kept")
	assert.NotEmpty(t, sc.freeLists, "page lists kept")
	assert.NotEmpty(t, sc.freeMaps, "page maps kept")
	for _, w := range sc.freeWatches {
		assert.Equal(t, watch{}, *w, "a free watch holds nothing")
	}
	for _, ws := range sc.freeLists {
		assert.Empty(t, ws)
	}
	for _, m := range sc.freeMaps {
		assert.Empty(t, m)
	}
}
