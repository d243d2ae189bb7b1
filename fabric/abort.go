package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// WaitStatus is what a device-side wait with a timeout or under the abort
// flag returns. NCCL 2.31 added device-side timeouts to the blocking GIN
// calls and its waits poll the comm's abortFlag; no public document read
// for this emulator gives the status type those calls return, so this is
// the simplest faithful reading: the wait ended because its condition
// held, because its timeout passed, or because the host set the flag.
type WaitStatus uint8

const (
	WaitOK WaitStatus = iota
	WaitTimedOut
	WaitAborted
)

func (s WaitStatus) String() string {
	return [...]string{"ok", "timed out", "aborted"}[s]
}

// abortState is the per-rank abort flag (ncclDevComm.abortFlag, one per
// comm: every dev comm of the rank sees it) and the ranges that the waits
// in progress watch, so that setting the flag wakes them.
type abortState struct {
	set     bool
	watches map[*abortWatch]struct{}
}

type abortWatch struct {
	wl     *sim.WatchList
	lo, hi uint64
}

func (sys *System) abortOf(rank int) *abortState {
	if sys.aborts == nil {
		sys.aborts = make([]*abortState, len(sys.ranks))
	}
	a := sys.aborts[rank]
	if a == nil {
		a = &abortState{watches: map[*abortWatch]struct{}{}}
		sys.aborts[rank] = a
	}
	return a
}

// Aborted reports whether rank's abort flag is set.
func (sys *System) Aborted(rank int) bool {
	return sys.aborts != nil && sys.aborts[rank] != nil && sys.aborts[rank].set
}

// SetAbortFlag is the host setting rank's comm abortFlag (as ncclCommAbort
// does): every GIN, GDA or counted wait of the rank in progress or to
// come returns WaitAborted. NCCL's waits test the flag every 10000 polls;
// the emulator's see it at once.
func (sys *System) SetAbortFlag(rank int) error {
	if rank < 0 || rank >= len(sys.ranks) {
		return fmt.Errorf("SetAbortFlag: rank %d outside the %d ranks", rank, len(sys.ranks))
	}
	a := sys.abortOf(rank)
	a.set = true
	for w := range a.watches {
		w.wl.Notify(w.lo, w.hi)
	}
	return nil
}

// watchAbort registers a wait of rank on [lo, hi) of wl for the flag;
// the returned func unregisters it.
func (sys *System) watchAbort(rank int, wl *sim.WatchList, lo, hi uint64) func() {
	a := sys.abortOf(rank)
	w := &abortWatch{wl, lo, hi}
	a.watches[w] = struct{}{}
	return func() { delete(a.watches, w) }
}

// awaitAbortable waits for w on behalf of rank until its predicate holds,
// the deadline (≥ 0) passes or the abort flag is set.
func (sys *System) awaitAbortable(a interface {
	Await(sim.Wait)
	AwaitTimeout(sim.Wait, sim.Time) bool
}, rank int, w sim.Wait, timeout sim.Time) WaitStatus {
	pred := w.Pred
	w.Pred = func() bool { return pred() || sys.Aborted(rank) }
	done := sys.watchAbort(rank, w.List, w.Lo, w.Hi)
	defer done()
	if timeout < 0 {
		a.Await(w)
	} else {
		a.AwaitTimeout(w, timeout)
	}
	switch {
	case pred():
		return WaitOK
	case sys.Aborted(rank):
		return WaitAborted
	}
	return WaitTimedOut
}
