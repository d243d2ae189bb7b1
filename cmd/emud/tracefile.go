package main

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
// runs (options.observe) and writes Chrome trace-event JSON after the run,
// whatever its outcome (passed, hung, wrong data, raced, failed): only a
// run that stopped before its node was built has none.

// errNoNode is traceInto's error for a run that never built its node.
var errNoNode = errors.New("no trace: the run stopped before its node was built")

// traceInto attaches a recorder through o and returns the function that
// writes the trace to w once the run is over (errNoNode if there is none).
func traceInto(o *options) func(w io.Writer) error {
	var rec *trace.Recorder
	prev := o.observe
	o.observe = func(n *engine.Node, h *cco.Host) {
		if prev != nil {
			prev(n, h)
		}
		rec = trace.Attach(n, h)
	}
	return func(w io.Writer) error {
		if rec == nil {
			return errNoNode
		}
		return rec.WriteJSON(w)
	}
}

// traceToFile checks that path can be written (before the run, so a typo
// costs nothing) and returns the function that writes the trace there; it
// says whether there was one (the file it made is removed if not).
func traceToFile(o *options, path string) (func() (bool, error), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("invalid --trace: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("invalid --trace: %w", err)
	}
	write := traceInto(o)
	return func() (bool, error) {
		var buf bytes.Buffer
		if err := write(&buf); errors.Is(err, errNoNode) {
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
