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

// TestSpinVolatilePoll: a lane's loop of volatile loads of device memory
// (cxx/testdata/spin/volatile_poll.cpp) is a wait for a write, as on a
// GPU, where a volatile load is made afresh each time: the flag set by
// another block at 1 µs is seen then, and 8 blocks pass 4 rounds of the
// all-block barrier MORI's cco benchmarks use (an atomicInc'd arrival
// count, a round word bumped by the last arrival and polled by volatile
// loads). Before, each lane looped natively on the load, holding the
// turn, and the run ended as a spin hang after EMUD_SPIN_LIMIT (MORI's
// p2p_put_bw -t lsa). A flag nobody sets is a hang report naming the
// spin on a volatile load and its line; under EMUD_RACE=1 the volatile
// flag is no race and orders what follows it (the race cases). Built
// without the instrumentation, a volatile loop runs natively and is still
// the spin hang (capi/doc.go says so).
func TestSpinVolatilePoll(t *testing.T) {
	needCxx(t)
	src := filepath.Join("testdata", "spin", "volatile_poll.cpp")
	prog := buildExample(t, src, "-O2", "-Wall", "-Werror")
	// Under the race detector (race) a volatile access is an atomic one,
	// as AMDGPU compiles it (a relaxed atomic at system scope): a flag set
	// by an atomic or volatile store and polled by volatile loads is no
	// race, and the poll that saw it orders the data read after it; the
	// flag set before the data, or by a plain store, is.
	for _, c := range []struct {
		mode string
		race bool
		code int
		want []string
	}{
		{"flag", false, 0, []string{"volatile_poll flag: flag seen at 1000 ns: PASS"}},
		{"barrier", false, 0, []string{"volatile_poll barrier: 32 arrivals, round 4, 8 blocks through: PASS"}},
		{"never", false, 2, []string{"emud: seed 1: hang", "spin on a volatile load of 0x", "at volatile_poll.cpp:39: value 0x0, never written again",
			"volatile load (spin) by lanes 0 at volatile_poll.cpp:39"}},
		{"flag", true, 0, []string{"volatile_poll flag: flag seen at 1000 ns: PASS"}},
		{"barrier", true, 0, []string{"volatile_poll barrier: 32 arrivals, round 4, 8 blocks through: PASS"}},
		{"publish", true, 0, []string{"volatile_poll publish: sum 36: PASS"}},
		{"late", true, 5, []string{"emud: seed 1: 1 data race(s)", "store (write) of [0x", "(/", "volatile_poll.cpp:67, ",
			"load (read) of [0x", "volatile_poll.cpp:77, lane code before the lane returned"}},
		{"plain", true, 5, []string{"data race(s)", "volatile_poll.cpp:70, lane code before the lane returned",
			"volatile load (read) of [0x", "volatile_poll.cpp:73, lane code before volatile_poll.cpp:75"}},
	} {
		name, words := c.mode, []string{c.mode, "EMUD_SPIN_LIMIT=1s"}
		if c.race {
			name, words = "race/"+c.mode, append(words, "EMUD_RACE=1")
		}
		t.Run(name, func(t *testing.T) {
			out, report, code := runExample(t, prog, words...)
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", out, report)
			for _, w := range c.want {
				assert.Contains(t, out+report, w)
			}
			if c.race && c.code == 0 {
				assert.NotContains(t, report, "data race")
			}
		})
	}
	t.Run("uninstrumented", func(t *testing.T) {
		plain := buildExample(t, src, "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
		out, report, code := runExample(t, plain, "flag", "EMUD_SPIN_LIMIT=1s")
		require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, report, "hang (spin)")
	})
}
