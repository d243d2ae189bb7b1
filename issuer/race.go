package issuer

import (
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// The race detector's edges of the protocol (package race; nil-checked,
// so they cost one load each when it is off). The engine's side of a queue
// is a race.Queue: its packets run on one detector thread per posting
// thread, so the ring order of two posts that nothing ordered is not an
// ordering (Backend.RaceStart):
//   - a packet is ordered after what its writer did before writing it
//     (WriteUnit, WriteBroadcast), after what the lane that rang the
//     doorbell which made it visible did before ringing (Submit, Commit)
//     if that lane knew of the write, and after the earlier packets whose
//     writes were ordered before it;
//   - quiet (AwaitDrained) acquires the engine's clock after each packet up
//     to the target whose write is ordered before the quiet: the lane's own
//     posts and the ones it knew of (race.Queue.Drain), which the engine
//     leaves at each retire (Backend.RaceRetired).

type raceState struct {
	q      *race.Queue
	writes map[uint64]race.Mark // ring unit → its writer's mark
	next   uint64               // units below this were acquired
	bells  []bell               // doorbells that may still make a packet visible
	rung   uint64               // end of the last doorbell
	anonT  *race.Thread         // the writer of packets no actor wrote
}

type bell struct {
	end uint64 // the doorbell made everything below end visible
	m   race.Mark
}

func (q *Queue) race() *raceState {
	if q.rc == nil {
		q.rc = &raceState{q: q.s.Race().NewQueue(q.id.String()), writes: map[uint64]race.Mark{}, next: q.r.Rptr(), rung: q.r.Doorbell()}
	}
	return q.rc
}

// raceWritten: the running actor wrote the unit(s) at ptr.
func (q *Queue) raceWritten(ptr uint64) {
	if q.s.Race() == nil {
		return
	}
	if t := q.s.RaceCurrent(); t != nil {
		q.race().writes[ptr] = t.Mark()
	}
}

// raceRang: the running actor rings the queue up to end.
func (q *Queue) raceRang(end uint64) {
	if q.s.Race() == nil {
		return
	}
	r := q.race()
	if t := q.s.RaceCurrent(); t != nil && end > r.rung {
		r.bells = append(r.bells, bell{end: end, m: t.Mark()})
	}
	r.rung = max(r.rung, end)
}

// RaceStart begins the packet at [pos, end) on the engine's side and
// returns the detector thread its accesses are made on (race.Queue: one
// per posting thread). The packet is ordered after what its writer did
// before writing it (the last write recorded in [pos, end) or in the
// padding of its reservation before it), after the doorbell that made it
// visible if the lane that rang it knew of the write (a doorbell rung by
// a lane that did not is an order the schedule chose, not an edge), and
// after the earlier packets whose writes were ordered before it. Nil when
// the detector is off.
func (b Backend) RaceStart(pos, end uint64) *race.Thread {
	q := b.q
	if q.s.Race() == nil {
		return nil
	}
	r := q.race()
	var post race.Mark
	best := uint64(0)
	for u := r.next &^ 31; u < end; u += 32 { // units are 32 B; a packet may end inside one
		if m, ok := r.writes[u]; ok {
			if !post.Valid() || u >= best {
				post, best = m, u
			}
			delete(r.writes, u)
		}
	}
	r.next = max(r.next, end)
	if !post.Valid() {
		// Written by no actor the detector knows (host setup, a raw ring
		// write): the packet knows nothing.
		post = q.anon()
	}
	var also []race.VC
	i := 0
	for i < len(r.bells) && r.bells[i].end < end {
		i++ // rung before the packet was complete: cannot have made it visible
	}
	if i < len(r.bells) && post.Before(r.bells[i].m.VC) {
		also = append(also, r.bells[i].m.VC)
	}
	// Bells ending at or below end cannot make a later packet visible.
	for i < len(r.bells) && r.bells[i].end <= end {
		i++
	}
	r.bells = r.bells[i:]
	return r.q.Start(post, also...)
}

// anon is the mark of a packet no known actor wrote.
func (q *Queue) anon() race.Mark {
	r := q.race()
	if r.anonT == nil {
		r.anonT = q.s.Race().NewThread(q.id.String() + " unknown writer")
	}
	return r.anonT.Mark()
}

// RaceRetired: the engine retired the packet it started last, which ends
// at end.
func (b Backend) RaceRetired(end uint64) {
	if r := b.q.rc; r != nil {
		r.q.Retire(end)
	}
}

// raceDrained orders actor a after the packets up to target.
func (q *Queue) raceDrained(a *sim.Actor, target uint64) {
	if q.rc == nil || target == 0 {
		return
	}
	t := a.RaceThread()
	if t == nil {
		return
	}
	q.rc.q.Drain(t, target)
}
