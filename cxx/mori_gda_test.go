package cxx

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildMoriGda builds testdata/morigda/gda.cpp against that directory's
// MORI-shaped GDA header (emud's own writing, mlx5-shaped WQEs) with
// extra flags.
func buildMoriGda(t *testing.T, flags ...string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "morigda", "gda.cpp"))
	require.NoError(t, err)
	inc, err := filepath.Abs(filepath.Join("testdata", "morigda", "include"))
	require.NoError(t, err)
	return buildExample(t, src, append([]string{"-O1", "-DBUILD_CCO_SDMA=1", "-I", inc}, flags...)...)
}

// TestMoriGdaPut: a header's ccoGda device code over emud's NIC
// (capi/mori_gda.go, package mlx5). ccoDevCommCreate with
// CCO_GDA_CONNECTION_FULL fills the header's ccoIbgdaContext (before,
// it was refused: "ccoGda is not emulated"); lanes write mlx5 WRITE and
// fetch-add WQEs, store the doorbell record and the UAR; the NIC carries
// them to the peers and writes the CQEs the quiet polls. Four ranks, two
// contexts each (one per 64-lane wave: the header's warpSize by
// __GFX9__, which emud c++ now defines; at 32 two contexts' lanes shared
// one wave's ballot and one posted in the other's send queue), two
// rounds of correct data; the same digest twice, as forked processes,
// under the race detector (no report: the two fetch-adds a queue posts
// before its quiet both return their old values to one scratch word,
// which was reported as a write-write race until those writes were
// atomic ones, as in MORI's test_gda_barrier: checked); perturbed seeds
// pass.
func TestMoriGdaPut(t *testing.T) {
	plainLine(t)
	needCxx(t)
	prog := buildMoriGda(t)
	var want string
	for i, args := range [][]string{{"EMUD_SUMMARY=1", "2"}, {"EMUD_SUMMARY=1", "2"}, {"EMUD_SUMMARY=1", "2", "fork"}, {"EMUD_SUMMARY=1", "EMUD_RACE=1", "2"}} {
		stdout, stderr, code := runExample(t, prog, args...)
		require.Equal(t, 0, code, "%v: stdout:\n%s\nstderr:\n%s", args, stdout, stderr)
		assert.Contains(t, stdout, "header: emud-testdata-morigda")
		assert.Contains(t, stdout, "mori gda: PASS", "%v", args)
		if i == 0 {
			want = digestOf(t, stderr)
			continue
		}
		assert.Equal(t, want, digestOf(t, stderr), "%v: another digest than the threads' first run", args)
	}
	for seed := 2; seed <= 3; seed++ {
		stdout, stderr, code := runExample(t, prog, "EMUD_STRATEGY=perturb", fmt.Sprintf("EMUD_SEED=%d", seed), "2")
		assert.Equal(t, 0, code, "seed %d perturbed: stdout:\n%s\nstderr:\n%s", seed, stdout, stderr)
		assert.Contains(t, stdout, "mori gda: PASS", "seed %d", seed)
	}
}

// TestMoriGdaRefused: a WQE emud's NIC does not run (SEND) and a WQE
// naming a key of another GPU end the run with an error naming the queue
// (ranks and context), the WQE index and its opcode, not a hang.
func TestMoriGdaRefused(t *testing.T) {
	plainLine(t)
	needCxx(t)
	for _, tc := range []struct{ macro, want string }{
		{"EMUD_TEST_GDA_SEND", "WQE 0 (opcode 0x0a (SEND)): not emulated"},
		{"EMUD_TEST_GDA_BAD_KEY", "(opcode 0x08 (RDMA_WRITE)) completed in error (syndrome 0x13): remote key"},
	} {
		t.Run(tc.macro, func(t *testing.T) {
			stdout, stderr, code := runExample(t, buildMoriGda(t, "-D"+tc.macro), "1")
			require.NotEqual(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Regexp(t, `mlx5 NIC: queue rank \d -> rank \d context \d \(QPN 0x[0-9a-f]+\): WQE \d`, stderr)
			assert.Contains(t, stderr, tc.want)
			assert.NotContains(t, stderr, "hang")
		})
	}
}

// TestMoriRunAhead: ranks that make three dev comms and destroy their
// comm straight after (MORI's test_gda_modes' shape) all succeed, on
// several seeds. A rank's queues took their peers' signal pools from the
// peers' comms after the collective, and the last rank to arrive, which
// runs on, had destroyed its comm by then: "peer 3 has not created dev
// comm #2" (checked: seeds 1-3 failed so).
func TestMoriRunAhead(t *testing.T) {
	plainLine(t)
	needCxx(t)
	src, err := filepath.Abs(filepath.Join("testdata", "mori", "runahead.cpp"))
	require.NoError(t, err)
	prog := buildExample(t, src, "-O1", "-DBUILD_CCO_SDMA=1", "-I", moriInclude(t))
	for seed := 1; seed <= 3; seed++ {
		stdout, stderr, code := runExample(t, prog, fmt.Sprintf("EMUD_SEED=%d", seed))
		require.Equal(t, 0, code, "seed %d: stdout:\n%s\nstderr:\n%s", seed, stdout, stderr)
		assert.Contains(t, stdout, "mori runahead: PASS")
	}
}

// TestMoriGdaMissingQuiet: with the race detector, the NIC's source reads
// and remote writes are accesses (each WQE a detector thread forked at
// its doorbell store, completions released to the CQE and doneIdx words),
// so a lane's store to a put's source before its quiet is a data race
// naming the store's line and the NIC's read, on the queue and WQE; the
// correct program (TestMoriGdaPut, MORI's test_gda_put and test_gda_get)
// draws none.
func TestMoriGdaMissingQuiet(t *testing.T) {
	plainLine(t)
	needCxx(t)
	prog := buildMoriGda(t, "-DEMUD_TEST_GDA_NO_QUIET")
	stdout, stderr, code := runExample(t, prog, "EMUD_RACE=1", "1")
	require.NotEqual(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "data race on LSA memory")
	assert.Regexp(t, `store \(write\) of \[0x[0-9a-f]+, 0x[0-9a-f]+\) by kernel "alltoall" GPU \d block 0 wave \d lane 0 \([^)]*gda\.cpp:\d+`, stderr)
	assert.Regexp(t, `0x08 \(RDMA_WRITE\) source read \(WQE 0\) \(read\) of \[0x[0-9a-f]+, 0x[0-9a-f]+\) by GPU \d's NIC, queue rank \d -> rank \d context \d`, stderr)
}
