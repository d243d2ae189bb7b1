package emutest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/emud-dev/emud/kernel"
)

// Lane code that reaches device memory through Node.Memory() instead of
// cco.Mem is invisible to the race detector: its loads and stores order
// nothing and race nothing. NewJob's jobs watch for it (engine.Memory's
// guard): the first such access in the process is named once on stderr,
// and under the race detector it fails the lane, as a detector that
// cannot see an access cannot vouch for the run.

// warn is where the one warning goes; warned makes it one.
var (
	warn   io.Writer = os.Stderr
	warned sync.Once
)

// emudPrefix is the package path prefix of emud's own code, whose
// accesses through Node.Memory() are the emulator's (cco.Mem among them).
const emudPrefix = "github.com/emud-dev/emud/"

// guardLanes installs the check on j's memory.
func guardLanes(j *Job) {
	j.Node.Memory().SetGuard(func(op string, addr, n uint64) error {
		t := kernel.RunningLane(j.Sim)
		if t == nil {
			return nil // host code, an engine or a device call
		}
		site, user := caller()
		if !user {
			return nil
		}
		err := fmt.Errorf("lane %v at %s: a %s of %d bytes at %#x through Node.Memory(), which the race detector does not see: use cco.NewMem(t, sdma.DevComm())", t, site, op, n, addr)
		if d := j.Sim.Race(); d != nil && !d.LifecycleOnly() {
			t.Fail("Node.Memory()."+op, err)
		}
		warned.Do(func() { fmt.Fprintf(warn, "emutest: warning: %v (shown once)\n", err) })
		return nil
	})
}

// caller is the file:line of the code that called the memory method, and
// whether it is the user's (a test file, or outside emud).
func caller() (string, bool) {
	var pcs [2]uintptr
	n := runtime.Callers(4, pcs[:]) // Callers, caller, the guard, the Memory method
	frames := runtime.CallersFrames(pcs[:n])
	f, _ := frames.Next()
	site := fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line)
	return site, !strings.HasPrefix(f.Function, emudPrefix) || strings.HasSuffix(f.File, "_test.go")
}
