package planted

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/scenario"
)

// pattern is the bytes rank's block tag holds: scenario.Pattern keyed by
// (rank, tag).
func pattern(n uint64, rank, tag int) []byte { return scenario.PatternOf(n, 0, rank, tag) }

// expect compares n bytes of w at off, read from the host, with
// pattern(rank, tag).
func (p *prog) expect(what string, w cco.Window, off, n uint64, rank, tag int) error {
	got := make([]byte, n)
	if err := p.Mem().Read(w.LocalPtr(off), got); err != nil {
		return err
	}
	return checkBytes(what, got, rank, tag)
}

// expectFromPrev checks that every rank holds, at off of its window, the
// n bytes its ring predecessor sent (pattern(prev, 0)).
func (p *prog) expectFromPrev(w []cco.Window, off, n uint64) error {
	for me := range w {
		_, prev := p.ring(me)
		if err := p.expect(fmt.Sprintf("rank %d's block from rank %d", me, prev), w[me], off, n, prev, 0); err != nil {
			return err
		}
	}
	return nil
}

// expectGathered is an all-gather's check: every rank me holds, for every
// owner and piece b of pieces, pattern(owner, b) where at(me, owner, b)
// says (what, offset, length).
func (p *prog) expectGathered(w []cco.Window, pieces int, at func(me, owner, b int) (string, uint64, uint64)) error {
	for me := range w {
		for owner := range w {
			for b := range pieces {
				what, off, n := at(me, owner, b)
				if err := p.expect(what, w[me], off, n, owner, b); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkBytes compares got with pattern(rank, tag).
func checkBytes(what string, got []byte, rank, tag int) error {
	want := pattern(uint64(len(got)), rank, tag)
	for i := range got {
		if got[i] != want[i] {
			return &wrongData{What: what, Offset: uint64(i), Got: got[i], Want: want[i]}
		}
	}
	return nil
}

// wrongData is a check that found the bytes a collective left wrong.
type wrongData struct {
	What      string
	Offset    uint64
	Got, Want byte
}

func (e *wrongData) Error() string {
	return fmt.Sprintf("wrong data: %s: first wrong byte at offset %d (got %#02x, want %#02x)", e.What, e.Offset, e.Got, e.Want)
}
