package sim

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScratchRunsIndependent: runs that share a Scratch take its event
// store (and its lists: free ids, the due batch, the heap, the runs'
// blocks) back zeroed: a run's digest and events are a fresh Sim's, also
// after a run that stopped with events pending and whose Timer was
// stopped after Run (it marked an event of the store the next run took).
func TestScratchRunsIndependent(t *testing.T) {
	// run schedules n events, one each µs; it fails at stopAt (0: never).
	run := func(sc *Scratch, seed uint64, n, stopAt int) (ran int, digest string, timers []Timer) {
		s := New(Config{Seed: seed, Scratch: sc})
		k := s.TraceKind("ev")
		sub := s.TraceSubject("x")
		for i := 1; i <= n; i++ {
			timers = append(timers, s.At(Time(i)*Microsecond, func() {
				ran++
				s.Trace(k, sub, uint64(i), 0, 0)
				if i == stopAt {
					s.Fail(errors.New("stop"))
				}
			}))
		}
		err := s.Run()
		if stopAt == 0 {
			require.NoError(t, err)
		}
		return ran, s.Digest(), timers
	}
	fresh := map[uint64]string{}
	for seed := uint64(1); seed <= 3; seed++ {
		_, fresh[seed], _ = run(nil, seed, 600, 0)
	}
	sc := NewScratch()
	for _, tc := range []struct {
		name   string
		before func()
	}{
		{"first", func() {}},
		{"after a run stopped early", func() {
			_, _, timers := run(sc, 9, 700, 3)
			for _, tm := range timers {
				tm.Stop() // late: its events are the Scratch's now
			}
		}},
		{"after a smaller run", func() { run(sc, 8, 10, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(3); seed >= 1; seed-- {
				tc.before()
				ran, digest, _ := run(sc, seed, 600, 0)
				assert.Equal(t, 600, ran, "seed %d: every event ran", seed)
				assert.Equal(t, fresh[seed], digest, "seed %d", seed)
			}
			assert.NotEmpty(t, sc.chunks, "the store was kept")
			assert.NotZero(t, cap(sc.free), "the recycled ids' list was kept")
			assert.Zero(t, len(sc.free)+len(sc.batch)+len(sc.heap)+len(sc.qfree), "emptied")
			for _, bs := range sc.runBlocks {
				assert.Empty(t, bs)
			}
		})
	}
}

// TestScratchWriteLogFresh: a run that borrows a Scratch gets the write
// log an earlier run made, emptied: no word of that run is tracked, its
// histories, counts and bound start over, and the run's own words are
// logged as in a fresh log; a second log of one run is its own.
func TestScratchWriteLogFresh(t *testing.T) {
	sc := NewScratch()
	// run tracks words (8 bytes apart from base), writes each twice and
	// returns its log after Run.
	run := func(base uint64, words int) (*WriteLog, *WriteLog) {
		t.Helper()
		s := New(Config{Seed: 1, Scratch: sc})
		mem := map[uint64]uint64{}
		l := s.NewWatchList("mem")
		g := l.EnableLog(func(addr uint64, _ int) uint64 { return mem[addr] })
		other := s.NewWatchList("other").EnableLog(func(uint64, int) uint64 { return 0 })
		require.Zero(t, g.Untracked())
		for i := range words {
			g.Track(base+uint64(8*i), 8)
		}
		s.Spawn("w", func(a *Actor) {
			for i := range min(words, 64) {
				for v := uint64(1); v <= 2; v++ {
					a.Sleep(1)
					mem[base+uint64(8*i)] = v
					l.Notify(base+uint64(8*i), base+uint64(8*i)+8)
				}
			}
		})
		require.NoError(t, s.Run())
		return g, other
	}
	first, _ := run(0, MaxTrackedWords+3) // full, and past its bound
	assert.Equal(t, 3, first.Untracked())
	second, other := run(1<<20, 5)
	assert.Same(t, first, second, "the second run reuses the first one's log")
	assert.NotSame(t, second, other)
	assert.Zero(t, second.Untracked())
	assert.False(t, second.Tracked(0, 1<<20), "the first run's words are gone")
	_, _, _, ok := second.History(0)
	assert.False(t, ok)
	ws, total, since, ok := second.History(1<<20 + 8)
	require.True(t, ok)
	assert.Equal(t, Time(0), since)
	assert.Equal(t, 2, total)
	assert.Equal(t, []Write{{At: 3, By: "w", Prev: 0, Value: 1}, {At: 4, By: "w", Prev: 1, Value: 2}}, ws)
}

// TestIntern: a Sim interns a name as the bytes given, the same string
// for the runs that borrow one Scratch (no allocation once made), a new
// one without a Scratch; the table holds at most maxNames; the
// writer's name of a tracked word is interned so.
func TestIntern(t *testing.T) {
	sc := NewScratch()
	first := New(Config{Scratch: sc}).Intern([]byte("queue 1"))
	s := New(Config{Scratch: sc})
	b := []byte("queue 1")
	assert.Equal(t, "queue 1", s.Intern(b))
	assert.Zero(t, testing.AllocsPerRun(10, func() { _ = s.Intern(b) }))
	assert.Same(t, unsafeData(first), unsafeData(s.Intern(b)), "the earlier run's string")
	b[0] = 'Q' // the caller's buffer is its own: the interned string does not change
	assert.Equal(t, "queue 1", first)
	assert.Equal(t, "Queue 1", s.Intern(b))

	fresh := New(Config{})
	assert.Equal(t, "queue 1", fresh.Intern([]byte("queue 1")))
	var none *Sim
	assert.Equal(t, "x", none.Intern([]byte("x")))

	for i := range maxNames + 10 {
		s.Intern([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
	}
	assert.Len(t, sc.names, maxNames, "bounded")

	// A tracked word's writer is named through the table.
	s2 := New(Config{Scratch: sc})
	assert.Equal(t, "queue 1", s2.Intern([]byte("queue 1")))
	s2.SetWriter(WriterFunc(func() string { return "queue 1" }))
	assert.Same(t, unsafeData(first), unsafeData(s2.writerName()))
	s2.SetWriter(nil)
	assert.Equal(t, "the host", s2.writerName())
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// TestScratchReusesActors: the actors of a run that borrowed a Scratch
// (one that returned, one killed waiting when the run failed, one that
// panicked, one never started) are the next run's actors, which run as a fresh Sim's do: the
// same digest, names, ids and waits.
func TestScratchReusesActors(t *testing.T) {
	first := func(sc *Scratch) (*Sim, []*Actor) {
		s := New(Config{Seed: 7, Scratch: sc})
		l := s.NewWatchList("never")
		done := s.Spawn("returns", func(a *Actor) { a.Sleep(Microsecond) })
		stuck := s.Spawn("waits", func(a *Actor) {
			a.Await(Wait{List: l, Pred: func() bool { return false }, What: "nothing"})
		})
		late := s.SpawnAfter(Millisecond, "late", func(a *Actor) {})
		panics := s.Spawn("panics", func(a *Actor) {
			a.Sleep(Microsecond)
			panic("boom")
		})
		s.At(2*Microsecond, func() { s.Fail(errors.New("stop")) })
		var pe *ActorPanicError
		require.ErrorAs(t, s.Run(), &pe, "the panic fails the run first")
		return s, []*Actor{done, stuck, late, panics}
	}
	second := func(sc *Scratch) (digest string, actors []*Actor, log []string) {
		s := New(Config{Seed: 8, Scratch: sc})
		var x uint64
		l := s.NewWatchList("x")
		for i := range 3 {
			actors = append(actors, s.Spawn(string(rune('a'+i)), func(a *Actor) {
				if i == 0 {
					a.Sleep(Microsecond)
					x = 1
					l.Notify(0, 1)
					return
				}
				a.Await(Wait{List: l, Lo: 0, Hi: 1, Pred: func() bool { return x == 1 }, What: "x"})
				log = append(log, a.Name())
			}))
		}
		require.NoError(t, s.Run())
		return s.Digest(), actors, log
	}
	wantDigest, _, wantLog := second(nil)

	sc := NewScratch()
	_, old := first(sc)
	require.Len(t, sc.actors, 4, "the returned, the killed, the panicked and the never started actor are kept")
	digest, actors, log := second(sc)
	assert.Equal(t, wantDigest, digest)
	assert.Equal(t, wantLog, log)
	for i, a := range actors {
		assert.Contains(t, old, a, "actor %d is one of the first run's", i)
		assert.Equal(t, string(rune('a'+i)), a.Name())
		assert.Equal(t, uint32(i), a.id)
	}
	assert.Len(t, sc.actors, 4, "and kept again")
}

type testBody struct {
	ran   bool
	label string
	l     *WatchList
}

func (b *testBody) Run(a *Actor) {
	b.ran = true
	a.SetLabeler(b)
	a.Await(Wait{List: b.l, Pred: func() bool { return false }, What: "never"})
}

func (b *testBody) Label() string { return b.label }

// TestSpawnBodyAndLabeler: an actor spawned with a Body runs its Run, and
// a Labeler labels it in a hang report as a label function would, with
// the value it has when the report is made.
func TestSpawnBodyAndLabeler(t *testing.T) {
	s := New(Config{})
	b := &testBody{label: "at start", l: s.NewWatchList("l")}
	a := s.SpawnBodyAfter(Microsecond, "body", b)
	s.At(2*Microsecond, func() { b.label = "at the hang" })
	err := s.Run()
	var h *HangError
	require.ErrorAs(t, err, &h)
	assert.True(t, b.ran)
	require.Len(t, h.Waiters, 1)
	assert.Equal(t, "body", h.Waiters[0].Name)
	assert.Equal(t, "at the hang", h.Waiters[0].Label)
	assert.Nil(t, a.body, "an ended actor holds no body")
}

type testCond struct {
	x, want *uint64
}

func (c testCond) Holds() bool  { return *c.x >= *c.want }
func (c testCond) Text() string { return "x reaches want" }
func (c testCond) Detail() any  { return *c.want }

// TestWaitCond: a Wait's Cond is its predicate (woken by a Notify that
// makes it hold, not by one that does not), its text and its detail in a
// hang report; Pred, Text and Detail are not read.
func TestWaitCond(t *testing.T) {
	s := New(Config{})
	l := s.NewWatchList("l")
	var x, want, woke uint64 = 0, 2, 0
	bad := func() bool { panic("Pred read with Cond set") }
	s.Spawn("w", func(a *Actor) {
		a.Await(Wait{List: l, Lo: 0, Hi: 8, Cond: testCond{&x, &want}, Pred: bad})
		woke = uint64(a.Now())
		want = 10
		a.Await(Wait{List: l, Lo: 0, Hi: 8, Cond: testCond{&x, &want}, Pred: bad, Text: func() string { panic("Text read") }})
	})
	for i := range 3 {
		s.At(Time(i+1)*Microsecond, func() { x++; l.Notify(0, 8) })
	}
	var h *HangError
	require.ErrorAs(t, s.Run(), &h)
	assert.Equal(t, uint64(2*Microsecond), woke, "the second write made it hold")
	require.Len(t, h.Waiters, 1)
	assert.Equal(t, "x reaches want", h.Waiters[0].WaitsFor)
	assert.Equal(t, uint64(10), h.Waiters[0].Detail)
}
