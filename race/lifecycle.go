package race

import (
	"fmt"
	"sort"
)

// Signal-lifecycle findings: misuses of a signal slot or flag that are not
// (only) a pair of unordered accesses, reported beside the data races as a
// Report whose Class names the check (the Missing text says it in words).
//
//   - ClassStoreOverSignal: a plain store (a zeroing, a memset, a reset)
//     to a word that an atomic signal from another actor reached, or
//     reaches, with nothing ordering the two: the store can erase the
//     signal, or the signal lands on a slot about to be reset. It is the
//     data race of a plain write against an atomic one, worded for what it
//     does to the slot.
//
//   - ClassWrap: a wait that compares a running total in 32 bits (an
//     engine's POLL_REGMEM) and held with Ge or Gt on a value more than
//     2^31 above its reference: the total wrapped past 2^32, so an earlier
//     epoch's value satisfies this epoch's wait.
//
//   - ClassSharedSlot: one slot receiving the signals of two producers
//     that the waits on it cannot tell apart (signals.go): a wait took one
//     producer's signal and the other's, ordered neither after it nor after
//     the wait, came later, so it could have released the wait instead.
//
//   - ClassStaleEpoch: a wait that held on signals it already knew of when
//     it began (an earlier call's or round's) and that it needed, and then
//     this epoch's producer signalled, not ordered after the wait
//     (signals.go). A reset of the slot between the epochs (a plain store,
//     or the value falling) starts a new epoch, so a program that resets
//     its slots between calls is not reported.
//
//   - ClassWrap also covers an add that takes a signal counter past its
//     width (Detector.Signal).
//
//   - ClassBaselineRead: a counting wait whose expected value came from
//     its thread's read of the slot (Detector.SignalRead: a baseline, then
//     a wait for baseline + k), where a signal the wait saw is ordered
//     neither before nor after the read: on another schedule the baseline
//     counts it, or does not, and is one signal off (signals.go).
const (
	ClassStoreOverSignal = "store-over-signal"
	ClassWrap            = "wrap"
	ClassSharedSlot      = "shared-slot"
	ClassStaleEpoch      = "stale-epoch"
	ClassBaselineRead    = "baseline-read"
)

// classify sets the lifecycle class of a data race report, if it has one.
func classify(r *Report, prev, cur *ep) {
	plainVsAtomic := prev.write && cur.write && prev.atomic != cur.atomic
	if !plainVsAtomic {
		return
	}
	r.Class = ClassStoreOverSignal
	store, sig := r.Second, r.First
	if cur.atomic {
		store, sig = r.First, r.Second
	}
	if cur.atomic {
		r.Missing = fmt.Sprintf("signal lifecycle: the %s by %s lands on a word that the %s by %s stored to with nothing ordering them: if the store comes second it erases the signal, if first the signal lands on a slot being reset; reset a slot only after waiting for every signal it will get (or before the producers post, ordered by a barrier or a signal they wait on), or use a fresh slot or epoch per round. %s",
			sig.Op, sig.Who, store.Op, store.Who, r.Missing)
		return
	}
	r.Missing = fmt.Sprintf("signal lifecycle: the %s by %s (a zeroing or reset) may come after the %s by %s had already reached the word, and erase it: nothing orders the store after a wait for that signal; wait for it (waitSignal, or the engine's postWaitSignal) before resetting, or count epochs instead of resetting. %s",
		store.Op, store.Who, sig.Op, sig.Who, r.Missing)
}

// Poll32 checks an engine's 32-bit wait that has just held on addr of sp:
// the word v there (masked) against the wait's reference ref under cmp
// (">=", ">", ...: ring.CompareFunc's words). A Ge or Gt that held on a value more than 2^31 above
// ref held on a running total's earlier epoch (the total wrapped past
// 2^32); it is reported once per waiting site (info).
func (d *Detector) Poll32(sp SpaceID, addr uint64, v, ref uint32, cmp string, info *Info) {
	if cmp != ">=" && cmp != ">" {
		return
	}
	if v-ref < 1<<31 {
		return // v is at or just above ref: this epoch's value
	}
	key := [2]string{"wrap", info.key()}
	if !d.first(key, false) {
		return
	}
	w := Side{Kind: "host", Who: "a write the detector did not see (host setup, an earlier run)", Op: "store", Write: true, Lo: addr, Hi: addr + 4}
	if e := d.lastWriter(sp, addr); e != nil {
		w = side(e)
	}
	poll := Side{Write: false, Lo: addr, Hi: addr + 4, AtPs: d.now()}
	if info != nil {
		poll.describe(info)
		poll.Op = "32-bit wait (" + cmp + ")"
	}
	r := Report{Space: d.spaces[sp].name, Lo: addr, Hi: addr + 4, First: w, Second: poll, Count: 1, Class: ClassWrap,
		Missing: fmt.Sprintf("signal lifecycle: a wrap past 2^32: the wait compares 32 bits with %s %#x and held on %#x, which is %#x above it (%#x below it modulo 2^32): the running total wrapped, so the value left by an earlier epoch (%#x, last written by %s) satisfied this epoch's wait (reference %#x) before this epoch's producer wrote; wait Eq on a per-call epoch, or keep the total and its reference in 64 bits",
			cmp, ref, v, v-ref, ref-v, v, w.Who, ref)}
	d.add(key, r)
}

// lastWriter is the last write (plain, else the last atomic) the shadow
// holds for the byte at addr of sp, or nil.
func (d *Detector) lastWriter(sp SpaceID, addr uint64) *ep {
	g := d.segAt(sp, addr)
	switch {
	case g == nil:
		return nil
	case len(g.aw) > 0:
		return &g.aw[len(g.aw)-1]
	case g.w.tid >= 0:
		return &g.w
	}
	return nil
}

// segAt is the shadow segment holding the byte at addr of sp, or nil when
// nothing touched its page.
func (d *Detector) segAt(sp SpaceID, addr uint64) *seg {
	p := d.spaces[sp].pages[addr>>pageBits]
	if p == nil {
		return nil
	}
	off := uint32(addr & (pageSize - 1))
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].end > off })
	if i == len(p.segs) {
		return nil
	}
	return &p.segs[i]
}
