package cxx

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lane code takes virtual time (issue 38, capi's lanecost.go): a wave
// whose lanes store N and 2·N 8-byte words reads, around the loop, the
// busiest lane's 16·N bytes (N = 2048) at 4 CU cycles per 16 bytes, at -O0 as at -O2
// (bytes are counted, not accesses); EMUD_LANE_COST scales it and 0
// turns it off (lane code took no time before the model); a bad value is
// refused naming the variable; at perturbation level 1 the figure moves
// with the seed and stays near the exact one.
func TestLaneCodeTakesTime(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "examples", "cxx", "timing", "lane_work.cpp")
	cyclesRe := regexp.MustCompile(`lane_work: 4096 stores, (\d+) cycles`)
	cycles := func(prog string, env ...string) int {
		t.Helper()
		out, report, code := runExample(t, prog, append([]string{"EMUD_SEED=3"}, env...)...)
		require.Equal(t, 0, code, "%s\n%s", out, report)
		m := cyclesRe.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		c, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		return c
	}
	// 4096 stores of 8 bytes by the busiest lane: 2048 × 16 bytes × 4
	// cycles; clock64 reads whole ns, so up to 3 cycles less. With no
	// cost the second read is at the first's instant, which capi takes
	// for a delay loop's spin and reads 20 ns (48 cycles) later.
	const want, none = 2048 * 4, 48
	for _, opt := range []string{"-O2", "-O0"} {
		prog := buildExample(t, src, opt, "-Wall", "-Werror")
		assert.InDelta(t, want, cycles(prog), 3, "%s: the wave pays for its busiest lane, once", opt)
		assert.InDelta(t, 2*want, cycles(prog, "EMUD_LANE_COST=8"), 3, opt)
		assert.Equal(t, none, cycles(prog, "EMUD_LANE_COST=0"), opt)
		perturbed := cycles(prog, "EMUD_PERTURB=1")
		assert.NotEqual(t, want, perturbed, "%s: the seed perturbs the cost at level 1", opt)
		assert.InDelta(t, want, perturbed, 0.5*want, opt)
	}
	plain := buildExample(t, src, "-O2", "-fno-sanitize=thread")
	assert.Equal(t, none, cycles(plain), "no instrumentation, no counts: lane code takes no time")

	prog := buildExample(t, src, "-O2", "-Wall", "-Werror") // the loop's -O2 program: a bad value is refused at start
	out, report, code := runExample(t, prog, "EMUD_LANE_COST=fast")
	assert.NotZero(t, code, out)
	assert.Contains(t, report, `EMUD_LANE_COST="fast": want the CU cycles 16 bytes of a lane's device-memory accesses cost`)
}
