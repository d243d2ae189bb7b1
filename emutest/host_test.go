package emutest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// hostRefill is a host thread launching a kernel that puts 4 KiB of rank
// 0's window to rank 1, then refilling the source through HostMem:
// before the kernel ended (the bug) or after waiting for it, whose quiet
// drained the put.
func hostRefill(seed uint64, wait bool) error {
	j, err := NewJobWith(seed, 2, Options{Perturb: sim.LevelRealistic, Race: true})
	if err != nil {
		return err
	}
	w, err := j.Window(8192)
	if err != nil {
		return err
	}
	if err := j.CreateDevComms(1, false); err != nil {
		return err
	}
	j.Sim.Spawn("host0", func(a *sim.Actor) {
		k, err := j.Launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
			sdma.Put(1, w[1], 4096, w[0], 0, 4096, 0)
			sdma.Quiet(1)
		})
		if err != nil {
			j.Sim.Fail(err)
			return
		}
		if wait {
			if err := k.Wait(a); err != nil {
				return
			}
		}
		if err := Host(j, a).Store64(w[0].LocalPtr(8), 42); err != nil {
			j.Sim.Fail(err)
		}
	})
	return j.Run()
}

// A host store into a buffer a copy may still read is a data race the
// detector names, the host thread and this file's line included; after
// the host waited for the kernel there is none, and the store landed.
func TestHostMemIsRaceVisible(t *testing.T) {
	err := hostRefill(1, false)
	var r *race.Error
	require.ErrorAs(t, err, &r)
	text := r.Text()
	assert.Contains(t, text, "host thread host0")
	assert.Contains(t, text, "emutest/host_test.go:")
	assert.Contains(t, text, "store64")
	for seed := uint64(1); seed <= 3; seed++ {
		assert.NoError(t, hostRefill(seed, true), "seed %d", seed)
	}

	j, err := NewJob(1, 1)
	require.NoError(t, err)
	w, err := j.Window(64)
	require.NoError(t, err)
	h := Host(j, nil) // before Run: nothing to race
	require.NoError(t, h.Store32(w[0].LocalPtr(4), 7))
	v, err := h.Load32(w[0].LocalPtr(4))
	require.NoError(t, err)
	assert.Equal(t, uint32(7), v)
	_, err = h.Load64(1 << 62)
	assert.ErrorContains(t, err, "host load64 at 0x4000000000000000")
}
