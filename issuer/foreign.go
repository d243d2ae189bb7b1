package issuer

import "github.com/emud-dev/emud/race"

// A producer outside the simulator's actors writes a queue's ring itself:
// a native lane running a user's own MORI header (capi) stores packet
// bytes with plain stores and rings the doorbell with an atomic store,
// and emud sees both after the fact. These two calls give the race
// detector the edges that WriteUnit and Submit record for an actor that
// writes through the issuer: the writer of each unit and the thread that
// rang, each as a mark taken when it acted.

// RaceWrittenBy records that the thread whose mark is m wrote the ring
// unit at ptr (32-byte aligned).
func (q *Queue) RaceWrittenBy(ptr uint64, m race.Mark) {
	if q.s.Race() == nil || !m.Valid() {
		return
	}
	q.race().writes[ptr&^31] = m
}

// RaceRangBy records a doorbell up to end rung by the thread whose mark is
// m.
func (q *Queue) RaceRangBy(end uint64, m race.Mark) {
	if q.s.Race() == nil {
		return
	}
	r := q.race()
	if m.Valid() && end > r.rung {
		r.bells = append(r.bells, bell{end: end, m: m})
	}
	r.rung = max(r.rung, end)
}

// RaceDrainedBy orders thread t after the retired packets up to target
// whose posts t knew of, as AwaitDrained does for an actor: for a
// producer outside the actors that saw the queue's read pointer at target
// (a MORI header's quiet, which polls the read-pointer word the engine
// writes back).
func (q *Queue) RaceDrainedBy(t *race.Thread, target uint64) {
	if q.rc == nil || t == nil || target == 0 {
		return
	}
	q.rc.q.Drain(t, target)
}
