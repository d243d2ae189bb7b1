package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/emud-dev/emud/bench"
	"github.com/emud-dev/emud/internal/testmain"
	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
)

// Every run ends its actor goroutines before Run returns; goleak holds the
// command to that. A child process emud bench started (bench.ChildEnv) is
// the command, not the tests.
func TestMain(m *testing.M) {
	if os.Getenv(bench.ChildEnv) != "" {
		code := exitStatus(os.Stderr, newRootCmd().Execute())
		bench.ReportChildPeak(os.Stderr)
		os.Exit(code)
	}
	testmain.Run(m)
}

// execute runs emud in-process with args, as main would, and returns its
// stdout, stderr and exit status.
func execute(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	status = exitStatus(&errOut, cmd.Execute())
	return out.String(), errOut.String(), status
}

// lines splits output into lines without the trailing empty one.
func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

// flagError is a command line (after a common prefix) that must fail and
// what its error must say.
type flagError struct {
	args []string
	want string
}

// assertFlagErrors runs emud with prefix then each case's args and asserts
// the run fails with the case's words on stderr.
func assertFlagErrors(t *testing.T, prefix []string, cases []flagError) {
	t.Helper()
	for _, tc := range cases {
		args := append(append([]string(nil), prefix...), tc.args...)
		_, errOut, status := execute(t, args...)
		assert.Equal(t, scenario.ExitFailed, status, "%v", args)
		assert.Contains(t, errOut, tc.want, "%v", args)
	}
}
