package engine

import (
	"testing"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// BenchmarkEngineCopy64 measures the engine alone: 64 B COPY packets already
// in the ring of one queue. Every unit of the ring holds the same packet, so
// the issuer only rings half a ring at a time (one wake per 4096 packets)
// and the measured work is the engine's fetch, decode, copy and retire.
func BenchmarkEngineCopy64(b *testing.B) { benchCopy64(b, false) }

// BenchmarkEngineCopy64Race is BenchmarkEngineCopy64 with the race
// detector on (every packet's accesses and snapshots).
func BenchmarkEngineCopy64Race(b *testing.B) { benchCopy64(b, true) }

func benchCopy64(b *testing.B, race bool) {
	s := sim.New(sim.Config{Seed: 1, Watchdog: -1})
	if race {
		s.EnableRace()
	}
	n, err := NewNode(s, Config{GPUs: 2})
	if err != nil {
		b.Fatal(err)
	}
	src, _ := n.Memory().Alloc(0, 4096, "src")
	dst, _ := n.Memory().Alloc(1, 4096, "dst")
	q, _ := n.Queue(0, 1, 0)
	p := ring.Copy(dst, src, 64)
	for u := uint64(0); u < q.Ring().Size(); u += ring.Unit {
		if err := q.WriteUnit(u, &p); err != nil {
			b.Fatal(err)
		}
	}
	const chunk = 4096 * ring.Unit
	total := uint64(b.N) * ring.Unit
	s.Spawn("ringer", func(a *sim.Actor) {
		for rung := uint64(0); rung < total; {
			c := min(uint64(chunk), total-rung)
			base, err := q.Reserve(a, c)
			if err != nil {
				b.Error(err)
				return
			}
			if err := q.Submit(a, base, base+c); err != nil {
				b.Error(err)
				return
			}
			rung += c
		}
		q.AwaitDrained(a, total)
	})
	b.ReportAllocs()
	b.ResetTimer()
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}

const bigCopy = 8 << 20

// BenchmarkEngineCopy8MiB moves 8 MiB per COPY packet through the engine;
// compare with BenchmarkGoCopy8MiB (same buffers' size, Go's copy()).
func BenchmarkEngineCopy8MiB(b *testing.B) { benchCopy8MiB(b, false) }

// BenchmarkEngineCopy8MiBRace is BenchmarkEngineCopy8MiB with the race
// detector on.
func BenchmarkEngineCopy8MiBRace(b *testing.B) { benchCopy8MiB(b, true) }

// BenchmarkEngineCopy8MiBFine is BenchmarkEngineCopy8MiB with every
// crossed chunk landing at its end (the path a race detector, a waiter on
// the destination or a C++ program's native Backing takes): 32 moves of
// 256 KiB instead of one of 8 MiB.
func BenchmarkEngineCopy8MiBFine(b *testing.B) {
	s := sim.New(sim.Config{Seed: 1, Watchdog: -1})
	n, err := NewNode(s, Config{GPUs: 2})
	if err != nil {
		b.Fatal(err)
	}
	n.fine = true
	src, _ := n.Memory().Alloc(0, bigCopy, "src")
	dst, _ := n.Memory().Alloc(1, bigCopy, "dst")
	if err := n.Memory().Write(src, pattern(bigCopy, 3)); err != nil {
		b.Fatal(err)
	}
	runCopies8MiB(b, s, n, src, dst)
}

// BenchmarkEngineCopy8MiBPhantom is BenchmarkEngineCopy8MiB on phantom
// regions: the engine's own work per COPY (fetch, decode, one event per
// 256 KiB chunk, landing bookkeeping), apart from the bytes' memmove.
func BenchmarkEngineCopy8MiBPhantom(b *testing.B) {
	s := sim.New(sim.Config{Seed: 1, Watchdog: -1})
	n, err := NewNode(s, Config{GPUs: 2})
	if err != nil {
		b.Fatal(err)
	}
	src, _ := n.Memory().AllocPhantom(0, bigCopy, "src")
	dst, _ := n.Memory().AllocPhantom(1, bigCopy, "dst")
	runCopies8MiB(b, s, n, src, dst)
}

func benchCopy8MiB(b *testing.B, race bool) {
	s := sim.New(sim.Config{Seed: 1, Watchdog: -1})
	if race {
		s.EnableRace()
	}
	n, err := NewNode(s, Config{GPUs: 2})
	if err != nil {
		b.Fatal(err)
	}
	src, _ := n.Memory().Alloc(0, bigCopy, "src")
	dst, _ := n.Memory().Alloc(1, bigCopy, "dst")
	// Real source bytes: a source never written reads the kernel's zero
	// page (a 2 MiB one under THP), which Go's copy below would not.
	if err := n.Memory().Write(src, pattern(bigCopy, 3)); err != nil {
		b.Fatal(err)
	}
	runCopies8MiB(b, s, n, src, dst)
}

func runCopies8MiB(b *testing.B, s *sim.Sim, n *Node, src, dst uint64) {
	q, _ := n.Queue(0, 1, 0)
	b.SetBytes(bigCopy)
	s.Spawn("issuer", func(a *sim.Actor) {
		for range b.N {
			if err := post(a, q, ring.Copy(dst, src, bigCopy)); err != nil {
				b.Error(err)
				return
			}
			q.AwaitDrained(a, q.QuietTarget())
		}
	})
	b.ResetTimer()
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGoCopy8MiB is the baseline for BenchmarkEngineCopy8MiB.
func BenchmarkGoCopy8MiB(b *testing.B) {
	src, dst := pattern(bigCopy, 3), make([]byte, bigCopy)
	b.SetBytes(bigCopy)
	for b.Loop() {
		copy(dst, src)
	}
}
