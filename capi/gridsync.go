//go:build cgo

package main

import (
	"debug/dwarf"
	"errors"
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Grid-wide synchronisation: cooperative_groups' this_grid().sync() (and
// HIP's grid_group::sync) in a kernel launched with
// hipLaunchCooperativeKernel or cudaLaunchCooperativeKernel. Such a
// launch is refused (hipErrorCooperativeLaunchTooLarge) unless every
// block of its grid fits the GPU's CUs at once, as the hardware
// requires; its blocks then all start (as resident blocks do), and each
// sync is a barrier of every thread of the grid: each wave's arriving
// lanes count in, the last arrival lets every one go, and for the race
// detector each arrival releases into the grid's barrier and each
// departure acquires it (what every thread did before the sync happens
// before what any does after). A thread that returns before a sync the
// others wait in never arrives: a hang naming the sync, how many
// threads arrived and how many returned. A sync in a kernel not launched
// cooperatively fails the lane, naming the call (CUDA's rule: the grid
// must be a cooperative launch's).

// gridBarrier is one cooperative grid's barrier.
type gridBarrier struct {
	arrived int
	gen     uint64
	wl      *sim.WatchList
	sync    race.Sync
	site    string
}

// hipErrorCooperativeLaunchTooLarge is HIP's (and CUDA's) code for a
// cooperative grid larger than the device holds at once.
const hipErrorCooperativeLaunchTooLarge = 720

var gridSyncCall = &kernel.Call[kernel.None]{Name: "this_grid().sync()", Run: runGridSync}

func runGridSync(g *kernel.Active, _ []kernel.None) error {
	ls := g.Lanes()
	if len(ls) == 0 {
		return nil
	}
	ln := lanes[ls[0]]
	if ln == nil {
		return errors.New("grid sync: the lane is not a C++ lane")
	}
	gr := ln.g
	b := gr.coop
	if b == nil {
		return ls[0].Error("this_grid().sync()", fmt.Errorf("kernel %q was not launched cooperatively (hipLaunchCooperativeKernel, cudaLaunchCooperativeKernel): a grid-wide sync needs a cooperative launch", gr.name))
	}
	a := g.Actor()
	threads := map[*race.Thread]bool{}
	for _, t := range ls {
		if rth := t.RaceThread(); rth != nil && !threads[rth] {
			threads[rth] = true
			rth.Release(&b.sync)
		}
	}
	total := int(gr.nb) * int(gr.nt)
	b.arrived += len(ls)
	gen := b.gen
	if b.site == "" {
		b.site = g.Site()
	}
	if b.arrived >= total {
		b.arrived = 0
		b.gen++
		b.wl.Notify(0, 1)
	} else {
		a.Await(sim.Wait{List: b.wl, Lo: 0, Hi: 1, Pred: func() bool { return b.gen != gen },
			Text: func() string {
				returned := total - gr.remaining
				return fmt.Sprintf("this_grid().sync() of kernel %q (%s): %d of %d threads arrived, %d returned without it", gr.name, b.site, b.arrived, total, returned)
			}})
	}
	for rth := range threads {
		rth.Acquire(&b.sync)
	}
	return nil
}

// cooperativeFits says why a cooperative grid of nb blocks of nt threads
// cannot run, or nil: all its blocks must be resident at once.
func cooperativeFits(nb, nt uint64, wave int, dyn uint64) error {
	if fit := uint64(residentBlocks(int(nt), wave, dyn)); nb > fit {
		return fmt.Errorf("a cooperative grid of %d blocks of %d threads: the GPU's %d CUs hold %d such blocks at once", nb, nt, propCUs, fit)
	}
	return nil
}

// pcFuncName is the name of the function whose code starts at pc (a
// kernel a cooperative launch passed by address), from the program's
// DWARF, or "" where it has none.
func pcFuncName(pc uint64) string {
	if pcEntry(pc); pcLines.d == nil || pc < pcLines.bias {
		return ""
	}
	d, at := pcLines.d, pc-pcLines.bias
	r := d.Reader()
	cu, err := r.SeekPC(at)
	if err != nil || cu == nil || !cu.Children {
		return ""
	}
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return ""
		}
		switch e.Tag {
		case 0:
			continue
		case dwarf.TagSubprogram:
			// Its entry is where one of its ranges starts (GCC splits an
			// optimised function into ranges, a cold part apart).
			if rs, err := d.Ranges(e); err == nil {
				for _, rg := range rs {
					if rg[0] == at {
						return dwarfName(d, e)
					}
				}
			}
		case dwarf.TagNamespace, dwarf.TagClassType, dwarf.TagStructType:
			continue // functions may be defined inside
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

// dwarfName is e's name, or that of the entry it is a concrete instance
// or the definition of (an optimised build's out-of-line copy names its
// function through DW_AT_abstract_origin or DW_AT_specification).
func dwarfName(d *dwarf.Data, e *dwarf.Entry) string {
	for range 4 {
		if name, ok := e.Val(dwarf.AttrName).(string); ok {
			return name
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			if off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset); !ok {
				return ""
			}
		}
		r := d.Reader()
		r.Seek(off)
		next, err := r.Next()
		if err != nil || next == nil {
			return ""
		}
		e = next
	}
	return ""
}
