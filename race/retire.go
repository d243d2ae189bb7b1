package race

import "slices"

// Thread slots. A vector clock has one entry per slot, and every clock
// grows to the highest slot it has heard of, so a run that made a thread
// per wave of every launch kept clocks as long as all the waves ever made,
// in every thread and snapshot: memory grew with the square of the
// launches (300 launches of 64 waves peaked at 1.1 GB).
//
// So a retired thread's slot is given to a later thread, as ThreadSanitizer
// reuses a finished thread's slot: the new occupant's clock starts above
// every clock the old one had, and the slot's clocks are one sequence. A
// slot is reused only by a thread forked from a parent that already knows
// the old occupant's last recorded clock (it joined the old thread: a
// kernel's end, a stream's wait), so the new occupant is ordered after
// everything the old one did, and "knows clock c of the slot" still means
// "is ordered after that access", whichever occupant made it. A thread
// whose parent does not know the old occupant's end (two streams with no
// sync between them) gets a slot of its own, and their accesses race as
// before.
//
// What is approximate: an earlier occupant's access is ordered before the
// new one by happens-before but is not its own program order, so it is
// checked as any other thread's (base); the last waits a report shows for
// an access by an occupant two or more generations back are not kept; a
// queue's thread for a poster slot keeps the first poster's name.

// freeSlot is a retired thread's slot.
type freeSlot struct {
	id int32
	// fin is the old occupant's clock at retirement: the next starts
	// above it. need is the last clock it recorded anything at, which a
	// new occupant's parent must know.
	fin, need uint32
}

// maxReuseScan bounds the free slots one Fork looks at (the newest first),
// so a run with many slots no one can reuse does not pay for them on every
// launch.
const maxReuseScan = 256

// Retire ends t (its actor finished): nothing may use t afterwards, and its
// slot may go to a later thread ordered after it. Threads made by Derive
// are not retired.
func (d *Detector) Retire(t *Thread) {
	if t == nil || t.retired || int(t.id) >= len(d.threads) || d.threads[t.id] != t {
		return
	}
	t.retired = true
	fin := t.vc[t.id]
	need := fin
	if !t.acc {
		need-- // nothing was recorded since the last release's tick
	}
	d.free = append(d.free, freeSlot{id: t.id, fin: fin, need: need})
	// What only the live thread needs goes now; the waits stay for reports.
	t.pending, t.pendingRel, t.rel, t.vis, t.snap = nil, [2]VC{}, [2]VC{}, [2]VC{}, nil
	t.vc = append(VC(nil), t.vc[:t.id+1]...)
}

// Slots is the number of thread slots made so far: the length of the
// longest vector clock. With retired threads' slots reused it stays near
// the number of threads alive at once.
func (d *Detector) Slots() int { return len(d.threads) }

// reslot moves child, which has recorded nothing yet, to a free slot whose
// old occupant parent is ordered after; it reports whether it did.
func (d *Detector) reslot(parent, child *Thread) bool {
	for k := len(d.free) - 1; k >= 0 && k >= len(d.free)-maxReuseScan; k-- {
		f := d.free[k]
		if parent.vc.get(f.id) < f.need {
			continue
		}
		d.free = slices.Delete(d.free, k, k+1)
		old := child.id
		if o := d.threads[f.id]; o != nil {
			child.prev = o.waits
		}
		d.threads[f.id] = child
		child.id, child.base, child.born = f.id, f.fin+1, d.now()
		child.vc = make(VC, f.id+1)
		child.vc[f.id] = child.base
		child.snap, child.dirty = nil, true
		// The slot NewThread gave child is unknown to every other thread:
		// drop it when it is the newest, else anyone may take it.
		if int(old) == len(d.threads)-1 {
			d.threads[old] = nil
			d.threads = d.threads[:old]
		} else {
			d.threads[old] = nil
			d.free = append(d.free, freeSlot{id: old, fin: 1})
		}
		return true
	}
	return false
}
