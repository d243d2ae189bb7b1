package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/internal/fileio"
	"github.com/emud-dev/emud/trace"
)

// The trace wiring: a recorder attaches to the run's node before anything
// runs (Options.Observe) and writes Chrome trace-event JSON after the run,
// whatever its outcome (passed, hung, wrong data, raced, failed): only a
// run that stopped before its node was built has none.

// ErrNoNode is TraceInto's error for a run that never built its node.
var ErrNoNode = errors.New("no trace: the run stopped before its node was built")

// TraceInto attaches a recorder through o and returns the function that
// writes the trace to w once the run is over (ErrNoNode if there is none).
func TraceInto(o *Options) func(w io.Writer) error {
	var rec *trace.Recorder
	prev := o.Observe
	o.Observe = func(n *engine.Node, h *cco.Host) {
		if prev != nil {
			prev(n, h)
		}
		rec = trace.Attach(n, h)
	}
	return func(w io.Writer) error {
		if rec == nil {
			return ErrNoNode
		}
		return rec.WriteJSON(w)
	}
}

// TraceToFile checks that path can be written (before the run, so a typo
// costs nothing; the file is not touched) and returns the function that
// writes the trace there, whole or not at all: an old trace at path
// survives a run that fails to write one or is interrupted. It says
// whether there was a trace.
func TraceToFile(o *Options, path string) (func() (bool, error), error) {
	if err := fileio.CheckWritable(path); err != nil {
		return nil, fmt.Errorf("invalid --trace: %w", err)
	}
	write := TraceInto(o)
	return func() (bool, error) {
		var buf bytes.Buffer
		if err := write(&buf); errors.Is(err, ErrNoNode) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("writing trace %s: %w", path, err)
		}
		if err := fileio.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return false, fmt.Errorf("writing trace %s: %w", path, err)
		}
		return true, nil
	}, nil
}
