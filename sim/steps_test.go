package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stepLog is a Handler that logs and traces each step and, from some of
// them, schedules more steps (at Now among them, while a tie is being
// broken).
type stepLog struct {
	s       *Sim
	rng     *rand.Rand
	batched bool
	kind    TraceKind
	log     []string
	depth   int
}

func (h *stepLog) Step(arg uint64) {
	h.log = append(h.log, fmt.Sprintf("%v:%x", h.s.Now(), arg))
	h.s.Trace(h.kind, 0, arg, 0, 0)
	if arg%5 == 0 && h.depth < 200 {
		h.depth++
		h.group(arg<<8 | uint64(h.depth))
	}
}

// group schedules a group of steps due a few nanoseconds from Now (ties
// among them and with other events; some in the past, clamped to Now;
// sorted or not), as one AtWorkSteps or as AtWorkStep calls one by one.
func (h *stepLog) group(tag uint64) {
	n := 1 + h.rng.IntN(12)
	ts := make([]Time, n)
	sorted := h.rng.IntN(2) == 0
	for i := range ts {
		ts[i] = h.s.Now() + Time(h.rng.IntN(4))*Nanosecond
		if sorted && i > 0 {
			ts[i] = max(ts[i], ts[i-1])
		}
	}
	off := Time(h.rng.IntN(3)-1) * Nanosecond
	arg, stride := tag<<16, uint64(1+h.rng.IntN(3))
	if h.batched {
		h.s.AtWorkSteps(ts, off, h, arg, stride)
		return
	}
	for i, t := range ts {
		h.s.AtWorkStep(t+off, h, arg+uint64(i)*stride)
	}
}

// stepsRun is a run of actors and events that schedule groups of steps:
// its log of steps and digest.
func stepsRun(t *testing.T, cfg Config, batched bool) ([]string, string) {
	t.Helper()
	s := New(cfg)
	h := &stepLog{s: s, rng: rand.New(rand.NewPCG(cfg.Seed, 1)), batched: batched, kind: s.TraceKind("step")}
	for a := range 4 {
		s.Spawn(fmt.Sprint(a), func(act *Actor) {
			for r := range 6 {
				h.group(uint64(a*16 + r))
				act.Sleep(Time(1+h.rng.IntN(3)) * Nanosecond)
			}
		})
	}
	for i := range 8 {
		s.At(Time(i%3)*Nanosecond, func() { h.log = append(h.log, fmt.Sprintf("%v:at%d", s.Now(), i)) })
	}
	require.NoError(t, s.Run())
	return h.log, s.Digest()
}

// AtWorkSteps is n AtWorkStep calls: the same steps at the same times, in
// the same order, with the same tie-breaks and digest, under every
// strategy.
func TestAtWorkStepsIsAtWorkStepEach(t *testing.T) {
	cfgs := map[string]Config{
		"random":    {},
		"pct":       {Strategy: StrategyPCT, PCT: PCT{Depth: 4, Steps: 300, MaxDelay: 3 * Nanosecond}},
		"perturbed": {Perturb: LevelStress},
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			digests := map[string]bool{}
			for seed := uint64(1); seed <= 25; seed++ {
				cfg.Seed = seed
				wantLog, want := stepsRun(t, cfg, false)
				gotLog, got := stepsRun(t, cfg, true)
				require.Equal(t, wantLog, gotLog, "seed %d", seed)
				require.Equal(t, want, got, "seed %d", seed)
				require.Greater(t, len(gotLog), 100, "seed %d: the groups ran", seed)
				digests[got] = true
			}
			assert.Greater(t, len(digests), 20, "seeds give different schedules")
		})
	}
}

// A group left pending holds the watchdog off as its events would: the
// gaps between its steps, far longer than the watchdog, are no hang.
func TestAtWorkStepsHoldOffWatchdog(t *testing.T) {
	s := New(Config{Seed: 1, Watchdog: Microsecond})
	h := &stepLog{s: s, kind: s.TraceKind("step")}
	s.AtWorkSteps([]Time{3 * Millisecond, Millisecond, 2 * Millisecond}, 0, h, 1, 1)
	require.NoError(t, s.Run())
	assert.Equal(t, []string{"1ms:2", "2ms:3", "3ms:1"}, h.log)
}
