package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
)

// wallTime is the EMUD_SUMMARY packet line's wall time, the one part of
// a program's output that is not the seed's.
var wallTime = regexp.MustCompile(`; \S+ wall time since the first call`)

// head is the start of a long output, for failure messages.
func head(s string) string { return s[:min(len(s), 2000)] }

// A program's explore sweep shards and merges as a scenario's: the merged
// report is the single sweep's (the failing seed run again, its output
// the same but for the wall time), the twin's shards merge into "all
// passed", and a record of another build of the program is refused.
func TestExploreProgramShardMerge(t *testing.T) {
	if !haveCxx() {
		t.Skip("no C++ compiler (g++, clang++ or $EMUD_CXX): the C++ program is not built")
	}
	prog := buildProgram(t, "examples/cxx/errors/put_overwrite.cpp", "-O2")
	dir := t.TempDir()
	flags := []string{"explore", "--seeds", "6", "--first-seed", "3", "--race", "--perturb", "1", "--jobs", "2"}
	whole, _, status := execute(t, append(flags, "--", prog)...)
	require.Equal(t, scenario.ExitRace, status, head(whole))
	assert.Contains(t, head(whole), "seed 3 failed (exit status 5), the lowest failing seed of seeds 3..8")
	repro := whole[strings.LastIndex(whole, "reproduce:"):]
	assert.Regexp(t, `^reproduce: emud replay --seed 3 --perturb 1 --strategy pct --pct-steps \d+ --race -- `, repro, "PCT's k is measured, not 20000")
	assert.NotContains(t, repro, "--pct-steps 20000")
	var files []string
	for _, k := range []string{"0/3", "1/3", "2/3"} {
		f := filepath.Join(dir, "shard-"+k[:1]+".json")
		out, errOut, status := execute(t, append(flags, "--shard", k, "--shard-out", f, "--", prog)...)
		require.Equal(t, 0, status, "a shard writes its record whatever it found: %s%s", out, errOut)
		files = append(files, f)
	}
	rec, err := os.ReadFile(files[1])
	require.NoError(t, err)
	assert.Contains(t, string(rec), `"program_sha256"`)
	merged, _, status := execute(t, append([]string{"merge"}, files...)...)
	assert.Equal(t, scenario.ExitRace, status, head(merged))
	assert.True(t, wallTime.ReplaceAllString(whole, "") == wallTime.ReplaceAllString(merged, ""), "merge prints the single sweep's report:\n%s\n%s", head(whole), head(merged))

	var twin []string
	for _, k := range []string{"0/2", "1/2"} {
		f := filepath.Join(dir, "twin-"+k[:1]+".json")
		_, errOut, status := execute(t, append(flags, "--shard", k, "--shard-out", f, "--", prog, "fixed")...)
		require.Equal(t, 0, status, errOut)
		twin = append(twin, f)
	}
	out, errOut, status := execute(t, append([]string{"merge"}, twin...)...)
	assert.Equal(t, 0, status, errOut)
	assert.Equal(t, "explore "+prog+" fixed: all 6 seeds passed (seeds 3..8, --perturb 1 --strategy pct)\n", out)

	_, errOut, status = execute(t, "merge", files[0], twin[1])
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, "program differs")

	// Another build at the program's path: the shards' answer is not its.
	other := buildProgram(t, "examples/cxx/quiet/reset_epochs.cpp", "-O2")
	b, err := os.ReadFile(other)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(prog, b, 0o755))
	_, errOut, status = execute(t, append([]string{"merge"}, files...)...)
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, "is not the build the shards ran (SHA-256")
}

// emud hunt takes C++ programs with their fixed twins: the table counts
// each bug's detections and its twin's failures per strategy; a twin
// that fails is exit status 1 with its reproduce command; a sharded hunt
// merges into the same table.
func TestHuntPrograms(t *testing.T) {
	if !haveCxx() {
		t.Skip("no C++ compiler (g++, clang++ or $EMUD_CXX): the C++ program is not built")
	}
	prog := buildProgram(t, "examples/cxx/errors/put_overwrite.cpp", "-O2")
	pair := prog + ":" + prog + " fixed"
	flags := []string{"hunt", "--seeds", "3", "--strategies", "ties,pct", "--race", "--jobs", "2"}
	out, errOut, status := execute(t, append(flags, "--", pair)...)
	require.Equal(t, 0, status, "%s%s", out, errOut)
	assert.Contains(t, out, "hunt: 1 C++ programs, seeds 1..3 per program and strategy with the race detector")
	assert.Regexp(t, `(?m)^\S+put_overwrite +ties +1 +3/3 +0/3$`, out)
	assert.Regexp(t, `(?m)^\S+put_overwrite +pct +1 +3/3 +0/3$`, out)
	assert.Contains(t, out, "pct: found 1 of 1 planted bugs within 3 seeds each")
	assert.Regexp(t, `reproduce: emud replay --seed 1 --perturb 1 --strategy pct --pct-steps \d+ --race -- \S+put_overwrite\n`, out)

	// The same hunt from a file, in two shards, merged.
	dir := t.TempDir()
	list := filepath.Join(dir, "programs.txt")
	require.NoError(t, os.WriteFile(list, []byte("# bug:twin\n\n"+pair+"\n"), 0o644))
	var files []string
	for _, k := range []string{"0/2", "1/2"} {
		f := filepath.Join(dir, "h"+k[:1]+".json")
		_, errOut, status := execute(t, append(flags, "--programs", list, "--shard", k, "--shard-out", f)...)
		require.Equal(t, 0, status, errOut)
		files = append(files, f)
	}
	merged, errOut, status := execute(t, append([]string{"merge"}, files...)...)
	assert.Equal(t, 0, status, errOut)
	assert.Equal(t, out, merged)

	out, errOut, status = execute(t, "hunt", "--seeds", "1", "--strategies", "pct", "--race", "--debug", "--", pair)
	require.Equal(t, 0, status, "%s%s", out, errOut)
	assert.Contains(t, out, "with the race detector (--race: a race is a detection) in debug mode (MORI_CCO_SDMA_DEBUG=1)")
	assert.Regexp(t, `reproduce: emud replay --seed 1 --perturb 1 --strategy pct --pct-steps \d+ --race --debug -- `, out)

	// A "twin" that is the bug: its failures are the hunt's failure.
	out, errOut, status = execute(t, "hunt", "--seeds", "2", "--strategies", "ties", "--race", "--", prog+" fixed:"+prog)
	assert.Equal(t, scenario.ExitFailed, status, out)
	assert.Regexp(t, `(?m)^\S+put_overwrite fixed +ties +- +0/2 +2/2$`, out)
	assert.Contains(t, errOut, "hunt: the fixed twin "+prog+" failed under ties on 2 of 2 seeds, first 1: emud replay --seed 1 --perturb 0 --strategy random --race -- "+prog)
	assert.Contains(t, errOut, "its output:\nexit status 5\nstdout:\n")
}

// Program pairs parse as documented; bad ones name what is wrong.
func TestParsePairs(t *testing.T) {
	for _, tc := range []struct {
		in         string
		bug, fixed []string
		err        string
	}{
		{in: "./a", bug: []string{"./a"}},
		{in: "./a x:./a  fixed", bug: []string{"./a", "x"}, fixed: []string{"./a", "fixed"}},
		{in: " ./a : ./b ", bug: []string{"./a"}, fixed: []string{"./b"}},
		{in: "", err: "want BUG[:FIXED]"},
		{in: ":./b", err: "want BUG[:FIXED]"},
		{in: "./a:", err: "nothing after ':'"},
		{in: "./a:./b:./c", err: "more than one ':'"},
		{in: "./a\x1b[2J", err: "control characters"},
	} {
		p, err := parsePair(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%q", tc.in)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.bug, p.bug, "%q", tc.in)
		assert.Equal(t, tc.fixed, p.fixed, "%q", tc.in)
	}
	_, err := parsePairs(strings.NewReader("# only a comment\n"), "list")
	assert.ErrorContains(t, err, "list: no program pairs")
	_, err = parsePairs(strings.NewReader("./a\n./b:\n"), "list")
	assert.ErrorContains(t, err, "list:2: invalid program pair")
	_, err = parsePairs(strings.NewReader(strings.Repeat("x", 70<<10)), "list")
	assert.ErrorContains(t, err, "lines up to 64 KiB")
}

// A program list of any bytes parses or fails with an error, never
// panics, and what it gives holds a bug command each.
func FuzzParsePairs(f *testing.F) {
	f.Add("./a:./a fixed\n# c\n./b\n")
	f.Add(":\n::\n")
	f.Fuzz(func(t *testing.T, s string) {
		pairs, err := parsePairs(strings.NewReader(s), "f")
		if err != nil {
			return
		}
		for _, p := range pairs {
			if len(p.bug) == 0 {
				t.Fatalf("pair %q has no bug command", p.spec)
			}
		}
	})
}

// A program that prints no step count (not built by this emud's c++, or
// killed) is probed three times; then PCT's steps fall back to the
// default and stderr says so, naming the program and --pct-steps.
func TestProgramPCTStepsUnmeasured(t *testing.T) {
	prog, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	out, errOut, status := execute(t, "explore", "--seeds", "2", "--jobs", "1", "--", prog)
	require.Equal(t, 0, status, errOut)
	assert.Equal(t, "explore "+prog+": all 2 seeds passed (seeds 1..2, --perturb 1 --strategy pct)\n", out)
	assert.Contains(t, errOut, "emud: warning: PCT's steps not measured: 3 runs of "+prog+" on seed 1 printed no step count (last exit status 0")
	assert.Contains(t, errOut, "using 20000; --pct-steps sets them")
	_, errOut, status = execute(t, "explore", "--seeds", "2", "--pct-steps", "50", "--", prog)
	require.Equal(t, 0, status, errOut)
	assert.NotContains(t, errOut, "not measured", "--pct-steps given: no probe")
}

// A program that fails without an emulated run's end (no "emud: seed N:
// end" line: it crashed, failed to start, or is no emud program) is not a
// detection: the hunt stops with an error naming it, the seed and its
// output. Before, any nonzero exit counted as the bug found, so a program
// that failed in its setup read as found on every seed. A failed
// emulated run (the summary line, exit 2) is still a detection.
func TestHuntProgramsCountOnlyEmulatedFailures(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
		return p
	}
	crash := script("crash", "echo 'setup: no device' >&2\nkill -SEGV $$\n")
	setup := script("setup", "echo 'cannot open input' >&2\nexit 1\n")
	hang := script("hang", "echo \"emud: seed $EMUD_SEED: hang\" >&2\necho \"emud: seed $EMUD_SEED: end 100 ps, digest 0123abcd\" >&2\nexit 2\n")
	for _, c := range []struct {
		prog   string
		status int
		words  string
	}{
		{crash, scenario.ExitFailed, "hunt: " + crash + " at seed 1 failed without an emulated run's end (exit status 1,"},
		{setup, scenario.ExitFailed, "stderr:\ncannot open input\n"},
		{hang, 0, "ties: found 1 of 1 planted bugs within 2 seeds each"},
	} {
		t.Run(filepath.Base(c.prog), func(t *testing.T) {
			out, errOut, status := execute(t, "hunt", "--seeds", "2", "--strategies", "ties", "--", c.prog)
			require.Equal(t, c.status, status, "%s%s", out, errOut)
			assert.Contains(t, out+errOut, c.words)
			if c.status != 0 {
				assert.NotContains(t, out, "found 1 of 1")
			}
		})
	}
}

// A planted bug that emud stops at a host call and ends the process, as
// MORI does (queue_leak.cpp: ccoDevCommCreate refused at the engine's
// queue cap), is an emulated run's failure: its summary line is printed,
// so hunt counts a detection. Before, that exit skipped the line and hunt
// stopped at seed 1 calling it a crash, while docs/guide-cxx.md gives
// 50 of 50.
func TestHuntProgramQueueRefused(t *testing.T) {
	if !haveCxx() {
		t.Skip("no C++ compiler (g++, clang++ or $EMUD_CXX): the C++ program is not built")
	}
	prog := buildProgram(t, "examples/cxx/errors/queue_leak.cpp", "-O2")
	out, errOut, status := execute(t, "hunt", "--seeds", "2", "--jobs", "1", "--debug", "--strategies", "ties,pct", "--", prog+":"+prog+" fixed")
	require.Equal(t, 0, status, "%s%s", out, errOut)
	assert.Contains(t, out, "ties: found 1 of 1 planted bugs within 2 seeds each")
	assert.Contains(t, out, "pct: found 1 of 1 planted bugs within 2 seeds each")
	assert.Regexp(t, `queue_leak +pct +1 +2/2 +0/2`, out)
}
