package bench

import (
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// hostLoop is a loop whose scaling is the machine's, not emud's: the
// ceiling that explore's efficiency at n jobs is read against. On the
// 16-core host of issue 43 an integer loop ran at 100% efficiency at 16
// goroutines, a copy between two 1 MiB buffers (the working set of a
// core's cache) at 65% and a copy between two 64 MiB ones (memory) at
// 57%: explore's 1 MiB shape, nine tenths copies, clears and compares of
// its windows, cannot scale better than the last.
type hostLoop struct {
	what string
	// work runs the loop reps times over its own buffers (made by setup,
	// outside the timing) and returns something the compiler must keep.
	setup func() func(reps int) uint64
	reps  int // at Full: about 0.3 s on one core of that host
}

func hostLoops(scale int) []hostLoop {
	memory := uint64(64 << 20)
	if scale > 1 {
		// --quick: a smoke test; 64 MiB a goroutine held the test
		// binary past its memory bound under the race detector.
		memory = 4 << 20
	}
	copyLoop := func(size int) func() func(int) uint64 {
		return func() func(int) uint64 {
			a, b := make([]byte, size), make([]byte, size)
			for i := range a {
				a[i] = byte(i) // written: not the kernel's zero page
			}
			copy(b, a) // b's pages faulted in outside the timing
			return func(reps int) uint64 {
				n := 0
				for range reps {
					n += copy(b, a)
				}
				return uint64(n + int(b[size-1]))
			}
		}
	}
	return []hostLoop{
		{"integer loop (no memory)", func() func(int) uint64 {
			return func(reps int) uint64 {
				x := uint64(88172645463325252)
				for range reps * 1000 {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
				}
				return x
			}
		}, max(150_000/scale, 1)},
		{"copy of 1 MiB (cache)", copyLoop(1 << 20), max(10_000/scale, 1)},
		{fmt.Sprintf("copy of %d MiB (memory)", memory>>20), copyLoop(int(memory)), max(40/scale, 1)},
	}
}

// row runs the loop on one goroutine, then on procs at once, and gives
// the efficiency: the mean time of one at procs against one alone.
func (h hostLoop) row(procs int) benchRow {
	timeOf := func(n int) time.Duration {
		works := make([]func(int) uint64, n)
		for i := range works {
			works[i] = h.setup()
		}
		durs := make([]time.Duration, n)
		sinks := make([]uint64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				t := time.Now()
				sinks[i] = works[i](h.reps)
				durs[i] = time.Since(t)
			})
		}
		wg.Wait()
		var sum time.Duration
		for _, d := range durs {
			sum += d
		}
		return sum / time.Duration(n)
	}
	one, many := timeOf(1), timeOf(procs)
	// The loops' buffers (up to 128 MiB a goroutine) go back to the
	// system now, not at the collector's leisure.
	debug.FreeOSMemory()
	return benchRow{fmt.Sprintf("host ceiling, %s, %d goroutines", h.what, procs),
		fmt.Sprintf("%.0f%% efficiency", 100*one.Seconds()/max(many.Seconds(), 1e-9)),
		fmt.Sprintf("%v alone, %v each of %d at once: the machine's own scaling, for explore's rows", one.Round(time.Microsecond), many.Round(time.Microsecond), procs)}
}
