package fabric_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
)

// Large windows live outside the Go heap: a put lands in them as in small
// ones, and after Close the host's reads and writes fail with a clear
// error instead of touching released memory.
func TestMappedWindowsAndClose(t *testing.T) {
	const n = 4 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	j, err := job.NewFabric(job.FabricConfig{Seed: 1, Topology: fabric.Topology{NRanks: 2}, Caps: fabric.CapCft, Windows: []uint64{n, n}})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.HeapAlloc, before.HeapAlloc+n, "four 4 MiB windows are mapped, not on the Go heap")
	w := j.Windows[0]
	data := pattern(3, 4096)
	require.NoError(t, j.Sys.Write(0, w[0], n-8192, data))
	require.NoError(t, j.Launch("put", 32, 16+4096, func(th *kernel.Thread, dc fabric.DevComm) {
		if dc.Rank != 0 {
			return
		}
		warp := th.WarpGroup()
		if th.Lane() == 0 {
			b := make([]byte, 4096)
			dc.Load(th, w[0], n-8192, b)
			copy(th.Shared()[16:], b)
		}
		warp.Sync()
		cft := fabric.NewCft(warp, dc, 0)
		le, off := fabric.GetPeerLeInfo(w[0], n-4096, 1, dc)
		cft.Put(warp, le, off, 16, 4096)
		cft.Submit(warp)
		cft.Flush(warp)
	}))
	require.NoError(t, j.Sim.Run())
	got, err := j.Sys.Read(1, w[1], n-4096, 4096)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	z, err := j.Sys.Read(1, w[1], 0, 4096)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 4096), z, "a fresh mapped window reads as zero")

	j.Sys.Close()
	j.Sys.Close() // harmless
	_, err = j.Sys.Read(1, w[1], 0, 16)
	assert.ErrorContains(t, err, "fabric Read: the system is closed")
	assert.ErrorContains(t, j.Sys.Write(0, w[0], 0, data), "fabric Write: the system is closed")
}
