package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/emud-dev/emud/internal/testmain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
)

func TestMain(m *testing.M) { testmain.Run(m) }

func TestTimeString(t *testing.T) {
	for _, tc := range []struct {
		t    Time
		want string
	}{
		{0, "0ps"}, {999, "999ps"}, {Nanosecond, "1ns"}, {1500 * Picosecond, "1.5ns"},
		{2*Microsecond + 500*Nanosecond, "2.5µs"}, {Millisecond, "1ms"}, {3 * Second, "3s"},
		{-Microsecond, "-1µs"}, {Microsecond + 1, "1.000001µs"},
	} {
		assert.Equal(t, tc.want, tc.t.String(), "%d ps", int64(tc.t))
	}
}

func TestEventsRunInTimeOrder(t *testing.T) {
	s := New(Config{Seed: 1})
	var got []Time
	for _, at := range []Time{30, 10, 20, 0, 25} {
		s.At(at, func() { got = append(got, s.Now()) })
	}
	require.NoError(t, s.Run())
	assert.Equal(t, []Time{0, 10, 20, 25, 30}, got)
}

func TestTimerStop(t *testing.T) {
	s := New(Config{Seed: 1})
	ran := false
	tm := s.At(10, func() { ran = true })
	assert.True(t, tm.Stop())
	assert.False(t, tm.Stop(), "second Stop finds nothing")
	require.NoError(t, s.Run())
	assert.False(t, ran)
}

// tieOrder runs n callbacks due at the same time and returns their order.
func tieOrder(seed uint64, n int) []int {
	s := New(Config{Seed: seed})
	var got []int
	for i := range n {
		s.At(5, func() { got = append(got, i) })
	}
	if err := s.Run(); err != nil {
		panic(err)
	}
	return got
}

func TestTiesArePickedBySeed(t *testing.T) {
	a := tieOrder(7, 8)
	assert.Equal(t, a, tieOrder(7, 8), "same seed, same order")
	assert.ElementsMatch(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, a)
	differs := false
	for seed := uint64(0); seed < 20 && !differs; seed++ {
		differs = fmt.Sprint(tieOrder(seed, 8)) != fmt.Sprint(a)
	}
	assert.True(t, differs, "some seed must order ties differently")
}

func TestActorsSleepAndInterleave(t *testing.T) {
	s := New(Config{Seed: 3})
	var log []string
	for _, name := range []string{"a", "b"} {
		step := Time(10)
		if name == "b" {
			step = 15
		}
		s.Spawn(name, func(a *Actor) {
			for range 3 {
				a.Sleep(step)
				log = append(log, fmt.Sprintf("%s@%d", name, a.Now()))
			}
		})
	}
	require.NoError(t, s.Run())
	assert.Equal(t, []string{"a@10", "b@15", "a@20", "a@30", "b@30", "b@45"}[:3], log[:3])
	assert.Len(t, log, 6)
	assert.Equal(t, Time(45), s.Now())
}

type cell struct {
	v  uint64
	wl *WatchList
}

func (c *cell) set(v uint64) { c.v = v; c.wl.Notify(0, 8) }

func TestAwaitIsWokenByWrite(t *testing.T) {
	s := New(Config{Seed: 1})
	c := &cell{wl: s.NewWatchList("cell")}
	var woke Time = -1
	s.Spawn("waiter", func(a *Actor) {
		a.Await(Wait{List: c.wl, Lo: 0, Hi: 8, Pred: func() bool { return c.v >= 3 }, What: "cell >= 3"})
		woke = a.Now()
	})
	s.Spawn("writer", func(a *Actor) {
		for i := uint64(1); i <= 3; i++ {
			a.Sleep(100)
			c.set(i)
		}
	})
	require.NoError(t, s.Run())
	assert.Equal(t, Time(300), woke)
	assert.Equal(t, 0, c.wl.Len(), "satisfied watch removed")
}

func TestAwaitMissesAValueThatFlipsBack(t *testing.T) {
	// The writer sets then clears in one turn: the waiter re-checks when it
	// runs and keeps waiting, as a sampling poller would.
	s := New(Config{Seed: 1})
	c := &cell{wl: s.NewWatchList("cell")}
	done := false
	s.Spawn("waiter", func(a *Actor) {
		a.Await(Wait{List: c.wl, Hi: 8, Pred: func() bool { return c.v == 1 }, What: "cell == 1"})
		done = true
	})
	s.Spawn("writer", func(a *Actor) {
		a.Sleep(10)
		c.set(1)
		c.set(0)
		a.Sleep(10)
		c.set(1)
	})
	require.NoError(t, s.Run())
	assert.True(t, done)
}

func TestAwaitTimeout(t *testing.T) {
	s := New(Config{Seed: 1})
	c := &cell{wl: s.NewWatchList("cell")}
	var ok1, ok2 bool
	var at1, at2 Time
	s.Spawn("w", func(a *Actor) {
		ok1 = a.AwaitTimeout(Wait{List: c.wl, Hi: 8, Pred: func() bool { return c.v == 9 }, What: "never"}, 50)
		at1 = a.Now()
		ok2 = a.AwaitTimeout(Wait{List: c.wl, Hi: 8, Pred: func() bool { return c.v == 1 }, What: "soon"}, 500)
		at2 = a.Now()
	})
	s.Spawn("writer", func(a *Actor) { a.Sleep(120); c.set(1) })
	require.NoError(t, s.Run())
	assert.False(t, ok1)
	assert.Equal(t, Time(50), at1)
	assert.True(t, ok2)
	assert.Equal(t, Time(120), at2)
}

func TestDeadlockReportsEveryBlockedActor(t *testing.T) {
	s := New(Config{Seed: 42})
	c := &cell{wl: s.NewWatchList("flag")}
	for i := range 2 {
		s.Spawn(fmt.Sprintf("rank%d", i), func(a *Actor) {
			a.Sleep(Time(i+1) * Microsecond)
			a.Await(Wait{List: c.wl, Hi: 8, Pred: func() bool { return c.v == 1 },
				Text: func() string { return fmt.Sprintf("flag == 1 (now %d)", c.v) }})
		})
	}
	err := s.Run()
	var h *HangError
	require.ErrorAs(t, err, &h)
	assert.Equal(t, HangDeadlock, h.Kind)
	require.Len(t, h.Waiters, 2)
	assert.Equal(t, "rank0", h.Waiters[0].Name)
	assert.Equal(t, "flag == 1 (now 0)", h.Waiters[0].WaitsFor)
	assert.Equal(t, Microsecond, h.Waiters[0].Since)
	assert.Equal(t, 2*Microsecond, h.At)
	golden.Check(t, "hang-deadlock.txt", h.Text())
	js, err := h.JSON()
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(js, &back))
	assert.Equal(t, "deadlock", back["kind"])
	assert.Len(t, back["waiters"], 2)
}

func TestDiagnoserWaitersMakeAHang(t *testing.T) {
	s := New(Config{Seed: 1})
	s.AddDiagnoser(LayerEngine, "test", func() Diagnosis {
		return Diagnosis{
			Waiters: []Waiter{{Kind: "queue", Name: "q0", State: "parked", WaitsFor: "poll"}},
			Causes:  []Cause{Because("flag never set"), Because("flag never set")},
		}
	})
	s.Spawn("k", func(a *Actor) { a.Sleep(1) })
	err := s.Run()
	var h *HangError
	require.ErrorAs(t, err, &h)
	assert.Equal(t, []Cause{Because("flag never set")}, h.Causes)
	assert.Contains(t, h.Text(), "blocked queues (1)")

	s2 := New(Config{Seed: 1})
	s2.AddDiagnoser(LayerEngine, "test", func() Diagnosis { return Diagnosis{} })
	require.NoError(t, s2.Run(), "a diagnoser with nothing to report is not a hang")
}

func TestWatchdogCatchesEndlessPoller(t *testing.T) {
	s := New(Config{Seed: 5, Watchdog: 10 * Microsecond})
	flag := uint64(0)
	s.Spawn("poller", func(a *Actor) {
		a.SetLabel("polling flag")
		for flag == 0 {
			a.Sleep(100 * Nanosecond)
		}
	})
	err := s.Run()
	var h *HangError
	require.ErrorAs(t, err, &h)
	assert.Equal(t, HangWatchdog, h.Kind)
	assert.Equal(t, 10*Microsecond, h.At)
	require.Len(t, h.Waiters, 1)
	assert.Equal(t, "sleeping", h.Waiters[0].State)
	assert.Contains(t, h.Text(), "doing: polling flag")
}

func TestWatchdogQuietWhileProgressing(t *testing.T) {
	s := New(Config{Seed: 5, Watchdog: 10 * Microsecond})
	n := 0
	var tick func()
	tick = func() {
		s.Progress()
		if n++; n < 100 {
			s.After(5*Microsecond, tick)
		}
	}
	s.At(0, tick)
	require.NoError(t, s.Run())
	assert.Equal(t, 495*Microsecond, s.Now())
}

// A step of real work a thousand times the watchdog's span (a slow model's
// packet) is not a hang, even with a poller re-checking meanwhile; after
// it, the watchdog is back on guard.
func TestWatchdogWaitsForLongWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		work bool
		hang bool
	}{
		{"work", true, false},
		{"plain event", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Seed: 5, Watchdog: 10 * Microsecond})
			done := false
			finish := func() { done = true }
			if tc.work {
				s.AfterWork(10*Millisecond, finish)
			} else {
				s.After(10*Millisecond, finish)
			}
			s.Spawn("poller", func(a *Actor) {
				for !done {
					a.Sleep(Microsecond)
				}
			})
			err := s.Run()
			if !tc.hang {
				require.NoError(t, err)
				assert.True(t, done)
				assert.Equal(t, 10*Millisecond+Microsecond, s.Now(), "the poller's last check")
				return
			}
			var h *HangError
			require.ErrorAs(t, err, &h)
			assert.Equal(t, HangWatchdog, h.Kind)
			assert.Equal(t, 10*Microsecond, h.At)
		})
	}
	// Cancelled work holds the watchdog off only until its time.
	s := New(Config{Seed: 5, Watchdog: 10 * Microsecond})
	s.AfterWork(Millisecond, func() {}).Stop()
	s.Spawn("poller", func(a *Actor) {
		for {
			a.Sleep(Microsecond)
		}
	})
	var h *HangError
	require.ErrorAs(t, s.Run(), &h)
	assert.Equal(t, HangWatchdog, h.Kind)
	assert.LessOrEqual(t, h.At, Millisecond+10*Microsecond)
}

func TestPanicsBecomeErrors(t *testing.T) {
	s := New(Config{Seed: 1})
	s.Spawn("bad lane", func(a *Actor) { a.Sleep(3); panic("boom") })
	s.Spawn("other", func(a *Actor) {
		a.Await(Wait{Pred: func() bool { return false }, What: "forever"})
	})
	err := s.Run()
	var p *ActorPanicError
	require.ErrorAs(t, err, &p)
	assert.Equal(t, "bad lane", p.Actor)
	assert.Equal(t, Time(3), p.At)

	s2 := New(Config{Seed: 1})
	s2.At(7, func() { panic("engine bug") })
	var ep *EventPanicError
	require.ErrorAs(t, s2.Run(), &ep)
	assert.Equal(t, Time(7), ep.At)
}

func TestFailStopsRun(t *testing.T) {
	s := New(Config{Seed: 1})
	boom := errors.New("check failed")
	after := false
	s.Spawn("a", func(a *Actor) { a.Sleep(1); s.Fail(boom); a.Sleep(1); after = true })
	assert.ErrorIs(t, s.Run(), boom)
	assert.False(t, after)
	assert.Error(t, s.Run(), "single use")
}

// Interrupt from another goroutine stops a run that would never end on
// its own (an endless loop of sleeps, which the watchdog never sees as a
// hang because each sleep is work).
func TestInterruptStopsRunFromAnotherGoroutine(t *testing.T) {
	s := New(Config{Seed: 1})
	started := make(chan struct{})
	s.Spawn("forever", func(a *Actor) {
		close(started)
		for {
			a.Sleep(1)
		}
	})
	canceled := errors.New("canceled by the user")
	go func() { <-started; s.Interrupt(canceled) }()
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("Interrupt did not stop the run")
	}
}

func TestKilledActorDefersRun(t *testing.T) {
	s := New(Config{Seed: 1})
	cleaned := false
	s.Spawn("a", func(a *Actor) {
		defer func() { cleaned = true; a.Sleep(5) }()
		a.Await(Wait{Pred: func() bool { return false }, What: "forever"})
	})
	require.Error(t, s.Run())
	assert.True(t, cleaned)
}

// workload is a small racy program: several actors bump shared counters at
// colliding times. Its digest depends on the PRNG's tie-breaks.
func workload(seed uint64) (string, uint64) {
	s := New(Config{Seed: seed})
	c := &cell{wl: s.NewWatchList("c")}
	k := s.TraceKind("bump")
	subj := s.TraceSubject("counter")
	var order uint64
	for i := range 6 {
		s.Spawn(fmt.Sprintf("a%d", i), func(a *Actor) {
			for j := range 5 {
				a.Sleep(Time(j%2) * 10)
				order = order*31 + uint64(i)
				c.set(c.v + 1)
				s.Trace(k, subj, uint64(i), c.v, 0)
			}
		})
	}
	s.Spawn("watcher", func(a *Actor) {
		a.Await(Wait{List: c.wl, Hi: 8, Pred: func() bool { return c.v >= 30 }, What: "all bumps"})
	})
	if err := s.Run(); err != nil {
		panic(err)
	}
	return s.Digest(), order
}

func TestSameSeedSameDigest(t *testing.T) {
	digests := map[string]bool{}
	for seed := range uint64(100) {
		d1, o1 := workload(seed)
		d2, o2 := workload(seed)
		require.Equal(t, d1, d2, "seed %d", seed)
		require.Equal(t, o1, o2, "seed %d", seed)
		digests[d1] = true
	}
	assert.Greater(t, len(digests), 50, "seeds explore different schedules")
}

func TestRecordsKept(t *testing.T) {
	s := New(Config{Seed: 1, Record: true})
	k := s.TraceKind("x")
	id := s.TraceSubject("thing")
	s.At(4, func() { s.Trace(k, id, 1, 2, 3) })
	require.NoError(t, s.Run())
	recs := s.Records()
	require.Len(t, recs, 1)
	assert.Equal(t, Record{T: 4, Kind: k, Subject: id, A: 1, B: 2, C: 3}, recs[0])
	assert.Equal(t, "x", s.KindName(k))
	assert.Equal(t, "thing", s.SubjectName(id))
	assert.Equal(t, "?", s.SubjectName(99))
	assert.Len(t, s.Digest(), 64)
}

func BenchmarkEventThroughput(b *testing.B) {
	s := New(Config{Seed: 1, Watchdog: -1})
	n := 0
	var tick func()
	tick = func() {
		if n++; n < b.N {
			s.After(Nanosecond, tick)
		}
	}
	s.At(0, tick)
	b.ResetTimer()
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkActorSwitch(b *testing.B) {
	s := New(Config{Seed: 1, Watchdog: -1})
	s.Spawn("a", func(a *Actor) {
		for range b.N {
			a.Sleep(Nanosecond)
		}
	})
	b.ResetTimer()
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkActorPingPong measures a real goroutine switch: two actors take
// turns, so every step hands the token to the other goroutine.
func BenchmarkActorPingPong(b *testing.B) {
	s := New(Config{Seed: 1, Watchdog: -1})
	for i := range 2 {
		s.Spawn(fmt.Sprint("p", i), func(a *Actor) {
			if i == 1 {
				a.Sleep(Picosecond) // offset: the two never tie
			}
			for range b.N / 2 {
				a.Sleep(2 * Nanosecond)
			}
		})
	}
	b.ResetTimer()
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
}

func TestWriteRecords(t *testing.T) {
	run := func() string {
		s := New(Config{Seed: 3, Record: true})
		k := s.TraceKind("bump")
		id := s.TraceSubject("counter")
		s.Spawn("a", func(a *Actor) { a.Sleep(Microsecond); s.Trace(k, id, 1, 2, 255) })
		require.NoError(t, s.Run())
		var b strings.Builder
		require.NoError(t, s.WriteRecords(&b))
		return b.String()
	}
	out := run()
	assert.Contains(t, out, "1µs\tbump\tcounter\t0x1\t0x2\t0xff\n")
	assert.Contains(t, out, "0ps\tsched\tspawn a\n")
	assert.Contains(t, out, "1µs\tsched\trun a\n", "wakes are traced")
	assert.Contains(t, out, "1µs\tsched\texit a\n")
	assert.Equal(t, out, run(), "same seed, same trace")
}

// An actor whose code ends through runtime.Goexit (a test's require.* or
// t.FailNow outside the test goroutine) fails the run; it does not end it
// as if everything had finished.
func TestActorGoexitFailsTheRun(t *testing.T) {
	s := New(Config{Seed: 1})
	s.Spawn("quitter", func(a *Actor) {
		a.Sleep(Microsecond)
		runtime.Goexit()
	})
	s.Spawn("worker", func(a *Actor) { a.Sleep(5 * Microsecond) })
	err := s.Run()
	var pe *ActorPanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "quitter", pe.Actor)
	assert.ErrorContains(t, err, "runtime.Goexit")
}

func TestAwaitUnlessQuiescent(t *testing.T) {
	cases := []struct {
		name      string
		writeAt   Time // 0: never written
		plainWait bool // another actor waits for good on a word never written
		wantOK    bool
		wantAt    Time
		wantHang  bool
	}{
		{name: "a write ends it as Await", writeAt: 120, wantOK: true, wantAt: 120},
		{name: "quiescence releases it", wantOK: false, wantAt: 40},
		{name: "a real wait still hangs", plainWait: true, wantOK: false, wantAt: 40, wantHang: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Seed: 3})
			c := &cell{wl: s.NewWatchList("cell")}
			never := &cell{wl: s.NewWatchList("never")}
			ok, at, after := true, Time(-1), false
			s.Spawn("lane", func(a *Actor) {
				a.Sleep(40)
				ok = a.AwaitUnlessQuiescent(Wait{List: c.wl, Hi: 8, Pred: func() bool { return c.v == 1 }, What: "cell == 1"})
				at = a.Now()
				a.Sleep(10)
				after = true
			})
			if tc.writeAt > 0 {
				s.Spawn("writer", func(a *Actor) { a.Sleep(tc.writeAt); c.set(1) })
			}
			if tc.plainWait {
				s.Spawn("waiter", func(a *Actor) {
					a.Await(Wait{List: never.wl, Hi: 8, Pred: func() bool { return never.v == 1 }, What: "never == 1"})
				})
			}
			err := s.Run()
			if tc.wantHang {
				var h *HangError
				require.ErrorAs(t, err, &h)
				require.Len(t, h.Waiters, 1, "the released actor is not among the hang's waiters")
				assert.Equal(t, "never == 1", h.Waiters[0].WaitsFor)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.wantAt, at)
			assert.True(t, after, "the actor ran on after its wait")
		})
	}
}
