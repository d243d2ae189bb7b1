package cxx

import (
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

var quietSeeds = flag.Int("cxx.quiet-seeds", 1, "seeds per strategy, perturbation level, mode and build in TestQuietShapes (the issue's sweep: 50)")

// The correct C++ shapes of examples/cxx/quiet stay quiet (issue 37): a
// signal-slot reset between two calls, by a lane store, hipMemset or
// hipMemsetAsync with a stream sync, gives no report with the race
// detector (EMUD_RACE=1) or MORI_CCO_SDMA_DEBUG's checks, built with lane
// instrumentation (emud c++'s default) and without it
// (-fno-sanitize=thread), at every perturbation level under seeded ties
// and under PCT (EMUD_STRATEGY). Without the reset-aware lifecycle checks
// each run reported a stale epoch.
func TestQuietShapes(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "examples", "cxx", "quiet", "reset_epochs.cpp")
	for _, flags := range [][]string{{"-O2"}, {"-O2", "-fno-sanitize=thread"}} { // lane code instrumented (the default) and not
		prog := buildExample(t, src, flags...)
		for _, mode := range []string{"lane", "memset", "memset_async"} {
			for _, strategy := range []string{"ties", "pct"} {
				for lvl := 0; lvl <= 2; lvl++ {
					for seed := 1; seed <= *quietSeeds; seed++ {
						for _, check := range []string{"EMUD_RACE=1", "MORI_CCO_SDMA_DEBUG=1"} {
							out, stderr, code := runExample(t, prog, mode, check, "EMUD_STRATEGY="+strategy,
								fmt.Sprintf("EMUD_SEED=%d", seed), fmt.Sprintf("EMUD_PERTURB=%d", lvl))
							assert.Equal(t, 0, code, "%v %s %s level %d seed %d %s:\n%s\n%s", flags, mode, strategy, lvl, seed, check, out, stderr)
							assert.Contains(t, out, "reset_epochs: PASS")
						}
					}
				}
			}
		}
	}
}

// Two reads of an unchanged atomic word are not always a poll: lane code
// that waits for a flag and then reads it again, or reads a word twice,
// runs to the end, at every perturbation level, under PCT and with the
// race detector; a lane that polls a flag nobody sets is still a hang
// naming its spin. Before, each correct mode ended as a hang ("spin on an
// atomic load ... never written again").
func TestReadTwiceIsNotAHang(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "quiet", "read_twice.cpp"), "-O2")
	for _, mode := range []string{"wait_then_read", "read_twice", "poll"} {
		for _, env := range [][]string{{"EMUD_PERTURB=0"}, {"EMUD_PERTURB=2", "EMUD_SEED=3"}, {"EMUD_STRATEGY=pct", "EMUD_SEED=2"}, {"EMUD_RACE=1"}} {
			out, stderr, code := runExample(t, prog, append([]string{mode}, env...)...)
			assert.Equal(t, 0, code, "%s %v:\n%s\n%s", mode, env, out, stderr)
			assert.Contains(t, out, "read_twice "+mode+": PASS", "%s %v", mode, env)
		}
	}
	out, stderr, code := runExample(t, prog, "stuck")
	assert.Equal(t, 2, code, "a poll of a flag nobody sets is a hang:\n%s\n%s", out, stderr)
	assert.Contains(t, stderr, "spin on an atomic load")
	assert.Contains(t, stderr, "never written again")
}

// Atomic read-modify-writes of lanes of different waves never race with
// each other: examples/cxx/quiet/atomic_rmw.cpp has lane 0 of four blocks
// add to one counter (atomicAdd, __hip_atomic_fetch_add, an atomicCAS
// loop, __hip_atomic_exchange) while block 0 polls it, and the race
// detector stays quiet at -O0 and -O2. Before, emud's RMWs were a plain
// read and write of the word: every mode exited 5 with "data race on LSA
// memory" between two blocks' adds (hip_runtime.h's RMW lines).
func TestAtomicRMWIsNotARace(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "examples", "cxx", "quiet", "atomic_rmw.cpp")
	for _, opt := range []string{"-O0", "-O2"} {
		prog := buildExample(t, src, opt, "-Wall", "-Werror")
		for _, mode := range []string{"add", "fetch_add", "cas", "exchange"} {
			for _, env := range [][]string{{"EMUD_RACE=1"}, {"EMUD_RACE=1", "EMUD_STRATEGY=pct", "EMUD_SEED=2"}} {
				out, stderr, code := runExample(t, prog, append([]string{mode}, env...)...)
				assert.Equal(t, 0, code, "%s %s %v:\n%s\n%s", opt, mode, env, out, stderr)
				assert.Contains(t, out, "atomic_rmw "+mode+": PASS", "%s %s %v", opt, mode, env)
			}
		}
	}
}
