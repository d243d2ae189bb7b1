package fabric_test

import (
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/scenario/cft"
)

// BenchmarkAllReducePhantom1024 is the scale run of emud bench: a CFT
// all-reduce of 64 MiB per rank over 1024 ranks on phantom windows (timing
// only). It reports the emulated time as well as the wall time.
func BenchmarkAllReducePhantom1024(b *testing.B) {
	for b.Loop() {
		res, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: 1, Topology: fabric.Topology{NRanks: 1024}, Bytes: 64 << 20, Phantom: true})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Elapsed.Micros(), "emulated-µs")
	}
}

// BenchmarkAllToAllPhantom1024 is emud bench's other scale run: 1024 ranks
// put 128 B to each other, 1 047 552 puts, on phantom windows.
func BenchmarkAllToAllPhantom1024(b *testing.B) {
	for b.Loop() {
		if _, err := cft.RunAllToAll(cft.AllToAllConfig{Seed: 1, Topology: fabric.Topology{NRanks: 1024}, Block: 128, Phantom: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1024*1023*float64(b.N)/b.Elapsed().Seconds(), "puts/s")
}
