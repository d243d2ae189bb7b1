package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line bar on a terminal, redrawn in place with \r:
//
//	explore alltoall  [##########··········]  100/200 seeds  0 failed  3.2s
//
// It is a few lines of code rather than a library (schollz/progressbar and
// the like) because one line with a count is all explore needs, and a
// dependency would bring terminal handling we do not use. It draws only
// when enabled: by --progress, or when stderr is a terminal, so tests and
// pipes get no control characters.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	unit    string // what is counted: "seeds" unless set
	total   int
	done    int
	failed  int
	start   time.Time
	last    time.Time
	drawn   bool
	every   time.Duration
	nowFunc func() time.Time
}

const progressWidth = 20

func newProgress(w io.Writer, enabled bool, label string, total int) *progress {
	if !enabled {
		return nil
	}
	p := &progress{w: w, label: label, unit: "seeds", total: total, every: 100 * time.Millisecond, nowFunc: time.Now}
	p.start = p.nowFunc()
	return p
}

// isTerminal reports whether w is a character device (a terminal), without
// a terminal library: enough to decide whether to draw.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// step records one finished seed and redraws at most every p.every. A nil
// progress does nothing.
func (p *progress) step(failed bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if failed {
		p.failed++
	}
	now := p.nowFunc()
	if p.drawn && now.Sub(p.last) < p.every && p.done < p.total {
		return
	}
	p.last = now
	p.draw(now)
}

func (p *progress) draw(now time.Time) {
	fill := 0
	if p.total > 0 {
		fill = p.done * progressWidth / p.total
	}
	bar := strings.Repeat("#", fill) + strings.Repeat("·", progressWidth-fill)
	fmt.Fprintf(p.w, "\r%s  [%s]  %d/%d %s  %d failed  %.1fs", p.label, bar, p.done, p.total, p.unit, p.failed, now.Sub(p.start).Seconds())
	p.drawn = true
}

// set records done of total units (row runs of a fit, whose total is a
// budget it may not use up) and redraws at most every p.every. A nil
// progress does nothing.
func (p *progress) set(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total, p.unit = done, max(total, done), "row runs"
	now := p.nowFunc()
	if p.drawn && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	p.draw(now)
}

// finish ends the bar's line so what follows starts on a fresh one.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(p.nowFunc())
	fmt.Fprintln(p.w)
}
