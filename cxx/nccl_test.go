package cxx

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestNcclLsaAllReduce runs the LSA all-reduce of NCCL's device API
// (examples/cxx/nccl/lsa_allreduce) on 4 and 8 ranks: it passes on
// several seeds under timing perturbation, the same seed gives the same
// digest, and the race detector finds nothing (a false alarm is as bad
// as a missed bug).
func TestNcclLsaAllReduce(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "lsa_allreduce")
	for _, ranks := range []string{"4", "8"} {
		for _, seed := range []int{1, 2, 3} {
			env := []string{ranks, fmt.Sprintf("EMUD_SEED=%d", seed), "EMUD_STRATEGY=perturb", "EMUD_SUMMARY=1"}
			out, sum, code := runExample(t, prog, env...)
			require.Equal(t, 0, code, "%s ranks seed %d\nstdout:\n%s\nstderr:\n%s", ranks, seed, out, sum)
			assert.Contains(t, out, "lsa_allreduce: PASS ("+ranks+" ranks)")
			_, again, _ := runExample(t, prog, env...)
			assert.Equal(t, sum, again, "%s ranks seed %d: another digest", ranks, seed)
		}
		out, report, code := runExample(t, prog, ranks, "EMUD_RACE=1")
		require.Equal(t, 0, code, "%s ranks, EMUD_RACE=1\nstdout:\n%s\nstderr:\n%s", ranks, out, report)
		assert.Contains(t, out, "lsa_allreduce: PASS")
	}
}

// TestNcclLsaAllReduceNoEntryBarrier runs the planted twin (built with
// -DSKIP_ENTRY_BARRIER: the acquire barrier before reading peers' send
// windows is left out) on 4 and 8 ranks with the race detector: it is
// reported (exit 5) naming the peer host's copy into its send buffer and
// this kernel's load through an LSA pointer, and the missing edge.
func TestNcclLsaAllReduceNoEntryBarrier(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "lsa_allreduce", "-DSKIP_ENTRY_BARRIER")
	for _, ranks := range []string{"4", "8"} {
		out, report, code := runExample(t, prog, ranks, "EMUD_RACE=1")
		require.Equal(t, 5, code, "%s ranks: exit status\nstdout:\n%s\nstderr:\n%s", ranks, out, report)
		assert.NotContains(t, out, "PASS")
		assert.Regexp(t, `data race on LSA memory`, report)
		assert.Regexp(t, `by hipMemcpy on the null stream of GPU \d+ \(host thread \d+\) \(main\.cu:\d+\)`, report)
		assert.Regexp(t, `load \(read\) of .* by kernel "lsaAllReduce" GPU \d+ block \d+`, report)
		assert.Contains(t, report, "missing edge: the load by kernel \"lsaAllReduce\"")
	}
}

// TestNcclLsaAllReduceAliasedSlot runs the second planted twin (built
// with -DALIAS_BARRIER_SLOT: every CTA's barrier session on slot 0) on 4
// and 8 ranks with the race detector: two CTAs of one GPU writing the
// slot's words unordered is reported (exit 5), naming both blocks.
func TestNcclLsaAllReduceAliasedSlot(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "lsa_allreduce", "-DALIAS_BARRIER_SLOT")
	blocks := regexp.MustCompile(`store32 \(write\) of \[(0x[0-9a-f]+), 0x[0-9a-f]+\) by kernel "lsaAllReduce" GPU (\d+) block (\d+) wave \d+ lane \d+ \(cco/barrier\.go:\d+\)`)
	for _, ranks := range []string{"4", "8"} {
		out, report, code := runExample(t, prog, ranks, "EMUD_RACE=1")
		require.Equal(t, 5, code, "%s ranks: exit status\nstdout:\n%s\nstderr:\n%s", ranks, out, report)
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
		assert.True(t, found, "%s ranks: no race between two blocks' stores to one barrier word\n%s", ranks, truncate(report, 3000))
	}
}

// TestNcclLsaAllReduceMissingRank runs the third planted twin (built with
// -DLAST_RANK_SKIPS_LAUNCH: the last rank never launches iteration 1) on
// 4 and 8 ranks: the run ends in a hang report (exit 2) in which every
// other rank's CTAs wait in the entry barrier at main.cu's line, on their
// own slot, naming the rank that never arrived.
func TestNcclLsaAllReduceMissingRank(t *testing.T) {
	needCxx(t)
	prog := ncclExample(t, "lsa_allreduce", "-DLAST_RANK_SKIPS_LAUNCH")
	for _, ranks := range []int{4, 8} {
		out, report, code := runExample(t, prog, fmt.Sprint(ranks))
		require.Equal(t, 2, code, "%d ranks: exit status\nstdout:\n%s\nstderr:\n%s", ranks, out, report)
		assert.NotContains(t, out, "PASS")
		assert.Contains(t, report, "emud: seed 1: hang")
		for r := range ranks - 1 {
			for slot := range 2 {
				assert.Regexp(t, fmt.Sprintf(`lsaAllReduce/gpu%d/b%d/w0 .*barrier %d: inbox\[%d\]\[%d\] at 0x[0-9a-f]+ is \d+, waiting for epoch \d+ \(LSA rank %d has not arrived\)\n\s+doing: \S+ by lanes 0-31 at main\.cu:\d+`,
					r, slot, slot, slot, ranks-1, ranks-1), report, "%d ranks: rank %d CTA %d", ranks, r, slot)
			}
		}
	}
}

// TestNcclHostAPI runs examples/cxx/nccl/host_api/main.cu on 4 and 8
// GPUs: ncclCommInitAll from one thread, the comm queries, team
// arithmetic, and misuse failing with NCCL's result and a line naming why
// (ncclMemAlloc before any comm, ncclMemFree of a stranger, a dev comm
// asking for GIN, requirements without NCCL's magic).
func TestNcclHostAPI(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "nccl", "host_api", "main.cu"), "-O2", "-Wall", "-Werror")
	for _, gpus := range []string{"4", "8"} {
		out, _, code := runExample(t, prog, "EMUD_GPUS="+gpus)
		require.Equal(t, 0, code, "EMUD_GPUS=%s\nstdout:\n%s", gpus, out)
		assert.Contains(t, out, "host_api: PASS")
	}
	cmd := exec.Command(prog)
	var errb strings.Builder
	cmd.Stderr = &errb
	require.NoError(t, cmd.Run())
	for _, want := range []string{
		"main.cu:26: ncclMemAlloc: no NCCL comm on the current device yet",
		"main.cu:27: ncclMemFree: not a pointer ncclMemAlloc returned",
		"ncclDevCommCreate: GIN resources (signals, counters, a connection type, GIN barriers): ncclGin is not emulated in C++ yet",
		"ncclDevCommCreate: requirements magic is not NCCL_API_MAGIC",
	} {
		assert.Contains(t, errb.String(), want)
	}
}
