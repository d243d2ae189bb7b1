package kernel

import (
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// The race detector's edges of the launcher (package race): a launch
// orders each wave after what the launching actor did so far; a wave's end
// is released to its kernel, which Wait acquires; SyncThreads releases
// each arriving wave into the block's barrier and acquires it on the way
// out. The lanes of a wave are one detector thread (the wave's actor), so
// SyncWarp adds nothing.

// Actor is the wave's sim actor: the one its lanes run on.
func (w *Wave) Actor() *sim.Actor { return w.a }

// raceLaunch forks the wave's detector thread from the launching actor.
func (k *Kernel) raceLaunch(w *Wave) {
	d := k.s.Race()
	if d == nil {
		return
	}
	if k.raceEnd == nil {
		k.raceEnd = &race.Sync{}
	}
	d.Fork(k.s.RaceCurrent(), w.a.RaceThread())
}

// raceWaveEnd releases the ending wave (the running actor) to the kernel.
func (k *Kernel) raceWaveEnd() {
	if k.raceEnd != nil {
		if t := k.s.RaceCurrent(); t != nil {
			t.Release(k.raceEnd)
		}
	}
}

// raceJoin orders a after every wave that has ended.
func (k *Kernel) raceJoin(a *sim.Actor) {
	if k.raceEnd != nil {
		if t := a.RaceThread(); t != nil {
			t.Acquire(k.raceEnd)
		}
	}
}

func (b *block) raceArrive(a *sim.Actor) {
	if b.k.raceEnd == nil {
		return
	}
	if t := a.RaceThread(); t != nil {
		t.Release(&b.raceBar)
	}
}

func (b *block) raceLeave(a *sim.Actor) {
	if b.k.raceEnd == nil {
		return
	}
	if t := a.RaceThread(); t != nil {
		t.Acquire(&b.raceBar)
	}
}
