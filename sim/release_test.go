package sim_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/sim"
)

// A finished actor no longer holds what its function held: before, the
// Sim kept each one's function, so a long C++ program kept every wave and
// lane it ever launched.
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

// Finished actors leave the simulator's list once they outnumber the live
// ones, so a host that spawns actor after actor (a C++ program's launches,
// 64 waves each) holds only the live ones: the first of 10000 finished
// actors is unreachable at the end. Before, every actor stayed for the
// rest of the run (~280 B a wave; 3000 launches of launches.cpp grew to
// 154 MB). The live ones still end in a hang report, and the records
// (Config.Record) still name a finished actor.
func TestFinishedActorsLeave(t *testing.T) {
	for _, c := range []struct {
		name   string
		record bool
	}{{"plain", false}, {"recording", true}} {
		t.Run(c.name, func(t *testing.T) {
			s := sim.New(sim.Config{Seed: 1, Record: c.record})
			var first weak.Pointer[sim.Actor]
			s.Spawn("host", func(h *sim.Actor) {
				for i := range 10000 {
					a := s.Spawn(fmt.Sprint("worker ", i), func(a *sim.Actor) { a.Sleep(1) })
					if i == 0 {
						first = weak.Make(a)
					}
					h.Sleep(2)
				}
				h.Await(sim.Wait{Pred: func() bool { return false }, Text: func() string { return "a flag no one sets" }})
			})
			err := s.Run()
			var he *sim.HangError
			require.ErrorAs(t, err, &he)
			require.Len(t, he.Waiters, 1)
			assert.Equal(t, "host", he.Waiters[0].Name)
			assert.Equal(t, "a flag no one sets", he.Waiters[0].WaitsFor)
			runtime.GC()
			runtime.GC()
			assert.Nil(t, first.Value(), "the first finished actor is still reachable")
			if c.record {
				var b strings.Builder
				require.NoError(t, s.WriteRecords(&b))
				assert.Contains(t, b.String(), "sched\texit worker 0\n")
			}
			runtime.KeepAlive(s)
		})
	}
}
