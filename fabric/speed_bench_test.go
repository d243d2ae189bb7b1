package fabric_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/scenario/cft"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkAllToAll128(b *testing.B) {
	c0 := cpuNow()
	for b.Loop() {
		if _, err := cft.RunAllToAll(cft.AllToAllConfig{Seed: 1, Topology: fabric.Topology{NRanks: 128}, Block: 256}); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuNow() - c0
	b.ReportMetric(128*127*float64(b.N)/b.Elapsed().Seconds(), "puts/s")
	b.ReportMetric(128*127*float64(b.N)/cpu.Seconds(), "puts/cpu-s")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// BenchmarkPutsSteady: one wave of 32 lanes on rank 0 posting 64 B puts
// to rank 1, each lane its own thread group submitting per put, one flush
// at the end (like cco's 64-lane SameQueue puts row).
func BenchmarkPutsSteady(b *testing.B) {
	const rounds = 512
	c0 := cpuNow()
	var runT time.Duration
	for b.Loop() {
		j, err := cft.PutWave("puts", rounds)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := j.Sim.Run(); err != nil {
			b.Fatal(err)
		}
		runT += time.Since(t0)
		j.Sys.Close()
	}
	cpu := cpuNow() - c0
	n := 32 * rounds * float64(b.N)
	b.ReportMetric(n/runT.Seconds(), "puts/s-run")
	b.ReportMetric(n/cpu.Seconds(), "puts/cpu-s")
}
