package sim

import (
	"fmt"
	"slices"

	"github.com/emud-dev/emud/internal/slab"
)

// HistoryDepth is how many of a tracked word's last writes a [WriteLog]
// keeps.
const HistoryDepth = 4

// MaxTrackedWords bounds the words one [WriteLog] tracks. With
// [HistoryDepth] writes of about 48 bytes each plus the word's own
// bookkeeping, a full log holds under 1 MiB (4096 × ~260 B); words asked
// for beyond the bound are not tracked ([WriteLog.Untracked] counts them)
// and reports say their history is unknown.
const MaxTrackedWords = 4096

// Write is one write to a tracked word: when, by whom, and the word's
// value before and after.
type Write struct {
	At    Time   `json:"at_ps"`
	By    string `json:"by"`
	Prev  uint64 `json:"prev"`
	Value uint64 `json:"value"`
}

func (w Write) String() string {
	return fmt.Sprintf("%#x → %#x at %v by %s", w.Prev, w.Value, w.At, w.By)
}

// WriteLog keeps a bounded history of the last writes to chosen words of
// one piece of emulated state (a GPU memory): signal slots and flags that
// waits watch, so a hang report can say a slot "reached 1 at t by X,
// reset to 0 at t' by Y" instead of guessing. It is fed by the state's
// [WatchList.Notify], so every write path is seen; the writer is the name
// set by [Sim.SetWriter] for the running event or actor, else the running
// actor's name, else "the host" (code outside any actor).
type WriteLog struct {
	s         *Sim
	load      func(addr uint64, width int) uint64
	words     map[uint64]*wordLog
	list      []*wordLog // words' records, in the order tracked: what changed visits (a map visit cost more than its loads)
	pages     map[uint64][]*wordLog
	recs      slab.Arena[wordLog] // where new words' records are made, a few at a time
	untracked int
	spare     [][]*wordLog // page lists of an earlier run (reuse), emptied
	free      []*wordLog   // records of untracked words (Untrack), for Track
}

type wordLog struct {
	addr  uint64
	width int
	since Time   // when tracking began
	last  uint64 // value after the last write seen
	n     int    // writes seen
	w     [HistoryDepth]Write
}

// EnableLog gives the list a write log; load reads a word's value (width
// 4 or 8 bytes). Calling it again returns the same log.
func (l *WatchList) EnableLog(load func(addr uint64, width int) uint64) *WriteLog {
	if l.log == nil {
		l.log = l.s.cfg.Scratch.writeLog()
		if l.log == nil {
			l.log = &WriteLog{words: make(map[uint64]*wordLog, 16), pages: map[uint64][]*wordLog{}} // presized: a run tracks a comm's signal slots, a dozen or more
			l.log.recs.Grow = 256                                                                   // words come in bursts (a comm's slots)
			l.s.cfg.Scratch.keepLog(l.log)
		}
		l.log.s, l.log.load = l.s, load
	}
	return l.log
}

// reuse empties g for another run (Scratch.writeLog): its maps, page
// lists and records are kept, emptied, for the words that run tracks.
func (g *WriteLog) reuse() {
	for _, ws := range g.pages {
		if len(g.spare) < maxSparePages {
			g.spare = append(g.spare, ws[:0])
		}
	}
	clear(g.words)
	clear(g.list)
	g.list = g.list[:0]
	clear(g.pages)
	g.recs.Reset()
	clear(g.free)
	g.free = g.free[:0]
	g.s, g.load, g.untracked = nil, nil, 0
}

// maxSparePages bounds the page lists a kept log holds for reuse.
const maxSparePages = 256

// Log returns the list's write log, or nil.
func (l *WatchList) Log() *WriteLog { return l.log }

// Track starts keeping the writes of the width-byte word at addr (width 4
// or 8; a word already tracked keeps its history). It reports whether the
// word is tracked: false past [MaxTrackedWords].
func (g *WriteLog) Track(addr uint64, width int) bool {
	if g == nil {
		return false
	}
	if _, ok := g.words[addr]; ok {
		return true
	}
	if len(g.words) >= MaxTrackedWords {
		g.untracked++
		return false
	}
	var w *wordLog
	if n := len(g.free); n > 0 {
		w, g.free = g.free[n-1], g.free[:n-1]
	} else {
		w = g.recs.New()
	}
	*w = wordLog{addr: addr, width: width, since: g.s.now, last: g.load(addr, width)}
	g.words[addr] = w
	g.list = append(g.list, w)
	for p := addr >> pageShift; p <= (addr+uint64(width)-1)>>pageShift; p++ {
		ws := g.pages[p]
		if ws == nil {
			if n := len(g.spare); n > 0 {
				ws, g.spare = g.spare[n-1], g.spare[:n-1]
			} else {
				ws = make([]*wordLog, 0, 8) // a page's words come in bursts too: not grown one at a time
			}
		}
		g.pages[p] = append(ws, w)
	}
	return true
}

// Untrack stops keeping the writes of the tracked words that start in
// [lo, hi): memory whose owner is gone (a destroyed dev comm's signal
// pool). Tracked words are bounded ([MaxTrackedWords]) and every
// [WatchList.NotifyAll] loads each of them, so a program that made and
// destroyed a dev comm a round tracked more words every round and made
// every lane fence slower, until the bound, where later words went
// untracked. Their records serve later Track calls.
func (g *WriteLog) Untrack(lo, hi uint64) {
	if g == nil || hi <= lo || len(g.words) == 0 {
		return
	}
	for addr, w := range g.words { // each removal is its own: map order does not matter
		if addr < lo || addr >= hi {
			continue
		}
		delete(g.words, addr)
		for p := addr >> pageShift; p <= (addr+uint64(w.width)-1)>>pageShift; p++ {
			ws := g.pages[p]
			for i, x := range ws {
				if x == w {
					ws = append(ws[:i], ws[i+1:]...)
					break
				}
			}
			if len(ws) == 0 {
				delete(g.pages, p)
				if len(g.spare) < maxSparePages {
					g.spare = append(g.spare, ws[:0])
				}
				continue
			}
			g.pages[p] = ws
		}
		g.free = append(g.free, w)
	}
	if len(g.list) != len(g.words) {
		g.list = slices.DeleteFunc(g.list, func(w *wordLog) bool { return w.addr >= lo && w.addr < hi })
	}
}

// Tracked reports whether any tracked word overlaps [lo, hi): the cheap
// test a writer makes before naming itself.
func (g *WriteLog) Tracked(lo, hi uint64) bool {
	if g == nil || len(g.words) == 0 || hi <= lo {
		return false
	}
	if g.wide(lo, hi) {
		for _, w := range g.words {
			if w.addr < hi && lo < w.addr+uint64(w.width) {
				return true
			}
		}
		return false
	}
	for p := lo >> pageShift; p <= (hi-1)>>pageShift; p++ {
		for _, w := range g.pages[p] {
			if w.addr < hi && lo < w.addr+uint64(w.width) {
				return true
			}
		}
	}
	return false
}

// Untracked is how many words were asked for beyond [MaxTrackedWords].
func (g *WriteLog) Untracked() int {
	if g == nil {
		return 0
	}
	return g.untracked
}

// History returns the last writes (oldest first, at most [HistoryDepth])
// of the word at addr, how many writes it saw in all, and since when it
// has been tracked; ok is false for a word not tracked.
func (g *WriteLog) History(addr uint64) (writes []Write, total int, since Time, ok bool) {
	if g == nil {
		return nil, 0, 0, false
	}
	w := g.words[addr]
	if w == nil {
		return nil, 0, 0, false
	}
	k := min(w.n, HistoryDepth)
	for i := w.n - k; i < w.n; i++ {
		writes = append(writes, w.w[i%HistoryDepth])
	}
	return writes, w.n, w.since, true
}

// wide reports whether [lo, hi) spans more pages than the log tracks, so
// visiting its tracked words beats walking its pages (a write of the
// whole address space would walk 2^52 of them).
func (g *WriteLog) wide(lo, hi uint64) bool {
	return (hi-1)>>pageShift-lo>>pageShift >= uint64(len(g.pages))
}

// written records a write of [lo, hi) in every tracked word it touched.
func (g *WriteLog) written(lo, hi uint64) {
	if len(g.words) == 0 || hi <= lo {
		return
	}
	if g.wide(lo, hi) {
		for _, w := range g.words { // each word's record is its own: map order does not matter
			if w.addr < hi && lo < w.addr+uint64(w.width) {
				g.record(w)
			}
		}
		return
	}
	for p := lo >> pageShift; p <= (hi-1)>>pageShift; p++ {
		for _, w := range g.pages[p] {
			if first := w.addr >> pageShift; w.addr >= hi || lo >= w.addr+uint64(w.width) || (p != first && first >= lo>>pageShift) {
				continue // not touched, or already seen on its first page
			}
			g.record(w)
		}
	}
}

// changed records a write in every tracked word whose value is not the
// one last seen: for [WatchList.NotifyAll], which says memory may have
// changed anywhere without saying where.
func (g *WriteLog) changed() {
	for _, w := range g.list {
		if g.load(w.addr, w.width) != w.last {
			g.record(w)
		}
	}
}

func (g *WriteLog) record(w *wordLog) {
	v := g.load(w.addr, w.width)
	w.w[w.n%HistoryDepth] = Write{At: g.s.now, By: g.s.writerName(), Prev: w.last, Value: v}
	w.n++
	w.last = v
}

// Writer names who writes memory (SetWriter) by appending its name to b.
// It is asked only for writes to tracked words ([WriteLog]), so a writer
// that is a pointer (an engine's queue) costs nothing where nothing is
// tracked, and the name it appends is interned (Sim.Intern), not made anew
// each write.
type Writer interface{ AppendWriter(b []byte) []byte }

// WriterFunc is a Writer made by a function, for writers named once in a
// while (a host's store, a lane API's call).
type WriterFunc func() string

// AppendWriter appends f's name.
func (f WriterFunc) AppendWriter(b []byte) []byte { return append(b, f()...) }

// SetWriter names who writes memory from now until the next event or
// actor runs (each starts with none): an engine names its queue and
// packet, a lane API its lane and call site. w is asked only for writes
// to tracked words ([WriteLog]); nil clears it.
func (s *Sim) SetWriter(w Writer) { s.writer = w }

// Writer is the writer SetWriter set (nil if none), for code that writes
// on another's behalf and restores it: an engine landing a copy's bursts
// before a lane's access.
func (s *Sim) Writer() Writer { return s.writer }

func (s *Sim) writerName() string {
	switch {
	case s.writer != nil:
		s.nameBuf = s.writer.AppendWriter(s.nameBuf[:0])
		return s.Intern(s.nameBuf)
	case s.cur != nil:
		return s.cur.name
	}
	return "the host"
}
