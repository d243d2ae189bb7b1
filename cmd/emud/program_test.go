package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/scenario"
)

// Bad program lines name what is wrong, before any run.
func TestExploreProgramBadArgs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	assertFlagErrors(t, []string{"explore"}, []flagError{
		{[]string{"alltoall", "--", "./prog"}, "a scenario (alltoall) and a program after --: give one"},
		{[]string{"--"}, "no program after --"},
		{[]string{"--", missing}, "program " + missing},
		{[]string{"--seeds", "0", "--", "./prog"}, "invalid --seeds 0"},
		{[]string{"--shard", "2/2", "--", "/bin/true"}, "invalid --shard \"2/2\": K must be 0..1"},
		{[]string{"--strategy", "dfs", "--", "./prog"}, "invalid --strategy"},
		{[]string{"--pct-depth", "100", "--", "./prog"}, "invalid --pct-depth/--pct-steps"},
	})
	assertFlagErrors(t, []string{"hunt"}, []flagError{
		{[]string{"--"}, "no program after --: give BUG[:FIXED] pairs"},
		{[]string{"alltoall-race", "--", "./prog"}, "planted bugs (alltoall-race) and C++ programs after -- in one hunt: give one"},
		{[]string{"--", ":./fixed"}, "invalid program pair \":./fixed\""},
		{[]string{"--", "./bug:"}, "nothing after ':'"},
		{[]string{"--", missing + ":" + missing}, "program " + missing},
		{[]string{"--fixed", "--", "./bug"}, "invalid --fixed: not with C++ programs"},
		{[]string{"--seed", "3", "--", "./bug"}, "invalid --seed: not with C++ programs"},
		{[]string{"--programs", missing}, "hunt --programs: open " + missing},
		{[]string{"--programs", missing, "--", "./bug"}, "give the program pairs in its file or after --, not both"},
		{[]string{"--strategies", "dfs", "--", "/bin/true"}, "invalid --strategies"},
		{[]string{"--debug", "alltoall-race"}, "invalid --debug: only with C++ programs"},
	})
	assertFlagErrors(t, []string{"replay", "--seed", "1"}, []flagError{
		{[]string{"--perturb", "9", "--", "./prog"}, "invalid --perturb 9"},
	})
}

// buildProgram builds a C++ example with emud c++.
func buildProgram(t *testing.T, src string, flags ...string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var log bytes.Buffer
	lib, err := cxx.BuildLibrary(root, cxx.Options{Root: root, Stdout: &log, Stderr: &log})
	require.NoError(t, err, log.String())
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".cpp"))
	args := append(append([]string{}, flags...), filepath.Join(root, src), "-o", out)
	require.NoError(t, cxx.Run(args, cxx.Options{Root: root, Library: lib, Stdout: &log, Stderr: &log}), log.String())
	return out
}

// explore -- PROGRAM finds a planted C++ bug (a warp-scope put whose
// source is overwritten too soon, --race) on its first seed, prints the
// replay command, and that replay reproduces the digest; the fixed twin
// passes every seed. It runs wherever a C++ compiler is (as package
// cxx's tests do).
func TestExploreProgramAndReplay(t *testing.T) {
	if !haveCxx() {
		t.Skip("no C++ compiler (g++, clang++ or $EMUD_CXX): the C++ program is not built")
	}
	prog := buildProgram(t, "examples/cxx/errors/put_overwrite.cpp", "-O2")
	out, _, status := execute(t, "explore", "--seeds", "8", "--jobs", "2", "--race", "--", prog)
	require.Equal(t, scenario.ExitRace, status, out)
	assert.Contains(t, out, "seed 1 failed (exit status 5)")
	assert.Contains(t, out, "put_overwrite.cpp:24")
	m := regexp.MustCompile(`reproduce: emud (replay --seed 1 .*)-- (.*)\n`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	digest := regexp.MustCompile(`digest ([0-9a-f]+)\n`).FindStringSubmatch(out)
	require.NotNil(t, digest, out)
	trace := filepath.Join(t.TempDir(), "t.json")
	args := append(strings.Fields(m[1]), "--trace", trace, "--expect-digest", digest[1], "--", m[2])
	_, errOut, status := execute(t, args...)
	assert.Equal(t, scenario.ExitRace, status, "the replay is the same run: %s", errOut)
	assert.NotContains(t, errOut, "did not reproduce")
	assert.FileExists(t, trace)

	out, _, status = execute(t, "explore", "--seeds", "8", "--jobs", "2", "--race", "--", prog, "fixed")
	assert.Equal(t, 0, status, out)
	assert.Contains(t, out, "all 8 seeds passed")
}

// haveCxx says whether a C++ compiler emud c++ can drive is installed.
func haveCxx() bool {
	if os.Getenv("EMUD_CXX") != "" {
		return true
	}
	for _, c := range []string{"g++", "clang++"} {
		if _, err := exec.LookPath(c); err == nil {
			return true
		}
	}
	return false
}
