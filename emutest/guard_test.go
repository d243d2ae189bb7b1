package emutest

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// storeFlag is one lane storing a word of its window, through cco.Mem or
// (the misuse) through Node.Memory().
func storeFlag(race, raw bool) error {
	j, err := NewJobWith(1, 1, Options{Perturb: sim.LevelExact, Race: race})
	if err != nil {
		return err
	}
	w, err := j.Window(64)
	if err != nil {
		return err
	}
	if err := j.CreateDevComms(1, false); err != nil {
		return err
	}
	if _, err := j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		if raw {
			_ = j.Node.Memory().Store32(w[0].LocalPtr(0), 1)
			return
		}
		cco.NewMem(t, sdma.DevComm()).Store32(w[0].LocalPtr(0), 1)
	}); err != nil {
		return err
	}
	return j.Run()
}

// Lane code that stores through Node.Memory() is named once on stderr;
// under the race detector it fails the lane. cco.Mem, host code and the
// emulator's own accesses are not flagged.
func TestLaneAccessOutsideMemIsFlagged(t *testing.T) {
	var out strings.Builder
	old := warn
	t.Cleanup(func() { warn, warned = old, sync.Once{} })
	warn, warned = &out, sync.Once{}

	require.NoError(t, storeFlag(false, false))
	require.NoError(t, storeFlag(true, false))
	assert.Empty(t, out.String(), "cco.Mem is not flagged")

	require.NoError(t, storeFlag(false, true), "without the detector: a warning, not a failure")
	require.NoError(t, storeFlag(false, true))
	assert.Equal(t, 1, strings.Count(out.String(), "emutest: warning:"), "once: %s", out.String())
	assert.Contains(t, out.String(), "guard_test.go:")
	assert.Contains(t, out.String(), "a store32 of 4 bytes")
	assert.Contains(t, out.String(), "use cco.NewMem(t, sdma.DevComm())")

	err := storeFlag(true, true)
	require.Error(t, err)
	assert.Equal(t, KindTrap, KindOf(err), "%v", err)
	assert.Contains(t, err.Error(), "which the race detector does not see")
}
