package cxx

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/scenario/cft"
)

// TestNcclCftAllReduce runs examples/cxx/nccl/cft_allreduce (pullRed +
// redMultimem between multimem CFT barriers, one warp per rank) on 4 and
// 8 ranks: it passes under perturbation and PCT, one digest per seed,
// and the race detector finds nothing.
func TestNcclCftAllReduce(t *testing.T) {
	plainLine(t) // before the build: a -race binary skips it at once
	needCxx(t)
	cftRuns(t, ncclExample(t, "cft_allreduce"), "cft_allreduce")
}

// TestCftAllReduceMatchesGo: the CFT all-reduce in C++
// (examples/cxx/nccl/cft_allreduce) and the Go scenario it mirrors
// (scenario/cft RunAllReduce) end at the same emulated time on the same
// ranks, bytes and seed, because both time their fabric operations with
// package fabric's ports on its default NVLink 5 model. The cases cover
// two rank counts, a chunk that fits one stage and one that takes two
// (4 ranks of 512 KiB: 128 KiB chunks in 64 KiB stages). Its Go side
// runs in this test process, so a -race build skips it (as
// TestGinPutMatchesGo).
func TestCftAllReduceMatchesGo(t *testing.T) {
	needCxx(t)
	plainLine(t)
	prog := ncclExample(t, "cft_allreduce")
	for _, c := range []struct{ ranks, bytes int }{{4, 4 << 10}, {8, 16 << 10}, {4, 512 << 10}} {
		for _, seed := range []uint64{1, 2} {
			name := fmt.Sprintf("%d ranks, %d B, seed %d", c.ranks, c.bytes, seed)
			out, sum, code := runExample(t, prog, fmt.Sprintf("NTHREADS=%d", c.ranks), fmt.Sprintf("CFT_ALLREDUCE_BYTES=%d", c.bytes),
				"EMUD_SUMMARY=1", fmt.Sprintf("EMUD_SEED=%d", seed))
			require.Equal(t, 0, code, "%s\n%s%s", name, out, sum)
			assert.Contains(t, out, "cft_allreduce: PASS", name)
			end := summaryEnd(t, sum)
			res, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: seed, Topology: fabric.Topology{NRanks: c.ranks}, Bytes: c.bytes, Type: redop.U32})
			require.NoError(t, err, name)
			assert.Positive(t, end, name)
			assert.Equal(t, int64(res.Elapsed), end, "%s: emulated end time, Go vs C++", name)
		}
	}
}

// TestCftGranules: C++ CFT data moves in package fabric's 4 KiB
// granules, each counted as it lands (cxx/testdata/nccl/cft_granules.cu):
// once rank 1's counter holds the first 4 KiB of an 8 KiB putCounted, the
// second granule has not landed; once it holds 8 KiB, it has. (A put
// landed whole, at its last byte, before.)
func TestCftGranules(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	root := setupCxx(t)
	common := filepath.Join(root, "examples", "cxx", "nccl", "common")
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "nccl", "cft_granules.cu"), "-O2", "-Wall", "-Werror", "-I"+common,
		filepath.Join(common, "utils.cc"))
	out, sum, code := runExample(t, prog, "NTHREADS=2")
	require.Equal(t, 0, code, "%s%s", out, sum)
	assert.Contains(t, out, "rank 1: after 4096 counted bytes word 0 is 0x1000 and word 1024 is 0; after 8192, word 1024 is 0x1400\n")
}
