package sim_test

import (
	"runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/sim"
)

// A finished actor no longer holds what its function held: the Sim keeps
// every actor (ids, trace names), and before it kept each one's function,
// so a long C++ program kept every wave and lane it ever launched.
func TestFinishedActorReleasesItsState(t *testing.T) {
	s := sim.New(sim.Config{Seed: 1})
	ref := spawnHolder(s)
	require.NoError(t, s.Run())
	runtime.GC()
	runtime.GC()
	assert.Nil(t, ref.Value(), "the finished actor's state is still reachable")
	runtime.KeepAlive(s)
}

// spawnHolder spawns an actor whose function and label hold 64 KiB, and
// returns a weak pointer to them.
func spawnHolder(s *sim.Sim) weak.Pointer[[1 << 16]byte] {
	state := &[1 << 16]byte{}
	s.Spawn("holder", func(a *sim.Actor) {
		a.SetLabelFunc(func() string { return string(state[:1]) })
		state[0] = 1
		a.Sleep(10)
	})
	return weak.Make(state)
}
