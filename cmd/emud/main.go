package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/emud-dev/emud/bench"
	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/all"
)

func main() {
	cmd := newRootCmd()
	code := exitStatus(cmd.ErrOrStderr(), cmd.Execute())
	bench.ReportChildPeak(os.Stderr)
	os.Exit(code)
}

// exitStatus prints err (if any) as one "emud: ..." line and returns the
// status to exit with.
func exitStatus(w io.Writer, err error) int {
	if err == nil {
		return scenario.ExitOK
	}
	fmt.Fprintf(w, "emud: %v\n", err)
	var ce *scenario.ExitError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return scenario.ExitFailed
}
