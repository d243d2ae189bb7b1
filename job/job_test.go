package job_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

func TestNewDefaults(t *testing.T) {
	j, err := job.New(job.Config{Sim: sim.Config{Seed: 3}, Ranks: 3})
	require.NoError(t, err)
	assert.Equal(t, 3, j.Node.GPUs())
	assert.Equal(t, model.DefaultPreset, j.Node.Model().Name())
	assert.Equal(t, cco.Env{"MORI_ENABLE_SDMA": "1"}, j.Env)
	require.Len(t, j.Comms, 3)
	for r, c := range j.Comms {
		assert.Equal(t, r, c.Rank)
	}
	assert.Equal(t, uint64(3), j.Sim.Seed())

	j, err = job.New(job.Config{Ranks: 2, GPUs: 8, Model: model.NewPlaceholder(), Env: cco.Env{}})
	require.NoError(t, err)
	assert.Equal(t, 8, j.Node.GPUs())
	assert.Equal(t, "placeholder", j.Node.Model().Name())
	require.NoError(t, j.CreateDevComms(0, false))
	assert.Zero(t, j.DevComms[0].Sdma.SdmaNumQueue, "MORI_ENABLE_SDMA unset: SDMA off")
}

func TestErrors(t *testing.T) {
	_, err := job.New(job.Config{})
	require.ErrorContains(t, err, "0 ranks")
	_, err = job.New(job.Config{Ranks: 4, GPUs: 2})
	require.ErrorContains(t, err, "4 ranks on 2 GPUs")
	j, err := job.New(job.Config{Ranks: 2})
	require.NoError(t, err)
	noop := func(*kernel.Thread, *cco.Sdma) {}
	_, err = j.Launch(0, 1, 1, noop)
	require.ErrorContains(t, err, "Launch before CreateDevComms")
	require.NoError(t, j.CreateDevComms(2, true))
	_, err = j.Launch(2, 1, 1, noop)
	require.ErrorContains(t, err, "rank 2: the job has ranks 0..1")
	assert.True(t, j.DevComms[1].Debug)
}

func TestPhantomWindow(t *testing.T) {
	j, err := job.New(job.Config{Ranks: 2})
	require.NoError(t, err)
	ws, err := j.PhantomWindow(1 << 30)
	require.NoError(t, err)
	require.Len(t, ws, 2)
	b, err := j.Read(ws[1], 0, 8)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 8), b, "phantom memory reads 0")
}

// A kernel launched through the job runs the node's architecture's
// waves: 32 lanes on gfx1250, 64 on gfx950 and the MI355X preset.
func TestLaunchWaveSizeOfArch(t *testing.T) {
	for _, tc := range []struct {
		preset string
		wave   int
	}{{"mi355x", 64}, {"gfx950", 64}, {"gfx1250", 32}} {
		t.Run(tc.preset, func(t *testing.T) {
			m, err := model.Load(tc.preset)
			require.NoError(t, err)
			j, err := job.New(job.Config{Ranks: 2, Model: m})
			require.NoError(t, err)
			require.NoError(t, j.CreateDevComms(0, false))
			var warp, waves int
			k, err := j.Launch(0, 1, 64, func(t *kernel.Thread, _ *cco.Sdma) {
				if t.ThreadIdx() == 63 {
					warp, waves = t.WarpSize(), t.WaveIdx()+1
				}
			})
			require.NoError(t, err)
			require.NoError(t, j.Run())
			require.True(t, k.Done())
			assert.Equal(t, tc.wave, warp)
			assert.Equal(t, 64/tc.wave, waves, "a 64-thread block is %d waves", 64/tc.wave)
		})
	}
}
