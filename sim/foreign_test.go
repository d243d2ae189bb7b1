package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestForeignTurns: an actor whose turns another goroutine takes (as
// package capi's host threads do from their C threads) runs the same as
// one that does its work on its own goroutine: the same end time, the
// same order of events and the same digest.
func TestForeignTurns(t *testing.T) {
	run := func(foreign bool) (Time, []string, string) {
		s := New(Config{Seed: 7})
		wl := s.NewWatchList("flag")
		flag := false
		var log []string
		work := func(a *Actor) {
			log = append(log, "host starts")
			a.Sleep(3 * Nanosecond)
			log = append(log, "host slept")
			a.Await(Wait{List: wl, Lo: 0, Hi: 1, Pred: func() bool { return flag }, What: "flag"})
			log = append(log, "host saw the flag")
			a.Yield()
		}
		s.Spawn("setter", func(a *Actor) {
			a.Sleep(5 * Nanosecond)
			flag = true
			log = append(log, "flag set")
			wl.Notify(0, 1)
		})
		if !foreign {
			s.Spawn("host", work)
		} else {
			turn, back := make(chan struct{}), make(chan struct{})
			h := s.Spawn("host", func(*Actor) {
				turn <- struct{}{}
				<-back
			})
			h.SetForeign()
			done := make(chan struct{})
			go func() { // the "C thread": takes the turn, works, gives it back
				defer close(done)
				<-turn
				work(h)
				back <- struct{}{}
			}()
			defer func() { <-done }()
		}
		require.NoError(t, s.Run())
		return s.Now(), log, s.Digest()
	}
	end, log, digest := run(false)
	fEnd, fLog, fDigest := run(true)
	assert.Equal(t, 5*Nanosecond, end)
	assert.Equal(t, []string{"host starts", "host slept", "flag set", "host saw the flag"}, log)
	assert.Equal(t, end, fEnd)
	assert.Equal(t, log, fLog)
	assert.Equal(t, digest, fDigest)
}

// TestFrozenHang: while a foreign actor's thread holds its turn and runs
// its own code (here: blocks on a channel, as a spinning C++ lane would
// run), another goroutine's FrozenHang reports it first, with its cause,
// and what every other actor waits for; the run itself is untouched and
// ends when the thread gives the turn back.
func TestFrozenHang(t *testing.T) {
	s := New(Config{Seed: 3})
	wl := s.NewWatchList("flag")
	flag := false
	s.Spawn("waiter", func(a *Actor) {
		a.Await(Wait{List: wl, Lo: 0, Hi: 1, Pred: func() bool { return flag }, What: "the flag"})
	})
	turn, back := make(chan struct{}), make(chan struct{})
	h := s.Spawn("lane 3", func(*Actor) {
		turn <- struct{}{}
		<-back
	})
	h.SetForeign()
	spinning, report := make(chan struct{}), make(chan *HangError)
	go func() {
		<-turn
		h.Sleep(2 * Nanosecond)
		close(spinning) // the thread now runs its own code, holding the turn
		<-report
		flag = true
		wl.Notify(0, 1)
		back <- struct{}{}
	}()
	ran := make(chan error)
	go func() { ran <- s.Run() }()
	<-spinning
	hang := s.FrozenHang(Waiter{Kind: "spinner", Name: "lane 3", State: "spinning", Since: s.Now(), WaitsFor: "nothing: its own code"},
		Because("lane 3 never calls into the emulation"))
	report <- hang
	require.NoError(t, <-ran)
	assert.Equal(t, HangSpin, hang.Kind)
	assert.Equal(t, 2*Nanosecond, hang.At)
	require.Len(t, hang.Waiters, 2)
	assert.Equal(t, "lane 3", hang.Waiters[0].Name)
	assert.Equal(t, "waiter", hang.Waiters[1].Name)
	require.NotEmpty(t, hang.Causes)
	assert.Equal(t, "lane 3 never calls into the emulation", hang.Causes[0].Text)
	text := hang.Text()
	assert.Contains(t, text, "hang (spin) at 2ns, seed 3: the running actor's own code never gave its turn back; 2 waiting")
	assert.Contains(t, text, "spinners (1):\n  lane 3 [spinning since 2ns]: nothing: its own code\n")
	assert.Contains(t, text, "blocked actors (1):\n  waiter [waiting since 0ps]: the flag\n")
}

// TestWatchdogLongTimedWait: a timed wait longer than the watchdog's span
// is not a hang while it runs, and its expiry is progress once; a second
// one right after, with no progress between, is the watchdog hang, and so
// is a loop of short timed waits (the span is unchanged for them).
func TestWatchdogLongTimedWait(t *testing.T) {
	for _, c := range []struct {
		name    string
		waits   []Time
		hang    bool
		endOrAt Time
	}{
		{"one long wait", []Time{300 * Millisecond}, false, 300 * Millisecond},
		{"two long waits", []Time{300 * Millisecond, 300 * Millisecond}, true, 400 * Millisecond},
		{"short waits", []Time{40 * Millisecond, 40 * Millisecond, 40 * Millisecond, 40 * Millisecond}, true, 100 * Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(Config{Seed: 1})
			wl := s.NewWatchList("flag")
			s.Spawn("waiter", func(a *Actor) {
				for _, d := range c.waits {
					ok := a.AwaitTimeout(Wait{List: wl, Lo: 0, Hi: 1, Pred: func() bool { return false }, What: "a flag nobody sets"}, d)
					assert.False(t, ok)
				}
			})
			err := s.Run()
			if !c.hang {
				require.NoError(t, err)
				assert.Equal(t, c.endOrAt, s.Now())
				return
			}
			var h *HangError
			require.ErrorAs(t, err, &h)
			assert.Equal(t, HangWatchdog, h.Kind)
			assert.Equal(t, c.endOrAt, h.At)
		})
	}
}

// TestOutsideHang: a quiescent run whose last actor waits for a call made
// outside the simulation is reported with that call first, as an
// "outside" hang, with the blocked actors after it.
func TestOutsideHang(t *testing.T) {
	s := New(Config{Seed: 4})
	wl := s.NewWatchList("flag")
	s.Spawn("waiter", func(a *Actor) {
		a.Await(Wait{List: wl, Lo: 0, Hi: 1, Pred: func() bool { return false }, What: "the flag"})
	})
	var hang *HangError
	s.Spawn("rank 1", func(a *Actor) {
		a.Sleep(3 * Nanosecond)
		hang = s.OutsideHang([]Waiter{{Kind: "rank", Name: "rank 1", State: "outside", Since: a.Now(), WaitsFor: "its MPI_Recv to return"}},
			Because("MPI_Recv never returned"))
	})
	require.Error(t, s.Run(), "the waiter still waits when the run ends")
	require.NotNil(t, hang)
	assert.Equal(t, HangOutside, hang.Kind)
	assert.Equal(t, 3*Nanosecond, hang.At)
	require.Len(t, hang.Waiters, 2)
	assert.Equal(t, "rank 1", hang.Waiters[0].Name)
	assert.Equal(t, "waiter", hang.Waiters[1].Name)
	require.NotEmpty(t, hang.Causes)
	assert.Equal(t, "MPI_Recv never returned", hang.Causes[0].Text)
	text := hang.Text()
	assert.Contains(t, text, "hang (outside) at 3ns, seed 4: no actor can run, no event is pending, and the calls outside the simulation never returned; 2 waiting")
	assert.Contains(t, text, "ranks (1):\n  rank 1 [outside since 3ns]: its MPI_Recv to return\n")
	assert.Contains(t, text, "blocked actors (1):\n  waiter [waiting since 0ps]: the flag\n")
}

// TestLastRelease: a quiescent point says how many actors it released
// from AwaitUnlessQuiescent; one released with another knows it was not
// alone.
func TestLastRelease(t *testing.T) {
	s := New(Config{Seed: 5})
	wl := s.NewWatchList("words")
	var seen []int
	for _, name := range []string{"a", "b"} {
		s.Spawn(name, func(a *Actor) {
			ok := a.AwaitUnlessQuiescent(Wait{List: wl, Lo: 0, Hi: 1, Pred: func() bool { return false }, What: "a word"})
			assert.False(t, ok, "released, not satisfied")
			seen = append(seen, s.LastRelease())
			if a.Name() == "a" {
				a.AwaitUnlessQuiescent(Wait{List: wl, Lo: 0, Hi: 1, Pred: func() bool { return false }, What: "a word"})
				seen = append(seen, s.LastRelease())
			}
		})
	}
	require.NoError(t, s.Run())
	assert.Equal(t, []int{2, 2, 1}, seen, "both released at the first quiescent point, a alone at the second")
}
