package emutest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/emud-dev/emud/internal/testmain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

func TestMain(m *testing.M) { testmain.Run(m) }

// fakeT records what Seeds reports instead of failing the real test.
type fakeT struct {
	testing.TB
	name   string
	failed string
}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		k      int
		failAt uint64 // 0: none
		panics bool
	}{
		{"all pass", 5, 0, false},
		{"third fails", 5, 3, false},
		{"beyond k", 2, 3, false},
		{"panic", 5, 2, true},
		{"no seeds", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran []uint64
			f := Find(tc.k, func(seed uint64) error {
				ran = append(ran, seed)
				if seed == tc.failAt {
					if tc.panics {
						panic("boom")
					}
					return errors.New("bad data")
				}
				return nil
			})
			if tc.failAt == 0 || tc.failAt > uint64(tc.k) {
				assert.Nil(t, f)
				assert.Len(t, ran, tc.k)
				return
			}
			require.NotNil(t, f)
			assert.Equal(t, tc.failAt, f.Seed)
			assert.Len(t, ran, int(tc.failAt), "stops at the first failure")
			assert.Nil(t, f.Hang())
			if tc.panics {
				assert.Equal(t, "panic: boom\n", f.Report())
			} else {
				assert.Equal(t, "bad data\n", f.Report())
			}
		})
	}
}

// A hang fails the test with the full report and a command that reruns
// the seed; the job helpers build a real node.
func TestSeedsReportsHang(t *testing.T) {
	ft := &fakeT{name: "TestUser/sub"}
	Seeds(ft, 3, func(seed uint64) error {
		j, err := NewJob(seed, 2)
		require.NoError(t, err)
		require.NoError(t, j.CreateDevComms(0, false))
		_, err = j.Launch(1, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) })
		require.NoError(t, err)
		return j.Run()
	})
	assert.True(t, strings.HasPrefix(ft.failed, "emutest: seed 1 hangs (timing perturbation level 1 (realistic)):\nhang (deadlock)"), ft.failed)
	assert.Contains(t, ft.failed, "waitSignal on rank 1")
	assert.Contains(t, ft.failed, "seed: 1\ndigest: ")
	assert.True(t, strings.HasSuffix(ft.failed, "reproduce: go test -run '^TestUser$/^sub$' ./emutest -emutest.seed=1 -emutest.perturb=1"), ft.failed)
}

func TestSeedsFlags(t *testing.T) {
	defer func(s uint64, n int) { *onlySeed, *numSeeds = s, n }(*onlySeed, *numSeeds)
	var ran []uint64
	record := func(seed uint64) error { ran = append(ran, seed); return nil }

	ft := &fakeT{name: "TestX"}
	Seeds(ft, 3, record)
	assert.Equal(t, []uint64{1, 2, 3}, ran)
	assert.Empty(t, ft.failed)

	ran, *numSeeds = nil, 5
	Seeds(ft, 3, record)
	assert.Equal(t, []uint64{1, 2, 3, 4, 5}, ran, "-emutest.seeds overrides the count")

	ran, *onlySeed = nil, 17
	Seeds(ft, 3, func(seed uint64) error { ran = append(ran, seed); return errors.New("wrong") })
	assert.Equal(t, []uint64{17}, ran, "-emutest.seed runs that seed only")
	assert.Equal(t, "emutest: seed 17 fails (timing perturbation level 1 (realistic)):\nwrong\nreproduce: go test -run '^TestX$' ./emutest -emutest.seed=17 -emutest.perturb=1", ft.failed)

	defer func(p int) { *perturb = p }(*perturb)
	ran, *perturb = nil, 0
	Seeds(ft, 3, func(seed uint64) error { ran = append(ran, seed); return errors.New("wrong") })
	assert.Equal(t, "emutest: seed 17 fails (timing perturbation level 0 (exact)):\nwrong\nreproduce: go test -run '^TestX$' ./emutest -emutest.seed=17 -emutest.perturb=0", ft.failed,
		"-emutest.perturb sets the level and the reproduce command carries it")

	ft = &fakeT{name: "TestX"}
	Seeds(ft, 0, record)
	assert.Contains(t, ft.failed, "k = 0")
}

// runPut runs one 4 KiB put from rank 0 to rank 1 of j, quieted, to the
// end.
func runPut(t *testing.T, j *Job) {
	t.Helper()
	buf, err := j.Window(4096)
	require.NoError(t, err)
	require.NoError(t, j.CreateDevComms(1, false))
	_, err = j.Launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, buf[1], 0, buf[0], 0, 4096, 0)
		sdma.QuietQueue(1, 0)
	})
	require.NoError(t, err)
	require.NoError(t, j.Run())
}

// NewJob's runs are perturbed at the realistic level unless the flag says
// otherwise, and the same seed gives the same run.
func TestNewJobLevel(t *testing.T) {
	assert.Equal(t, sim.LevelRealistic, Level(), "the default level")
	end := func(seed uint64, l sim.Level) (sim.Time, string) {
		j, err := NewJobAt(seed, 2, l)
		require.NoError(t, err)
		assert.Equal(t, l, j.Sim.Perturb().Level())
		runPut(t, j)
		return j.Sim.Now(), j.Sim.Digest()
	}
	exact1, _ := end(1, sim.LevelExact)
	exact2, _ := end(2, sim.LevelExact)
	assert.Equal(t, exact1, exact2, "exact timing: the seed changes nothing here")
	ends := map[sim.Time]bool{}
	for seed := uint64(1); seed <= 5; seed++ {
		e, d := end(seed, sim.LevelRealistic)
		e2, d2 := end(seed, sim.LevelRealistic)
		assert.Equal(t, e, e2)
		assert.Equal(t, d, d2, "same seed and level, same digest")
		ends[e] = true
	}
	assert.Greater(t, len(ends), 3, "realistic perturbation spreads the end time over seeds")
	_, err := NewJobAt(1, 2, sim.MaxLevel+1)
	assert.ErrorContains(t, err, "perturbation level")
}

func TestJobErrors(t *testing.T) {
	_, err := NewJob(1, 0)
	assert.Error(t, err)
	j, err := NewJob(1, 2)
	require.NoError(t, err)
	_, err = j.Launch(0, 1, 1, func(*kernel.Thread, *cco.Sdma) {})
	assert.ErrorContains(t, err, "Launch before CreateDevComms")
	require.NoError(t, j.CreateDevComms(0, true))
	_, err = j.Launch(2, 1, 1, func(*kernel.Thread, *cco.Sdma) {})
	assert.ErrorContains(t, err, "rank 2")
	assert.NoError(t, j.Run(), "nothing launched, nothing to wait for")
	var h *sim.HangError
	assert.False(t, errors.As(err, &h))
}

// With Options.Race a seed whose kernel reuses its send buffer before
// quiet fails with the race report, though its data may be right.
func TestSeedsReportsRaces(t *testing.T) {
	body := func(reuse bool) func(seed uint64) error {
		return func(seed uint64) error {
			j, err := NewJobWith(seed, 2, Options{Perturb: sim.LevelExact, Race: true})
			if err != nil {
				return err
			}
			w, err := j.Window(4096)
			if err != nil {
				return err
			}
			if err := j.CreateDevComms(1, false); err != nil {
				return err
			}
			if _, err := j.Launch(0, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
				sdma.Put(1, w[0], 2048, w[0], 0, 1024, 0)
				if reuse {
					cco.NewMem(th, sdma.DevComm()).Store32(w[0].LocalPtr(0), 7)
				}
				sdma.Quiet(1)
				cco.NewMem(th, sdma.DevComm()).Store32(w[0].LocalPtr(4), 7)
			}); err != nil {
				return err
			}
			return j.Sim.Run()
		}
	}
	f := &fakeT{name: "TestRacy"}
	Seeds(f, 3, body(true))
	assert.Contains(t, f.failed, "seed 1 has data races")
	assert.Contains(t, f.failed, "missing edge")
	assert.Contains(t, f.failed, "store32 (write)")
	ok := &fakeT{name: "TestClean"}
	Seeds(ok, 3, body(false))
	assert.Empty(t, ok.failed)
}

// setSchedule sets the strategy flags for one test and restores them after.
func setSchedule(t *testing.T, st string, depth, steps int) {
	t.Helper()
	s, d, k := *strategy, *pctDepth, *pctSteps
	t.Cleanup(func() { *strategy, *pctDepth, *pctSteps = s, d, k })
	*strategy, *pctDepth, *pctSteps = st, depth, steps
}

func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		name         string
		st           string
		depth, steps int
		want         sim.Strategy
		wantPCT      sim.PCT
		err          string // "" = no error
		header, cmd  string // what Seeds' failure message and command add
	}{
		{name: "default", st: "random", want: sim.StrategyRandom},
		{name: "pct", st: "pct", want: sim.StrategyPCT, header: ", strategy pct", cmd: " -emutest.strategy=pct"},
		{name: "pct depth steps", st: "pct", depth: 2, steps: 40, want: sim.StrategyPCT, wantPCT: sim.PCT{Depth: 2, Steps: 40},
			header: ", strategy pct depth 2 steps 40", cmd: " -emutest.strategy=pct -emutest.pct-depth=2 -emutest.pct-steps=40"},
		{name: "unknown", st: "ties", err: `-emutest.strategy: strategy "ties": want random or pct`},
		{name: "depth without pct", st: "random", depth: 2, err: "-emutest.pct-depth=2 -emutest.pct-steps=0 without -emutest.strategy=pct"},
		{name: "depth out of range", st: "pct", depth: 65, err: "pct depth 65"},
		{name: "negative steps", st: "pct", steps: -1, err: "pct steps -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setSchedule(t, tc.st, tc.depth, tc.steps)
			st, c, err := Schedule()
			ft := &fakeT{name: "TestX"}
			Seeds(ft, 2, func(uint64) error { return errors.New("wrong") })
			_, jerr := NewJob(1, 2)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				assert.ErrorContains(t, jerr, tc.err, "NewJob refuses the flags too")
				assert.Equal(t, "emutest: "+strings.TrimPrefix(err.Error(), "emutest: "), ft.failed, "Seeds fails before running a seed")
				return
			}
			require.NoError(t, err)
			require.NoError(t, jerr)
			assert.Equal(t, tc.want, st)
			assert.Equal(t, tc.wantPCT, c)
			assert.Equal(t, "emutest: seed 1 fails (timing perturbation level 1 (realistic)"+tc.header+"):\nwrong\n"+
				"reproduce: go test -run '^TestX$' ./emutest -emutest.seed=1 -emutest.perturb=1"+tc.cmd, ft.failed)
		})
	}
	_, err := NewJobWith(1, 2, Options{Strategy: sim.StrategyPCT + 1})
	assert.ErrorContains(t, err, "want random or pct")
	_, err = NewJobWith(1, 2, Options{Strategy: sim.StrategyPCT, PCT: sim.PCT{Depth: -1}})
	assert.ErrorContains(t, err, "pct depth -1")
}

// -emutest.strategy=pct reaches NewJob's runs: another digest than the
// default strategy's for every seed, the same one for the same seed, and
// (at exact timing, where random seeds change nothing here) another end
// time for some seeds, PCT's preemptions.
func TestNewJobStrategy(t *testing.T) {
	run := func(seed uint64) (sim.Time, string) {
		j, err := NewJobAt(seed, 2, sim.LevelExact)
		require.NoError(t, err)
		runPut(t, j)
		st, _, err := Schedule()
		require.NoError(t, err)
		assert.Equal(t, st, j.Sim.Strategy())
		return j.Sim.Now(), j.Sim.Digest()
	}
	const seeds = 8
	type result struct {
		end    sim.Time
		digest string
	}
	byStrategy := map[string][]result{}
	for _, tc := range []struct {
		st    string
		steps int
	}{{"random", 0}, {"pct", 8}} { // 8: about this run's scheduling steps
		t.Run(tc.st, func(t *testing.T) {
			setSchedule(t, tc.st, 0, tc.steps)
			for seed := uint64(1); seed <= seeds; seed++ {
				e, d := run(seed)
				e2, d2 := run(seed)
				assert.Equal(t, d, d2, "same seed and strategy, same digest")
				assert.Equal(t, e, e2)
				byStrategy[tc.st] = append(byStrategy[tc.st], result{e, d})
			}
		})
	}
	rnd, pct := byStrategy["random"], byStrategy["pct"]
	require.Len(t, rnd, seeds)
	require.Len(t, pct, seeds)
	later := 0
	for i := range rnd {
		assert.NotEqual(t, rnd[i].digest, pct[i].digest, "seed %d: pct is another run", i+1)
		assert.Equal(t, rnd[0].end, rnd[i].end, "exact timing, random strategy: one end time")
		if pct[i].end != rnd[i].end {
			later++
		}
	}
	assert.Greater(t, later, 0, "some PCT run is preempted")
}

// MORI_CCO_SDMA_RACE in the environment turns the detector on for NewJob,
// as -emutest.race does; a falsy value leaves it off.
func TestRaceFromEnvironment(t *testing.T) {
	t.Setenv("MORI_CCO_SDMA_RACE", "1")
	assert.True(t, Race())
	t.Setenv("MORI_CCO_SDMA_RACE", "0")
	assert.Equal(t, *raceFlag, Race())
}
