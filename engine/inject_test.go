package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// injectRun sends one copy of bytes from GPU 0 to GPU 1 on queue (0, 1, 0)
// followed by a signal ATOMIC, twice, while a receiver waits for both
// signals and a sender quiets; it returns the node, when the receiver saw
// the signals and the run's error.
func injectRun(t *testing.T, plan *InjectPlan, bytes uint64) (*Node, sim.Time, error) {
	t.Helper()
	r := newRig(t, 1, Config{GPUs: 2, Inject: plan})
	src, dst, sig := r.alloc(0, bytes), r.alloc(1, bytes), r.alloc(1, 64)
	q := r.queue(0, 1, 0)
	var seen sim.Time
	r.s.Spawn("sender", func(a *sim.Actor) {
		for range 2 {
			require.NoError(t, post(a, q, ring.Copy(dst, src, bytes), ring.AtomicAdd64(sig, 1)))
		}
		q.AwaitDrained(a, q.QuietTarget())
	})
	r.s.Spawn("receiver", func(a *sim.Actor) {
		r.n.Memory().Await(a, sig, 8, func() bool { v, _ := r.n.Memory().Load64(sig); return v >= 2 },
			func() string { return "both signals" })
		seen = a.Now()
	})
	err := r.s.Run()
	return r.n, seen, err
}

func hangText(t *testing.T, err error) string {
	t.Helper()
	var h *sim.HangError
	require.True(t, errors.As(err, &h), "want a hang, got %v", err)
	return h.Text()
}

func TestInjectedFaults(t *testing.T) {
	q0 := QueueID{GPU: 0, Peer: 1, Q: 0}
	for _, tc := range []struct {
		name  string
		plan  InjectPlan
		bytes uint64
		kind  FaultKind
		hang  []string // substrings of the hang report; nil = the run completes
	}{
		{"dropped signal", InjectPlan{DropSignals: []PacketRef{{q0, 1}}}, 64, FaultInjectedSignalDrop,
			[]string{"INJECTED_SIGNAL_DROP", "ATOMIC #1 of sdma gpu0→gpu1 q0 retired without writing", "lost completion"}},
		{"stall at size", InjectPlan{StallBytes: 4096}, 4096, FaultInjectedStall,
			[]string{"INJECTED_ENGINE_STALL", "stalled on a COPY of 4096 B (≥ 4096 B)"}},
		{"below the stall size", InjectPlan{StallBytes: 4097}, 4096, "", nil},
		{"dead engine", InjectPlan{DeadQueues: []QueueID{q0}}, 64, FaultInjectedDeadEngine,
			[]string{"INJECTED_DEAD_ENGINE", "is on a dead engine"}},
		{"lost last doorbell", InjectPlan{LostDoorbells: []PacketRef{{q0, 1}}}, 64, FaultInjectedDoorbellLost,
			[]string{"INJECTED_DOORBELL_LOST", "doorbell #1 of sdma gpu0→gpu1 q0"}},
		{"lost first doorbell, caught up by the second", InjectPlan{LostDoorbells: []PacketRef{{q0, 0}}}, 64, FaultInjectedDoorbellLost, nil},
		{"delayed doorbells", InjectPlan{DoorbellDelayRate: 1, DoorbellDelay: 30 * sim.Microsecond}, 64, FaultInjectedDoorbellDelay, nil},
		{"lagging rptr", InjectPlan{RptrLag: 40 * sim.Microsecond}, 64, FaultInjectedRptrLag, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, _, err := injectRun(t, &tc.plan, tc.bytes)
			if tc.hang != nil {
				text := hangText(t, err)
				for _, s := range tc.hang {
					assert.Contains(t, text, s)
				}
				assert.Contains(t, text, "injected fault", "the hang says a fault was injected")
			} else {
				require.NoError(t, err)
			}
			var kinds []FaultKind
			for _, f := range n.Injected() {
				kinds = append(kinds, f.Kind)
				assert.False(t, f.Halts)
			}
			if tc.kind == "" {
				assert.Empty(t, kinds)
				return
			}
			assert.Contains(t, kinds, tc.kind)
			assert.Equal(t, n.Injected(), n.Faults(), "injected faults are in the node's fault list (report, metrics, trace)")
		})
	}
}

// Delays and lags make runs longer, not wrong.
func TestInjectedDelaysCostTime(t *testing.T) {
	_, base, _ := injectRun(t, nil, 64)
	_, late, _ := injectRun(t, &InjectPlan{DoorbellDelayRate: 1, DoorbellDelay: 30 * sim.Microsecond}, 64)
	assert.Greater(t, late, base)
	_, _, err := injectRun(t, &InjectPlan{SignalDropRate: 1}, 64)
	assert.Contains(t, hangText(t, err), "ATOMIC #0")
}

// Rate-driven faults come from the seed: the same seed, the same faults.
func TestInjectRatesAreSeeded(t *testing.T) {
	faults := func(seed uint64) []string {
		s := sim.New(sim.Config{Seed: seed})
		n, err := NewNode(s, Config{GPUs: 2, Inject: &InjectPlan{SignalDropRate: 0.3, DoorbellLossRate: 0.2}})
		require.NoError(t, err)
		src, err := n.mem.Alloc(0, 64, "src")
		require.NoError(t, err)
		sig, err := n.mem.Alloc(1, 64, "sig")
		require.NoError(t, err)
		q, _ := n.Queue(0, 1, 0)
		s.Spawn("sender", func(a *sim.Actor) {
			for range 20 {
				require.NoError(t, post(a, q, ring.Copy(sig, src, 8), ring.AtomicAdd64(sig, 1)))
			}
		})
		_ = s.Run()
		var out []string
		for _, f := range n.Injected() {
			out = append(out, f.Detail)
		}
		return out
	}
	a := faults(5)
	assert.NotEmpty(t, a)
	assert.Equal(t, a, faults(5))
	assert.NotEqual(t, a, faults(6))
}

func TestSeededPlanAndSpec(t *testing.T) {
	kinds := map[string]bool{}
	none := 0
	for seed := uint64(1); seed <= 300; seed++ {
		s := sim.New(sim.Config{Seed: seed})
		p := InjectSpec{Seeded: true, Rate: 0.5}.For(s, 4, 2)
		require.NoError(t, p.Check(4, 2))
		if p.Empty() {
			none++
			continue
		}
		kinds[strings.SplitN(p.String(), "=", 2)[0]] = true
		again := InjectSpec{Seeded: true, Rate: 0.5}.For(sim.New(sim.Config{Seed: seed}), 4, 2)
		assert.Equal(t, p, again, "the seed fixes the plan")
	}
	assert.Len(t, kinds, 6, "every kind is drawn: %v", kinds)
	assert.InDelta(t, 150, none, 40, "about half the runs get no fault at rate 0.5")

	for _, tc := range []struct {
		in, out string
		err     string
	}{
		{"", "none", ""},
		{"none", "none", ""},
		{"seed", "seed", ""},
		{"seed=0.25", "seed=0.25", ""},
		{"drop-signal=0:1:0#2,stall-bytes=256M", "drop-signal=0:1:0#2,stall-bytes=268435456", ""},
		{"dead=1:0:1,lost-doorbell=0:1:0#0,doorbell-loss-rate=0.1", "dead=1:0:1,lost-doorbell=0:1:0#0,doorbell-loss-rate=0.1", ""},
		{"doorbell-delay=20us@0.2,rptr-lag=5µs@0:1:0", "doorbell-delay=20000000ps@0.2,rptr-lag=5000000ps@0:1:0", ""},
		{"signal-drop-rate=1.5", "", "want a number in [0, 1]"},
		{"stall-bytes=0", "", "positive byte count"},
		{"dead=1:2", "", "GPU:PEER:Q"},
		{"drop-signal=0:1:0", "", "GPU:PEER:Q#N"},
		{"doorbell-delay=5us", "", "DUR@RATE"},
		{"rptr-lag=5 parsecs", "", "ps, ns, us or ms"},
		{"melt", "", "unknown fault"},
	} {
		sp, err := ParseInject(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.out, sp.String(), tc.in)
		back, err := ParseInject(sp.String())
		require.NoError(t, err)
		assert.Equal(t, sp, back, "String reads back: %s", tc.in)
	}
	p := InjectPlan{DeadQueues: []QueueID{{GPU: 0, Peer: 5, Q: 0}}}
	assert.ErrorContains(t, p.Check(4, 2), "outside the node")
	_, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2, Inject: &InjectPlan{SignalDropRate: 2}})
	assert.ErrorContains(t, err, "signal drop rate")
}

// Any spec either parses into one that reads back the same, or is an
// error; never a panic.
func FuzzParseInject(f *testing.F) {
	for _, s := range []string{"", "none", "seed", "seed=0.3", "drop-signal=0:1:0#2,stall-bytes=256M",
		"dead=1:0:1,lost-doorbell=0:1:0#0", "doorbell-delay=20us@0.2,rptr-lag=5µs@0:1:0", "signal-drop-rate=2", "x=y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseInject(s)
		if err != nil {
			return
		}
		back, err := ParseInject(sp.String())
		require.NoError(t, err, "String of %q = %q does not parse", s, sp.String())
		assert.Equal(t, sp.String(), back.String())
	})
}
