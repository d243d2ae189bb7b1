package rocm_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/sim"
)

func TestSelect(t *testing.T) {
	s := sim.New(sim.Config{})
	node, err := engine.NewNode(s, cco.MI355X(2))
	require.NoError(t, err)
	emu := func() (cco.Device, error) { return cco.Emulated(node), nil }
	for _, v := range []string{"", "emu", " EMU "} {
		d, err := rocm.Select(v, s, rocm.Config{}, emu)
		require.NoError(t, err, "%q", v)
		require.Equal(t, 2, d.GPUs())
	}
	_, err = rocm.Select("emu", s, rocm.Config{}, nil)
	require.ErrorContains(t, err, "no emulated device")
	_, err = rocm.Select("cuda", s, rocm.Config{}, emu)
	require.ErrorContains(t, err, `EMUD_BACKEND="cuda": unknown backend (want "emu" or "rocm")`)
	if !kfdPresent() {
		_, err = rocm.Select("rocm", s, rocm.Config{}, emu)
		require.True(t, errors.Is(err, rocm.ErrUnavailable), "%v", err)
	}
}
