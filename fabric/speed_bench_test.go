package fabric_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
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
		j, err := job.NewFabric(job.FabricConfig{Seed: 1, Topology: fabric.Topology{NRanks: 2}, Caps: fabric.CapCft, Windows: []uint64{32 * 64}})
		if err != nil {
			b.Fatal(err)
		}
		w := j.Windows[0]
		err = j.Launch("puts", 32, 16+32*64, func(th *kernel.Thread, dc fabric.DevComm) {
			if dc.Rank != 0 {
				return
			}
			warp := th.WarpGroup()
			cft := fabric.NewCft(warp, dc, 0)
			off := uint64(th.Lane()) * 64
			le, leOff := fabric.GetPeerLeInfo(w[0], off, 1, dc)
			for range rounds {
				cft.Put(th.ThreadGroup(), le, leOff, 16+int(off), 64)
				cft.Submit(th.ThreadGroup())
			}
			cft.Flush(warp)
		})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := j.Sim.Run(); err != nil {
			b.Fatal(err)
		}
		runT += time.Since(t0)
	}
	cpu := cpuNow() - c0
	n := 32 * rounds * float64(b.N)
	b.ReportMetric(n/runT.Seconds(), "puts/s-run")
	b.ReportMetric(n/cpu.Seconds(), "puts/cpu-s")
}
