package cxx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/internal/testmain"
)

// TestExamples builds every C++ example (examples/cxx) with emud c++ and
// runs it: each prints PASS and exits 0, twice with the same digest, and
// the same digest at -O0 as at -O2, and built with -fsanitize=thread (the
// lanes' own loads and stores checked and seen) and run with the race
// detector on (EMUD_RACE=1) it passes and finds no race. Like every test
// here that builds C++, it runs where g++, clang++ or $EMUD_CXX is
// installed and is skipped otherwise (TestMain says so once): building
// the emulator library takes most of a minute the first time. The
// examples build and run in parallel (a compile is most of each one's
// time); emud c++ instruments lane code by default, so the
// -fsanitize=thread build is the -O2 one (buildKey), built once.
func TestExamples(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	srcs, err := filepath.Glob(filepath.Join(root, "examples", "cxx", "*.cpp"))
	require.NoError(t, err)
	require.NotEmpty(t, srcs)
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".cpp")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := ""
			for _, opt := range []string{"-O2", "-O0"} {
				prog := buildExample(t, src, opt, "-Wall", "-Werror")
				for run := range 2 {
					if opt == "-O0" && run == 1 {
						break
					}
					out, sum, code := runExample(t, prog, "EMUD_SUMMARY=1")
					require.Equal(t, 0, code, "%s %s exit status\nstdout:\n%s\nstderr:\n%s", name, opt, out, sum)
					assert.Contains(t, out, name+": PASS")
					if want == "" {
						want = sum
					} else {
						assert.Equal(t, want, sum, "%s %s run %d: another digest", name, opt, run)
					}
				}
			}
			out, report, code := runExample(t, buildExample(t, src, "-O2", "-fsanitize=thread", "-Wall", "-Werror"), "EMUD_RACE=1")
			require.Equal(t, 0, code, "%s with EMUD_RACE=1: exit status\nstdout:\n%s\nstderr:\n%s", name, out, report)
			assert.Contains(t, out, name+": PASS")
		})
	}
}

// TestPacketsProgram runs examples/cxx/bench/packets.cpp (the program
// emud bench times at 4 M packets) at 50 rounds: it passes, and the
// engines retired the packets it posts (8 ranks × 7 lanes × 50 rounds ×
// 5 puts, 3 of them signalled), no more and no fewer.
func TestPacketsProgram(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "bench", "packets.cpp"), "-O2", "-Wall", "-Werror")
	r := runFull(t, prog, "50", "EMUD_SUMMARY=1")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "packets: PASS")
	const lanes, rounds = 8 * 7, 50
	assert.Contains(t, r.stderr, fmt.Sprintf("(%d COPY_LINEAR, %d ATOMIC, 0 other)", lanes*rounds*5, lanes*rounds*3))
}

var lib struct {
	once sync.Once
	path string
	err  error
	log  string
	dir  string // the built programs, shared by the tests of this binary
}

// setupCxx builds the emulator library once per test binary and returns
// emud's source tree.
func setupCxx(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	lib.once.Do(func() {
		var log bytes.Buffer
		lib.path, lib.err = BuildLibrary(root, Options{Root: root, Stdout: &log, Stderr: &log})
		lib.log = log.String()
		if lib.err == nil {
			lib.dir, lib.err = os.MkdirTemp("", "emud-cxx-test-")
		}
	})
	require.NoError(t, lib.err, lib.log)
	return root
}

// noCxx says why the tests that build C++ are skipped ("" when a
// compiler is there): TestMain prints it once, each test skips on it.
var noCxx string

// needCxx skips t when no C++ compiler is installed.
func needCxx(t testing.TB) {
	t.Helper()
	if noCxx != "" {
		t.Skip("no C++ compiler (see the line above the tests)")
	}
}

// TestMain finds the C++ compiler, saying once why the C++ tests are
// skipped if there is none, and removes the programs the tests built.
func TestMain(m *testing.M) {
	if _, err := compiler(""); err != nil {
		noCxx = err.Error()
		fmt.Fprintf(os.Stderr, "cxx: the tests that build and run C++ are skipped: %s\n", noCxx)
	}
	code := m.Run()
	if lib.dir != "" {
		os.RemoveAll(lib.dir)
	}
	if err := testmain.CheckRSS(); err != nil && code == 0 {
		fmt.Fprintf(os.Stderr, "testmain: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

var builds struct {
	mu   sync.Mutex
	done map[string]*built
}

type built struct {
	once sync.Once
	prog string
	err  error
}

// buildOnce returns the program built for key, once per test binary: the
// first test to ask runs build with the path to write (in lib.dir, named
// after name), and every test after it gets that program or that error.
// A build is most of a short test's time, and several tests run one
// program (buildExample, buildMPI).
func buildOnce(t testing.TB, key, name string, build func(prog string) error) string {
	t.Helper()
	setupCxx(t)
	builds.mu.Lock()
	if builds.done == nil {
		builds.done = map[string]*built{}
	}
	b := builds.done[key]
	if b == nil {
		b = &built{}
		builds.done[key] = b
	}
	n := len(builds.done)
	builds.mu.Unlock()
	b.once.Do(func() {
		b.prog = filepath.Join(lib.dir, fmt.Sprintf("%d-%s", n, strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))))
		b.err = build(b.prog)
	})
	require.NoError(t, b.err)
	return b.prog
}

// buildKey is the memo key of src built with flags: flags with an
// explicit -fsanitize=thread taken out, since emud c++ instruments lane
// code by default (instrument) and the flag goes to the compile alone,
// so both spellings build one program.
func buildKey(src string, flags []string) string {
	key := []string{src}
	for _, f := range flags {
		if strings.HasPrefix(f, "-fsanitize=") && f != "-fsanitize=thread" || strings.HasPrefix(f, "-fno-sanitize=") {
			return strings.Join(append([]string{src}, flags...), " ") // another choice: no other spelling
		}
	}
	for _, f := range flags {
		if f != "-fsanitize=thread" {
			key = append(key, f)
		}
	}
	return strings.Join(key, " ")
}

// TestBuildKey: an explicit -fsanitize=thread keys the program emud c++
// builds by default; any other sanitizer choice, and any other flag or
// order of flags, keys a program of its own.
func TestBuildKey(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []string
		same bool
	}{
		{"explicit thread sanitizer", []string{"-O2", "-Wall"}, []string{"-O2", "-fsanitize=thread", "-Wall"}, true},
		{"no instrumentation", []string{"-O2"}, []string{"-O2", "-fno-sanitize=thread"}, false},
		{"thread off and on", []string{"-O2", "-fno-sanitize=thread"}, []string{"-O2", "-fno-sanitize=thread", "-fsanitize=thread"}, false},
		{"another sanitizer", []string{"-O2", "-fsanitize=address"}, []string{"-O2", "-fsanitize=address", "-fsanitize=thread"}, false},
		{"another level", []string{"-O2"}, []string{"-O0"}, false},
		{"another order", []string{"-I", "a", "-I", "b"}, []string{"-I", "b", "-I", "a"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.same, buildKey("x.cpp", c.a) == buildKey("x.cpp", c.b), "%q / %q", buildKey("x.cpp", c.a), buildKey("x.cpp", c.b))
		})
	}
	assert.NotEqual(t, buildKey("x.cpp", nil), buildKey("y.cpp", nil))
}

// buildExample compiles src with emud c++ and flags, once per test binary
// for each (src, flags): TestExamples, TestPlanted and TestAlltoallMatchesGo
// share their programs.
func buildExample(t testing.TB, src string, flags ...string) string {
	t.Helper()
	root := setupCxx(t)
	return buildOnce(t, buildKey(src, flags), src, func(prog string) error {
		var log bytes.Buffer
		args := append(append([]string{}, flags...), src, "-o", prog)
		if err := Run(args, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}); err != nil {
			return fmt.Errorf("%w\n%s", err, log.String())
		}
		return nil
	})
}

// TestPlanted runs the seed's failure table planted in C++
// (examples/cxx/planted): each ends with its hang report (exit 2) or
// debug trap (exit 1), pinned as a golden file with the C++ file:line of
// the blocked or trapping call.
func TestPlanted(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	for _, c := range []struct {
		name string
		code int
	}{
		{"expected_per_lane", 2},
		{"aggregate_uncommitted", 2},
		{"postwaitmem_peer_flag", 1},
		{"broadcast_misaligned", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prog := buildExample(t, filepath.Join(root, "examples", "cxx", "planted", c.name+".cpp"), "-O2")
			out, report, code := runExample(t, prog)
			require.Equal(t, c.code, code, "exit status; stdout:\n%s\nstderr:\n%s", out, report)
			assert.NotContains(t, out, "PASS")
			golden.Check(t, filepath.Join("planted", c.name+".golden"), report)
		})
	}
}

// exampleTimeout bounds one run of an example program: each takes about a
// second, so a run that reaches this spins (as alltoall_put once did) and
// fails the test instead of hanging it.
const exampleTimeout = 2 * time.Minute

// ran is what one run of a program gave.
type ran struct {
	stdout, stderr string
	code           int           // exit status
	maxRSS         int64         // the program's own peak resident set in bytes (runOpts.peakRSS)
	took           time.Duration // wall time
}

// summary is the emud summary line of the run's stderr (EMUD_SUMMARY=1),
// or all of stderr when the run failed.
func (r ran) summary() string {
	if r.code != 0 {
		return r.stderr
	}
	sum := ""
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "emud: seed ") {
			sum = l
		}
	}
	return sum
}

// runOpts are a run's settings other than its words; the zero value runs
// in the test's directory and environment within exampleTimeout.
type runOpts struct {
	env       []string      // the environment the words' NAME=value add to; nil: this process's
	dir       string        // working directory; "": the test's
	timeout   time.Duration // the run is killed and the test fails after it; 0: exampleTimeout
	waitDelay time.Duration // how long to wait for the output pipes once the program exited (its children may hold them); 0: for ever
	peakRSS   bool          // measure the program's peak RSS (ran.maxRSS) through rssLauncher
}

// rssLauncherSrc runs argv[2:] in a child it forks and writes the child's
// peak RSS (KiB) to argv[1], exiting as the child did. A child Go starts
// is a vfork: at its exec Linux keeps the mm it leaves, the test
// binary's, as the process's peak, so the program's own rusage said
// max(the test binary's peak, its own) (96 MiB for bad_pointer.cpp under
// -race, over TestProbesRSSBound's 64 MiB constant, once the tests ran in
// parallel). A child of fork starts from the launcher's small image.
const rssLauncherSrc = `#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc < 3) return 127;
  pid_t pid = fork();
  if (pid < 0) { perror("rss launcher: fork"); return 127; }
  if (pid == 0) { execv(argv[2], argv + 2); perror(argv[2]); _exit(127); }
  int st; struct rusage ru;
  if (wait4(pid, &st, 0, &ru) < 0) { perror("rss launcher: wait4"); return 127; }
  FILE* f = fopen(argv[1], "w");
  if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) { perror(argv[1]); return 127; }
  if (WIFSIGNALED(st)) { signal(WTERMSIG(st), SIG_DFL); raise(WTERMSIG(st)); }
  return WEXITSTATUS(st);
}
`

// rssLauncher builds rssLauncherSrc with the C++ compiler, once.
func rssLauncher(t *testing.T) string {
	t.Helper()
	return buildOnce(t, "rss launcher", "rsslaunch.cpp", func(prog string) error {
		cc, err := compiler("")
		if err != nil {
			return err
		}
		src := prog + ".cpp"
		if err := os.WriteFile(src, []byte(rssLauncherSrc), 0o644); err != nil {
			return err
		}
		if out, err := exec.Command(cc, "-O1", "-o", prog, src).CombinedOutput(); err != nil {
			return fmt.Errorf("building the RSS launcher: %w\n%s", err, out)
		}
		return nil
	})
}

// runProgram runs prog and returns all it wrote and its exit status; a
// run over the timeout is killed and fails the test. Words of the form
// NAME=value are set in its environment, others are passed to it, empty
// ones dropped.
func runProgram(t *testing.T, o runOpts, prog string, words ...string) ran {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = exampleTimeout
	}
	env := o.env
	if env == nil {
		env = os.Environ()
	}
	env = append([]string{}, env...)
	var args []string
	for _, w := range words {
		switch {
		case w == "":
		case strings.Contains(w, "="):
			env = append(env, w)
		default:
			args = append(args, w)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	name, rssFile := prog, ""
	if o.peakRSS {
		abs, err := filepath.Abs(prog)
		require.NoError(t, err)
		name, rssFile = rssLauncher(t), filepath.Join(t.TempDir(), "rss")
		args = append([]string{rssFile, abs}, args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir, cmd.WaitDelay = env, o.dir, o.waitDelay
	if o.peakRSS {
		// The timeout ends the launcher and the program both.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := ran{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not finish in %v (spinning?)\nstdout:\n%s\nstderr:\n%s", filepath.Base(prog), words, o.timeout, r.stdout, r.stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil, errors.As(err, &ee):
	case o.waitDelay > 0 && errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil:
		// It exited; a process it left behind holds the pipes (the
		// caller checks for those).
	default:
		require.NoError(t, err, "running %s %v", filepath.Base(prog), words)
	}
	r.code = cmd.ProcessState.ExitCode()
	if o.peakRSS {
		b, err := os.ReadFile(rssFile)
		require.NoError(t, err, "the RSS launcher's figure; stderr:\n%s", r.stderr)
		kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		require.NoError(t, err)
		r.maxRSS = kib << 10
	}
	return r
}

// runFull is runProgram with the zero runOpts.
func runFull(t *testing.T, prog string, words ...string) ran {
	t.Helper()
	return runProgram(t, runOpts{}, prog, words...)
}

// runExample runs prog (runFull) and returns its stdout, the emud
// summary line of its stderr (all of it when the run failed) and its exit
// status.
func runExample(t *testing.T, prog string, words ...string) (string, string, int) {
	t.Helper()
	r := runFull(t, prog, words...)
	return r.stdout, r.summary(), r.code
}

// TestErrors: bad input names itself (examples/cxx/errors). A lane that
// dereferences an unmapped device address or a host pointer fails with
// the address (exit 1, golden report; the pc, which moves with the
// build, is masked); a cco feature emud does not emulate fails its call
// at run time naming it; a HIP call emud does not emulate fails the build
// naming it.
func TestErrors(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := filepath.Join(root, "examples", "cxx", "errors")
	pc := regexp.MustCompile(`pc 0x[0-9a-f]+`)
	for _, c := range []struct {
		name, src string
		args      []string
		code      int
		tsan      bool // built instrumented (emud c++'s default), else with -fno-sanitize=thread
	}{
		{"bad_pointer_device", "bad_pointer.cpp", []string{"device"}, 1, false},
		{"bad_pointer_host", "bad_pointer.cpp", []string{"host"}, 1, false},
		// A live host buffer: only the TSan build's checks see it.
		{"bad_pointer_live", "bad_pointer.cpp", []string{"live"}, 1, true},
		{"unsupported_gda", "unsupported_gda.cpp", nil, 1, false},
		// hipMemsetAsync still in flight when a kernel on another stream
		// lands data there: the race detector names both (mori#519's class).
		{"memset_async_race", "memset_async.cpp", []string{"race", "EMUD_RACE=1"}, 5, false},
		// A hipMemsetAsync of hipHostMalloc memory and a kernel's stores
		// to it on streams nothing orders: host memory is seen too.
		{"host_memory_race", "host_memory_race.cpp", []string{"race", "EMUD_RACE=1"}, 5, true},
		// Lanes of two unordered kernels store to one word.
		{"lane_race", "lane_race.cpp", []string{"race", "EMUD_RACE=1"}, 5, true},
		// A lane polls a flag with a plain load: it never calls in, and
		// the spin watch ends the run as a hang naming it.
		{"plain_spin_lane", "plain_spin.cpp", []string{"lane", "EMUD_SPIN_LIMIT=1s"}, 2, false},
		// A host thread waits in its own code for the main thread, which
		// never gets its turn back.
		{"plain_spin_host", "plain_spin.cpp", []string{"host", "EMUD_SPIN_LIMIT=1s"}, 2, false},
		// A lane polls two words in turn that nothing writes: a spin on
		// both, and a hang report naming them and the line.
		{"poll_words_never", "poll_words_never.cpp", nil, 2, false},
		// Two ranks' collective calls out of step: the second fails.
		{"collective_order", "collective_order.cpp", nil, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			flags := []string{"-O2", "-Wall", "-Werror", "-fno-sanitize=thread"}
			if c.tsan {
				flags = []string{"-O2", "-Wall", "-Werror"} // emud c++ instruments lanes by default
			}
			prog := buildExample(t, filepath.Join(dir, c.src), flags...)
			out, report, code := runExample(t, prog, c.args...)
			require.Equal(t, c.code, code, "exit status; stdout:\n%s\nstderr:\n%s", out, report)
			assert.NotContains(t, out, "FAIL")
			report = pc.ReplaceAllString(strings.ReplaceAll(report, root+"/", ""), "pc <pc>")
			golden.Check(t, filepath.Join("errors", c.name+".golden"), report)
		})
	}
	// A warp-scope put whose source the lanes overwrite after draining
	// the wrong queue: a plain build run with EMUD_RACE=1 finds it on
	// every seed, naming the store's own line (not the next device call).
	t.Run("put_overwrite", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "put_overwrite.cpp"), "-O2", "-Wall", "-Werror")
		for seed := 1; seed <= 5; seed++ {
			out, report, code := runExample(t, prog, "EMUD_RACE=1", fmt.Sprintf("EMUD_SEED=%d", seed))
			require.Equal(t, 5, code, "seed %d; stdout:\n%s\nstderr:\n%s", seed, out, report)
			assert.Contains(t, report, "put_overwrite.cpp:24, lane code before", "seed %d: the store's own line", seed)
		}
		out, report, code := runExample(t, prog, "fixed", "EMUD_RACE=1")
		require.Equal(t, 0, code, "queue 1 drained before the reuse; stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "put_overwrite: PASS")
	})
	// Built without instrumentation, EMUD_RACE=1 says once that lane
	// accesses are not checked.
	t.Run("race_uninstrumented", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "put_overwrite.cpp"), "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
		r := runFull(t, prog, "fixed", "EMUD_RACE=1")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Equal(t, 1, strings.Count(r.stderr, "emud: warning: EMUD_RACE: this program was built without lane instrumentation"), r.stderr)
	})
	// A slot reset by the rank's own lane: the hang report names that
	// lane's store, at its line, as the write that lowered the slot.
	t.Run("slot_reset", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "slot_reset.cpp"), "-O2", "-Wall", "-Werror")
		for seed := 1; seed <= 3; seed++ {
			out, report, code := runExample(t, prog, fmt.Sprintf("EMUD_SEED=%d", seed))
			require.Equal(t, 2, code, "seed %d: a hang; stdout:\n%s\nstderr:\n%s", seed, out, report)
			assert.Regexp(t, `but the slot was overwritten: it went from [12] back to 0 at [^ ]+ by kernel "twoRounds" GPU [01] block 0 wave 0 lane 0's store at [^ ]*slot_reset.cpp:24\.`, report, "seed %d", seed)
			out, report, code = runExample(t, prog, "host", fmt.Sprintf("EMUD_SEED=%d", seed))
			require.Equal(t, 2, code, "seed %d, host: a hang; stdout:\n%s\nstderr:\n%s", seed, out, report)
			assert.Regexp(t, `but the slot was overwritten: it went from [12] back to 0 at [^ ]+ by host thread [12]'s store at [^ ]*slot_reset.cpp:51\.`, report, "seed %d, host", seed)
		}
	})
	t.Run("lane_race_ordered", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "lane_race.cpp"), "-O2", "-Wall", "-Werror")
		out, report, code := runExample(t, prog, "ordered", "EMUD_RACE=1")
		require.Equal(t, 0, code, "kernels on one stream are ordered; stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "lane_race ordered: buf[0] = 2")
	})
	t.Run("plain_spin_polls", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "plain_spin.cpp"), "-O2", "-Wall", "-Werror")
		out, report, code := runExample(t, prog, "atomic", "EMUD_SPIN_LIMIT=1s")
		require.Equal(t, 0, code, "an atomic poll advances virtual time; stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "plain_spin atomic: PASS")
		out, report, code = runExample(t, prog, "clock", "EMUD_SPIN_LIMIT=1s")
		require.Equal(t, 0, code, "a delay loop on clock64 advances virtual time; stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "plain_spin clock: 24000 cycles took 10000 ns: PASS")
		_, report, code = runExample(t, prog, "atomic", "EMUD_SPIN_LIMIT=soon")
		assert.Equal(t, 1, code)
		assert.Contains(t, report, `emud: cannot start: EMUD_SPIN_LIMIT="soon": want a duration such as 10s, or 0 for no limit`)
	})
	// A comm re-created without ccoCommDestroy keeps its queues: on every
	// seed the second comm is warned about and the third's queues overflow
	// engine 0's cap, an error naming the live comms (exit 1); destroying
	// each comm runs every round.
	t.Run("queue_leak", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "queue_leak.cpp"), "-O2", "-Wall", "-Werror")
		for _, seed := range []string{"EMUD_SEED=1", "EMUD_SEED=2", "EMUD_SEED=3"} {
			out, report, code := runExample(t, prog, seed, "MORI_CCO_SDMA_DEBUG=1")
			require.Equal(t, 1, code, "%s: exit status; stdout:\n%s\nstderr:\n%s", seed, out, report)
			assert.Contains(t, out, "queue_leak: round 1 done\n", seed)
			assert.NotContains(t, out, "round 2 done", seed)
			golden.Check(t, filepath.Join("errors", "queue_leak.golden"), strings.ReplaceAll(report, root+"/", ""))
		}
		out, report, code := runExample(t, prog, "fixed")
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "queue_leak: 6 rounds: PASS")
	})
	// A queue count over 8 is clamped with the warning on stderr; the
	// kernel's queue ids 8..11 post nothing (MORI's no-op), and in debug
	// mode each such call site says so, on every seed.
	t.Run("queue_clamp", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "queue_clamp.cpp"), "-O2", "-Wall", "-Werror")
		for _, seed := range []string{"EMUD_SEED=1", "EMUD_SEED=2", "EMUD_SEED=3"} {
			out, report, code := runExample(t, prog, seed, "MORI_CCO_SDMA_DEBUG=1")
			require.Equal(t, 1, code, "%s: the blocks sent on queue ids 8..11 never land; stdout:\n%s\nstderr:\n%s", seed, out, report)
			assert.Contains(t, out, "queue_clamp: FAIL", seed)
			lines := strings.SplitAfter(strings.ReplaceAll(report, root+"/", ""), "\n")
			sort.Strings(lines) // the ranks' order is the seed's
			golden.Check(t, filepath.Join("errors", "queue_clamp.golden"), strings.Join(lines, ""))
		}
		_, report, _ := runExample(t, prog)
		assert.Contains(t, report, "emud: warning: ccoDevCommCreate (rank 0): sdmaQueueCount 12 exceeds hardware max 8; clamped to 8", "the clamp is said in release mode too")
		assert.NotContains(t, report, "is outside [0, 8)", "the per-call note is debug mode's")
		out, report, code := runExample(t, prog, "fixed")
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "queue_clamp: PASS")
	})
	// Threads started before the first HIP call are host threads: the
	// program passes, with one digest on every run (they were refused).
	t.Run("early_threads", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "early_threads.cpp"), "-O2", "-Wall", "-Werror")
		want := ""
		for run := range 3 {
			out, sum, code := runExample(t, prog, "EMUD_SUMMARY=1")
			require.Equal(t, 0, code, "run %d; stdout:\n%s\nstderr:\n%s", run, out, sum)
			assert.Contains(t, out, "early_threads: PASS")
			if want == "" {
				want = sum
			}
			assert.Equal(t, want, sum, "run %d: another digest", run)
		}
	})
	// EMUD_GPUS past the node's GPUs is refused, naming the preset's count.
	t.Run("gpus_over_node", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "early_threads.cpp"), "-O2", "-Wall", "-Werror")
		for _, n := range []string{"16", "64"} {
			_, report, code := runExample(t, prog, "EMUD_GPUS="+n)
			assert.Equal(t, 1, code, report)
			assert.Contains(t, report, "emud: cannot start: EMUD_GPUS="+n+": the emulated node (the MI355X platform preset, also under EMUD_ARCH=gfx1250) has 8 GPUs: need 1..8")
		}
	})
	// A child forked after the emulation started, or before the first
	// HIP call (MORI's harness; it once hung in hipSetDevice, then exited
	// 1 saying forks were not emulated), runs on the parent's node: its
	// calls return and it exits 0, within the test's timeout.
	for _, mode := range []string{"", "early"} {
		t.Run("fork_rank"+mode, func(t *testing.T) {
			t.Parallel()
			prog := buildExample(t, filepath.Join(root, "examples", "cxx", "procs", "fork_rank.cpp"), "-O2", "-Wall", "-Werror")
			r := runProgram(t, runOpts{timeout: 30 * time.Second}, prog, mode)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Equal(t, "fork_rank: the child's calls returned (device 1)\nfork_rank: the forked rank exited 0\n", r.stdout, r.stderr)
		})
	}
	// A rank's own child is no rank: its first call says so and exits 1.
	t.Run("fork_rank_nested", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(root, "examples", "cxx", "procs", "fork_rank.cpp"), "-O2", "-Wall", "-Werror")
		r := runProgram(t, runOpts{timeout: 30 * time.Second}, prog, "nested")
		out, report := r.stdout, r.stderr
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", out, report)
		assert.Equal(t, "fork_rank: the child's calls returned (device 1)\nfork_rank: the rank's own child exited 1\nfork_rank: the forked rank exited 0\n", out)
		assert.Regexp(t, `fork_rank.cpp:\d+: a HIP/cco call in a process forked after the emulation started that is not a rank of an emulated node`, report)
	})
	t.Run("host_memory_ordered", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "host_memory_race.cpp"), "-O2", "-Wall", "-Werror", "-fsanitize=thread")
		out, report, code := runExample(t, prog, "ordered", "EMUD_RACE=1")
		require.Equal(t, 0, code, "the memset synchronised before the launch races with nothing; stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "host_memory_race ordered: the word holds 1000")
	})
	t.Run("memset_async_ordered", func(t *testing.T) {
		t.Parallel()
		prog := buildExample(t, filepath.Join(dir, "memset_async.cpp"), "-O2", "-Wall", "-Werror")
		out, report, code := runExample(t, prog, "ordered", "EMUD_RACE=1")
		require.Equal(t, 0, code, "the memset synchronised before the barrier races with nothing; stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "memset_async ordered: data intact (0 wrong words)")
	})
	t.Run("unsupported_call", func(t *testing.T) {
		t.Parallel()
		var log bytes.Buffer
		err := Run([]string{"-O2", filepath.Join(dir, "unsupported_call.cpp"), "-o", filepath.Join(lib.dir, "unsupported_call")},
			Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
		require.Error(t, err, "a call emud does not emulate must not build")
		assert.Contains(t, log.String(), "hipMalloc3D is not supported by emud")
		assert.Contains(t, log.String(), "unsupported_call.cpp:8", "the error points at the call")
	})
}

// TestTraceAndStrategy: a C++ program's EMUD_TRACE is emud run --trace's
// Chrome trace-event JSON and does not change the run's digest;
// EMUD_STRATEGY and the PCT parameters pick the schedule, one digest per
// seed and strategy; bad values name the variable.
func TestTraceAndStrategy(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "alltoall_put.cpp"), "-O2", "-Wall", "-Werror")
	path := filepath.Join(t.TempDir(), "run.json")
	_, plain, code := runExample(t, prog, "EMUD_SUMMARY=1")
	require.Equal(t, 0, code, plain)
	out, traced, code := runExample(t, prog, "EMUD_SUMMARY=1", "EMUD_TRACE="+path)
	require.Equal(t, 0, code, out+traced)
	assert.Equal(t, plain, traced, "the recorder changes nothing the digest sees")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(b, &doc), "EMUD_TRACE writes JSON")
	copies := 0
	for _, e := range doc.TraceEvents {
		if n, ok := e["name"].(string); ok && strings.HasPrefix(n, "COPY_LINEAR") {
			copies++
		}
	}
	assert.Positive(t, copies, "the trace has the engines' packets: %d events", len(doc.TraceEvents))

	digests := map[string]string{}
	for _, st := range []string{"ties", "perturb", "pct"} {
		for run := range 2 {
			out, sum, code := runExample(t, prog, "EMUD_SUMMARY=1", "EMUD_SEED=3", "EMUD_STRATEGY="+st, "EMUD_PCT_DEPTH=4")
			require.Equal(t, 0, code, out+sum)
			if run == 0 {
				digests[st] = sum
			} else {
				assert.Equal(t, digests[st], sum, "%s: the same seed, the same run", st)
			}
		}
	}
	assert.NotEqual(t, digests["ties"], digests["pct"], "PCT under perturbation is another schedule")
	for _, c := range []struct{ env, want string }{
		{"EMUD_STRATEGY=dfs", `EMUD_STRATEGY="dfs": want ties, perturb, pct or random`},
		{"EMUD_PCT_DEPTH=100", "EMUD_PCT_DEPTH/EMUD_PCT_STEPS: pct depth 100: need 1..64"},
		{"EMUD_TRACE=/nonexistent/dir/t.json", "emud: cannot start: EMUD_TRACE: open /nonexistent/dir/t.json"},
	} {
		_, report, code := runExample(t, prog, c.env)
		assert.Equal(t, 1, code, c.env)
		assert.Contains(t, report, c.want, c.env)
	}
}

// TestExamplesMoriLog builds cxx/testdata/mori_log/mori_log.cpp, which
// logs through MORI's macros (include/mori/utils/mori_log.hpp), and runs
// it with no MORI_* variable, with MORI_APP_LOG_LEVEL=info and with
// MORI_GLOBAL_LOG_LEVEL=debug: the lines each prints, time and pid taken
// out, are the levels' and the {fmt}-style fields' as MORI's header gives
// them.
func TestExamplesMoriLog(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "mori_log", "mori_log.cpp"), "-O2", "-Wall", "-Werror")
	base := []string{} // not nil: runOpts takes nil for this process's environment
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MORI_") {
			base = append(base, e)
		}
	}
	prefix := regexp.MustCompile(`(?m)^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[\d+\] `)
	took := regexp.MustCompile(`took \d+ ns`)
	const fields = "[application] [error] fields: [    ab] [7   ] [0003.142] [ff] [0XFF] [101] [{}] [7ab] [s]\n"
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"default", nil, fields +
			"[application] [trace] trace after SetModuleLevel\n" +
			"[custom] [critical] a module made on demand\n"},
		{"app_info", []string{"MORI_APP_LOG_LEVEL=info"}, "[application] [info] 8 devices, warp 64\n" + fields +
			"[application] [warning] Attempted to change log level for module 'application' which is controlled by environment variable. Use ForceSetModuleLevel() to override.\n" +
			"[custom] [critical] a module made on demand\n"},
		{"global_debug", []string{"MORI_GLOBAL_LOG_LEVEL=debug"}, "[application] [info] 8 devices, warp 64\n" + fields +
			"[shmem] [warning] int8 -3 bool true char z A missing {?}\n" +
			"[core] [debug] ScopedTimer [void timed()] took N ns\n" +
			"[application] [trace] trace after SetModuleLevel\n" +
			"[custom] [critical] a module made on demand\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runProgram(t, runOpts{env: base}, prog, c.env...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			got := took.ReplaceAllString(prefix.ReplaceAllString(r.stdout, ""), "took N ns")
			assert.Equal(t, c.want+"mori_log: done\n", got)
		})
	}
}
