package cxx

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Host code takes virtual time when EMUD_HOST_GBPS gives the rate (capi's
// hostcost.go): a 1 MiB vector zeroed, filled and summed between two
// events reads, at 1 GB/s, its 3 MiB of stores and loads (3.146 ms with
// g++ -O2), or 2 MiB where a compiler forwards the stores to the sum; unset,
// host code takes none (the default: no documented host figure); a bad
// value is refused naming the variable.
func TestHostCodeTakesTime(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "timing", "host_work.cpp"), "-O2", "-Wall", "-Werror")
	msRe := regexp.MustCompile(`host_work: ([0-9.]+) ms`)
	ms := func(env ...string) float64 {
		t.Helper()
		out, report, code := runExample(t, prog, env...)
		require.Equal(t, 0, code, "%s\n%s", out, report)
		m := msRe.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return v
	}
	assert.Zero(t, ms(), "unset: host code takes no virtual time")
	assert.Zero(t, ms("EMUD_HOST_GBPS=0"))
	at1 := ms("EMUD_HOST_GBPS=1")
	assert.GreaterOrEqual(t, at1, 2.097, "at least the 2 MiB of stores at 1 GB/s")
	assert.LessOrEqual(t, at1, 3.147, "at most the 3 MiB the code touches")
	assert.InDelta(t, at1/2, ms("EMUD_HOST_GBPS=2"), 0.002, "twice the rate, half the time")
	t.Logf("1 GB/s: %.3f ms", at1)

	out, report, code := runExample(t, prog, "EMUD_HOST_GBPS=fast")
	assert.NotZero(t, code, out)
	assert.Contains(t, report, `EMUD_HOST_GBPS="fast": want the rate host code touches memory at, in GB/s`)
}
