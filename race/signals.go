package race

import (
	"fmt"
	"strings"
)

// Signal-slot epochs: what the detector knows of a slot's signals and the
// waits that held on it, for the shared-slot and stale-epoch checks
// (lifecycle.go). Both come from the happens-before state alone, not from
// the shape of a program:
//
//   - A wait W held having taken signal Sq (one it did not know of when it
//     began). A later signal Sp of the slot that is ordered neither after
//     Sq nor after W could as well have come first, and W would have held
//     on it instead: W cannot tell Sq's producer from Sp's (shared slot).
//     So can a signal Sp that was already in when a counting W held but
//     that W did not need (it came after the one that took the slot to
//     W's expected value), ordered neither after a needed Sq.
//   - A counting wait W held on a value that a signal S had already
//     given an earlier wait W0 ordered before W (an earlier call's or
//     round's, ordered by a kernel boundary, a host sync or program
//     order): S took the slot to both waits' expected values, so W counted
//     W0's epoch again (stale epoch): reported with the signal W took that
//     it did not need, or, if it took none, with the next signal not
//     ordered after W (the producer W was meant for posted after W had
//     returned). S is the last signal that took the value across W's
//     expected value: a reset starts a new epoch. A plain store to the
//     slot (a lane or host store, a memset) drops the signals before it
//     from the slot's history, and a reset the detector did not see (lane
//     code built without instrumentation) or an atomic one shows as the
//     value falling, so the next signal crosses anew. Whether the reset
//     was ordered after the last wait and before the next signal is the
//     data-race check's: an unordered one is a store-over-signal report.
//
//   - A counting wait W held whose expected value its thread took from a
//     read of the slot (a baseline: readSignal, then wait for baseline +
//     k), and a signal S of the slot that W counted or that was in before
//     W is ordered neither before nor after that read: had S come on the
//     other side of the read, the baseline would have been one signal off
//     (baseline read).
//
// A slot keeps its last maxSlotSigs signals, maxSlotWaits waits and
// maxSlotReads baseline reads: an older one is forgotten, which can only
// miss a finding, never make one.

const (
	maxSlotSigs  = 16
	maxSlotWaits = 8
	maxSlotReads = 8
	maxDecided   = 4
)

// sigEv is one signal (an atomic update) of a slot.
type sigEv struct {
	tid           int32
	clk           uint32
	vc            VC // the signaller's knowledge at the signal
	at            int64
	info          *Info
	before, after uint64
	lo, hi        uint64
	decided       []waitRef // the waits it took to their expected value
	seq           uint64    // the slot's count of signals, this one included
}

// baseRead is a thread's last read of a slot's value (SignalRead).
type baseRead struct {
	tid  int32
	clk  uint32
	vc   VC // the reader's knowledge before the read acquired the slot
	at   int64
	v    uint64
	seq  uint64 // the slot's signals in before the read
	info *Info
}

// waitRef is a wait that held: whose, when, in words.
type waitRef struct {
	tid  int32
	clk  uint32
	what string
}

// heldWait is a wait that held on a slot.
type heldWait struct {
	tid  int32
	clk  uint32
	at   int64
	what string
	took []sigEv // the signals it did not know of when it began
	prev *sigEv  // stale: the signal that decided it and an earlier wait, else nil
	// prevWait is that earlier wait, in words.
	prevWait string
}

// waitInst is one wait of a wave, in words, and which of its lanes held
// it so far: a wave's lanes need not reach a wait together (a lane of
// HIP C++ runs on its own, and may wait later than its wave's first), yet
// they wait for one epoch; only a lane's second wait is a new one.
type waitInst struct {
	tid   int32
	what  string
	lanes uint64
}

type slotLife struct {
	sigs  []sigEv
	waits []heldWait
	reads []baseRead
	insts []waitInst // the last maxSlotWaits lane waits' instances
	seq   uint64     // signals so far
	// plain is the slot's last plain write (a reset: a lane or host
	// store, a memset) as the shadow held it when the detector last
	// looked (sawReset).
	plain ep
}

func (d *Detector) life(sp SpaceID, addr uint64) *slotLife {
	if d.lives == nil {
		d.lives = map[syncKey]*slotLife{}
	}
	k := syncKey{sp, addr}
	l := d.lives[k]
	if l == nil {
		l = &slotLife{plain: d.plainWrite(sp, addr)}
		d.lives[k] = l
	}
	return l
}

// sawReset starts a new epoch of slot l at addr of sp when a plain store
// reached the slot since the detector last looked (a signal or a wait of
// the slot): the signals before it no longer account for the slot's value,
// so none of them can have decided a wait that comes after it. Whether the
// reset itself was ordered is the data-race check's business: a reset
// unordered with a signal is a store-over-signal report.
func (d *Detector) sawReset(sp SpaceID, addr uint64, l *slotLife) {
	w := d.plainWrite(sp, addr)
	if w == l.plain {
		return
	}
	l.plain = w
	l.sigs = l.sigs[:0]
	l.insts = l.insts[:0] // a wait after the reset is of a new epoch, whichever lane makes it
}

// plainWrite is the last plain write the shadow holds for the byte at
// addr of sp (tid −1: none).
func (d *Detector) plainWrite(sp SpaceID, addr uint64) ep {
	if g := d.segAt(sp, addr); g != nil {
		return g.w
	}
	return noWrite
}

// Signal records an atomic update by t of the signal slot of n bytes at
// addr of sp, from value before to after, made at info's site (delta: the
// amount added, 0 for an update that is not an add): the shared-slot and
// stale-epoch checks run against the waits that held on the slot, and an
// add of a positive amount that wrapped past the slot's width is reported
// (ClassWrap). Call it at the update, before t's release into the slot.
func (d *Detector) Signal(t *Thread, sp SpaceID, addr, n uint64, before, after uint64, delta int64, info *Info) {
	if t == nil {
		return
	}
	t.record()
	ev := sigEv{tid: t.id, clk: t.vc[t.id], vc: t.vc.clone(), at: d.now(), info: info, before: before, after: after, lo: addr, hi: addr + n}
	if delta > 0 && after < before {
		d.counterWrap(sp, &ev, n)
	}
	l := d.life(sp, addr)
	d.sawReset(sp, addr, l)
	l.seq++
	ev.seq = l.seq
	for i := range l.waits {
		d.checkWait(sp, &l.waits[i], &ev)
	}
	if len(l.sigs) == maxSlotSigs {
		copy(l.sigs, l.sigs[1:])
		l.sigs = l.sigs[:maxSlotSigs-1]
	}
	l.sigs = append(l.sigs, ev)
}

// WaitHeld records that a wait by t on the slot at addr of sp has just
// held, before t acquires the slot: what words it ("waitSignal on
// signalBuf[0 × 2 + 0] ≥ 1"), and, for a wait that counts (held once the
// slot's value masked by mask reached least), least; least 0 for other
// comparisons, which the stale-epoch check skips. lane is the lane of
// t's wave that waited (0-63), or -1 for a wait that is no lane's (a
// queue's POLL_REGMEM): the lanes of a wave that make the same wait,
// together or one after another, hold one epoch's wait, and only a lane
// that waits again starts a new one.
func (d *Detector) WaitHeld(t *Thread, sp SpaceID, addr uint64, what string, lane int, least, mask uint64) {
	expected, ge := least, least > 0
	if t == nil {
		return
	}
	l := d.lives[syncKey{sp, addr}]
	if l == nil {
		return // no signal seen: the value came from a store
	}
	d.sawReset(sp, addr, l)
	if len(l.sigs) == 0 {
		return // no signal since the last reset: the value came from a store
	}
	if lane >= 0 && lane < 64 {
		if l.sameWait(t.id, what, lane) {
			return // another lane of the wave, in a wait its wave already made
		}
	} else if n := len(l.waits); n > 0 && l.waits[n-1].tid == t.id && l.waits[n-1].at == d.now() && l.waits[n-1].what == what {
		return // another lane of the wave, in the same wait
	}
	if ge {
		d.checkBaseline(sp, l, t, what, expected, mask)
	}
	t.tick() // the wait is an epoch of its own: a signal that knows it knows this wait
	t.record()
	w := heldWait{tid: t.id, clk: t.vc[t.id], at: d.now(), what: what}
	for i := range l.sigs {
		s := &l.sigs[i]
		if s.tid != t.id && s.clk > t.vc.get(s.tid) {
			w.took = append(w.took, *s)
		}
	}
	decider := -1
	if ge {
		// The signal that took the value to expected decided the wait; if
		// it decided an earlier wait ordered before this one, both waits
		// counted the same epoch's signal. It is the last signal that
		// crossed expected: one before it was undone by whatever took the
		// value back below (an atomic reset, or a plain store the detector
		// did not see: lane code built without instrumentation), so the
		// value the wait held on is not its.
		for i := len(l.sigs) - 1; i >= 0; i-- {
			sg := &l.sigs[i]
			if sg.before&mask >= expected || sg.after&mask < expected {
				continue
			}
			for _, o := range sg.decided {
				if o.tid == t.id || o.clk <= t.vc.get(o.tid) {
					p := *sg
					w.prev, w.prevWait = &p, o.what
					break
				}
			}
			if len(sg.decided) < maxDecided {
				sg.decided = append(sg.decided, waitRef{tid: t.id, clk: w.clk, what: what})
			}
			decider = i
			break
		}
	}
	if decider >= 0 && w.prev == nil {
		d.extraTaken(sp, &w, l.sigs[:decider+1], l.sigs[decider+1:], t)
	}
	if w.prev != nil {
		// This epoch's producer may have signalled already (a signal the
		// wait took, or one after the stale one that no wait counted yet),
		// but the wait held on the earlier epoch's value all the same.
		var next *sigEv
		if len(w.took) > 0 {
			next = &w.took[len(w.took)-1]
		} else if decider >= 0 {
			for i := decider + 1; i < len(l.sigs); i++ {
				if len(l.sigs[i].decided) == 0 {
					next = &l.sigs[i]
					break
				}
			}
		}
		if next != nil {
			d.lifeReport(sp, ClassStaleEpoch, &w, w.prev, next)
		}
	}
	if len(w.took) == 0 && w.prev == nil {
		return // nothing for a later signal to be confused with
	}
	if len(l.waits) == maxSlotWaits {
		copy(l.waits, l.waits[1:])
		l.waits = l.waits[:maxSlotWaits-1]
	}
	l.waits = append(l.waits, w)
}

// sameWait says whether lane of thread tid's wave makes a wait (what)
// that another lane of the wave made already and this lane has not: the
// same wait, whose epoch was counted. Otherwise the lane's wait is a new
// instance, remembered for the lanes after it.
func (l *slotLife) sameWait(tid int32, what string, lane int) bool {
	bit := uint64(1) << lane
	for i := len(l.insts) - 1; i >= 0; i-- {
		in := &l.insts[i]
		if in.tid != tid || in.what != what {
			continue
		}
		if in.lanes&bit == 0 {
			in.lanes |= bit
			return true
		}
		in.lanes = bit // the lane waits again: a new instance
		return false
	}
	if len(l.insts) == maxSlotWaits {
		copy(l.insts, l.insts[1:])
		l.insts = l.insts[:maxSlotWaits-1]
	}
	l.insts = append(l.insts, waitInst{tid: tid, what: what, lanes: bit})
	return false
}

// SignalRead records t's read of the signal slot at addr of sp, which
// returned v, made at info's site (ncclGin::readSignal): a later counting
// wait of t on the slot for more than v counts from it (the baseline-read
// check of WaitHeld). Call it before t's acquire of the slot.
func (d *Detector) SignalRead(t *Thread, sp SpaceID, addr, v uint64, info *Info) {
	if t == nil {
		return
	}
	l := d.life(sp, addr)
	t.tick()
	t.record()
	r := baseRead{tid: t.id, clk: t.vc[t.id], vc: t.vc.clone(), at: d.now(), v: v, seq: l.seq, info: info}
	for i := range l.reads {
		if l.reads[i].tid == t.id {
			l.reads[i] = r // a thread's last read is its baseline
			return
		}
	}
	if len(l.reads) == maxSlotReads {
		copy(l.reads, l.reads[1:])
		l.reads = l.reads[:maxSlotReads-1]
	}
	l.reads = append(l.reads, r)
}

// checkBaseline is the baseline-read check of t's counting wait for
// expected on slot l: if t's last read of the slot returned less than
// expected, the wait counts from that read, and a signal in before the
// wait that is ordered neither before nor after the read could have come
// on its other side.
func (d *Detector) checkBaseline(sp SpaceID, l *slotLife, t *Thread, what string, expected, mask uint64) {
	ri := -1
	for i := range l.reads {
		if l.reads[i].tid == t.id {
			ri = i
		}
	}
	if ri < 0 || l.reads[ri].v&mask >= expected {
		return
	}
	r := l.reads[ri]
	l.reads = append(l.reads[:ri], l.reads[ri+1:]...) // one wait per baseline
	for i := range l.sigs {
		s := &l.sigs[i]
		if s.tid == t.id {
			continue
		}
		counted := s.seq <= r.seq // in before the read, which counted it
		if counted && s.clk > r.vc.get(s.tid) || !counted && r.clk > s.vc.get(r.tid) {
			d.baselineReport(sp, what, &r, s, counted)
			return
		}
	}
}

// baselineReport adds a baseline-read finding: the wait (what) counted
// from read r, and signal s was in before r (counted) or came after it,
// unordered with it either way.
func (d *Detector) baselineReport(sp SpaceID, what string, r *baseRead, s *sigEv, counted bool) {
	var kr, ks string
	if r.info != nil {
		kr = r.info.key()
	}
	if s.info != nil {
		ks = s.info.key()
	}
	key := [2]string{ClassBaselineRead + "|" + what + "|" + kr, ks}
	if !d.first(key, true) {
		return
	}
	rs := Side{Atomic: true, Lo: s.lo, Hi: s.hi, AtPs: r.at}
	rs.describe(r.info)
	side := "after"
	if counted {
		side = "before"
	}
	first, second := rs, s.side()
	if counted {
		first, second = second, first
	}
	rep := Report{Space: d.spaces[sp].name, Lo: s.lo, Hi: s.hi, First: first, Second: second, Count: 1, Class: ClassBaselineRead,
		Missing: fmt.Sprintf("signal lifecycle: a baseline read racing a signal: the %s counts from the value %d that %s read at %s, and the signal of %s, at %s, came %s that read with nothing ordering the two: on another schedule it comes on the read's other side, the baseline is one signal off and the wait returns early or waits for a signal that never comes. Read the baseline before the barrier or signal that orders it before every producer's post, or wait for the running total the producers reach, which is known without reading the slot",
			what, r.v, rs.Who, fmtTime(r.at), s.producer(), fmtTime(s.at), side)}
	d.add(key, rep)
}

// extraTaken is the shared-slot check of a counting wait w by t whose
// expected value the signals needed reached, with more signals (extra)
// already in: an extra signal ordered neither after a needed one that t did
// not know of could have come first and released w in its place.
func (d *Detector) extraTaken(sp SpaceID, w *heldWait, needed, extra []sigEv, t *Thread) {
	for i := range extra {
		x := &extra[i]
		for j := range needed {
			q := &needed[j]
			if q.tid == x.tid || q.clk <= t.vc.get(q.tid) || q.clk <= x.vc.get(q.tid) {
				continue
			}
			d.lifeReport(sp, ClassSharedSlot, w, q, x)
			return
		}
	}
}

// checkWait reports sp's signal ev against wait w that held before it.
func (d *Detector) checkWait(sp SpaceID, w *heldWait, ev *sigEv) {
	if w.tid == ev.tid || w.clk <= ev.vc.get(w.tid) {
		return // ev is ordered after the wait: it is for a later one
	}
	if w.prev != nil {
		d.lifeReport(sp, ClassStaleEpoch, w, w.prev, ev)
		return
	}
	for i := range w.took {
		if q := &w.took[i]; q.tid != ev.tid && q.clk > ev.vc.get(q.tid) {
			d.lifeReport(sp, ClassSharedSlot, w, q, ev)
			return
		}
	}
}

// producer names who made a signal: its actor, and who posted it (an
// engine's packet).
func (e *sigEv) producer() string {
	if e.info == nil {
		return "an unnamed producer"
	}
	if e.info.Poster != nil {
		return e.info.Who + " (posted by " + e.info.Poster.String() + ")"
	}
	return e.info.Who
}

func (e *sigEv) side() Side {
	s := Side{Write: true, Atomic: true, Lo: e.lo, Hi: e.hi, AtPs: e.at}
	if e.info != nil {
		s.describe(e.info)
		s.Who = e.producer()
	}
	return s
}

// lifeReport adds a shared-slot or stale-epoch finding: wait w held on
// signal a (taken, or the earlier epoch's), and signal b came later.
func (d *Detector) lifeReport(sp SpaceID, class string, w *heldWait, a, b *sigEv) {
	var ka, kb string
	if a.info != nil {
		ka = a.info.key()
	}
	if b.info != nil {
		kb = b.info.key()
	}
	key := [2]string{class + "|" + w.what + "|" + ka, kb}
	if !d.first(key, true) {
		return
	}
	pa, pb := a.producer(), b.producer()
	r := Report{Space: d.spaces[sp].name, Lo: b.lo, Hi: b.hi, First: a.side(), Second: b.side(), Count: 1, Class: class}
	switch class {
	case ClassSharedSlot:
		r.Missing = fmt.Sprintf("signal lifecycle: one slot, two producers the waits cannot tell apart (%s): the %s returned at %s having counted the signal of %s; the signal of %s is ordered neither after that signal nor after the wait, so it could as well have come first and released the wait in its place. Give each producer its own slot (a queue id or signal index per block, kernel, comm or barrier), or order the second producer's signal after the wait",
			differ(a, b), w.what, fmtTime(w.at), pa, pb)
	case ClassStaleEpoch:
		r.Missing = fmt.Sprintf("signal lifecycle: a stale epoch: the %s returned at %s on the value an earlier epoch's signal left (%d, by %s at %s), which had already released the earlier epoch's %s, ordered before it: the wait did not wait for this epoch's producer (%s, which signalled at %s), so it waited for nothing. Advance the expected value by each epoch's signals (a running total kept across calls and kernels), or reset the slot between epochs, ordered after the last wait",
			w.what, fmtTime(w.at), a.after, pa, fmtTime(a.at), w.prevWait, pb, fmtTime(b.at))
	}
	d.add(key, r)
}

// differ says how two signals' producers differ, in words: "two
// kernels", "two thread blocks", from the first key whose value differs
// in the posters' names (key-value words: kernel "k" GPU 0 block 1 wave 0
// lane 0), or "two queues" when one poster posted both.
func differ(a, b *sigEv) string {
	pa, pb := poster(a), poster(b)
	if pa == pb {
		if a.info != nil && b.info != nil && a.info.Who != b.info.Who {
			return "two queues, posted by one poster"
		}
		return "two launches or instances of the same code"
	}
	words := map[string]string{"kernel": "two kernels", "GPU": "two GPUs", "block": "two thread blocks", "wave": "two waves", "lane": "two lanes"}
	fa, fb := strings.Fields(pa), strings.Fields(pb)
	for i := 1; i < len(fa) && i < len(fb); i++ {
		if fa[i] != fb[i] {
			if w, ok := words[fa[i-1]]; ok && fa[i-1] == fb[i-1] {
				return w
			}
			break
		}
	}
	return "two producers"
}

// poster is who posted a signal's packet, else who made it.
func poster(e *sigEv) string {
	switch {
	case e.info == nil:
		return ""
	case e.info.Poster != nil:
		return e.info.Poster.String()
	}
	return e.info.Who
}

// counterWrap reports an add that took the slot's counter past its width.
func (d *Detector) counterWrap(sp SpaceID, ev *sigEv, n uint64) {
	key := [2]string{"wrap-add", ev.info.key()}
	if !d.first(key, false) {
		return
	}
	s := ev.side()
	d.add(key, Report{Space: d.spaces[sp].name, Lo: ev.lo, Hi: ev.hi, First: s, Second: s, Count: 1, Class: ClassWrap,
		Missing: fmt.Sprintf("signal lifecycle: a wrap past 2^%d: the %d-bit counter went from %#x to %#x at this add by %s; a >= wait on it compares across the wrap, so it holds on an earlier epoch's value (an expected that wrapped too) or never holds: start a counter at 0, never at a sentinel such as ^0, and keep the total and its expected value in the counter's width (or wait Eq on a per-call epoch)",
			8*n, 8*n, ev.before, ev.after, ev.producer())})
}
