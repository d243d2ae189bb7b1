package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A phantom run is the same run without bytes: every scenario gives the
// times of its real run, and says it checked no data. The digest is the
// same too, except where fabric operations span several granules: a
// phantom one lands in one step (fewer events, other tie-breaks).
func TestPhantomRunsTimeLikeRealRuns(t *testing.T) {
	for _, tc := range []struct {
		scenario    string
		args        []string
		otherDigest bool
	}{
		{"alltoall", []string{"--ranks", "4", "--bytes", "4K"}, false},
		{"allgather-ring", []string{"--ranks", "4", "--bytes", "4K"}, false},
		{"relay", []string{"--ranks", "3", "--bytes", "64K"}, false},
		{"broadcast-tree", []string{"--ranks", "5", "--bytes", "4K"}, false},
		{"alltoall-split", []string{"--ranks", "3", "--bytes", "4K"}, false},
		{"cft-allreduce", []string{"--ranks", "8", "--bytes", "16K", "--mc-size", "4"}, false},
		{"cft-allreduce", []string{"--ranks", "8", "--bytes", "1M", "--mc-size", "4"}, true},
		{"cft-alltoall", []string{"--ranks", "8", "--bytes", "256", "--lsa-size", "4", "--cft-size", "8"}, false},
	} {
		t.Run(tc.scenario+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"run", tc.scenario, "--seed", "2"}, tc.args...)
			real, errOut, status := execute(t, args...)
			require.Equal(t, scenario.ExitOK, status, errOut)
			ph, errOut, status := execute(t, append(args, "--phantom")...)
			require.Equal(t, scenario.ExitOK, status, errOut)
			if !tc.otherDigest {
				assert.Equal(t, seedAndDigest(t, real, 2), seedAndDigest(t, ph, 2), "same run, same digest")
			}
			assert.Equal(t, rankRows(real), rankRows(ph), "same times and byte counts")
			assert.Contains(t, lines(ph)[0], "phantom (timing only: no bytes stored, data checks skipped)")
			assert.NotContains(t, real, "phantom")

			js, _, status := execute(t, append(args, "--phantom", "--json")...)
			require.Equal(t, scenario.ExitOK, status)
			var s scenario.Summary
			require.NoError(t, json.Unmarshal([]byte(js), &s))
			assert.True(t, s.Phantom)
			assert.Contains(t, s.PhantomNote, "data checks skipped")
		})
	}
}

// Phantom runs store no bytes, so the memory budget does not count them:
// 8 ranks × 64 MiB per pair is 8 GiB of emulated memory.
func TestPhantomRunsPastTheByteLimit(t *testing.T) {
	_, errOut, status := execute(t, "run", "--ranks", "8", "--bytes", "64M", "--mem-budget", "4G")
	require.Equal(t, scenario.ExitFailed, status)
	assert.Regexp(t, `alltoall needs an estimated 9\.\d\dGiB \(emulated memory 8\.00GiB`, errOut)
	out, errOut, status := execute(t, "run", "--ranks", "8", "--bytes", "64M", "--phantom", "--mem-budget", "4G")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Len(t, rankRows(out), 8)
}

// The README's CFT examples run as written, and the CFT scenarios go past
// the SDMA node's 64 ranks with their topology flags.
func TestCftScenariosAtScale(t *testing.T) {
	out, errOut, status := execute(t, "run", "cft-allreduce", "--ranks", "72", "--bytes", "256")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Len(t, rankRows(out), 72)
	out, errOut, status = execute(t, "run", "cft-allreduce")
	require.Equal(t, scenario.ExitOK, status, "the default --bytes runs: %s", errOut)
	assert.Contains(t, out, "1MiB per rank")
	out, errOut, status = execute(t, "run", "cft-alltoall")
	require.Equal(t, scenario.ExitOK, status, "the default --bytes runs: %s", errOut)
	assert.Contains(t, out, "1KiB per pair")

	out, errOut, status = execute(t, "run", "cft-allreduce", "--ranks", "256", "--bytes", "1M", "--phantom",
		"--lsa-size", "8", "--cft-size", "64", "--mc-size", "16")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, lines(out)[0], "256 ranks, 1MiB per rank (a multiple of 16), LSA domains of 8, CFT teams of 64, multicast groups of 16")
	assert.Len(t, rankRows(out), 256)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cft-alltoall", "--ranks", "1024", "--phantom"}, "at most 144B per pair"},
		{[]string{"cft-alltoall", "--ranks", "8", "--bytes", "24"}, "multiple of 16"},
		{[]string{"alltoall", "--lsa-size", "4"}, "invalid --lsa-size 4: alltoall has no CFT fabric"},
		{[]string{"alltoall", "--ranks", "65"}, "need 2..64"},
		{[]string{"cft-allreduce", "--ranks", "12", "--lsa-size", "8"}, "LsaSize 8 must divide NRanks 12"},
	} {
		out, errOut, status := execute(t, append([]string{"run"}, tc.args...)...)
		assert.Equal(t, scenario.ExitFailed, status, "%v", tc.args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	}
}

// explore takes --phantom too: every seed runs timing only.
func TestExplorePhantom(t *testing.T) {
	out, errOut, status := execute(t, "explore", "--phantom", "--ranks", "4", "--bytes", "64M", "--seeds", "3", "--mem-budget", "1G", "--json")
	require.Equal(t, scenario.ExitOK, status, errOut)
	var x scenario.ExplorationJSON
	require.NoError(t, json.Unmarshal([]byte(out), &x))
	assert.False(t, x.Found)
	assert.Equal(t, 3, x.SeedsRun)
	assert.True(t, x.Phantom)
	out, _, status = execute(t, "explore", "--phantom", "--ranks", "4", "--bytes", "64M", "--seeds", "3", "--mem-budget", "1G")
	require.Equal(t, scenario.ExitOK, status)
	assert.Contains(t, lines(out)[0], "no failed signal check; phantom (timing only: no bytes stored, data checks skipped)")
}

// A phantom run allocates no emulated bytes: alltoall of 4 ranks × 16 MiB
// per pair (512 MiB of windows) and the CFT all-reduce of 8 ranks × 64 MiB
// (1 GiB) each allocate a few MiB in all.
func TestPhantomRunsAllocateNoBytes(t *testing.T) {
	for _, args := range [][]string{
		{"run", "alltoall", "--ranks", "4", "--bytes", "16M", "--phantom"},
		{"run", "cft-allreduce", "--ranks", "8", "--bytes", "64M", "--phantom"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, errOut, status := execute(t, args...)
		runtime.ReadMemStats(&after)
		require.Equal(t, scenario.ExitOK, status, errOut)
		alloc := after.TotalAlloc - before.TotalAlloc
		assert.Less(t, alloc, uint64(64<<20), "%v allocated %d MiB", args, alloc>>20)
	}
}

// --race with --phantom is refused: a phantom run stores no bytes, so the
// detector saw nothing and the run reported ok.
func TestPhantomRefusesRace(t *testing.T) {
	for _, cmd := range [][]string{
		{"run", "alltoall-early-reuse", "--phantom", "--race"},
		{"explore", "alltoall", "--seeds", "2", "--phantom", "--race"},
	} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			_, errOut, status := execute(t, cmd...)
			assert.Equal(t, scenario.ExitFailed, status, errOut)
			assert.Contains(t, errOut, "invalid --race with --phantom")
		})
	}
}
