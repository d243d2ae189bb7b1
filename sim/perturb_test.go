package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLevelAndStrategy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Level
		err  bool
	}{
		{"0", LevelExact, false}, {"exact", LevelExact, false}, {"1", LevelRealistic, false},
		{"realistic", LevelRealistic, false}, {"stress", LevelStress, false}, {"3", 0, true}, {"", 0, true},
	} {
		l, err := ParseLevel(tc.in)
		if tc.err {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, l)
	}
	st, err := ParseStrategy("pct")
	require.NoError(t, err)
	assert.Equal(t, StrategyPCT, st)
	_, err = ParseStrategy("dfs")
	assert.ErrorContains(t, err, "random or pct")
}

// Level 0 is the identity and draws nothing: exact runs keep their digests.
func TestPerturbExactIsIdentity(t *testing.T) {
	s := New(Config{Seed: 3})
	p := s.Perturb()
	assert.False(t, p.On())
	k := Key{Kind: KeyEngine, A: 1}
	assert.Equal(t, 7*Microsecond, p.Duration(k, 7*Microsecond))
	assert.Equal(t, 60.0, p.Rate(k, 60))
	assert.Zero(t, p.LaunchSkew())
	assert.Zero(t, p.BlockSkew())
	assert.Zero(t, p.Phase(Microsecond))
	// Nothing drawn: no stream made, no run factor kept (a digest check
	// here could not fail, as PRNG draws are not hashed).
	assert.Nil(t, p.run)
	assert.Nil(t, p.runRng)
	assert.Nil(t, p.launch)
	assert.Nil(t, p.phase)
	for _, r := range p.ev {
		assert.Nil(t, r)
	}
}

// Perturbed durations stay within the level's documented spread, a key
// keeps its run factor, and the same seed draws the same numbers.
func TestPerturbSpread(t *testing.T) {
	for _, l := range []Level{LevelRealistic, LevelStress} {
		sp := Spreads(l)
		draw := func(seed uint64) []Time {
			p := New(Config{Seed: seed, Perturb: l}).Perturb()
			var out []Time
			for i := range 2000 {
				out = append(out, p.Duration(Key{Kind: KeyEngine, A: uint32(i % 8)}, 10*Microsecond))
			}
			for range 50 {
				out = append(out, p.LaunchSkew(), p.BlockSkew(), p.Phase(3*Microsecond))
			}
			return out
		}
		assert.Equal(t, draw(9), draw(9), "level %v: same seed, same draws", l)
		assert.NotEqual(t, draw(9), draw(10), "level %v: another seed, other draws", l)

		lo, hi := 10*Microsecond, Time(0)
		tails := 0
		var sum float64
		for seed := uint64(1); seed <= 20; seed++ {
			for _, d := range draw(seed)[:2000] {
				lo, hi = min(lo, d), max(hi, d)
				sum += float64(d)
				if float64(d) > 10*float64(Microsecond)*(1+sp.Run)*(1+sp.Event) {
					tails++
				}
			}
		}
		minF := (1 - sp.Run) * (1 - sp.Event)
		maxF := (1 + sp.Run) * (1 + sp.Event) * sp.TailMax * sp.TailMax
		assert.GreaterOrEqual(t, float64(lo), 10*float64(Microsecond)*minF-1, "level %v", l)
		assert.LessOrEqual(t, float64(hi), 10*float64(Microsecond)*maxF+1, "level %v", l)
		assert.Less(t, float64(lo), 10*float64(Microsecond)*(1-sp.Run), "level %v: the spread reaches its low side", l)
		assert.Greater(t, tails, 0, "level %v: some events fall in the tail", l)
		assert.Less(t, tails, 40000/10, "level %v: tails are rare", l)
		mean := sum / 40000 / float64(10*Microsecond)
		assert.InDelta(t, 1, mean, 0.15, "level %v: the spread is about the model's value, not a bias", l)
	}
}

func TestPerturbLaunchAndPhase(t *testing.T) {
	p := New(Config{Seed: 5, Perturb: LevelRealistic}).Perturb()
	sp := Spreads(LevelRealistic)
	late, lateBlocks := 0, 0
	for range 1000 {
		d := p.LaunchSkew()
		require.GreaterOrEqual(t, d, Time(0))
		require.Less(t, d, sp.GPUSkewTail)
		if d >= sp.GPUSkew {
			late++
		}
		b := p.BlockSkew()
		require.True(t, b >= 0 && b < sp.BlockSkew+sp.BlockSkewTail)
		if b >= sp.BlockSkew {
			lateBlocks++
		}
		ph := p.Phase(300 * Nanosecond)
		require.True(t, ph >= 0 && ph < 300*Nanosecond)
	}
	assert.Greater(t, late, 0, "the launch-skew tail happens")
	assert.Less(t, late, 100)
	// A block now and then starts tens of µs late (issue 38: CTAs that
	// need to start more than a few µs apart to show a bug).
	assert.Greater(t, lateBlocks, 0, "the block-skew tail happens")
	assert.Less(t, lateBlocks, 60)
	assert.GreaterOrEqual(t, sp.BlockSkewTail, 20*Microsecond)
}

// SpawnAfter starts an actor late, and exact runs spawn as Spawn does.
func TestSpawnAfter(t *testing.T) {
	s := New(Config{Seed: 1})
	var at Time
	s.SpawnAfter(5*Microsecond, "late", func(a *Actor) { at = a.Now() })
	require.NoError(t, s.Run())
	assert.Equal(t, 5*Microsecond, at)

	digest := func(spawn func(s *Sim, name string, fn func(*Actor))) string {
		s := New(Config{Seed: 4})
		for i := range 3 {
			spawn(s, fmt.Sprint("a", i), func(a *Actor) { a.Sleep(Time(i)) })
		}
		require.NoError(t, s.Run())
		return s.Digest()
	}
	assert.Equal(t,
		digest(func(s *Sim, n string, fn func(*Actor)) { s.Spawn(n, fn) }),
		digest(func(s *Sim, n string, fn func(*Actor)) { s.SpawnAfter(0, n, fn) }))
}
