package sim

import (
	"encoding/json"
	"testing"
	"time"

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

var rowX = Row{Table: "failure mode", Name: "x"}

// The merge rule (MergeCauses), one row per clause.
func TestMergeCauses(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []Cause
		want []string
	}{
		{"text only, duplicates said once", []Cause{Because("generic"), Because("other"), Because("generic")},
			[]string{"generic", "other"}},
		{"higher layer's words win for its condition on its queue", []Cause{
			{Kind: "ring-full", Layer: LayerIssuer, Queue: "q0", Text: "issuer words"},
			{Kind: "ring-full", Layer: LayerIssuer, Queue: "q1", Text: "issuer words on q1"},
			{Kind: "ring-full", Layer: LayerAPI, Queue: "q0", Row: rowX, Text: "api words"},
		}, []string{`api words (failure mode "x")`, "issuer words on q1"}},
		{"a note adds its row to a lower layer's cause", []Cause{
			{Kind: "poll-parked", Layer: LayerEngine, Queue: "q0", Text: "parked"},
			{Kind: "poll-parked", Layer: LayerAPI, Queue: "q0", Row: rowX},
			{Kind: "poll-parked", Layer: LayerAPI, Queue: "q9", Row: rowX}, // nothing to note on
		}, []string{`parked (failure mode "x")`}},
		{"a note below the words is ignored", []Cause{
			{Kind: "poll-parked", Layer: LayerAPI, Queue: "q0", Text: "api parked"},
			{Kind: "poll-parked", Layer: LayerIssuer, Queue: "q0", Row: rowX},
		}, []string{"api parked"}},
		{"ordered by layer, highest first, then kind, then as given", []Cause{
			{Kind: "queue-stalled", Layer: LayerEngine, Queue: "q2", Text: "e2"},
			{Kind: "chain-stalled", Layer: LayerIssuer, Queue: "q1", Text: "i1"},
			{Kind: "injected-fault", Layer: LayerEngine, Queue: "q3", Text: "e1"},
			{Kind: "signal-short", Layer: LayerAPI, Ranks: []int{1}, Text: "a2"},
			{Kind: "signal-short", Layer: LayerAPI, Ranks: []int{0}, Text: "a3"},
			{Kind: "ring-full", Layer: LayerAPI, Queue: "q0", Text: "a1"},
		}, []string{"a1", "rank 1 waits a2", "rank 0 waits a3", "e1", "e2", "i1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, texts(MergeCauses(tc.in)))
		})
	}
}

// Causes that differ only in their ranks are said once, for every rank.
func TestCausesMergeRanks(t *testing.T) {
	var in []Cause
	for _, r := range []int{5, 0, 2, 1, 7, 6, 3} {
		in = append(in, Cause{Kind: "signal-short", Layer: LayerAPI, Ranks: []int{r}, Row: rowX, Text: "for slot 3"})
	}
	in = append(in, Cause{Kind: "signal-short", Layer: LayerAPI, Ranks: []int{9}, Text: "for slot 4"})
	cs := MergeCauses(in)
	require.Len(t, cs, 2)
	assert.Equal(t, []int{0, 1, 2, 3, 5, 6, 7}, cs[0].Ranks)
	assert.Equal(t, `ranks 0–3, 5–7 each wait for slot 3 (failure mode "x")`, cs[0].String())
	assert.Equal(t, "rank 9 waits for slot 4", cs[1].String())
	assert.Equal(t, []int{5}, in[0].Ranks, "the input is not changed")
	b, err := json.Marshal(cs[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"signal-short","layer":"api","ranks":[0,1,2,3,5,6,7],"row":"failure mode \"x\"","text":"for slot 3","said":"ranks 0–3, 5–7 each wait for slot 3 (failure mode \"x\")"}`, string(b))
	var back Cause
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, cs[0], back, "a cause reads back as written")
}

// Bad JSON for a typed field is an error naming it.
func TestCauseJSONBadFields(t *testing.T) {
	var c Cause
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"layer":"top"}`), &c), `unknown cause layer "top"`)
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"row":"no quotes"}`), &c), `cause row "no quotes"`)
}

// The report is the same whichever diagnoser was added first.
func TestDiagnoserOrderDoesNotMatter(t *testing.T) {
	engine := func() Diagnosis {
		return Diagnosis{
			Waiters: []Waiter{{Kind: "queue", Name: "q0", State: "parked", WaitsFor: "poll"}},
			Causes: []Cause{{Kind: "poll-parked", Layer: LayerEngine, Queue: "q0", Text: "parked"},
				{Kind: "ring-full", Layer: LayerIssuer, Queue: "q0", Text: "full"}},
		}
	}
	api := func() Diagnosis {
		return Diagnosis{Causes: []Cause{{Kind: "poll-parked", Layer: LayerAPI, Queue: "q0", Row: rowX},
			{Kind: "ring-full", Layer: LayerAPI, Queue: "q0", Text: "batch too big"}}}
	}
	run := func(apiFirst bool) string {
		s := New(Config{Seed: 1})
		if apiFirst {
			s.AddDiagnoser(LayerAPI, "api", api)
		}
		s.AddDiagnoser(LayerEngine, "engine", engine)
		if !apiFirst {
			s.AddDiagnoser(LayerAPI, "api", api)
		}
		s.Spawn("k", func(a *Actor) {})
		var h *HangError
		require.ErrorAs(t, s.Run(), &h)
		return h.Text()
	}
	a := run(true)
	assert.Equal(t, a, run(false))
	assert.Contains(t, a, "likely causes:\n  - batch too big\n  - parked (failure mode \"x\")\n")
}

// A run that ends with nobody waiting does not ask the device-API
// layer's diagnosers (every passing run ends there); one that ends with
// an actor or a lower layer's waiter asks them and quotes their causes.
func TestAPIDiagnosersAskedOnlyForAHang(t *testing.T) {
	tests := []struct {
		name        string
		actorWaits  bool
		engineWaits bool
		hang        bool
	}{
		{"nobody waits", false, false, false},
		{"an actor waits", true, false, true},
		{"a queue waits", false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Seed: 1})
			asked := 0
			s.AddDiagnoser(LayerAPI, "api", func() Diagnosis {
				asked++
				return Diagnosis{Causes: []Cause{{Kind: "k", Layer: LayerAPI, Text: "the api's cause"}}}
			})
			s.AddDiagnoser(LayerEngine, "engine", func() Diagnosis {
				if !tc.engineWaits {
					return Diagnosis{}
				}
				return Diagnosis{Waiters: []Waiter{{Kind: "queue", Name: "q0", State: "parked"}}}
			})
			l := s.NewWatchList("flag")
			s.Spawn("k", func(a *Actor) {
				if tc.actorWaits {
					a.Await(Wait{List: l, Lo: 0, Hi: 8, Pred: func() bool { return false }, What: "a flag"})
				}
			})
			err := s.Run()
			if !tc.hang {
				require.NoError(t, err)
				assert.Zero(t, asked, "a passing run's api diagnosers are not asked")
				return
			}
			var h *HangError
			require.ErrorAs(t, err, &h)
			assert.Equal(t, 1, asked)
			assert.Contains(t, h.Text(), "the api's cause")
		})
	}
}

func TestAtEnd(t *testing.T) {
	s := New(Config{Seed: 1})
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

// A write log keeps the last HistoryDepth writes of each tracked word,
// named by SetWriter, the running actor or the host, and no more words
// than MaxTrackedWords.
func TestWriteLog(t *testing.T) {
	s := New(Config{Seed: 1})
	mem := make([]uint64, 4)
	l := s.NewWatchList("mem")
	g := l.EnableLog(func(addr uint64, _ int) uint64 { return mem[addr/8] })
	set := func(addr, v uint64) { mem[addr/8] = v; l.Notify(addr, addr+8) }
	set(0, 7) // before tracking: not seen
	require.True(t, g.Track(0, 8))
	set(8, 1) // another word
	set(0, 1) // by the host
	s.Spawn("k", func(a *Actor) {
		a.Sleep(5)
		set(0, 2)
		s.SetWriter(WriterFunc(func() string { return "sdma q0 ATOMIC" }))
		set(0, 3)
		a.Sleep(1)
		set(0, 0) // SetWriter lasts until the actor yields
		for i := uint64(4); i < 6; i++ {
			set(0, i)
		}
	})
	require.NoError(t, s.Run())
	ws, total, since, ok := g.History(0)
	require.True(t, ok)
	assert.Equal(t, Time(0), since)
	assert.Equal(t, 6, total)
	require.Len(t, ws, HistoryDepth)
	assert.Equal(t, Write{At: 5, By: "sdma q0 ATOMIC", Prev: 2, Value: 3}, ws[0])
	assert.Equal(t, Write{At: 6, By: "k", Prev: 3, Value: 0}, ws[1], "SetWriter lasts until the actor yields")
	assert.Equal(t, Write{At: 6, By: "k", Prev: 4, Value: 5}, ws[3])
	assert.True(t, g.Tracked(4, 12))
	assert.False(t, g.Tracked(8, 16))
	_, _, _, ok = g.History(8)
	assert.False(t, ok)

	s2 := New(Config{Seed: 1})
	g2 := s2.NewWatchList("m").EnableLog(func(uint64, int) uint64 { return 0 })
	for i := 0; i <= MaxTrackedWords; i++ {
		g2.Track(uint64(8*i), 8)
	}
	assert.Equal(t, 1, g2.Untracked(), "bounded")
}

// Untrack drops the words of a freed range: they are no longer seen by
// writes or NotifyAll, the words around them are, and tracking freed
// words and new ones in turn (a dev comm made and destroyed a round)
// never reaches MaxTrackedWords nor grows the records.
func TestWriteLogUntrack(t *testing.T) {
	s := New(Config{Seed: 1})
	mem := map[uint64]uint64{}
	loads := 0
	l := s.NewWatchList("mem")
	g := l.EnableLog(func(addr uint64, _ int) uint64 { loads++; return mem[addr] })
	for a := uint64(0x1000 - 16); a < 0x1000+32; a += 8 { // across a page boundary
		require.True(t, g.Track(a, 8))
	}
	g.Untrack(0x1000-8, 0x1000+16)
	for _, a := range []uint64{0x1000 - 8, 0x1000, 0x1000 + 8} {
		assert.False(t, g.Tracked(a, a+8), "%#x", a)
		_, _, _, ok := g.History(a)
		assert.False(t, ok, "%#x", a)
	}
	for _, a := range []uint64{0x1000 - 16, 0x1000 + 16, 0x1000 + 24} {
		assert.True(t, g.Tracked(a, a+8), "%#x", a)
	}
	mem[0x1000+16] = 5
	l.Notify(0x1000, 0x1000+32)
	ws, total, _, ok := g.History(0x1000 + 16)
	require.True(t, ok)
	assert.Equal(t, 1, total)
	assert.Equal(t, uint64(5), ws[0].Value)
	loads = 0
	l.NotifyAll()
	assert.Equal(t, 3, loads, "NotifyAll loads the words still tracked, no others")

	for round := range 3 * MaxTrackedWords / 64 {
		base := uint64(0x100000 + round*0x1000)
		for i := range uint64(64) {
			require.True(t, g.Track(base+8*i, 8), "round %d", round)
		}
		g.Untrack(base, base+0x1000)
	}
	assert.Zero(t, g.Untracked(), "freed words never count against the bound")
	assert.Len(t, g.words, 3)
	assert.LessOrEqual(t, len(g.free), 64, "records are reused")
}

// A write wider than the tracked pages (up to the whole address space, as
// a C++ lane's fence or a grid's end announces) visits the tracked words,
// not every page it spans: walking 2^52 pages made the C ABI's
// alltoall_put spin forever. NotifyAll logs only the words that changed.
// Each call runs under a deadline so a regression fails instead of hanging.
func TestWriteLogWideWrites(t *testing.T) {
	s := New(Config{Seed: 1})
	mem := map[uint64]uint64{}
	l := s.NewWatchList("mem")
	g := l.EnableLog(func(addr uint64, _ int) uint64 { return mem[addr] })
	const far = 0x2000_0000_0000 // a GPU slice of the C ABI
	require.True(t, g.Track(0x1000, 8))
	require.True(t, g.Track(far, 8))
	fired := 0
	l.Watch(far, far+8, func() bool { return mem[far] == 9 }, func() { fired++ })
	within := func(name string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not return in 10 s (walking every page of the range?)", name)
		}
	}
	mem[far] = 9
	within("Notify(0, max)", func() { l.Notify(0, ^uint64(0)) })
	within("Tracked(0, max)", func() { assert.True(t, g.Tracked(0, ^uint64(0))) })
	within("Tracked(wide, miss)", func() { assert.False(t, g.Tracked(0x2000, far)) })
	_, n, _, _ := g.History(0x1000)
	assert.Equal(t, 1, n, "a write of the whole space writes every tracked word")
	_, n, _, _ = g.History(far)
	assert.Equal(t, 1, n)
	mem[0x1000] = 4
	within("NotifyAll", l.NotifyAll)
	ws, n, _, _ := g.History(0x1000)
	assert.Equal(t, 2, n, "the changed word is logged")
	assert.Equal(t, uint64(4), ws[len(ws)-1].Value)
	_, n, _, _ = g.History(far)
	assert.Equal(t, 1, n, "NotifyAll does not log a word that did not change")
	require.NoError(t, s.Run())
	assert.Equal(t, 1, fired, "the wide write fired the watch on the far word")
}
