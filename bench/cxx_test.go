package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/internal/testmain"
	"github.com/emud-dev/emud/scenario"
)

func TestMain(m *testing.M) { testmain.Run(m) }

// TestAlltoallRoundsOneRoundIsAlltoall: one round of AlltoallRounds is
// the alltoall scenario of the same shape and seed (the same emulated end
// time), so the per-round row repeats what the per-run row runs; and each
// further round adds time.
func TestAlltoallRoundsOneRoundIsAlltoall(t *testing.T) {
	sc, err := scenario.Lookup("alltoall")
	require.NoError(t, err)
	for _, seed := range []uint64{1, 2} {
		out, err := sc.Run(scenario.Options{Ranks: 8, Bytes: 64 << 10, Queues: cco.DefaultSdmaQueues, Seed: seed})
		require.NoError(t, err)
		one, err := AlltoallRounds(seed, 1)
		require.NoError(t, err)
		assert.Equal(t, out.End, one, "seed %d: end time of one round against the alltoall scenario", seed)
		three, err := AlltoallRounds(seed, 3)
		require.NoError(t, err)
		assert.Greater(t, three, one+one, "seed %d: three rounds end after two rounds' time", seed)
	}
}

// TestAlltoallRoundsMatchesGo: examples/cxx/bench/alltoall_rounds.cpp and
// AlltoallRounds end at the same emulated time on the same seeds and
// round counts, and the engines retired the packets the rounds post (a
// COPY and a signal ATOMIC per lane and round): the per-round row's two
// sides do the same work.
func TestAlltoallRoundsMatchesGo(t *testing.T) {
	if os.Getenv("EMUD_TEST_CXX") == "" {
		t.Skip("set EMUD_TEST_CXX=1 to build and run the C++ examples")
	}
	prog, cleanup, skip := buildCxx(filepath.Join("bench", "alltoall_rounds.cpp"))
	require.Empty(t, skip)
	defer cleanup()
	for _, seed := range []int{1, 4} {
		for _, rounds := range []int{1, 3} {
			c, err := runCxx(prog, seed, fmt.Sprint(rounds))
			require.NoError(t, err)
			goEnd, err := AlltoallRounds(uint64(seed), rounds)
			require.NoError(t, err)
			assert.Equal(t, goEnd, c.end, "seed %d, %d rounds: emulated end time, Go vs C++", seed, rounds)
			n := 8 * 8 * rounds
			assert.Equal(t, fmt.Sprintf("%d packets retired (%d COPY_LINEAR, %d ATOMIC, 0 other)", 2*n, n, n), c.packets)
		}
	}
	_, err := runCxx(prog, 1, "0")
	assert.ErrorContains(t, err, "rounds 0: need at least 1")
}

// TestCxxProcsRow runs the processes-vs-threads row on 2 seeds: both
// sides pass and end at the same emulated time (the row fails
// otherwise), and it prints its ratio.
func TestCxxProcsRow(t *testing.T) {
	if os.Getenv("EMUD_TEST_CXX") == "" {
		t.Skip("set EMUD_TEST_CXX=1 to build and run the C++ examples")
	}
	r, err := benchCxxProcs(2)
	require.NoError(t, err)
	assert.Regexp(t, `^\d+\.\d× \(\d+\.\d× from the first call\)$`, r.result)
	assert.Contains(t, r.detail, "2 seeds, wall (CPU) per run as a whole process: processes ")
	t.Log(r.result, r.detail)
}

// TestCxxMoriRow: the MORI header row builds put.cpp against emud's own
// header and the repository's MORI-shaped one (and EMUD_MORI_INCLUDE's
// MORI when set), runs each, and gives each header's cost against emud's
// own.
func TestCxxMoriRow(t *testing.T) {
	if os.Getenv("EMUD_TEST_CXX") == "" {
		t.Skip("set EMUD_TEST_CXX=1 to build and run the C++ examples")
	}
	r, err := benchCxxMori(2)
	require.NoError(t, err)
	assert.Regexp(t, `^MORI-shaped \(cxx/testdata/mori\) \d+\.\d× wall, \d+\.\d× CPU`, r.result)
	assert.Contains(t, r.detail, "2 seeds, wall (CPU); emud's own: ")
	if inc := os.Getenv(MoriIncludeEnv); inc != "" {
		assert.Contains(t, r.result, "MORI at "+inc)
	}
	t.Log(r.result, r.detail)
}

// TestCxxMoriRowBadInclude: an EMUD_MORI_INCLUDE without mori/cco/cco.hpp
// is an error naming the variable and the directory.
func TestCxxMoriRowBadInclude(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(MoriIncludeEnv, dir)
	if _, err := os.Stat("../cxx/testdata/mori/put.cpp"); err != nil {
		t.Skip("no source tree")
	}
	_, err := benchCxxMori(1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), MoriIncludeEnv+"="+dir+": no mori/cco/cco.hpp there")
}

// TestParseUsage reads capi's EMUD_USAGE line, and a run without one.
func TestParseUsage(t *testing.T) {
	tests := []struct {
		name string
		out  string
		ok   bool
		want cxxUsage
	}{
		{"line", "x\nemud: usage: CPU time 19.942ms to the first call, 1.198ms building the node, 30.613ms from there to exit; 446, 35 and 649 page faults\n", true,
			cxxUsage{19942 * time.Microsecond, 1198 * time.Microsecond, 30613 * time.Microsecond, 446, 35, 649}},
		{"microseconds", "emud: usage: CPU time 874µs to the first call, 0s building the node, 1.5s from there to exit; 1, 0 and 2 page faults", true,
			cxxUsage{874 * time.Microsecond, 0, 1500 * time.Millisecond, 1, 0, 2}},
		{"none", "emud: seed 1: end 8373190 ps, digest d05f\n", false, cxxUsage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := parseUsage([]byte(tt.out))
			require.NoError(t, err)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, u)
		})
	}
	_, _, err := parseUsage([]byte("emud: usage: CPU time 3xs to the first call, 1ms building the node, 1ms from there to exit; 1, 2 and 3 page faults"))
	assert.ErrorContains(t, err, `EMUD_USAGE's time "3xs"`)
	_, _, err = parseUsage([]byte("emud: usage: CPU time 3s to the first call, 1ms building the node, 1ms from there to exit; 99999999999999999999, 2 and 3 page faults"))
	assert.ErrorContains(t, err, `EMUD_USAGE's faults "99999999999999999999"`)
}

// FuzzParseUsage: any output parses or is refused with an error, never
// a panic, and a parsed line's figures are not negative.
func FuzzParseUsage(f *testing.F) {
	f.Add("emud: usage: CPU time 19.942ms to the first call, 1.198ms building the node, 30.613ms from there to exit; 446, 35 and 649 page faults")
	f.Add("emud: usage: CPU time -1s to the first call, 1ms building the node, 1ms from there to exit; 1, 2 and 3 page faults")
	f.Fuzz(func(t *testing.T, s string) {
		u, ok, err := parseUsage([]byte(s))
		if err != nil || !ok {
			return
		}
		assert.GreaterOrEqual(t, u.callFaults, int64(0))
		assert.GreaterOrEqual(t, u.nodeFaults+u.restFaults, int64(0))
	})
}

// TestCxxSeedRow runs the per-seed row on 2 seeds: every part and both
// programs pass warm and as processes, and the row gives each ratio to
// the Go seed and the warm seed's parts.
func TestCxxSeedRow(t *testing.T) {
	if os.Getenv("EMUD_TEST_CXX") == "" {
		t.Skip("set EMUD_TEST_CXX=1 to build and run the C++ examples")
	}
	r, err := benchCxxSeed(2)
	require.NoError(t, err)
	ratio := `\d+\.\d× \(\d+\.\d× CPU\)`
	assert.Regexp(t, `^warm: alltoall_sum `+ratio+`, alltoall_put `+ratio+`; as processes `+ratio+` and `+ratio+`$`, r.result)
	assert.Regexp(t, `^2 seeds each \(Go 40\), wall \(CPU\) per seed: Go \S+ \(\S+\); alltoall_sum warm \S+ \(\S+\): the server's own per seed \(empty main\) \S+ \(\S+\), `+
		`eight rank threads and the node -?\S+ \(-?\S+\), the emulation with its hipMemcpys \(no host loops\) -?\S+ \(-?\S+\), the host's fill and check loops -?\S+ \(-?\S+\); `, r.detail)
	t.Log(r.result, r.detail)
}

// TestWarmSeedsRefuses: a part the program does not know ends its seed
// with status 2, and the row's runner says which program, seed and status.
func TestWarmSeedsRefuses(t *testing.T) {
	if os.Getenv("EMUD_TEST_CXX") == "" {
		t.Skip("set EMUD_TEST_CXX=1 to build and run the C++ examples")
	}
	prog, cleanup, skip := buildCxx(filepath.Join("bench", "alltoall_sum.cpp"))
	require.Empty(t, skip)
	defer cleanup()
	_, err := warmSeeds(prog, []string{"bogus"}, 1, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), prog+" bogus, seed 1001 in a seed server: status 2")
	assert.Contains(t, err.Error(), "alltoall_sum: unknown part bogus (nohost, threads or empty)")
}

// TestParseStatCPU reads utime and stime past a command with spaces and
// parentheses, and refuses a line cut short or a field not a count.
func TestParseStatCPU(t *testing.T) {
	line := "4242 (emud seed (x) srv) S 1 2 3 4 5 6 7 8 9 10 250 37 0 0 20 0 9 0 100 200 300"
	d, err := parseStatCPU(line)
	require.NoError(t, err)
	assert.Equal(t, 2870*time.Millisecond, d)
	_, err = parseStatCPU("4242 (srv) S 1 2 3")
	assert.ErrorContains(t, err, "with 4 fields past the command")
	_, err = parseStatCPU("4242 (srv) S 1 2 3 4 5 6 7 8 9 10 x 37")
	assert.ErrorContains(t, err, `CPU time "x"`)
	_, err = parseStatCPU("4242 srv S")
	assert.ErrorContains(t, err, "without a command")
	self, err := procCPU(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, self, time.Duration(0))
}
