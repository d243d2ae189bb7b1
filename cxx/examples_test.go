package cxx

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
)

// TestExamples builds every C++ example (examples/cxx) with emud c++ and
// runs it: each prints PASS and exits 0, twice with the same digest, and
// the same digest at -O0 as at -O2. It needs g++ (or $EMUD_CXX) and runs
// when EMUD_TEST_CXX=1 (CI sets it): building the emulator library takes
// most of a minute.
func TestExamples(t *testing.T) {
	if os.Getenv("EMUD_TEST_CXX") == "" {
		t.Skip("set EMUD_TEST_CXX=1 to build and run the C++ examples")
	}
	root, o, log := setupCxx(t)
	srcs, err := filepath.Glob(filepath.Join(root, "examples", "cxx", "*.cpp"))
	require.NoError(t, err)
	require.NotEmpty(t, srcs)
	dir := t.TempDir()
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".cpp")
		t.Run(name, func(t *testing.T) {
			digests := map[string]string{}
			for _, opt := range []string{"-O2", "-O0"} {
				prog := filepath.Join(dir, name+opt)
				log.Reset()
				require.NoError(t, Run([]string{opt, "-Wall", "-Werror", src, "-o", prog}, o), log.String())
				for run := range 2 {
					if opt == "-O0" && run == 1 {
						break
					}
					out, sum, code := runExample(t, prog, "EMUD_SUMMARY=1")
					require.Equal(t, 0, code, "%s %s exit status\nstdout:\n%s\nstderr:\n%s", name, opt, out, sum)
					assert.Contains(t, out, name+": PASS")
					if d, ok := digests["want"]; ok {
						assert.Equal(t, d, sum, "%s %s run %d: another digest", name, opt, run)
					} else {
						digests["want"] = sum
					}
				}
			}
		})
	}
}

var lib struct {
	once sync.Once
	err  error
	log  string
}

// setupCxx builds the emulator library once per test binary.
func setupCxx(t *testing.T) (string, Options, *bytes.Buffer) {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	log := &bytes.Buffer{}
	o := Options{Root: root, Stdout: log, Stderr: log}
	lib.once.Do(func() {
		_, lib.err = BuildLibrary(root, o)
		lib.log = log.String()
	})
	require.NoError(t, lib.err, lib.log)
	return root, o, log
}

// TestPlanted runs the seed's failure table planted in C++
// (examples/cxx/planted): each ends with its hang report (exit 2) or
// debug trap (exit 1), pinned as a golden file with the C++ file:line of
// the blocked or trapping call.
func TestPlanted(t *testing.T) {
	if os.Getenv("EMUD_TEST_CXX") == "" {
		t.Skip("set EMUD_TEST_CXX=1 to build and run the C++ examples")
	}
	root, o, log := setupCxx(t)
	dir := t.TempDir()
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
			prog := filepath.Join(dir, c.name)
			log.Reset()
			require.NoError(t, Run([]string{"-O2", filepath.Join(root, "examples", "cxx", "planted", c.name+".cpp"), "-o", prog}, o), log.String())
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

// runExample runs prog and returns its stdout, the emud summary line of
// its stderr and its exit status; a run over exampleTimeout is killed and
// fails the test.
func runExample(t *testing.T, prog string, env ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), exampleTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish in %v (spinning?)\nstdout:\n%s\nstderr:\n%s", filepath.Base(prog), exampleTimeout, out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	sum := ""
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.HasPrefix(l, "emud: seed ") {
			sum = l
		}
	}
	if code != 0 {
		sum = errb.String()
	}
	return out.String(), sum, code
}
