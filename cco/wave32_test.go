package cco_test

import (
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With more lanes than the wave width, or on wave32 targets (gfx1250), a
// thread-scope call forms one group per wavefront, so a SameQueue put with a
// signal advances the counter by ceil(lanes / waveSize) (docs/cco-semantics.md
// §4), and each wave rings once.
func TestGroupsPerWavefront(t *testing.T) {
	for _, tc := range []struct {
		waveSize, threads int
		want              uint64
	}{{64, 64, 1}, {32, 64, 2}, {32, 33, 2}, {64, 128, 2}, {32, 128, 4}, {32, 1, 1}} {
		for seed := uint64(1); seed <= seeds; seed++ {
			r := newRig(t, seed, rigOpts{ranks: 2})
			data := patterned(int(seed), uint64(tc.threads*64))
			r.fillBytes(r.send[0], 0, data)
			dc := r.dcs[0]
			_, err := kernel.Launch(r.s, kernel.Config{GPU: 0, Grid: 1, Block: tc.threads, WaveSize: tc.waveSize}, func(t *kernel.Thread) {
				sdma := cco.NewSdma(t, dc)
				off := uint64(t.ThreadIdx() * 64)
				sdma.Put(1, r.recv[0], off, r.send[0], off, 64, 0, cco.LocalSignal, cco.SdmaThreadSameQueue)
				sdma.QuietQueue(1, 0)
			})
			require.NoError(t, err)
			require.NoError(t, r.s.Run())
			assert.Equal(t, tc.want, r.signal(0, 0, 0), "wave%d × %d threads, seed %d", tc.waveSize, tc.threads, seed)
			assert.Equal(t, float64(tc.want), r.metric("emud_sdma_doorbells_total"), "one doorbell per wave")
			assert.Equal(t, data, r.readBytes(r.recv[1], 0, uint64(tc.threads*64)))
		}
	}
}
