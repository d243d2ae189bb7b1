package cco

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/engine"
)

// MisuseError is a host call refusing what the program asked, as the API
// refuses it on hardware (ccoCommDestroy of a queue with work in flight):
// the program's bug, named by the call, not a failure of the emulator.
// scenario classifies a run that ends with one as "misuse".
type MisuseError struct {
	Call string // the refusing call: "ccoCommDestroy"
	Rank int
	Err  error // what it refused, and why
}

func (e *MisuseError) Error() string { return fmt.Sprintf("%s (rank %d): %v", e.Call, e.Rank, e.Err) }
func (e *MisuseError) Unwrap() error { return e.Err }

// misuse wraps err as call's MisuseError when what refused it is the
// program's misuse (a queue destroyed with work in flight), else returns
// it as call's plain error.
func misuse(call string, rank int, err error) error {
	if inflight := (*engine.InFlightError)(nil); errors.As(err, &inflight) {
		return &MisuseError{Call: call, Rank: rank, Err: err}
	}
	return fmt.Errorf("%s (rank %d): %w", call, rank, err)
}
