//go:build !(rocm && cgo)

package rocm_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/sim"
)

func kfdPresent() bool { return false } // this build cannot use it anyway

// Without -tags rocm and cgo, Open says the backend is not in the binary and
// how to build it.
func TestStubOpenSaysHowToBuild(t *testing.T) {
	require.False(t, rocm.Available)
	d, err := rocm.Open(sim.New(sim.Config{}), rocm.Config{})
	require.Nil(t, d)
	require.True(t, errors.Is(err, rocm.ErrUnavailable))
	require.ErrorContains(t, err, "hw/rocm: the ROCm backend is not in this binary")
	require.ErrorContains(t, err, "-tags rocm")
	require.ErrorContains(t, err, "CGO_ENABLED=1")
	require.ErrorContains(t, err, buildWhy)
}
