package sim

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chanTurnstile is a Turnstile in Go, for tests: a wake is a token in a
// channel of one (kept until the wait takes it). It counts the turns
// passed to it, so a test can tell that a run took the turnstiles' path.
type chanTurnstile struct {
	c      chan struct{}
	passes *atomic.Int64
}

func newChanTurnstile(passes *atomic.Int64) *chanTurnstile {
	return &chanTurnstile{c: make(chan struct{}, 1), passes: passes}
}

func (t *chanTurnstile) Wake() {
	select {
	case t.c <- struct{}{}:
	default:
	}
}

func (t *chanTurnstile) wait() { <-t.c }

func (t *chanTurnstile) Pass(to Turnstile) {
	t.passes.Add(1)
	to.Wake()
	t.wait()
}

// TestTurnstiles: host threads (goroutines standing for C threads, as in
// TestForeignTurns) that wait for their turns on turnstiles run as they
// do with channels, and as goroutine actors do: the same log, end time
// and digest on every seed. With the gate, turns pass between threads
// and through the gate; without it, only a thread's first turn comes on
// its turnstile. Threads hand turns to each other (a counter they
// take in turn), to lanes' goroutines (a flag a goroutine actor sets)
// and back.
func TestTurnstiles(t *testing.T) {
	type result struct {
		end    Time
		log    []string
		digest string
	}
	const hosts = 4
	run := func(seed uint64, mode string, passes, gated *atomic.Int64) result {
		s := New(Config{Seed: seed, Perturb: 1})
		if mode == "gate" {
			s.SetGate(newChanTurnstile(gated))
		}
		wl := s.NewWatchList("words")
		turn, flag := 0, make([]bool, hosts)
		var log []string
		work := func(i int, a *Actor) {
			for round := range 3 {
				// The threads take a counter in turn: thread to thread.
				a.Await(Wait{List: wl, Lo: 0, Hi: 1, Pred: func() bool { return turn%hosts == i }, What: "my turn"})
				log = append(log, fmt.Sprintf("host %d round %d at %v", i, round, a.Now()))
				turn++
				wl.Notify(0, 1)
				// A lane's goroutine sets this thread's flag later: thread
				// to goroutine and back.
				s.Spawn(fmt.Sprintf("lane %d.%d", i, round), func(l *Actor) {
					l.Sleep(Time(1+i) * Nanosecond)
					flag[i] = true
					log = append(log, fmt.Sprintf("lane %d.%d sets the flag at %v", i, round, l.Now()))
					wl.Notify(1, 2)
				})
				a.Await(Wait{List: wl, Lo: 1, Hi: 2, Pred: func() bool { return flag[i] }, What: "my flag"})
				flag[i] = false
				a.Yield()
			}
		}
		var done []chan struct{}
		for i := range hosts {
			if mode == "goroutine" {
				s.Spawn(fmt.Sprintf("host %d", i), func(a *Actor) { work(i, a) })
				continue
			}
			back := make(chan struct{})
			var h *Actor
			ts := newChanTurnstile(passes)
			h = s.Spawn(fmt.Sprintf("host %d", i), func(*Actor) {
				if mode == "channels" {
					ts.Wake()
				} else {
					h.EnterThread()
				}
				<-back
			})
			h.SetForeign()
			if mode != "channels" {
				h.SetTurnstile(ts)
			}
			d := make(chan struct{})
			done = append(done, d)
			go func() { // the thread: its first turn, its work, its last turn back
				defer close(d)
				ts.wait()
				work(i, h)
				h.LeaveThread(func() { back <- struct{}{} })
			}()
		}
		require.NoError(t, s.Run())
		for _, d := range done {
			<-d
		}
		return result{s.Now(), log, s.Digest()}
	}
	for _, seed := range []uint64{1, 2, 3} {
		want := run(seed, "goroutine", nil, nil)
		require.Len(t, want.log, 2*3*hosts)
		for _, mode := range []string{"channels", "turnstiles", "gate"} {
			t.Run(fmt.Sprintf("seed %d %s", seed, mode), func(t *testing.T) {
				var passes, gated atomic.Int64
				got := run(seed, mode, &passes, &gated)
				assert.Equal(t, want, got)
				if mode == "gate" {
					assert.Positive(t, passes.Load(), "turns passed between threads on turnstiles")
				} else {
					// Without the gate a thread's first block, to the
					// goroutines' side, goes by channel, and so does every
					// turn after it: none is ever waited for on a turnstile.
					assert.Zero(t, passes.Load())
				}
				if mode == "gate" {
					assert.Positive(t, gated.Load(), "turns passed to threads through the gate")
				}
			})
		}
	}
}
