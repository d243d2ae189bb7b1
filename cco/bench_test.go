package cco_test

import (
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/stretchr/testify/require"
)

// BenchmarkWavePutSameQueue is the goal: emulated puts per second of
// wall time for one wave of 64 lanes posting 64 B puts on one queue with
// SameQueue, end to end (issue, ring, engine execution, quiet). Each
// iteration is one put per lane; the kernel loops rounds of 64 puts and
// drains at the end.
func BenchmarkWavePutSameQueue(b *testing.B) { benchWavePut(b, false) }

// BenchmarkWavePutSameQueueRace is the same with the race detector on:
// its cost over BenchmarkWavePutSameQueue is the detector's.
func BenchmarkWavePutSameQueueRace(b *testing.B) { benchWavePut(b, true) }

func benchWavePut(b *testing.B, race bool) {
	const rounds = 64
	for b.Loop() {
		b.StopTimer()
		r := newRig(b, 1, rigOpts{ranks: 2, queues: 1, race: race})
		b.StartTimer()
		r.launch(0, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
			off := uint64(t.Lane()) * 64
			for i := 0; i < rounds; i++ {
				sdma.Put(1, r.recv[0], off, r.send[0], off, 64, 0, cco.SdmaThreadSameQueue)
			}
			sdma.QuietQueue(1, 0)
		})
		require.NoError(b, r.s.Run())
	}
	b.ReportMetric(float64(64*rounds*b.N)/b.Elapsed().Seconds(), "puts/s")
}
