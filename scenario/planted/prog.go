package planted

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// prog is one run of a corpus program: its environment, whether it is the
// fixed twin, and the first error a host step met. A step after an error
// does nothing and the runner reports that error before anything runs, so
// a program reads as its steps, in order, with no error plumbing.
type prog struct {
	*scenario.Env
	fixed bool
	err   error
}

// kernelFn is a kernel's body on one rank.
type kernelFn = func(t *kernel.Thread, sdma *cco.Sdma)

// start builds the run's node (o carries the bug's shape and faults) and
// every rank's dev comm.
func start(o scenario.Options, fixed bool) (*prog, error) {
	e, err := scenario.NewEnv(o)
	if err != nil {
		return nil, err
	}
	return &prog{Env: e, fixed: fixed}, e.SetupDevComms()
}

// ranks is the run's rank count (the bug's shape).
func (p *prog) ranks() int { return p.O.Ranks }

// ring is rank me's successor and predecessor on the ring of all ranks.
func (p *prog) ring(me int) (next, prev int) {
	n := p.ranks()
	return (me + 1) % n, (me + n - 1) % n
}

// fail records err if it is the first.
func (p *prog) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// window allocates a window of size bytes on every rank.
func (p *prog) window(size uint64) []cco.Window {
	if p.err != nil {
		return nil
	}
	w, err := p.Window(size)
	p.fail(err)
	return w
}

// sender is window with rank 0's block, pattern(0, 0) of n bytes at
// offset 0 of its window: the start of every point-to-point program.
func (p *prog) sender(size, n uint64) []cco.Window {
	w := p.window(size)
	p.fill(w, 0, 0, n, 0)
	return w
}

// fill writes pattern(rank, tag) into n bytes of rank's window of w at
// off, from the host.
func (p *prog) fill(w []cco.Window, rank int, off, n uint64, tag int) {
	if p.err == nil {
		p.fail(p.Mem().Write(w[rank].LocalPtr(off), pattern(n, rank, tag)))
	}
}

// store32 is the host's store of v at off of rank's window of w.
func (p *prog) store32(w []cco.Window, rank int, off uint64, v uint32) {
	if p.err == nil {
		p.fail(p.Mem().Store32(w[rank].LocalPtr(off), v))
	}
}

// store64 is the host's store of v at addr.

func (p *prog) store64(addr uint64, v uint64) {
	if p.err == nil {
		p.fail(p.Mem().Store64(addr, v))
	}
}

// launch starts fn as rank's kernel, <<<grid, block>>>.
func (p *prog) launch(rank, grid, block int, fn kernelFn) *kernel.Kernel {
	if p.err != nil {
		return nil
	}
	k, err := p.Launch(rank, grid, block, fn)
	p.fail(err)
	return k
}

// launchAll starts fn on every rank, <<<grid, block>>>.
func (p *prog) launchAll(grid, block int, fn func(me int, t *kernel.Thread, sdma *cco.Sdma)) {
	if p.err == nil {
		p.fail(p.LaunchAll(grid, block, fn))
	}
}

// launchAfter is rank's host launching fn once kernel k has finished and
// the host has worked for gap (0: at once); a launch that fails fails the
// run.
func (p *prog) launchAfter(k *kernel.Kernel, gap sim.Time, rank int, fn kernelFn) {
	if p.err != nil {
		return
	}
	p.Sim.Spawn(fmt.Sprintf("host%d", rank), func(a *sim.Actor) {
		if err := k.Wait(a); err != nil {
			return
		}
		if gap > 0 {
			a.Sleep(gap)
		}
		if _, err := p.Launch(rank, 1, 1, fn); err != nil {
			p.Sim.Fail(err)
		}
	})
}

// receive is a point-to-point program's end: rank 1 waits for rank 0's
// signal on queue 0, and after the run rank 1 must hold rank 0's block (n
// bytes at off of its window).
func (p *prog) receive(w []cco.Window, off, n uint64) func() error {
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) })
	return func() error { return p.expect("rank 1's block from rank 0", w[1], off, n, 0, 0) }
}

// slot is the address of rank's signal slot (src, q).
func (p *prog) slot(rank, src, q int) uint64 {
	a, err := p.DevComms[rank].SignalPool().Slot(src, q)
	if err != nil {
		panic(err) // the corpus passes valid ranks and queues
	}
	return a
}

// fillLane is fill from lane code (through cco.Mem, as a kernel stores):
// the calling lane writes pattern(rank, tag) into its rank's window w.
func fillLane(sdma *cco.Sdma, w cco.Window, off, n uint64, rank, tag int) {
	cco.NewMem(sdma.Thread(), sdma.DevComm()).Write(w.LocalPtr(off), pattern(n, rank, tag))
}

// snapshot is a receiver's CU reading n bytes of its window at off when
// it believes they have landed (through cco.Mem, as lane code does): the
// data it would go on to use.
func snapshot(sdma *cco.Sdma, w cco.Window, off, n uint64) []byte {
	b := make([]byte, n)
	cco.NewMem(sdma.Thread(), sdma.DevComm()).Read(w.LocalPtr(off), b)
	return b
}

// compute is a wave spending d on the CU (a kernel's own work between
// device calls).
func compute(t *kernel.Thread, d sim.Time) {
	kernel.Converge(t, &kernel.Call[kernel.None]{Name: "compute", Run: func(g *kernel.Active, _ []kernel.None) error {
		g.Actor().Sleep(d)
		return nil
	}}, kernel.None{})
}
