package cxx

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// TestNcclGinAlltoAll runs the all-to-all over NCCL's GIN
// (examples/cxx/nccl/gin_alltoall: puts with remote signals and local
// counters, a GIN barrier per CTA, waitSignal, waitCounter and flush) on
// 4 and 8 ranks: it passes on seeds 1-3 (1 in a -race test binary) under
// timing perturbation and
// under PCT, the same seed gives the same digest, and the race detector
// finds nothing.
func TestNcclGinAlltoAll(t *testing.T) {
	plainLine(t) // before the build: a -race binary skips it at once
	needCxx(t)
	ncclRuns(t, ncclExample(t, "gin_alltoall"), "gin_alltoall", 3)
}

// TestNcclGinAlltoAllSharedSignal runs the planted twin (-DSHARED_SIGNAL:
// both CTAs of a rank signal and wait on signal 0) on 4 and 8 ranks: a
// CTA passes its wait on the other CTA's arrivals and reads slices not yet
// there, so the data is wrong; with the race detector the report names
// the wait on signal 0, the ATOMIC that released it and the CTA that
// posted it, and the peer's SDMA copy the load raced with.
func TestNcclGinAlltoAllSharedSignal(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "gin_alltoall", "-DSHARED_SIGNAL")
	twinRuns(t, prog, 1, nil, func(_ int, out, _ string) {
		assert.Contains(t, out, "gin_alltoall_shared_signal: FAIL")
		assert.Regexp(t, `rank \d+ iteration 0: element \d+ from rank \d+ is \S+, want \S+`, out)
	})
	twinRuns(t, prog, 5, []string{"EMUD_RACE=1"}, func(_ int, _, report string) {
		assert.Regexp(t, `load \(read\) of .* by kernel "ginAlltoAll" GPU \d+ block \d+ wave \d+ lane \d+ \(.*main\.cu:\d+`, report)
		assert.Regexp(t, `COPY destination write \(write\) of .* by sdma gpu\d+→gpu\d+ q0`, report)
		assert.Regexp(t, `the lane did wait \(ncclGin::waitSignal on signal 0 of rank \d+ ≥ \d+, returned at [^)]+\), but the value that released it was written at \S+ by sdma gpu\d+→gpu\d+ q0's ATOMIC at ring offset 0x[0-9a-f]+ \(posted by kernel "ginAlltoAll" GPU \d+ block \d+`, report)
	})
}

// TestNcclGinAlltoAllMissingPut runs the twin in which the last rank
// never puts to rank 0 (-DLAST_RANK_SKIPS_PUT) on 4 and 8 ranks: the run
// is a hang report (exit 2) in which rank 0's CTAs wait on their signals
// one short, the last rank's on their counters one short, and the other
// ranks at the next iteration's GIN barrier, each naming the word, the
// value expected and the value there, the waiting wave and the line.
func TestNcclGinAlltoAllMissingPut(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "gin_alltoall", "-DLAST_RANK_SKIPS_PUT")
	twinRuns(t, prog, 2, nil, func(n int, _, report string) {
		for b := range 2 {
			assert.Regexp(t, fmt.Sprintf(`ncclGin::waitSignal on signal %d of rank 0: expects %d, has %d \(kernel "ginAlltoAll" GPU 0 block %d wave \d+\)\n\s+doing: ncclGin wait by lanes 0-31 at main\.cu:\d+`, b, n, n-1, b), report)
			assert.Regexp(t, fmt.Sprintf(`ncclGin::waitCounter on counter %d of rank %d: expects %d, has %d \(kernel "ginAlltoAll" GPU %d block %d`, b, n-1, n, n-1, n-1, b), report)
		}
		assert.Regexp(t, regexp.MustCompile(`ncclGinBarrierSession::sync on railGinBarrier \d of rank 1 \(team of \d+, epoch 1\): expects \d+, has \d+ \(kernel "ginAlltoAll" GPU 1 block \d wave \d+\)\n\s+doing: ncclGin wait by lanes 0-31 at main\.cu:\d+`), report)
	})
}

// TestNcclHybridAlltoAll runs the hybrid all-to-all
// (examples/cxx/nccl/hybrid_alltoall: LSA stores to the LSA team's peers,
// GIN puts to the others, ncclBarrierSession around each iteration) on 4
// and 8 ranks: it passes on seeds 1-3 (1 in a -race test binary) under
// perturbation and PCT, the same
// seed gives the same digest, and the race detector finds nothing. On
// emud's one node the LSA team is every rank, so the GIN half is the
// hybrid barrier's rail half alone: its ATOMICs are the only packets.
func TestNcclHybridAlltoAll(t *testing.T) {
	plainLine(t) // before the build: a -race binary skips it at once
	needCxx(t)
	ncclRuns(t, ncclExample(t, "hybrid_alltoall"), "hybrid_alltoall", 3)
}

// TestNcclHybridAlltoAllNoExitBarrier runs the planted twin
// (-DSKIP_EXIT_BARRIER: no closing hybrid barrier) on 4 and 8 ranks with
// the race detector: a peer's LSA stores into this rank's receive buffer
// and this rank's host copying it out are unordered (exit 5), the report
// naming both and the line of each.
func TestNcclHybridAlltoAllNoExitBarrier(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	prog := ncclExample(t, "hybrid_alltoall", "-DSKIP_EXIT_BARRIER")
	twinRuns(t, prog, 5, []string{"EMUD_RACE=1"}, func(_ int, _, report string) {
		assert.Regexp(t, `store \(write\) of .* by kernel "hybridAlltoAll" GPU (\d+) block \d+ wave \d+ lane \d+ \(.*main\.cu:\d+`, report)
		assert.Regexp(t, `hipMemcpy \(read\) of .* by hipMemcpy on the null stream of GPU \d+ \(host thread \d+\) \(main\.cu:\d+\)`, report)
		assert.Regexp(t, `missing edge: the hipMemcpy by hipMemcpy on the null stream of GPU \d+ .* is not ordered after the store by kernel "hybridAlltoAll"`, report)
	})
}

// TestNcclGinMisuse: each misuse of ncclGin in examples/cxx/nccl/gin_misuse
// fails the kernel (exit 1) with a message naming the call, the argument
// and the dev comm's count, at the program's line; a timed wait that
// times out returns ncclTimeout and the program passes; ncclDevCommDestroy
// gives the GIN words back to the comm's heap.
func TestNcclGinMisuse(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	prog := ncclExample(t, "gin_misuse")
	for _, c := range []struct{ misuse, want string }{
		{"context", `ncclGin: contextIndex 5 outside the dev comm's ginContextCount 1 \(at main\.cu:\d+\)`},
		{"signal", `ncclGin::put: signal 7 outside the dev comm's 1 \(ginSignalCount\) \(at main\.cu:\d+\)`},
		{"counter", `ncclGin::waitCounter: counter 3 outside the dev comm's 1 \(ginCounterCount\) \(at main\.cu:\d+\)`},
		{"barrier", `ncclGinBarrierSession: index 4 outside the dev comm's worldGinBarrier \(1 slots: ncclDevCommRequirements\) \(at main\.cu:\d+\)`},
		{"window", `ncclGin::put: destination \[4088, 4152\) past the window's 4096 bytes \(at main\.cu:\d+\)`},
	} {
		out, stderr, code := runExample(t, prog, "NTHREADS=2", "GIN_MISUSE="+c.misuse)
		require.Equal(t, 1, code, "%s\nstdout:\n%s\nstderr:\n%s", c.misuse, out, stderr)
		assert.Regexp(t, `kernel "misuse": GPU 0 block 0 thread 0 \(wave 0 lane 0\): `+c.want, stderr, c.misuse)
	}
	out, stderr, code := runExample(t, prog, "NTHREADS=2", "GIN_MISUSE=timeout")
	require.Equal(t, 0, code, "timeout\nstdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, out, "timed out\n")
	assert.Contains(t, out, "gin_misuse: PASS")
	out, stderr, code = runExample(t, prog, "NTHREADS=2", "GIN_MISUSE=reuse")
	require.Equal(t, 0, code, "reuse\nstdout:\n%s\nstderr:\n%s", out, stderr)
	for r := range 2 {
		assert.Contains(t, out, fmt.Sprintf("rank %d: GIN words reused\n", r))
	}
}

// goGinPut is examples/cxx/nccl/gin_put written in Go: the same windows,
// pattern and kernel, each put a cco.Sdma.PutSignals on queue (peer,
// context 0) with +1 on the peer's signal word, each wait a WaitWord on
// this rank's, the flush a quietQueue of every peer's. It returns the
// emulated end time and each rank's receive-buffer FNV-1a.
func goGinPut(t *testing.T, seed uint64, ranks int, bytes uint64) (sim.Time, []uint64) {
	g := newGoTwin(t, seed, ranks, bytes)
	sig, err := g.j.Window(8)
	require.NoError(t, err)
	return g.run(t, func(r int) func(*kernel.Thread, *cco.Sdma) {
		return func(th *kernel.Thread, sdma *cco.Sdma) {
			p := (r + 1 + th.ThreadIdx()) % ranks
			sdma.PutSignals("ncclGin::put", p, g.recv[r].LsaPtr(p, uint64(r)*bytes), g.send[r].LocalPtr(uint64(p)*bytes), bytes, 0,
				cco.CoopThread, cco.SignalAt{Addr: sig[p].LocalPtr(0), Value: 1})
			sdma.WaitWord(&cco.WordWait{Call: "ncclGin::waitSignal", What: "signal 0", Addr: sig[r].LocalPtr(0), Least: uint64(ranks), Bits: 64, Deadline: -1})
			for q := range ranks {
				sdma.QuietQueue(q, 0)
			}
		}
	})
}

// TestGinPutMatchesGo: the 8-rank GIN all-to-all in C++ (ncclGin over
// SDMA) and in Go give the same emulated end time and the same landed
// bytes on the same seeds. Its Go side runs in this test process, so a
// -race build skips it (as TestAlltoallMatchesGo).
func TestGinPutMatchesGo(t *testing.T) {
	needCxx(t)
	plainLine(t)
	prog := ncclExample(t, "gin_put")
	for _, seed := range []uint64{1, 2, 3} {
		out, sum, code := runExample(t, prog, "NTHREADS=8", "EMUD_SUMMARY=1", fmt.Sprintf("EMUD_SEED=%d", seed))
		require.Equal(t, 0, code, out+sum)
		goEnd, goSums := goGinPut(t, seed, 8, 64<<10)
		assert.Equal(t, int64(goEnd), summaryEnd(t, sum), "seed %d: emulated end time, Go vs C++", seed)
		assertLanded(t, out, seed, goSums)
		assert.Contains(t, out, "gin_put: PASS")
	}
}
