package sim

import (
	"cmp"
	"slices"
)

// WatchList is the set of waiters on one piece of emulated state (a GPU's
// memory, a ring's read pointer). Whoever writes that state calls Notify
// with the range written; waiters whose range overlaps and whose predicate
// now holds are woken. Nothing polls.
//
// Watches are bucketed by 4 KiB page of the watched range, so a write only
// looks at the watches on the pages it touched: a node with thousands of
// waiting lanes does not pay for all of them on every copy.
type WatchList struct {
	s     *Sim
	name  string
	pages map[uint64][]*watch // watches spanning at most two pages, under each page
	wide  []*watch            // watches spanning more
	// all holds every watch once, in registration (id) order, for
	// NotifyAll: a C++ lane's fence announces a write anywhere, and
	// visiting the page map for it (random order, then a sort) cost more
	// than the predicates. Watches a Notify fired or a Cancel removed
	// stay until the next NotifyAll or add drops them; page lists keep
	// what NotifyAll fired until their page is notified, added to or
	// tidied (tidyPages, once a NotifyAll finds that many).
	all      []*watch
	sweeping bool // NotifyAll runs predicates: add appends only
	allFired int  // watches NotifyAll fired since the page lists were tidied
	n        int  // live watches
	nextID   uint64
	log      *WriteLog // nil unless EnableLog
}

const pageShift = 12

type watch struct {
	id     uint64 // registration order: fired watches are woken in this order
	lo, hi uint64
	pred   func() bool
	cond   Cond   // an actor's Wait.Cond, evaluated instead of pred
	fire   func() // callback watcher (the engine's POLL), or nil for an actor
	actor  *Actor
	token  uint64
	dead   bool
	// in counts the page and wide lists that hold the watch; held is set
	// while its actor's await may still use it. An actor's watch that is
	// in no list and no longer held goes back to the run's free watches
	// (recycleWatch); a callback watch never does (a WatchHandle may
	// name it any time later).
	in   int8
	held bool
}

// NewWatchList returns an empty watch list named for reports.
func (s *Sim) NewWatchList(name string) *WatchList {
	l := new(WatchList)
	s.InitWatchList(l, name)
	return l
}

// InitWatchList makes *l an empty watch list named for reports, as
// NewWatchList does: for a list that lives inside its owner's struct (a
// queue's), one allocation fewer per owner.
func (s *Sim) InitWatchList(l *WatchList, name string) {
	*l = WatchList{s: s, name: name} // pages is made by the first watch: most lists of a run get none
}

// Name returns the list's name.
func (l *WatchList) Name() string { return l.name }

// Len returns the number of registered watches.
func (l *WatchList) Len() int { return l.n }

func (l *WatchList) add(lo, hi uint64, pred func() bool, cond Cond, fire func(), a *Actor, tok uint64) *watch {
	if hi <= lo {
		hi = lo + 1
	}
	l.nextID++
	w := l.s.newWatch()
	*w = watch{id: l.nextID, lo: lo, hi: hi, pred: pred, cond: cond, fire: fire, actor: a, token: tok, held: a != nil}
	l.n++
	if l.all == nil {
		l.all = l.s.pageList()
	}
	if !l.sweeping && len(l.all) >= 2*l.n+64 {
		l.all = l.s.compact(l.all)
	}
	l.all = append(l.all, w)
	w.in++
	p0, p1 := lo>>pageShift, (hi-1)>>pageShift
	if p1-p0 > 1 {
		l.wide = append(l.s.compact(l.wide), w)
		w.in++
		return w
	}
	if l.pages == nil {
		l.pages = l.s.pageMap()
	}
	for p := p0; p <= p1; p++ {
		ws := l.pages[p]
		if ws == nil {
			ws = l.s.pageList()
		}
		l.pages[p] = append(l.s.compact(ws), w)
		w.in++
	}
	return w
}

// compact drops cancelled watches so lists that are never notified do not
// grow without bound.
func (s *Sim) compact(ws []*watch) []*watch {
	j := 0
	for _, w := range ws {
		if w.dead {
			s.leave(w)
			continue
		}
		ws[j] = w
		j++
	}
	clear(ws[j:])
	return ws[:j]
}

// leave notes that a list dropped w.
func (s *Sim) leave(w *watch) {
	w.in--
	s.recycleWatch(w)
}

// release notes that w's actor is done with it (its await ended).
func (s *Sim) release(w *watch) {
	w.held = false
	s.recycleWatch(w)
}

// Free watches, page lists and page maps: what the run's lists dropped,
// kept by its Scratch for the next runs (the quiet of a 4 KiB all-to-all
// seed made a watch, a page list and a page map each, a fifth of its
// allocations). Each is bounded by maxFreeWatches.
const maxFreeWatches = 64

func (s *Sim) recycleWatch(w *watch) {
	if w.in == 0 && !w.held && w.fire == nil && w.dead && len(s.freeWatches) < maxFreeWatches {
		*w = watch{}
		s.freeWatches = append(s.freeWatches, w)
	}
}

func (s *Sim) newWatch() *watch {
	if n := len(s.freeWatches); n > 0 {
		w := s.freeWatches[n-1]
		s.freeWatches = s.freeWatches[:n-1]
		return w
	}
	return new(watch)
}

// freeList keeps an emptied (cleared) page list for the run's next ones.
func (s *Sim) freeList(ws []*watch) {
	if len(s.freeLists) < maxFreeWatches && cap(ws) > 0 {
		s.freeLists = append(s.freeLists, ws[:0])
	}
}

func (s *Sim) pageList() []*watch {
	if n := len(s.freeLists); n > 0 {
		ws := s.freeLists[n-1]
		s.freeLists = s.freeLists[:n-1]
		return ws
	}
	return nil
}

func (s *Sim) pageMap() map[uint64][]*watch {
	if n := len(s.freeMaps); n > 0 {
		m := s.freeMaps[n-1]
		s.freeMaps = s.freeMaps[:n-1]
		return m
	}
	return map[uint64][]*watch{}
}

func (w *watch) holds() bool {
	if w.cond != nil {
		return w.cond.Holds()
	}
	return w.pred()
}

func (l *WatchList) remove(w *watch) {
	if !w.dead {
		w.dead = true
		l.n--
	}
}

// WatchHandle cancels a callback watch.
type WatchHandle struct {
	l *WatchList
	w *watch
}

// Cancel removes the watch if it has not fired.
func (h WatchHandle) Cancel() {
	if h.w != nil {
		h.l.remove(h.w)
		if h.l.n == 0 {
			h.l.dropAll()
		}
	}
}

// Watch registers fn to run (as an event due now) after a write to
// [lo, hi) makes pred true. The watch is removed when it fires; fn must
// re-register if it wants to wait again. pred is not evaluated here: the
// caller checks it first.
func (l *WatchList) Watch(lo, hi uint64, pred func() bool, fn func()) WatchHandle {
	return WatchHandle{l: l, w: l.add(lo, hi, pred, nil, fn, nil, 0)}
}

// Notify announces a write to [lo, hi). It costs one comparison when nobody
// watches.
func (l *WatchList) Notify(lo, hi uint64) {
	if l.log != nil {
		l.log.written(lo, hi)
	}
	l.wake(lo, hi)
}

// NotifyAll announces that memory may have changed anywhere (a fence, or
// the end of code whose plain stores nobody announced, such as a native
// C++ lane's): every watch whose predicate now holds fires, and the write
// log records only the tracked words whose value changed, not a write of
// every word.
func (l *WatchList) NotifyAll() {
	if l.log != nil {
		l.log.changed()
	}
	l.wakeAll()
}

// wakeAll is wake over the whole address space: the watches whose
// predicate holds fire, in registration order, as wake's would.
func (l *WatchList) wakeAll() {
	if l.n == 0 {
		return
	}
	fired := l.s.fired[:0]
	l.s.fired = nil
	// A predicate may register a watch (add appends past n0, and may
	// move the slice): index l.all afresh each time.
	l.sweeping = true
	n0, j := len(l.all), 0
	for i := range n0 {
		w := l.all[i]
		var dropped bool
		if fired, dropped = l.drops(w, 0, ^uint64(0), fired); !dropped {
			l.all[j] = w
			j++
		}
	}
	l.sweeping = false
	added := copy(l.all[j:], l.all[n0:])
	clear(l.all[j+added:])
	l.all = l.all[:j+added]
	if l.allFired += len(fired); l.allFired > 2*l.n+64 {
		l.tidyPages()
	}
	l.wakeFired(fired) // in registration order already: no sort
}

// wakeFired wakes the fired watches' actors and schedules their callbacks,
// in fired's order, and gives the buffer back to the run.
func (l *WatchList) wakeFired(fired []*watch) {
	for _, w := range fired {
		if w.actor != nil {
			l.s.wakeTok(w.actor, l.s.now, w.token)
		} else {
			l.s.At(l.s.now, w.fire)
		}
	}
	clear(fired)
	l.s.fired = fired[:0]
}

// dropAll empties all once no watch lives, so that the dead ones go back
// to the run's free watches (and the list to its free lists) without
// waiting for a NotifyAll.
func (l *WatchList) dropAll() {
	if l.sweeping || l.all == nil {
		return
	}
	for _, w := range l.all {
		l.s.leave(w)
	}
	clear(l.all)
	l.s.freeList(l.all[:0])
	l.all = nil
}

// tidyPages drops dead watches from every page list and the wide list,
// and empty pages from the map: what NotifyAll fired stays in them
// otherwise until their page is written.
func (l *WatchList) tidyPages() {
	l.allFired = 0
	for p, ws := range l.pages {
		l.setPage(p, l.s.compact(ws))
	}
	l.wide = l.s.compact(l.wide)
}

func (l *WatchList) wake(lo, hi uint64) {
	if l.n == 0 || hi <= lo {
		return
	}
	// The run's buffer (kept by its Scratch across runs), taken while in
	// use: a predicate that notified would make its own.
	fired := l.s.fired[:0]
	l.s.fired = nil
	p0, p1 := lo>>pageShift, (hi-1)>>pageShift
	if p1-p0 < uint64(len(l.pages)) {
		for p := p0; p <= p1; p++ {
			if ws, ok := l.pages[p]; ok {
				fired = l.scan(p, ws, lo, hi, fired)
			}
		}
	} else {
		// A write wider than the watched pages: visit the watched pages.
		for p, ws := range l.pages {
			if p >= p0 && p <= p1 {
				fired = l.scan(p, ws, lo, hi, fired)
			}
		}
	}
	if len(l.wide) > 0 {
		fired = l.scanWide(lo, hi, fired)
	}
	if l.n == 0 {
		l.dropAll()
	}
	if l.pages != nil && len(l.pages) == 0 && len(l.s.freeMaps) < maxFreeWatches {
		l.s.freeMaps = append(l.s.freeMaps, l.pages)
		l.pages = nil
	}
	if len(fired) > 1 {
		// Map order is random; wake order must not be.
		slices.SortFunc(fired, func(a, b *watch) int { return cmp.Compare(a.id, b.id) })
	}
	l.wakeFired(fired)
}

func (l *WatchList) scan(p uint64, ws []*watch, lo, hi uint64, fired []*watch) []*watch {
	kept, fired, changed := l.sweep(ws, lo, hi, fired)
	if changed || len(kept) == 0 {
		l.setPage(p, kept)
	}
	return fired
}

// setPage makes ws (dead watches dropped, the rest cleared) page p's
// list: an empty one leaves the map for the run's free lists.
func (l *WatchList) setPage(p uint64, ws []*watch) {
	if len(ws) > 0 {
		l.pages[p] = ws
		return
	}
	delete(l.pages, p)
	l.s.freeList(ws)
}

func (l *WatchList) scanWide(lo, hi uint64, fired []*watch) []*watch {
	l.wide, fired, _ = l.sweep(l.wide, lo, hi, fired)
	return fired
}

// sweep fires the watches of ws that [lo, hi) satisfies and drops them and
// cancelled ones, in one pass and in place.
func (l *WatchList) sweep(ws []*watch, lo, hi uint64, fired []*watch) (kept, out []*watch, changed bool) {
	j := 0
	for _, w := range ws {
		var dropped bool
		if fired, dropped = l.drops(w, lo, hi, fired); !dropped {
			ws[j] = w
			j++
		}
	}
	clear(ws[j:])
	return ws[:j], fired, j != len(ws)
}

// drops reports whether a sweep of a list for a write to [lo, hi) drops
// w from it: cancelled (it leaves the list), or fired (appended to fired;
// recycled, if at all, once its other lists and its actor are done with
// it).
func (l *WatchList) drops(w *watch, lo, hi uint64, fired []*watch) ([]*watch, bool) {
	if w.dead {
		l.s.leave(w)
		return fired, true
	}
	if w.lo < hi && lo < w.hi && w.holds() {
		l.remove(w)
		l.s.progress = l.s.now
		w.in--
		return append(fired, w), true
	}
	return fired, false
}

// Observed reports whether a write to [lo, hi) would be seen by anyone
// now: a live watch overlaps it (whatever its predicate), or the write log
// tracks a word in it. The engine lands a copy's crossed bytes later, in
// one move, only where nothing observes them.
func (l *WatchList) Observed(lo, hi uint64) bool {
	if hi <= lo {
		return false
	}
	if l.n > 0 {
		for _, w := range l.wide {
			if !w.dead && w.lo < hi && lo < w.hi {
				return true
			}
		}
		p0, p1 := lo>>pageShift, (hi-1)>>pageShift
		if p1-p0 < uint64(len(l.pages)) {
			for p := p0; p <= p1; p++ {
				if overlapsLive(l.pages[p], lo, hi) {
					return true
				}
			}
		} else {
			for p, ws := range l.pages {
				if p >= p0 && p <= p1 && overlapsLive(ws, lo, hi) {
					return true
				}
			}
		}
	}
	return l.log.Tracked(lo, hi)
}

func overlapsLive(ws []*watch, lo, hi uint64) bool {
	for _, w := range ws {
		if !w.dead && w.lo < hi && lo < w.hi {
			return true
		}
	}
	return false
}
