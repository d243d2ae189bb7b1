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

// TestSpinTimedPoll: a poll with a clock64 timeout
// (cxx/testdata/spin/timed_poll.cpp, the shape of MORI's and NCCL's
// timed barrier waits) times out within 1/16 past its timeout, 10 µs and
// 0.2 s of virtual time, while a timed poll on a flag set at 1 µs sees it
// then; a timeout past 10 s of spinning is a hang report naming the spin.
// Before, every such poll on a flag nobody sets was a hang at once,
// where hardware returns the timeout (MORI's test_lsa_barrier).
func TestSpinTimedPoll(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "spin", "timed_poll.cpp"), "-O2", "-Wall", "-Werror")
	for _, c := range []struct {
		cycles string
		code   int
		want   string
	}{
		{"24000", 0, "block 0 rc 1 after 24192 cycles (timeout 24000), block 1 rc 0 after 2448 cycles: PASS"},
		{"480000000", 0, "(timeout 480000000), block 1 rc 0 after 2448 cycles: PASS"},
		{"48000000000000", 2, "spin on an atomic load of"},
	} {
		t.Run(c.cycles, func(t *testing.T) {
			out, report, code := runExample(t, prog, c.cycles, "EMUD_SEED=1")
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Contains(t, out+report, c.want)
			if c.code == 2 {
				assert.Contains(t, report, "timed_poll.cpp:18")
			}
		})
	}
}
