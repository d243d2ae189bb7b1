package emutest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// putThenStore is rank 0 putting 1 KiB of its window to every other rank
// with a remote signal, then storing into the source: with quiet, after
// QuietAll (no race); without, racing the copies still reading it.
func putThenStore(seed uint64, ranks int, quiet bool) error {
	j, err := NewJobWith(seed, ranks, Options{Perturb: sim.LevelRealistic, Race: true})
	if err != nil {
		return err
	}
	w, err := j.Window(4096)
	if err != nil {
		return err
	}
	if err := j.CreateDevComms(2, false); err != nil {
		return err
	}
	if _, err := j.Launch(0, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
		for p := 1; p < ranks; p++ {
			sdma.Put(p, w[p], 2048, w[0], 0, 1024, p%2, cco.RemoteSignal)
		}
		if quiet {
			QuietAll(sdma)
		}
		cco.NewMem(th, sdma.DevComm()).Store32(w[0].LocalPtr(0), 7)
	}); err != nil {
		return err
	}
	return j.Run()
}

// QuietAll drains every peer's queues: the store after it races nothing;
// without it the detector names the copies' source reads.
func TestQuietAllDrainsEveryPeer(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		assert.NoError(t, putThenStore(seed, 4, true), "seed %d", seed)
		err := putThenStore(seed, 4, false)
		assert.Equal(t, KindRace, KindOf(err), "seed %d: %v", seed, err)
	}
}

// Rate runs every seed, counts each failure by kind and keeps the first
// seed of each kind with its error; a seed that passes counts for none.
func TestRateCountsEveryKind(t *testing.T) {
	hang := func(seed uint64) error {
		j, err := NewJob(seed, 2)
		require.NoError(t, err)
		require.NoError(t, j.CreateDevComms(1, false))
		_, err = j.Launch(1, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) })
		require.NoError(t, err)
		return j.Run()
	}
	trap := func(seed uint64) error {
		j, err := NewJob(seed, 2)
		require.NoError(t, err)
		require.NoError(t, j.CreateDevComms(1, false))
		_, err = j.Launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) { sdma.Quiet(5) }) // no peer 5
		require.NoError(t, err)
		return j.Run()
	}
	r := Rate(t, 12, func(seed uint64) error {
		switch seed % 6 {
		case 1:
			return hang(seed)
		case 2:
			return putThenStore(seed, 2, false)
		case 3:
			return trap(seed)
		case 4:
			return fmt.Errorf("rank 1: %w", WrongData("byte 3 is %#x", 7))
		case 5:
			panic("the body's own bug")
		}
		return nil
	})
	assert.Equal(t, 12, r.Seeds)
	assert.Equal(t, 10, r.Detected)
	assert.InDelta(t, 10.0/12, r.Rate(), 1e-9)
	for k, first := range map[Kind]uint64{KindHang: 1, KindRace: 2, KindTrap: 3, KindWrongData: 4, KindError: 5} {
		o := r.Of(k)
		assert.Equal(t, 2, o.Seeds, "%v", k)
		assert.Equal(t, first, o.First, "%v", k)
		assert.Equal(t, k, KindOf(o.Err), "%v: %v", k, o.Err)
	}
	assert.True(t, errors.Is(r.Of(KindWrongData).Err, ErrWrongData))
	assert.Equal(t, "detected 10 of 12 seeds (83%): hang 2 (first seed 1), race 2 (first seed 2), trap 2 (first seed 3), wrong data 2 (first seed 4), error 2 (first seed 5)", r.String())
}

// Under pct without -emutest.pct-steps a search first runs the body once
// with the random strategy and spreads the change points over that run's
// steps; with the flag, the flag's count is used and nothing is probed.
func TestPCTStepsFromAProbeRun(t *testing.T) {
	setSchedule(t, "pct", 0, 0)
	type run struct {
		strategy sim.Strategy
		pct      sim.PCT
		steps    int
	}
	var runs []run
	body := func(seed uint64) error {
		j, err := NewJob(seed, 2)
		if err != nil {
			return err
		}
		runPut(t, j)
		_, pct, _ := Schedule()
		runs = append(runs, run{j.Sim.Strategy(), pct, j.Sim.Steps()})
		return nil
	}
	Seeds(&fakeT{name: "TestPCT"}, 3, body)
	require.Len(t, runs, 4, "the probe and three seeds")
	assert.Equal(t, sim.StrategyRandom, runs[0].strategy, "the probe runs without PCT")
	assert.Greater(t, runs[0].steps, 0)
	assert.Less(t, runs[0].steps, sim.DefaultPCTSteps/100, "a short test: the default count would put every change point past its end")
	for _, r := range runs[1:] {
		assert.Equal(t, sim.StrategyPCT, r.strategy)
		assert.Equal(t, runs[0].steps, r.pct.Steps, "change points over the probe's steps")
	}
	assert.Equal(t, 0, probed(), "the count is the search's only")

	runs = nil
	setSchedule(t, "pct", 0, 500)
	Seeds(&fakeT{name: "TestPCT"}, 2, body)
	require.Len(t, runs, 2, "no probe")
	assert.Equal(t, 500, runs[0].pct.Steps)
}
