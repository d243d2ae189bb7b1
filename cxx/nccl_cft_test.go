package cxx

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
)

// ncclRuns runs prog on 4 and 8 ranks, seeds 1..seeds under timing
// perturbation and under PCT: it passes, printing want, and seed 1 run again gives the
// same digest (once per shape and strategy: every run is a process);
// with the race detector on it passes and reports nothing (a false alarm
// is as bad as a missed bug). It returns the whole stderr of the race
// detector's run of each rank count: seed 1 at exact timing, the schedule
// of the plain run (EMUD_RACE changes no digest: TestForkAlltoall).
func ncclRuns(t *testing.T, prog, want string, seeds int) (raceStderr []string) {
	t.Helper()
	plainLine(t)
	for _, ranks := range []string{"4", "8"} {
		for _, strategy := range []string{"perturb", "pct"} {
			for seed := 1; seed <= seeds; seed++ {
				env := []string{"NTHREADS=" + ranks, fmt.Sprintf("EMUD_SEED=%d", seed), "EMUD_STRATEGY=" + strategy, "EMUD_SUMMARY=1"}
				out, sum, code := runExample(t, prog, env...)
				require.Equal(t, 0, code, "%s ranks %s seed %d\nstdout:\n%s\nstderr:\n%s", ranks, strategy, seed, out, sum)
				assert.Contains(t, out, want+": PASS")
				if seed == 1 {
					_, again, _ := runExample(t, prog, env...)
					assert.Equal(t, sum, again, "%s ranks %s seed %d: another digest", ranks, strategy, seed)
				}
			}
		}
		r := runFull(t, prog, "NTHREADS="+ranks, "EMUD_RACE=1")
		require.Equal(t, 0, r.code, "%s ranks, EMUD_RACE=1\nstdout:\n%s\nstderr:\n%s", ranks, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, want+": PASS")
		raceStderr = append(raceStderr, r.stderr)
	}
	return raceStderr
}

// plainLine skips t in a -race test binary. t runs C++ programs as
// processes of their own, built without Go's detector, over many seeds or
// heavy shapes (or runs a Go twin in this process, where the detector
// would multiply its time for nothing t checks), so a -race test binary
// would check nothing more in it, and go test -race ./... must end within
// go test's 10 minutes on CI's 2 cores (the package took 570 s of them,
// with the other packages' tests beside it). .ci/run's plain cxx line runs every test that calls this,
// at every seed; TestPlainLineListed holds that it names each of them.
func plainLine(t *testing.T) {
	t.Helper()
	if raceBuild {
		t.Skip("a -race test binary checks nothing more in it: .ci/run runs it in a plain build")
	}
}

// cftRuns is ncclRuns at seeds 1 and 2, and correct CFT code draws no
// warning either (the aliased-slot check).
func cftRuns(t *testing.T, prog, want string) {
	t.Helper()
	for i, stderr := range ncclRuns(t, prog, want, 2) {
		assert.NotContains(t, stderr, "warning", "%s ranks, EMUD_RACE=1", []string{"4", "8"}[i])
	}
}

// stderrOf runs prog with env added and returns all it wrote on stderr
// (runExample keeps only the summary line of a run that passed); the run
// must pass.
func stderrOf(t *testing.T, prog string, env ...string) string {
	t.Helper()
	r := runFull(t, prog, env...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	return r.stderr
}

// TestNcclCftBarrier runs examples/cxx/nccl/cft_barrier (stamps stored
// into the next rank's window between two syncs of each CTA's own CFT
// barrier slot), plain and with multimem sessions.
func TestNcclCftBarrier(t *testing.T) {
	plainLine(t) // before the build: a -race binary skips it at once
	needCxx(t)
	cftRuns(t, ncclExample(t, "cft_barrier"), "cft_barrier")
	cftRuns(t, ncclExample(t, "cft_barrier", "-DMULTIMEM"), "cft_barrier_multimem")
}

// TestNcclCftBarrierAliasedSlot runs the planted twin built with
// -DALIAS_BARRIER_SLOT (every CTA on slot 0) on 4 and 8 ranks. NCCL
// checks nothing, so the run goes on (the stamps happen to come out
// right at exact timing) and emud warns once per rank and slot, naming
// the slot, the two blocks and the fix; with EMUD_NCCL_DEBUG=1 the
// kernel stops at the session's line (exit 1, golden report at 4 ranks).
func TestNcclCftBarrierAliasedSlot(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "cft_barrier", "-DALIAS_BARRIER_SLOT")
	warn := regexp.MustCompile(`emud: warning: main\.cu:\d+: ncclCftBarrierSession: CFT barrier slot 0 on rank (\d+) is aliased: block \d opens it while block \d's session \(main\.cu:\d+\) is open`)
	for _, ranks := range []int{4, 8} {
		report := stderrOf(t, prog, fmt.Sprintf("NTHREADS=%d", ranks))
		seen := map[string]bool{}
		for _, m := range warn.FindAllStringSubmatch(report, -1) {
			seen[m[1]] = true
		}
		assert.Len(t, seen, ranks, "%d ranks: a warning for every rank\n%s", ranks, report)
		out, report, code := runExample(t, prog, fmt.Sprintf("NTHREADS=%d", ranks), "EMUD_NCCL_DEBUG=1")
		require.Equal(t, 1, code, "%d ranks, EMUD_NCCL_DEBUG=1\nstdout:\n%s\nstderr:\n%s", ranks, out, report)
		assert.NotContains(t, out, "PASS")
		assert.Regexp(t, `kernel "cftBarrierKernel": GPU \d+ block \d+ thread 0 \(wave 0 lane 0\): ncclCftBarrierSession: CFT barrier slot 0 on rank \d+ is aliased: .*give each CTA its own index, cftBarrierCount >= gridDim\.x\) \(at main\.cu:\d+\)`, report)
		if ranks == 4 {
			golden.Check(t, filepath.Join("nccl", "cft_barrier_aliased_slot.golden"), firstLines(report, "emud: seed", 1))
		}
	}
}

// TestNcclCftBarrierIndexPastCount: a barrier index past cftBarrierCount
// (-DINDEX_PAST_COUNT) behaves as NCCL, which checks nothing (the
// exchange passes), and EMUD_NCCL_DEBUG=1 names it (exit 1).
func TestNcclCftBarrierIndexPastCount(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "cft_barrier", "-DINDEX_PAST_COUNT")
	out, report, code := runExample(t, prog, "NTHREADS=4")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.Contains(t, out, "cft_barrier_index_past_count: PASS")
	out, report, code = runExample(t, prog, "NTHREADS=4", "EMUD_NCCL_DEBUG=1")
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.Regexp(t, `ncclCftBarrierSession: barrier index [23] past the dev comm's cftBarrierCount 2 \(NCCL does not check it`, report)
}

// TestNcclCftBarrierMissingRank: the last rank never launches iteration
// 1 (-DLAST_RANK_SKIPS_LAUNCH): a hang report (exit 2) in which every
// other rank's CTAs wait on their own slot, naming the rank that has not
// arrived.
func TestNcclCftBarrierMissingRank(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "cft_barrier", "-DLAST_RANK_SKIPS_LAUNCH")
	twinRuns(t, prog, 2, nil, func(ranks int, out, report string) {
		assert.NotContains(t, out, "PASS")
		for r := range ranks - 1 {
			for slot := range 2 {
				assert.Regexp(t, fmt.Sprintf(`cftBarrierKernel/gpu%d/b%d/w0 .*ncclCftBarrierSession::wait on CFT rank %d, barrier %d: inbox\[%d\]\[%d\] is \d+, waiting for epoch \d+ \(CFT rank %d has not arrived\)\n\s+doing: ncclCftBarrierSession::wait by lanes 0 at main\.cu:\d+`,
					r, slot, r, slot, slot, ranks-1, ranks-1), report, "%d ranks: rank %d CTA %d", ranks, r, slot)
			}
		}
	})
}

// TestNcclCftAllGather runs examples/cxx/nccl/cft_allgather (bulk copies
// into shared memory, counted puts, waitCounted on a running total),
// unicast and multimem.
func TestNcclCftAllGather(t *testing.T) {
	plainLine(t) // before the build: a -race binary skips it at once
	needCxx(t)
	cftRuns(t, ncclExample(t, "cft_allgather"), "cft_allgather")
	cftRuns(t, ncclExample(t, "cft_allgather", "-DMULTIMEM"), "cft_allgather_multimem")
}

// TestNcclCftAllGatherWrongCount runs the planted twin built with
// -DWRONG_BYTE_COUNT (each rank copies its own block locally but waits
// for nRanks blocks of counted bytes) on 4 and 8 ranks: a hang (exit 2)
// whose likely cause names the counter, the bytes it holds and awaits,
// and the cause; at 4 ranks the report's first lines are a golden file.
func TestNcclCftAllGatherWrongCount(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	prog := ncclExample(t, "cft_allgather", "-DWRONG_BYTE_COUNT")
	twinRuns(t, prog, 2, nil, func(ranks int, out, report string) {
		assert.NotContains(t, out, "PASS")
		block := 1024 * 4
		assert.Regexp(t, fmt.Sprintf(`likely cause: ranks 0–%d each wait in ncclCft::waitCounted for its counter at offset 0x[0-9a-f]+ of its memory to reach %d bytes; it holds %d and the counted writes in flight add 0: the producers deliver fewer bytes than the wait expects`,
			ranks-1, ranks*block, (ranks-1)*block), report)
		assert.Regexp(t, `cftAllGather/gpu\d+/b\d+/w0 \[waiting since [^\]]+\]: ncclCft::waitCounted on rank \d+: its counter at 0x[0-9a-f]+ to reach \d+ bytes`, report)
		if ranks == 4 {
			golden.Check(t, filepath.Join("nccl", "cft_allgather_wrong_count.golden"), firstLines(report, "emud: seed", 2))
		}
	})
}

// TestNcclCftAllGatherNoWait runs the planted twin built with
// -DSKIP_WAIT (no waitCounted before the kernel ends) on 4 and 8 ranks
// with the race detector: the data happen to be right at exact timing,
// and the race between a peer's counted put into the receive window and
// this rank's host copying it out is reported (exit 5) with the missing
// edge.
func TestNcclCftAllGatherNoWait(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	prog := ncclExample(t, "cft_allgather", "-DSKIP_WAIT")
	twinRuns(t, prog, 5, []string{"EMUD_RACE=1"}, func(_ int, _, report string) {
		assert.Regexp(t, `ncclCft put write \(write\) of \[0x[0-9a-f]+, 0x[0-9a-f]+\) by GPU \d+'s fabric \(main\.cu:\d+\)`, report)
		assert.Regexp(t, `missing edge: the hipMemcpy by hipMemcpy on the null stream of GPU \d+ \(host thread \d+\) is not ordered after the ncclCft put write by GPU \d+'s fabric`, report)
	})
}

// TestNcclCftOps runs examples/cxx/nccl/cft_ops (a uint32 Sum
// reduction, a put with a copy mask and a get, checked for data) on 4
// and 8 ranks, with and without the race detector.
func TestNcclCftOps(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	prog := ncclExample(t, "cft_ops")
	for _, ranks := range []string{"4", "8"} {
		for _, env := range [][]string{{}, {"EMUD_RACE=1"}, {"EMUD_STRATEGY=pct", "EMUD_SEED=2"}} {
			out, report, code := runExample(t, prog, append([]string{"NTHREADS=" + ranks}, env...)...)
			require.Equal(t, 0, code, "%s ranks %v\nstdout:\n%s\nstderr:\n%s", ranks, env, out, report)
			assert.Contains(t, out, "cft_ops: PASS")
		}
	}
}

// TestNcclCftFlushSmem: cft_ops overwriting its shared-memory source
// after submit passes when flushSmem came first (it waits until the
// operations have read their sources) and, without it, sends the
// overwritten words: the fabric reads a source as its bytes leave the
// egress port, as package fabric's does, not at submit.
func TestNcclCftFlushSmem(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "cft_ops")
	out, report, code := runExample(t, prog, "NTHREADS=4", "CFT_REUSE_STAGE=1")
	require.Equal(t, 0, code, "flushSmem first\nstdout:\n%s\nstderr:\n%s", out, report)
	assert.Contains(t, out, "cft_ops: PASS")
	out, report, code = runExample(t, prog, "NTHREADS=4", "CFT_REUSE_STAGE=2")
	require.Equal(t, 1, code, "no flushSmem\nstdout:\n%s\nstderr:\n%s", out, report)
	assert.Contains(t, out, "rank 0: cpMask[0] is 0xbad, want ")
	assert.Contains(t, out, "cft_ops: FAIL")
}

// TestNcclCftMisuse: each misuse of ncclCft that cft_ops makes with
// CFT_MISUSE=n stops the kernel (exit 1) naming the call, the argument
// and the rule.
func TestNcclCftMisuse(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "cft_ops")
	for _, c := range []struct {
		misuse int
		want   string
	}{
		{1, `ncclCft::put: shared memory address 0x[0-9a-f]+ is not 16-byte aligned \(at main\.cu:\d+\)`},
		{2, `ncclCft::put: 20 bytes: CFT moves whole 16-byte words \(a positive multiple of 16\) \(at main\.cu:\d+\)`},
		{3, `ncclCft::flush: 1 operations issued and not submitted: call ncclCft::submit first`},
		{4, `ncclCft::~ncclCft: the ncclCft on ncclCftSmem 0x[0-9a-f]+ ends with 0 operations not submitted and 1 in flight: submit and flush before the object goes`},
		{5, `ncclCft::putCounted: counter offset 0x[0-9a-f]+ is not in a window registered with NCCL_WIN_CFT_COUNTED \(at main\.cu:\d+\)`},
		{6, `ncclCft::put: LE 0x104 is not a unicast LE of this 4-rank CFT team`},
		{7, `ncclCft::putMultimem: a multimem operation on a dev comm made without NCCL_CFT_MULTIMEM \(at main\.cu:\d+\)`},
		{8, `ncclCft::red: ncclCftOpMin on f32 is not a CFT reduction`},
		{9, `ncclCft::pullRed: ncclCftOpSum on f64 has no pullRed \(docs/cft-semantics\.md §8\) \(at main\.cu:\d+\)`},
	} {
		t.Run(fmt.Sprint(c.misuse), func(t *testing.T) {
			out, report, code := runExample(t, prog, "NTHREADS=4", fmt.Sprintf("CFT_MISUSE=%d", c.misuse))
			require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Regexp(t, `emud: seed 1: kernel "cftOps": GPU \d+ block 0 thread 0 \(wave 0 lane 0\): `+c.want, report)
		})
	}
}

// firstLines is n lines of s from the first that starts with prefix.
func firstLines(s, prefix string, n int) string {
	i := strings.Index(s, prefix)
	if i < 0 {
		return ""
	}
	lines := strings.SplitAfterN(s[i:], "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "")
}
