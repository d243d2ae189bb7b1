package kernel

import (
	"testing"

	"github.com/emud-dev/emud/sim"
)

// BenchmarkWaveBallot: one wave of 64 lanes, 64 ballots per lane in a loop
// with an if-body every other iteration; reports convergence points per
// second (lane parks).
func BenchmarkWaveBallot(b *testing.B) {
	const iters = 64
	b.ReportAllocs()
	for b.Loop() {
		s := sim.New(sim.Config{Seed: 1})
		_, err := Launch(s, Config{Grid: 1, Block: 64}, func(th *Thread) {
			for i := 0; i < iters; i++ {
				if i%2 == 0 && th.Lane()%2 == 0 {
					th.SyncWarp()
				}
				th.Ballot(th.Lane() > i)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*64*(iters+iters/4)/b.Elapsed().Seconds(), "parks/s")
}
