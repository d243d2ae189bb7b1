package sim

import hb "github.com/emud-dev/emud/race"

// EnableRace turns on the run's happens-before race detector (package
// race) and returns it; calling it again returns the same detector. Turn
// it on before Run, or from the run before the accesses it should see.
// With races found, Run returns a *race.Error unless the run failed
// otherwise. A detector that debug mode turned on for its signal-lifecycle
// checks alone (hb.Detector.SetLifecycleOnly) reports data races too from
// this call on.
func (s *Sim) EnableRace() *hb.Detector {
	if s.race == nil {
		s.race = hb.New(func() int64 { return int64(s.now) })
	}
	s.race.SetLifecycleOnly(false)
	return s.race
}

// EnableLifecycleChecks turns on the detector for its signal-lifecycle
// checks alone (debug mode's), unless it is already on.
func (s *Sim) EnableLifecycleChecks() {
	if s.race == nil {
		s.race = hb.New(func() int64 { return int64(s.now) })
		s.race.SetLifecycleOnly(true)
	}
}

// Race returns the run's race detector, or nil when it is off: the one
// check every instrumented point makes.
func (s *Sim) Race() *hb.Detector { return s.race }

// RaceThread is the actor's thread in the race detector, made on first
// use; nil when the detector is off or the actor has finished (its thread
// is retired).
func (a *Actor) RaceThread() *hb.Thread {
	if a.rt == nil && a.s.race != nil && a.state != stateDone {
		a.rt = a.s.race.NewThread(a.name)
	}
	return a.rt
}

// RaceCurrent is the running actor's race thread: nil when an event (not
// an actor) runs or the detector is off.
func (s *Sim) RaceCurrent() *hb.Thread {
	if s.race == nil || s.cur == nil {
		return nil
	}
	return s.cur.RaceThread()
}
