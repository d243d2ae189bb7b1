package scenario

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
)

// Checker collects a run's data-check failures (blocks and signal slots)
// and keeps the first in its detail: the one receive check every
// scenario uses.
type Checker struct {
	bad   int
	first string
}

// Failf records a failure.
func (c *Checker) Failf(format string, args ...any) {
	c.bad++
	if c.first == "" {
		c.first = fmt.Sprintf(format, args...)
	}
}

// Failed is how many failures were recorded.
func (c *Checker) Failed() int { return c.bad }

// Block compares got with want and records the first difference.
func (c *Checker) Block(what string, got, want []byte) {
	if string(got) == string(want) {
		return
	}
	if len(got) != len(want) {
		c.Failf("%s: %d bytes, want %d", what, len(got), len(want))
		return
	}
	n, at := 0, -1
	for i := range got {
		if got[i] != want[i] {
			if at < 0 {
				at = i
			}
			n++
		}
	}
	c.Failf("%s: %d of %d bytes wrong, first at block offset %d (got %#02x, want %#02x)", what, n, len(got), at, got[at], want[at])
}

// Signal checks one signal slot of rank r's pool: the running total from
// src on queue id q.
func (c *Checker) Signal(dc cco.DevComm, r, src, q int, want uint64) error {
	v, err := dc.Signal(src, q)
	if err != nil {
		return err
	}
	if v != want {
		c.Failf("rank %d's signal slot (sender %d, queue %d) is %d, want %d", r, src, q, v, want)
	}
	return nil
}

// Err is nil when nothing failed, else a *MismatchError for scenario and
// seed.
func (c *Checker) Err(scenario string, seed uint64) error {
	if c.bad == 0 {
		return nil
	}
	return &MismatchError{Scenario: scenario, Seed: seed, Wrong: c.bad, Detail: fmt.Sprintf("%d wrong blocks or signals; first: %s", c.bad, c.first)}
}
