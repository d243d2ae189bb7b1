package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit statuses (see the package doc). Scripts tell a hang from a data error
// by the status alone.
const (
	exitOK       = 0
	exitError    = 1
	exitHang     = 2
	exitMismatch = 3
	// exitCalibration: a calibration report with a row outside tolerance.
	exitCalibration = 4
	// exitRace: the race detector (--race) found unordered conflicting
	// accesses.
	exitRace = 5
)

// codedError carries the exit status a failure should end the process with.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

func main() {
	cmd := newRootCmd()
	os.Exit(exitStatus(cmd.ErrOrStderr(), cmd.Execute()))
}

// exitStatus prints err (if any) as one "emud: ..." line and returns the
// status to exit with.
func exitStatus(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(w, "emud: %v\n", err)
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	return exitError
}
