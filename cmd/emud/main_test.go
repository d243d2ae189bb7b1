package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// Every run ends its actor goroutines before Run returns; goleak holds the
// command to that. A child process emud bench started (benchChildEnv) is
// the command, not the tests.
func TestMain(m *testing.M) {
	if os.Getenv(benchChildEnv) != "" {
		os.Exit(exitStatus(os.Stderr, newRootCmd().Execute()))
	}
	goleak.VerifyTestMain(m)
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
