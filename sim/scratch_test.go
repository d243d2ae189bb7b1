package sim

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScratchRunsIndependent: runs that share a Scratch take its event
// store back zeroed: a run's digest and events are a fresh Sim's, also
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
		})
	}
}
