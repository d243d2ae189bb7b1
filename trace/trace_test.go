package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/emud-dev/emud/internal/testmain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/internal/tracecheck"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// checkTrace fails t with every problem tracecheck finds in data.
func checkTrace(t testing.TB, data []byte) {
	t.Helper()
	_, err := tracecheck.Check(data)
	require.NoError(t, err)
}

func TestMain(m *testing.M) { testmain.Run(m) }

// a2a is the alltoall of cmd/emud (the seed's worked example): every rank
// launches one wave whose lane i puts its block to peer (rank+1+i) mod
// ranks with a remote signal, quiets that peer and waits for the peer's
// signal; peer p is served on queue id p mod queues.
type a2a struct {
	ranks, queues int
	bytes         uint64
}

// run builds the node, attaches a recorder (unless attach is false), runs
// the alltoall under seed and returns the recorder and node.
func (x a2a) run(t testing.TB, seed uint64, attach bool) (*Recorder, *engine.Node) {
	t.Helper()
	j, err := job.New(job.Config{Sim: sim.Config{Seed: seed}, Ranks: x.ranks})
	require.NoError(t, err)
	var r *Recorder
	if attach {
		r = Attach(j.Node, j.Host)
	}
	span := uint64(x.ranks) * x.bytes
	send, err := j.Window(span)
	require.NoError(t, err)
	recv, err := j.Window(span)
	require.NoError(t, err)
	require.NoError(t, j.CreateDevComms(x.queues, false))
	for r := range x.ranks {
		_, err := j.Launch(r, 1, x.ranks, func(t *kernel.Thread, sdma *cco.Sdma) {
			p := (r + 1 + t.ThreadIdx()) % x.ranks
			sdma.Put(p, recv[r], uint64(r)*x.bytes, send[r], uint64(p)*x.bytes, x.bytes, p%x.queues, cco.RemoteSignal)
			sdma.Quiet(p)
			sdma.WaitSignal(p, r%x.queues, 1)
		})
		require.NoError(t, err)
	}
	require.NoError(t, j.Run())
	return r, j.Node
}

func writeJSON(t testing.TB, r *Recorder) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, r.WriteJSON(&b))
	return b.Bytes()
}

// parsed is a written trace, indexed for the tests' questions.
type parsed struct {
	Events []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		ID   uint64         `json:"id"`
		S    string         `json:"s"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
	DisplayTimeUnit string `json:"displayTimeUnit"`
}

func parse(t testing.TB, data []byte) *parsed {
	t.Helper()
	var p parsed
	require.NoError(t, json.Unmarshal(data, &p))
	return &p
}

// trackNames maps tid to thread name.
func (p *parsed) trackNames() map[int]string {
	m := map[int]string{}
	for _, e := range p.Events {
		if e.Ph == "M" && e.Name == "thread_name" {
			m[e.Tid] = e.Args["name"].(string)
		}
	}
	return m
}

// chains checks data with tracecheck and returns every flow as the slices
// it links, bound as viewers bind them, with the tracks' kinds; a wake
// slice reads as its waiter's name + ".wake":
// "wave:put → queue:ATOMIC → wave:waitSignal.wake".
func chains(t testing.TB, data []byte) []string {
	t.Helper()
	rep, err := tracecheck.Check(data)
	require.NoError(t, err)
	names := parse(t, data).trackNames()
	var out []string
	for _, f := range rep.Flows {
		var parts []string
		for _, s := range f.Slices {
			if s == nil {
				parts = append(parts, "?")
				continue
			}
			kind := "queue"
			if strings.HasPrefix(names[int(s.Tid)], "wave ") {
				kind = "wave"
			}
			name := s.Name
			if name == "wake" {
				name = fmt.Sprint(s.Args["of"]) + ".wake"
			}
			parts = append(parts, kind+":"+name)
		}
		out = append(out, strings.Join(parts, " → "))
	}
	return out
}

func mapsKeys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func count(xs []string, want string) int {
	n := 0
	for _, x := range xs {
		if x == want {
			n++
		}
	}
	return n
}

func TestAlltoallTraceFollowsTheFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    a2a
		seed uint64
	}{
		{"8 ranks 4 KiB 2 queues", a2a{8, 2, 4 << 10}, 1},
		{"8 ranks 4 KiB 2 queues seed 7", a2a{8, 2, 4 << 10}, 7},
		{"4 ranks 64 KiB 4 queues", a2a{4, 4, 64 << 10}, 3},
		{"2 ranks 1 queue", a2a{2, 1, 256}, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := tc.x.run(t, tc.seed, true)
			data := writeJSON(t, r)
			checkTrace(t, data)
			assert.Equal(t, "ns", parse(t, data).DisplayTimeUnit)
		})
	}
}

// The alltoall's trace has one track per queue and per wave, a slice for
// every packet the engines executed (counted independently by the node's
// Prometheus counters), a slice for every device call, and complete
// call → packet → waiter chains.
func TestAlltoallTraceContent(t *testing.T) {
	x := a2a{ranks: 8, queues: 2, bytes: 4 << 10}
	r, n := x.run(t, 1, true)
	data := writeJSON(t, r)
	p := parse(t, data)

	names := p.trackNames()
	var queueTracks, waveTracks []string
	for _, nm := range names {
		if strings.HasPrefix(nm, "wave ") {
			waveTracks = append(waveTracks, nm)
		} else {
			queueTracks = append(queueTracks, nm)
		}
	}
	require.Len(t, queueTracks, len(n.Queues()), "one track per queue")
	assert.Len(t, queueTracks, x.ranks*x.ranks, "each rank used one queue per peer, loopback included")
	for _, q := range n.Queues() {
		id := q.ID()
		assert.Contains(t, queueTracks, fmt.Sprintf("GPU %d → %d q%d", id.GPU, id.Peer, id.Q))
	}
	require.Len(t, waveTracks, x.ranks, "one track per wave")
	for rk := range x.ranks {
		assert.Contains(t, waveTracks, fmt.Sprintf("wave b0w0 (rank%d)", rk))
	}

	// Packets: slices per kind against the engine's own counters. Every
	// slice is in the flows' category ("sdma").
	slicesByKind := map[string]int{}
	calls, wakes := map[string]int{}, map[string]int{}
	for _, e := range p.Events {
		if e.Ph != "X" {
			continue
		}
		assert.Equal(t, "sdma", e.Cat)
		switch {
		case e.Name == "wake":
			wakes[fmt.Sprint(e.Args["of"])]++
		case strings.HasPrefix(names[e.Tid], "GPU "):
			slicesByKind[e.Name]++
			assert.Contains(t, e.Args, "ring_offset")
		default:
			assert.True(t, strings.HasPrefix(names[e.Tid], "wave "), "a call slice on a wave track")
			calls[e.Name]++
		}
	}
	assert.Equal(t, executedPackets(t, n), slicesByKind)
	assert.Equal(t, map[string]int{"COPY_LINEAR": x.ranks * x.ranks, "ATOMIC": x.ranks * x.ranks}, slicesByKind)
	for _, e := range p.Events {
		if e.Ph == "X" && e.Name == "COPY_LINEAR" {
			assert.EqualValues(t, x.bytes, e.Args["bytes"])
		}
	}
	// Every lane calls put, quiet, waitSignal; lanes of a wave converge, so
	// one slice per wave per call (the wave's lanes target distinct peers).
	assert.Equal(t, map[string]int{"put": x.ranks, "quiet": x.ranks, "waitSignal": x.ranks}, calls)
	// Each quiet drains one queue per peer: each queue's last packet starts
	// a wake slice, unless two retire in the same nanosecond.
	assert.Equal(t, []string{"quiet"}, mapsKeys(wakes))
	assert.LessOrEqual(t, wakes["quiet"], x.ranks*x.ranks)
	assert.Greater(t, wakes["quiet"], x.ranks)

	chains := chains(t, data)
	t.Logf("%d flows; e.g. %q", len(chains), chains[:3])
	// Each queue's last packet, the ATOMIC, released its wave's quiet. (The
	// waitSignals do not wait here: every rank's quiet outlasts the
	// signal coming its way, so no ATOMIC wakes one; see
	// TestWaitSignalWokenByAtomic.)
	assert.Equal(t, x.ranks*x.ranks, count(chains, "wave:put → queue:ATOMIC → wave:quiet.wake"), "call → packet → waiter chains")
	assert.Equal(t, x.ranks*x.ranks, count(chains, "wave:put → queue:COPY_LINEAR"), "every COPY is linked to its put")
	for _, c := range chains {
		assert.NotContains(t, c, "?", "flow %q binds to no slice", c)
	}
}

// executedPackets reads emud_sdma_packets_total by op, padding NOPs aside.
func executedPackets(t *testing.T, n *engine.Node) map[string]int {
	mfs, err := n.Registry().Gather()
	require.NoError(t, err)
	got := map[string]int{}
	for _, mf := range mfs {
		if mf.GetName() != "emud_sdma_packets_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			op := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "op" {
					op = l.GetValue()
				}
			}
			if v := int(m.GetCounter().GetValue()); op != "NOP" && v > 0 {
				got[op] += v
			}
		}
	}
	return got
}

func TestSameSeedSameBytes(t *testing.T) {
	x := a2a{ranks: 4, queues: 2, bytes: 1 << 10}
	r1, _ := x.run(t, 5, true)
	r2, _ := x.run(t, 5, true)
	a, b := writeJSON(t, r1), writeJSON(t, r2)
	assert.True(t, bytes.Equal(a, b), "two runs of seed 5 wrote different traces")
	assert.True(t, bytes.Equal(a, writeJSON(t, r1)), "writing twice changed the trace")
}

// pair is two ranks with one queue per peer and a 4 KiB window each.
type pair struct {
	j    *job.Job
	s    *sim.Sim
	n    *engine.Node
	r    *Recorder
	wins []cco.Window
}

func newPair(t *testing.T, seed uint64) *pair {
	j, err := job.New(job.Config{Sim: sim.Config{Seed: seed}, Ranks: 2})
	require.NoError(t, err)
	p := &pair{j: j, s: j.Sim, n: j.Node, r: Attach(j.Node, j.Host)}
	p.wins, err = j.Window(4096)
	require.NoError(t, err)
	require.NoError(t, j.CreateDevComms(1, false))
	return p
}

func (p *pair) launch(t *testing.T, rank int, fn func(sdma *cco.Sdma)) {
	_, err := p.j.Launch(rank, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) { fn(sdma) })
	require.NoError(t, err)
}

// chains runs the pair and returns its trace's flows.
func (p *pair) chains(t *testing.T) []string {
	require.NoError(t, p.s.Run())
	data := writeJSON(t, p.r)
	checkTrace(t, data)
	return chains(t, data)
}

func suffixed(xs []string, suffix string) int {
	n := 0
	for _, x := range xs {
		if strings.HasSuffix(x, suffix) {
			n++
		}
	}
	return n
}

// Rank 0 waits for rank 1's signal before doing anything: the remote
// ATOMIC of rank 1's put is what wakes it.
func TestWaitSignalWokenByAtomic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		p := newPair(t, seed)
		p.launch(t, 0, func(sdma *cco.Sdma) { sdma.WaitSignal(1, 0, 1) })
		p.launch(t, 1, func(sdma *cco.Sdma) {
			sdma.Put(0, p.wins[1], 1024, p.wins[1], 0, 1024, 0, cco.RemoteSignal)
			sdma.Quiet(0)
		})
		chains := p.chains(t)
		assert.Equal(t, 1, count(chains, "wave:put → queue:ATOMIC → wave:waitSignal.wake"), "seed %d: %q", seed, chains)
	}
}

// pollWokenPair launches the exchange both TestPollWokenByAtomic and
// TestGoldenTrace run: rank 0's queue toward itself waits for rank 1's
// signal (an engine-side POLL_REGMEM), then copies; rank 1 puts with a
// remote signal.
func pollWokenPair(t *testing.T) *pair {
	t.Helper()
	p := newPair(t, 3)
	p.launch(t, 0, func(sdma *cco.Sdma) {
		sdma.PostWaitSignal(0, 0, 1, 0, 1)
		sdma.Put(0, p.wins[0], 2048, p.wins[0], 0, 64, 0)
		sdma.Quiet(0)
	})
	p.launch(t, 1, func(sdma *cco.Sdma) {
		sdma.Put(0, p.wins[1], 1024, p.wins[1], 0, 1024, 0, cco.RemoteSignal)
		sdma.Quiet(0)
	})
	return p
}

// An engine-side wait (postWaitSignal parks a POLL_REGMEM on the queue) is
// woken by the remote ATOMIC of another rank's put: the trace links them.
func TestPollWokenByAtomic(t *testing.T) {
	p := pollWokenPair(t)
	chains := p.chains(t)
	assert.Equal(t, 1, suffixed(chains, "queue:ATOMIC → queue:POLL_REGMEM.wake"), "the ATOMIC released the parked poll: %q", chains)
	assert.Contains(t, chains, "wave:postWaitSignal → queue:POLL_REGMEM")
}

// Aggregate puts are rung by a commit: the commit is their issuing call,
// even when its CU time lets other waves run before it rings.
func TestCommitRingsAggregatePuts(t *testing.T) {
	p := newPair(t, 4)
	for rank := range 2 {
		p.launch(t, rank, func(sdma *cco.Sdma) {
			for i := range 3 {
				sdma.Put(1-rank, p.wins[rank], uint64(1024+64*i), p.wins[rank], 0, 64, 0, cco.SdmaOptFlagsAggregate)
			}
			sdma.Commit(1-rank, 0)
			sdma.Quiet(1 - rank)
		})
	}
	chains := p.chains(t)
	assert.Equal(t, 4, count(chains, "wave:commit → queue:COPY_LINEAR"), "%q", chains)
	assert.Equal(t, 2, count(chains, "wave:commit → queue:COPY_LINEAR → wave:quiet.wake"), "%q", chains)
}

// Detach stops recording: a run after it leaves named tracks and nothing
// else, and the node runs without an observer.
func TestDetach(t *testing.T) {
	p := newPair(t, 1)
	assert.Same(t, p.r, Attach(p.n, nil), "one recorder per node")
	p.r.Detach()
	assert.Nil(t, p.n.Observer())
	p.launch(t, 0, func(sdma *cco.Sdma) {
		sdma.Put(1, p.wins[0], 1024, p.wins[0], 0, 64, 0, cco.RemoteSignal)
		sdma.Quiet(1)
	})
	require.NoError(t, p.s.Run())
	data := writeJSON(t, p.r)
	checkTrace(t, data)
	evs := parse(t, data).Events
	require.NotEmpty(t, evs)
	for _, e := range evs {
		assert.Equal(t, "M", e.Ph, "nothing but track names after Detach: %+v", e)
	}
}

func TestStamp(t *testing.T) {
	for _, tc := range []struct {
		t    sim.Time
		want string
	}{
		{0, "0"}, {1, "0"}, {499, "0"}, {500, "0.0009765625"}, {sim.Nanosecond, "0.0009765625"},
		{2 * sim.Nanosecond, "0.001953125"}, {3 * sim.Nanosecond, "0.0029296875"},
		{sim.Microsecond, "1"}, {1_500_000, "1.5"}, {123_456_789, "123.45703125"},
		{sim.Second, "1000000"}, {-5, "0"},
	} {
		assert.Equal(t, tc.want, nsOf(tc.t).stamp().String(), "%d ps", tc.t)
	}
}

// The grid's promise, for any two times a ≤ b: the written values are
// within 1/4 ns of their nanoseconds, Perfetto's round(µs × 1000) of the
// written duration is the nanoseconds between them, and float64 sums and
// differences of written values are exact.
func TestStampGrid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a := sim.Time(rapid.Int64Range(0, int64(100*sim.Second)).Draw(rt, "a"))
		b := a + sim.Time(rapid.Int64Range(0, int64(sim.Second)).Draw(rt, "d"))
		na, nb := nsOf(a), nsOf(b)
		require.LessOrEqual(rt, na, nb)
		sa, sb := na.stamp(), nb.stamp()
		us := func(s stamp) float64 {
			v, err := strconv.ParseFloat(s.String(), 64)
			require.NoError(rt, err)
			return v
		}
		assert.InDelta(rt, float64(na), us(sa)*1000, 0.25)
		assert.Equal(rt, int64(nb-na), int64(math.Round(us(sb-sa)*1000)), "Perfetto's nanoseconds of the duration")
		assert.Equal(rt, us(sb), us(sa)+us(sb-sa), "ts + dur in float64")
		assert.Equal(rt, us(sb)-us(sa), us(sb-sa), "a shift in float64")
	})
}

// TestWriteAlltoallTrace writes the trace of emud's default alltoall
// (8 ranks, 1 MiB per pair, 2 queues, seed 1) to $EMUD_TRACE_OUT, for
// opening in the Perfetto UI; without the variable it is skipped.
func TestWriteAlltoallTrace(t *testing.T) {
	out := os.Getenv("EMUD_TRACE_OUT")
	if out == "" {
		t.Skip("set EMUD_TRACE_OUT=file.json to write the default alltoall's trace")
	}
	r, _ := a2a{ranks: 8, queues: 2, bytes: 1 << 20}.run(t, 1, true)
	data := writeJSON(t, r)
	checkTrace(t, data)
	require.NoError(t, os.WriteFile(out, data, 0o644))
	kinds := map[string]int{}
	for _, e := range parse(t, data).Events {
		k := e.Ph
		if e.Ph == "X" || e.Ph == "M" {
			k += " " + e.Name
		}
		kinds[k]++
	}
	t.Logf("%d bytes; events by kind: %v", len(data), kinds)
}

// The whole trace of a small exchange, pinned: an engine-side wait on the
// peer's signal, a put behind it, the peer's put with its remote signal.
// A change to what the recorder writes shows here as a diff (rewrite with
// go test ./trace -run TestGoldenTrace -update when it is meant).
func TestGoldenTrace(t *testing.T) {
	p := pollWokenPair(t)
	require.NoError(t, p.s.Run())
	data := writeJSON(t, p.r)
	checkTrace(t, data)
	golden.Check(t, "pair-poll-woken.json", string(data))
}
