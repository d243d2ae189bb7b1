package sim

// WatchList is the set of waiters on one piece of emulated state (a GPU's
// memory, a ring's read pointer). Whoever writes that state calls Notify
// with the range written; waiters whose range overlaps and whose predicate
// now holds are woken. Nothing polls.
type WatchList struct {
	s    *Sim
	name string
	ws   []*watch
}

type watch struct {
	lo, hi uint64
	pred   func() bool
	fire   func() // callback watcher (the engine's POLL), or nil for an actor
	actor  *Actor
	token  uint64
	idx    int
}

// NewWatchList returns an empty watch list named for reports.
func (s *Sim) NewWatchList(name string) *WatchList { return &WatchList{s: s, name: name} }

// Name returns the list's name.
func (l *WatchList) Name() string { return l.name }

// Len returns the number of registered watches.
func (l *WatchList) Len() int { return len(l.ws) }

func (l *WatchList) add(lo, hi uint64, pred func() bool, fire func(), a *Actor, tok uint64) *watch {
	w := &watch{lo: lo, hi: hi, pred: pred, fire: fire, actor: a, token: tok, idx: len(l.ws)}
	l.ws = append(l.ws, w)
	return w
}

func (l *WatchList) remove(w *watch) {
	i := w.idx
	if i < 0 || i >= len(l.ws) || l.ws[i] != w {
		return
	}
	last := len(l.ws) - 1
	l.ws[i] = l.ws[last]
	l.ws[i].idx = i
	l.ws[last] = nil
	l.ws = l.ws[:last]
	w.idx = -1
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
	}
}

// Watch registers fn to run (as an event due now) after a write to
// [lo, hi) makes pred true. The watch is removed when it fires; fn must
// re-register if it wants to wait again. pred is not evaluated here: the
// caller checks it first.
func (l *WatchList) Watch(lo, hi uint64, pred func() bool, fn func()) WatchHandle {
	return WatchHandle{l: l, w: l.add(lo, hi, pred, fn, nil, 0)}
}

// Notify announces a write to [lo, hi). It costs one length check when
// nobody watches.
func (l *WatchList) Notify(lo, hi uint64) {
	if len(l.ws) == 0 {
		return
	}
	for i := 0; i < len(l.ws); {
		w := l.ws[i]
		if w.lo < hi && lo < w.hi && w.pred() {
			l.remove(w) // swaps the last watch into i: do not advance
			l.s.progress = l.s.now
			if w.actor != nil {
				l.s.wakeTok(w.actor, l.s.now, w.token)
			} else {
				l.s.At(l.s.now, w.fire)
			}
			continue
		}
		i++
	}
}
