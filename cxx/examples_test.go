package cxx

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	var log bytes.Buffer
	o := Options{Root: root, Stdout: &log, Stderr: &log}
	_, err = BuildLibrary(root, o)
	require.NoError(t, err, log.String())
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

// runExample runs prog and returns its stdout, the emud summary line of
// its stderr and its exit status.
func runExample(t *testing.T, prog string, env ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(prog)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
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
