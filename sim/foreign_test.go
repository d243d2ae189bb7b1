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
