package rocm

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/sim"
)

// EnvBackend is the environment variable that picks the device cco runs
// on: "emu" (or unset, or empty) for the emulator, "rocm" for real SDMA
// queues through KFD.
const EnvBackend = "EMUD_BACKEND"

// Backend names accepted in EnvBackend.
const (
	BackendEmulator = "emu"
	BackendROCm     = "rocm"
)

// Select returns the device named by backend: BackendEmulator (or "")
// calls emulated, BackendROCm opens the KFD with cfg on s. An algorithm
// written against cco.Device switches backend with this one value, e.g.
// Select(os.Getenv(EnvBackend), ...). Anything else is an error naming
// the accepted values.
func Select(backend string, s *sim.Sim, cfg Config, emulated func() (cco.Device, error)) (cco.Device, error) {
	switch strings.ToLower(strings.TrimSpace(backend)) {
	case "", BackendEmulator:
		if emulated == nil {
			return nil, fmt.Errorf("hw/rocm: %s=%q selects the emulator, but no emulated device was given", EnvBackend, backend)
		}
		return emulated()
	case BackendROCm:
		d, err := Open(s, cfg)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, fmt.Errorf("hw/rocm: %s=%q: unknown backend (want %q or %q)", EnvBackend, backend, BackendEmulator, BackendROCm)
}
