package cxx

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A planted C++ bug that shows only when the CTAs of one grid start more
// than a few µs apart (examples/cxx/skew/cta_skew.cpp: block 0 reads
// block 1's ready flag once, after a drain, instead of waiting for it) is
// found within 200 seeds under timing perturbation, through the block-skew
// tail (sim.Spread.BlockSkewTail), and never at exact timing (issue 38).
func TestCtaSkewBugFound(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "skew", "cta_skew.cpp"), "-O2", "-Wall", "-Werror")
	for seed := 1; seed <= 3; seed++ {
		out, report, code := runExample(t, prog, fmt.Sprintf("EMUD_SEED=%d", seed))
		require.Equal(t, 0, code, "exact timing, seed %d: the blocks start together\n%s\n%s", seed, out, report)
	}
	found := 0
	for seed := 1; seed <= 200 && found == 0; seed++ {
		out, _, code := runExample(t, prog, fmt.Sprintf("EMUD_SEED=%d", seed), "EMUD_PERTURB=2")
		if code != 0 {
			found = seed
			assert.Equal(t, 1, code)
			assert.Contains(t, out, "block 0 read block 1's flag before block 1 had started")
			assert.Contains(t, out, "cta_skew: FAIL")
		}
	}
	assert.NotZero(t, found, "the bug is found within 200 seeds at perturbation level 2")
	t.Logf("first found at seed %d", found)
}
