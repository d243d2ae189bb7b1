//go:build !(rocm && cgo)

package rocm

import "github.com/emud-dev/emud/sim"

// Available reports whether this binary contains the KFD driver (built
// with -tags rocm and cgo on).
const Available = false

// Open would open the KFD; this build has no KFD driver, so it returns an
// error wrapping ErrUnavailable that says how to build one.
func Open(s *sim.Sim, cfg Config) (*Device, error) {
	return nil, errUnavailable("%s", buildReason)
}
