package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
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
// costs nothing) and returns the function that writes the trace there; it
// says whether there was one (the file it made is removed if not).
func TraceToFile(o *Options, path string) (func() (bool, error), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("invalid --trace: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("invalid --trace: %w", err)
	}
	write := TraceInto(o)
	return func() (bool, error) {
		var buf bytes.Buffer
		if err := write(&buf); errors.Is(err, ErrNoNode) {
			return false, os.Remove(path)
		} else if err != nil {
			return false, fmt.Errorf("writing trace %s: %w", path, err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return false, fmt.Errorf("writing trace %s: %w", path, err)
		}
		return true, nil
	}, nil
}
