package issuer

import (
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// The race detector's edges of the protocol (package race; nil-checked,
// so they cost one load each when it is off):
//   - a packet is ordered after what its writer did before writing it
//     (WriteUnit, WriteBroadcast) and after what the lane that rang it did
//     before the doorbell (Submit, Commit): both are releases to the
//     engine, which acquires them when it starts the packet
//     (Backend.RaceAcquire);
//   - quiet (AwaitDrained) acquires the engine's clock as of the packet it
//     drained to, which the engine leaves at each retire
//     (Backend.RaceRetired).

type raceState struct {
	writes  map[uint64]race.VC // ring unit → its writer's snapshot
	next    uint64             // units below this were acquired
	bells   []bell             // doorbells not yet acquired
	rung    uint64             // end of the last doorbell
	retired []retiredSnap
}

type bell struct {
	lo uint64 // the doorbell made [lo, end) visible
	vc race.VC
}

type retiredSnap struct {
	end uint64
	vc  race.VC
}

// maxRetired bounds the snapshots a queue keeps for quiet: a quiet whose
// target is older than them acquires the oldest kept, which only knows
// more (it can hide a race, never invent one).
const maxRetired = 1024

func (q *Queue) race() *raceState {
	if q.rc == nil {
		q.rc = &raceState{writes: map[uint64]race.VC{}, next: q.r.Rptr(), rung: q.r.Doorbell()}
	}
	return q.rc
}

// raceWritten: the running actor wrote the unit(s) at ptr.
func (q *Queue) raceWritten(ptr uint64) {
	if q.s.Race() == nil {
		return
	}
	if t := q.s.RaceCurrent(); t != nil {
		q.race().writes[ptr] = t.Snapshot()
	}
}

// raceRang: the running actor rings the queue up to end.
func (q *Queue) raceRang(end uint64) {
	if q.s.Race() == nil {
		return
	}
	r := q.race()
	if t := q.s.RaceCurrent(); t != nil {
		r.bells = append(r.bells, bell{lo: r.rung, vc: t.Snapshot()})
	}
	r.rung = max(r.rung, end)
}

// RaceAcquire orders t, the engine's thread, after the writers of the
// packet at [pos, end) (and of padding before it) and after the doorbell
// that made it visible.
func (b Backend) RaceAcquire(t *race.Thread, pos, end uint64) {
	r := b.q.rc
	if r == nil || t == nil {
		return
	}
	for u := r.next; u < end; u += 32 {
		if v, ok := r.writes[u]; ok {
			t.AcquireVC(v)
			delete(r.writes, u)
		}
	}
	r.next = max(r.next, end)
	for len(r.bells) > 0 && r.bells[0].lo <= pos {
		t.AcquireVC(r.bells[0].vc)
		r.bells = r.bells[1:]
	}
}

// RaceRetired records the engine's clock v after the packet ending at end.
func (b Backend) RaceRetired(end uint64, v race.VC) {
	r := b.q.race()
	if len(r.retired) == maxRetired {
		r.retired = append(r.retired[:0], r.retired[maxRetired/2:]...)
	}
	r.retired = append(r.retired, retiredSnap{end: end, vc: v})
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
	rs := q.rc.retired
	for i := range rs {
		if rs[i].end >= target {
			t.AcquireVC(rs[i].vc)
			return
		}
	}
	if len(rs) > 0 {
		t.AcquireVC(rs[len(rs)-1].vc)
	}
}
