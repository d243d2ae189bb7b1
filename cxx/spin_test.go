package cxx

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpinCycles: a lane that waits for a flag while polling k words in
// turn (cxx/testdata/spin/cycles.cpp) is a spin on all k words for k up
// to 8 (EMUD_SPIN_WORDS): it waits for a write to one of them, so the lane
// that sets the flag at 1 µs runs and the waiter sees it then. Before, only
// k = 1 was: k >= 2 ran natively and was a spin hang. A longer cycle is
// still one (the limit, kept visible).
func TestSpinCycles(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "spin", "cycles.cpp"), "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	for _, c := range []struct {
		k    int
		code int
		want string
	}{
		{1, 0, "cycles 1: flag seen at 1000 ns: PASS"},
		{2, 0, "cycles 2: flag seen at 1000 ns: PASS"},
		{3, 0, "cycles 3: flag seen at 1000 ns: PASS"},
		{5, 0, "cycles 5: flag seen at 1000 ns: PASS"},
		{8, 0, "cycles 8: flag seen at 1000 ns: PASS"},
		{9, 2, "hang (spin)"},
	} {
		t.Run(fmt.Sprint(c.k), func(t *testing.T) {
			out, report, code := runExample(t, prog, fmt.Sprint(c.k), "EMUD_SPIN_LIMIT=1s")
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Contains(t, out+report, c.want)
		})
	}
}
