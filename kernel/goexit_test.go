package kernel_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// A lane that calls runtime.Goexit (what t.FailNow and require.* do when
// a test asserts inside kernel code) fails the kernel with a message saying
// so, instead of vanishing as if it had finished.
func TestLaneGoexitFailsTheKernel(t *testing.T) {
	s := sim.New(sim.Config{Seed: 1})
	_, err := kernel.Launch(s, kernel.Config{Name: "k", GPU: 0, Grid: 1, Block: 4}, func(th *kernel.Thread) {
		if th.Lane() == 1 {
			runtime.Goexit()
		}
		th.SyncWarp()
	})
	require.NoError(t, err)
	err = s.Run()
	var le *kernel.LaneError
	require.True(t, errors.As(err, &le), "got %v", err)
	assert.Equal(t, 1, le.Lane)
	assert.Equal(t, "runtime.Goexit", le.Call)
	assert.ErrorContains(t, err, "require.* inside a kernel")
}
