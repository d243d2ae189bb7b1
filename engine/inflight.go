package engine

import "fmt"

// InFlightError is DestroyQueue refusing a queue that still has work: a
// program misusing the API (destroying before quiet), not a fault of the
// emulator, so callers above can tell the two apart (cco.MisuseError,
// scenario's "misuse" status).
type InFlightError struct {
	Queue  QueueID
	Why    string // what is in flight
	Detail string // the ring's pointers and the engine's state
}

func (e *InFlightError) Error() string {
	return fmt.Sprintf("engine: DestroyQueue %v: the queue has work in flight: %s (%s)", e.Queue, e.Why, e.Detail)
}
