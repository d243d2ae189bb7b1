package cxx

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ncclExample builds examples/cxx/nccl/<dir>/main.cu with the examples'
// common utility file, as NCCL's device-API examples are built.
func ncclExample(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	root := setupCxx(t)
	ex := filepath.Join(root, "examples", "cxx", "nccl")
	args := append([]string{"-O2", "-Wall", "-Werror"}, flags...)
	args = append(args, filepath.Join(ex, "common", "utils.cc"))
	return buildExample(t, filepath.Join(ex, dir, "main.cu"), args...)
}

// twinRuns runs a planted twin on 4 and 8 ranks (NTHREADS) with env:
// each run ends with exit status code (its stderr whole in report unless
// 0), and check asserts what the run printed.
func twinRuns(t *testing.T, prog string, code int, env []string, check func(ranks int, out, report string)) {
	t.Helper()
	for _, ranks := range []int{4, 8} {
		out, report, got := runExample(t, prog, append([]string{fmt.Sprintf("NTHREADS=%d", ranks)}, env...)...)
		require.Equal(t, code, got, "%d ranks %v: exit status\nstdout:\n%s\nstderr:\n%s", ranks, env, out, report)
		check(ranks, out, report)
	}
}

// TestNcclLsaAllReduce runs the LSA all-reduce of NCCL's device API
// (examples/cxx/nccl/lsa_allreduce) on 4 and 8 ranks: it passes on
// seeds 1-3 (1 in a -race test binary) under timing perturbation and
// under PCT, the same seed gives
// the same digest, and the race detector finds nothing (a false alarm is
// as bad as a missed bug).
func TestNcclLsaAllReduce(t *testing.T) {
	plainLine(t) // before the build: a -race binary skips it at once
	needCxx(t)
	ncclRuns(t, ncclExample(t, "lsa_allreduce"), "lsa_allreduce", 3)
}

// TestNcclLsaAllReduceNoEntryBarrier runs the planted twin (built with
// -DSKIP_ENTRY_BARRIER: the acquire barrier before reading peers' send
// windows is left out) on 4 and 8 ranks with the race detector: it is
// reported (exit 5) naming the peer host's copy into its send buffer and
// this kernel's load through an LSA pointer, and the missing edge.
func TestNcclLsaAllReduceNoEntryBarrier(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	prog := ncclExample(t, "lsa_allreduce", "-DSKIP_ENTRY_BARRIER")
	twinRuns(t, prog, 5, []string{"EMUD_RACE=1"}, func(ranks int, out, report string) {
		assert.NotContains(t, out, "PASS")
		assert.Regexp(t, `data race on LSA memory`, report)
		assert.Regexp(t, `by hipMemcpy on the null stream of GPU \d+ \(host thread \d+\) \(main\.cu:\d+\)`, report)
		assert.Regexp(t, `load \(read\) of .* by kernel "lsaAllReduce" GPU \d+ block \d+`, report)
		// Either order: the peer's copy before this load, or after it.
		assert.Regexp(t, `missing edge: the (load by kernel "lsaAllReduce".* is not ordered after the hipMemcpy|hipMemcpy by .* is not ordered after the load by kernel "lsaAllReduce")`, report)
	})
}

// TestNcclLsaAllReduceAliasedSlot runs the second planted twin (built
// with -DALIAS_BARRIER_SLOT: every CTA's barrier session on slot 0) on 4
// and 8 ranks with the race detector: two CTAs of one GPU writing the
// slot's words unordered is reported (exit 5), naming both blocks; under
// PCT (seed 1) the run hangs at the barrier instead (exit 2).
func TestNcclLsaAllReduceAliasedSlot(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "lsa_allreduce", "-DALIAS_BARRIER_SLOT")
	blocks := regexp.MustCompile(`store32 \(write\) of \[(0x[0-9a-f]+), 0x[0-9a-f]+\) by kernel "lsaAllReduce" GPU (\d+) block (\d+) wave \d+ lane \d+ \(cco/barrier\.go:\d+\)`)
	twinRuns(t, prog, 5, []string{"EMUD_RACE=1"}, func(ranks int, _, report string) {
		// Some race on a barrier word is between stores of two blocks of
		// one GPU: the aliased slot.
		seen := map[string]string{} // address -> "gpu block" of a store
		found := false
		for _, m := range blocks.FindAllStringSubmatch(report, -1) {
			k, who := m[1], m[2]+" "+m[3]
			if prev, ok := seen[k]; ok && prev != who && strings.Fields(prev)[0] == m[2] {
				found = true
			}
			seen[k] = who
		}
		assert.True(t, found, "%d ranks: no race between two blocks' stores to one barrier word\n%s", ranks, truncate(report, 3000))
	})
	// Under PCT the shared slot's epochs go wrong: a hang at the
	// barrier, naming a rank that has not arrived.
	twinRuns(t, prog, 2, []string{"EMUD_STRATEGY=pct", "EMUD_SEED=1"}, func(ranks int, _, report string) {
		assert.Regexp(t, `LsaBarrierSession::wait on LSA rank \d+, barrier 0: .*has not arrived\)\n\s+doing: \S+ by lanes 0-31 at main\.cu:\d+`, report, "%d ranks, pct seed 1", ranks)
	})
}

// TestNcclLsaAllReduceMissingRank runs the third planted twin (built with
// -DLAST_RANK_SKIPS_LAUNCH: the last rank never launches iteration 1) on
// 4 and 8 ranks: the run ends in a hang report (exit 2) in which every
// other rank's CTAs wait in the entry barrier at main.cu's line, on their
// own slot, naming the rank that never arrived.
func TestNcclLsaAllReduceMissingRank(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	prog := ncclExample(t, "lsa_allreduce", "-DLAST_RANK_SKIPS_LAUNCH")
	twinRuns(t, prog, 2, nil, func(ranks int, out, report string) {
		assert.NotContains(t, out, "PASS")
		assert.Contains(t, report, "emud: seed 1: hang")
		for r := range ranks - 1 {
			for slot := range 2 {
				assert.Regexp(t, fmt.Sprintf(`lsaAllReduce/gpu%d/b%d/w0 .*barrier %d: inbox\[%d\]\[%d\] at 0x[0-9a-f]+ is \d+, waiting for epoch \d+ \(LSA rank %d has not arrived\)\n\s+doing: \S+ by lanes 0-31 at main\.cu:\d+`,
					r, slot, slot, slot, ranks-1, ranks-1), report, "%d ranks: rank %d CTA %d", ranks, r, slot)
			}
		}
	})
}

// TestNcclHostCollectives runs examples/cxx/nccl/host_coll/main.cu: one
// thread drives 4 devices' comms (ncclCommInitAll) through NCCL's host
// collectives and a send/receive ring in groups, each result checked on
// the host (PASS, race-clean, one digest a seed). Its planted bugs: a
// rank whose count differs and one that skips a broadcast fail the run
// naming both calls; one that skips an all-to-all is a hang naming the
// ranks that posted it and the one that did not; a ring outside a
// group is a hang (the first send waits for its receive, which the same
// thread would make after it); one thread making every rank's all-reduce outside a
// group is a hang naming NCCL's rule (a call may block until every rank
// has made its own); a kernel on an unordered stream overwriting the
// all-reduce's input is a race naming both.
func TestNcclHostCollectives(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "nccl", "host_coll", "main.cu"), "-O2", "-Wall", "-Werror")
	digest := ""
	for _, env := range [][]string{{}, {"EMUD_SEED=1"}, {"EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED=4"}} {
		r := runFull(t, prog, append([]string{"EMUD_SUMMARY=1"}, env...)...)
		require.Equal(t, 0, r.code, "%v\nstdout:\n%s\nstderr:\n%s", env, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "host_coll 4 ranks: 0 wrong (PASS)")
		assert.NotContains(t, r.stderr, "data race")
		if len(env) < 2 {
			d := regexp.MustCompile(`digest [0-9a-f]+`).FindString(r.stderr)
			require.NotEmpty(t, d, r.stderr)
			if digest != "" {
				assert.Equal(t, digest, d, "the same seed, another digest")
			}
			digest = d
		}
	}
	for _, c := range []struct {
		mode string
		code int
		want []string
	}{
		{"mismatch", 1, []string{`collective #1 of the communicator made at \S+main\.cu:\d+: rank 0's ncclAllReduce at main\.cu:\d+ and rank 1's ncclAllReduce at main\.cu:\d+ disagree: count 1024 against 512`}},
		{"skipped", 1, []string{`rank 0's ncclBroadcast at main\.cu:\d+ and rank 2's ncclBcast at main\.cu:\d+ disagree: ncclFloat32 against ncclInt32 \(a rank's calls match the others' in the order`}},
		{"missing", 2, []string{`hang \(deadlock\)`, `ncclAlltoAll at main\.cu:\d+, the collective #11 of the communicator made at \S+: posted by ranks 0, 1, 3; rank 2 not yet \(its call was not made\)`}},
		{"nogroup", 2, []string{`hang \(deadlock\)`, `ncclSend at main\.cu:\d+, outside a group, waits until every rank has made its call, as NCCL may \(the send #1 from rank 0 to rank 1\); rank 1 has not`,
			`ncclSend at main\.cu:\d+, the send #1 from rank 0 to rank 1: posted by rank 0; rank 1 not yet \(its call was not made\)`}},
		{"ungrouped", 2, []string{`hang \(deadlock\)`, `ncclAllReduce at main\.cu:\d+, outside a group, waits until every rank has made its call, as NCCL may \(the collective #1 of the communicator made at \S+\); ranks 1, 2, 3 have not: where one thread makes several ranks' calls \(host main thread\), put them between ncclGroupStart and ncclGroupEnd`}},
	} {
		r := runFull(t, prog, c.mode)
		require.Equal(t, c.code, r.code, "%s\nstdout:\n%s\nstderr:\n%s", c.mode, r.stdout, r.stderr)
		for _, w := range c.want {
			assert.Regexp(t, w, r.stderr, c.mode)
		}
	}
	r := runFull(t, prog, "racy", "EMUD_RACE=1")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `store \(write\) of \[0x[0-9a-f]+, 0x[0-9a-f]+\) by kernel "scribble" GPU 0 .*main\.cu:\d+`, r.stderr)
	assert.Regexp(t, `ncclAllReduce \(read\) of \[0x[0-9a-f]+, 0x[0-9a-f]+\) by ncclAllReduce of rank 0 on stream \d+ of GPU 0 \(host main thread\) \(main\.cu:\d+\)`, r.stderr)
}

// TestNcclOneThread runs examples/cxx/nccl/one_thread: one thread makes
// every rank's ncclCommInitRank in a group (emud runs them at the group's
// end), posts grouped collectives (float sum and Avg, NCCL's premultiplied
// Avg showing on 3 GPUs, int32 Avg, a half sum, PreMulSum operators with
// host and device scalars), launches kernels from a header's template
// helper (rewritten from a copy: harness.h), instantiates a captured graph
// through the pre-CUDA-12 signature, and frees NCCL memory after its comm
// is destroyed; every result is checked exactly, with and without the
// race detector, and a seed gives one digest. Steps that forward received
// data in one group are a race, its advice naming the group.
func TestNcclOneThread(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "nccl", "one_thread", "main.cu"), "-O2", "-Wall", "-Werror")
	digest := ""
	for _, env := range [][]string{{"EMUD_GPUS=3"}, {"EMUD_GPUS=8"}, {"EMUD_GPUS=8"}, {"EMUD_GPUS=4", "EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED=3"}} {
		r := runFull(t, prog, append([]string{"EMUD_SUMMARY=1"}, env...)...)
		require.Equal(t, 0, r.code, "%v\nstdout:\n%s\nstderr:\n%s", env, r.stdout, r.stderr)
		gpus := strings.TrimPrefix(env[0], "EMUD_GPUS=")
		assert.Contains(t, r.stdout, "one_thread "+gpus+" ranks: 0 wrong (PASS)")
		assert.Contains(t, r.stdout, "last error: names ncclRedOpDestroy")
		assert.NotContains(t, r.stderr, "data race")
		if gpus == "8" {
			d := regexp.MustCompile(`digest [0-9a-f]+`).FindString(r.stderr)
			require.NotEmpty(t, d, r.stderr)
			if digest != "" {
				assert.Equal(t, digest, d, "the same seed, another digest")
			}
			digest = d
		}
	}
	// Two steps that forward what the first received: a group each is
	// clean, both in one group is the race it is on NCCL, worded so.
	r := runFull(t, prog, "forward", "EMUD_RACE=1", "EMUD_GPUS=4")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "forward: 0 wrong")
	r = runFull(t, prog, "grouped", "EMUD_RACE=1", "EMUD_GPUS=4")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `ncclSend and ncclRecv were posted in one group on stream \d+ of GPU \d: NCCL runs a group's calls in no order it promises`, r.stderr)
	assert.Regexp(t, `by ncclRecv of rank \d on stream \d+ of GPU \d \(host main thread\) \(main\.cu:\d+\)`, r.stderr)
}

// TestNcclForkGroupInit: ranks as forked processes, each making its own
// ncclCommInitRank inside a group (nccl-tests' way under MPI), build their
// comms on their one thread and sum over them; before, the group's end
// ran the lone init on a second thread, which a forked rank refuses.
func TestNcclForkGroupInit(t *testing.T) {
	plainLine(t) // its ranks are processes Go's detector does not see: .ci/run runs it in a plain build
	needCxx(t)
	prog := buildExample(t, "testdata/nccl/fork_group_init.cu", "-O2", "-Wall", "-Werror")
	for _, gpus := range []string{"2", "4"} {
		r := runFull(t, prog, "EMUD_GPUS="+gpus)
		require.Equal(t, 0, r.code, "EMUD_GPUS=%s\nstdout:\n%s\nstderr:\n%s", gpus, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "fork_group_init "+gpus+" ranks: 0 failed")
	}
}

// TestNcclSplit runs testdata/nccl/split.cu: ncclCommSplit by parity
// with keys that reverse the order, by halves, and with
// NCCL_SPLIT_NOCOLOR, each sub-comm checked by its queries (rank, size,
// the parent rank's device), an all-reduce whose sum names its members
// and a broadcast from its rank 0; with a thread per rank (clean under
// EMUD_RACE=1), one thread splitting in a group, ranks as processes, and
// two comms of ncclCommInitRank on the node's halves (which ran both
// comms' rank 0 on GPU 0 before: a false hang). A rank that never splits
// is a hang naming the split; a window on a sub-comm whose ranks are not
// GPUs 0..n-1 in order is refused with the reason; two ranks of one comm
// on one GPU fail ncclCommInitRank with NCCL's complaint. ncclCommShrink
// by the last rank (of a world made by ncclCommInitRankScalable) leaves
// the others a comm checked the same way, and refuses a rank excluding
// itself.
func TestNcclSplit(t *testing.T) {
	plainLine(t) // its fork mode's ranks are processes Go's detector does not see
	needCxx(t)
	prog := buildExample(t, "testdata/nccl/split.cu", "-O2", "-Wall", "-Werror")
	for _, gpus := range []string{"4", "8"} {
		for _, mode := range []string{"threads", "grouped", "fork", "halves", "shrink"} {
			env := []string{"EMUD_GPUS=" + gpus}
			if mode != "fork" {
				env = append(env, "EMUD_RACE=1")
			}
			r := runFull(t, prog, append(env, mode)...)
			require.Equal(t, 0, r.code, "%s on %s GPUs\nstdout:\n%s\nstderr:\n%s", mode, gpus, r.stdout, r.stderr)
			assert.Contains(t, r.stdout, "split "+mode+" on "+gpus+" GPUs: 0 failed")
			assert.NotContains(t, r.stderr, "current device", "%s on %s GPUs: no device warning", mode, gpus)
			if mode == "shrink" {
				assert.Contains(t, r.stderr, "ncclCommShrink: the calling rank is in excludeRanksList")
			}
		}
	}
	r := runFull(t, prog, "EMUD_GPUS=4", "missing")
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stdout+r.stderr, "ncclCommSplit (rank 0): 3 of 4 ranks arrived")

	r = runFull(t, prog, "EMUD_GPUS=4", "window")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "window on world rank 0: invalid usage")
	assert.Regexp(t, `split\.cu:\d+: ccoWindowRegister`, r.stderr)
	assert.Contains(t, r.stderr, "this comm's ranks are not on GPUs 0..1 in rank order (rank 0 on GPU 2, rank 1 on GPU 0)")

	r = runFull(t, prog, "EMUD_GPUS=4", "dup")
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "both run on GPU 0: a comm's ranks are on distinct GPUs")
	assert.Contains(t, r.stdout, "ncclCommInitRank: invalid usage")
}

// TestNcclStreamOverlap runs testdata/nccl/overlap.cu, a training step's
// overlap of kernels on a compute stream with in-place all-reduces on a
// communication stream, handed over by events both ways: clean under the
// race detector at three perturbed seeds on 4 GPUs, with the sums right;
// each planted twin (the communication stream not waiting for the filled
// buffer; the compute stream refilling a buffer its all-reduce still
// reads) is a race naming the kernel's store, the ncclAllReduce and the
// event that would order them.
func TestNcclStreamOverlap(t *testing.T) {
	plainLine(t) // several seeds of a program run as processes
	needCxx(t)
	prog := buildExample(t, "testdata/nccl/overlap.cu", "-O2", "-Wall", "-Werror")
	for seed := 1; seed <= 3; seed++ {
		r := runFull(t, prog, "EMUD_GPUS=4", "EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED="+strconv.Itoa(seed))
		require.Equal(t, 0, r.code, "seed %d\nstdout:\n%s\nstderr:\n%s", seed, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "overlap: PASS")
		assert.NotContains(t, r.stderr, "race")
	}
	for plant, first := range map[string]string{
		"nowait": `the ncclAllReduce by ncclAllReduce of rank \d on stream \d+ of GPU \d \(host thread \d\) is not ordered after the store by kernel "fill"`,
		"nodone": `the store by kernel "fill" GPU \d block \d wave \d lane \d+ is not ordered after the ncclAllReduce by ncclAllReduce of rank \d`,
	} {
		r := runFull(t, prog, "EMUD_GPUS=4", "EMUD_RACE=1", plant)
		require.Equal(t, 5, r.code, "%s\nstdout:\n%s\nstderr:\n%s", plant, r.stdout, r.stderr)
		assert.Regexp(t, "missing edge: "+first, r.stderr, plant)
		assert.Contains(t, r.stderr, "make the later one's stream wait for an event recorded after the earlier (hipEventRecord, then hipStreamWaitEvent)", plant)
	}
}

// TestNcclHostAPI runs examples/cxx/nccl/host_api/main.cu on 4 and 8
// GPUs: ncclCommInitAll from one thread, the comm queries, team
// arithmetic, and misuse failing with NCCL's result and a line naming why
// (ncclMemAlloc before any comm, ncclMemFree of a stranger, a dev comm
// asking for LL all-to-all slots, requirements without NCCL's magic), and
// a suspended or revoked comm refusing collectives, naming why.
func TestNcclHostAPI(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "nccl", "host_api", "main.cu"), "-O2", "-Wall", "-Werror")
	for _, gpus := range []string{"4", "8"} {
		r := runFull(t, prog, "EMUD_GPUS="+gpus)
		require.Equal(t, 0, r.code, "EMUD_GPUS=%s\nstdout:\n%s\nstderr:\n%s", gpus, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "host_api: PASS")
		for _, want := range []string{
			"main.cu:27: ncclMemAlloc: no NCCL comm on the current device yet",
			"main.cu:28: ncclMemFree: not a pointer ncclMemAlloc returned",
			"ncclDevCommCreate: LL all-to-all slots: not emulated in C++ yet",
			"ncclDevCommCreate: requirements magic is not NCCL_API_MAGIC",
			"main.cu:57: ncclGetLsaMultimemDevicePointer: LSA multimem is not emulated (docs/cuda.md)",
			"main.cu:64: ncclCommSuspend: the communicator is suspended already",
			"main.cu:66: ncclAllReduce: the communicator is suspended (ncclCommSuspend): ncclCommResume first",
			"main.cu:83: ncclAllReduce: the communicator was revoked (ncclCommRevoke): destroy, split or shrink it",
			"main.cu:84: ncclCommFinalize: the communicator was revoked",
		} {
			assert.Contains(t, r.stderr, want, "EMUD_GPUS=%s", gpus)
		}
	}
}

// TestPthreadBarrier: a pthread barrier between host threads waits in
// virtual time (capi/pbarrier.c), as NCCL's example harness uses one to
// hand out the unique id: with every thread arriving the program ends
// (exit 0; before, the thread holding its turn in pthread_barrier_wait
// ended the run in the spin watch's hang); with one thread short it is a
// hang report naming the barrier and how many arrived (exit 2).
func TestPthreadBarrier(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "pbarrier.cu")
	require.NoError(t, os.WriteFile(src, []byte(`#include <cuda_runtime.h>
#include <pthread.h>
#include <cstdio>
#include <cstdlib>
static pthread_barrier_t bar;
static int value, seen[8];
static void* rank(void* p) {
  int r = (int)(long)p;
  if (r == 0) value = 42;
  pthread_barrier_wait(&bar);
  seen[r] = value;
  cudaSetDevice(r);
  return nullptr;
}
int main(int argc, char** argv) {
  int n = 0;
  cudaGetDeviceCount(&n);
  int threads = std::atoi(argv[1]);
  pthread_barrier_init(&bar, nullptr, 4);
  pthread_t th[8];
  for (int r = 0; r < threads; r++) pthread_create(&th[r], nullptr, rank, (void*)(long)r);
  for (int r = 0; r < threads; r++) pthread_join(th[r], nullptr);
  int ok = 1;
  for (int r = 0; r < threads; r++) ok &= seen[r] == 42;
  std::printf("pbarrier: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
`), 0o644))
	prog := filepath.Join(dir, "pbarrier")
	var log strings.Builder
	require.NoError(t, Run([]string{"-O2", src, "-o", prog}, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}), log.String())
	out, report, code := runExample(t, prog, "4", "EMUD_RACE=1")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.Contains(t, out, "pbarrier: PASS")
	out, report, code = runExample(t, prog, "3")
	require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.Regexp(t, `pthread_barrier_wait on 0x[0-9a-f]+: 3 of 4 threads arrived`, report)
}
