package bugs

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// rig is one run's node, comms, windows and dev comms (package job's),
// rank r on GPU r.
type rig struct {
	j     *job.Job
	s     *sim.Sim
	n     *engine.Node
	mem   *engine.Memory
	comms []*cco.Comm
	dcs   []cco.DevComm
}

// newRig builds a node of ranks GPUs for run c with queues queue ids per
// peer, under the fault spec (the bug's environment) if any.
func newRig(c Config, ranks, queues int, faults engine.InjectSpec) (*rig, error) {
	jc := job.Config{Sim: sim.Config{Seed: c.Seed, Perturb: c.Perturb, Strategy: c.Strategy, PCT: c.PCT}, Ranks: ranks, Race: c.Race}
	if !faults.Empty() {
		jc.Inject = func(s *sim.Sim) *engine.InjectPlan { return faults.For(s, ranks, queues) }
	}
	j, err := job.New(jc)
	if err != nil {
		return nil, err
	}
	if c.Observe != nil {
		c.Observe(j.Node, j.Host)
	}
	if err := j.CreateDevComms(queues, false); err != nil {
		return nil, err
	}
	return &rig{j: j, s: j.Sim, n: j.Node, mem: j.Node.Memory(), comms: j.Comms, dcs: j.DevComms}, nil
}

// window allocates and registers size bytes on every rank.
func (r *rig) window(size uint64) ([]cco.Window, error) { return r.j.Window(size) }

// launch starts fn on rank's GPU, <<<grid, block>>>.
func (r *rig) launch(rank, grid, block int, fn func(t *kernel.Thread, sdma *cco.Sdma)) (*kernel.Kernel, error) {
	return r.j.Launch(rank, grid, block, fn)
}

// launchAll starts fn on every rank.
func (r *rig) launchAll(grid, block int, fn func(rank int, t *kernel.Thread, sdma *cco.Sdma)) error {
	for rank := range r.dcs {
		if _, err := r.launch(rank, grid, block, func(t *kernel.Thread, sdma *cco.Sdma) { fn(rank, t, sdma) }); err != nil {
			return err
		}
	}
	return nil
}

// slot is the address of rank's signal slot (src, q).
func (r *rig) slot(rank, src, q int) uint64 {
	a, err := r.dcs[rank].SignalPool().Slot(src, q)
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

// fill writes pattern(rank, tag) into rank's window w at off.
func (r *rig) fill(w cco.Window, off, n uint64, rank, tag int) error {
	return r.mem.Write(w.LocalPtr(off), pattern(n, rank, tag))
}

// expect compares n bytes of w at off with pattern(rank, tag).
func (r *rig) expect(what string, w cco.Window, off, n uint64, rank, tag int) error {
	got := make([]byte, n)
	if err := r.mem.Read(w.LocalPtr(off), got); err != nil {
		return err
	}
	want := pattern(n, rank, tag)
	for i := range got {
		if got[i] != want[i] {
			return &WrongData{What: what, Offset: uint64(i), Got: got[i], Want: want[i]}
		}
	}
	return nil
}

// pattern is the bytes rank's block tag holds: distinct per rank and tag.
func pattern(n uint64, rank, tag int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131+rank*29+tag*7) ^ 0x5a
	}
	return b
}

// compute is a wave spending d on the CU (a kernel's own work between
// device calls).
func compute(t *kernel.Thread, d sim.Time) {
	t.Converge(&kernel.Call{Name: "compute", Run: func(g *kernel.Active) error {
		g.Actor().Sleep(d)
		return nil
	}})
}

// WrongData is a check that found the bytes a collective left wrong.
type WrongData struct {
	What      string
	Offset    uint64
	Got, Want byte
}

func (e *WrongData) Error() string {
	return fmt.Sprintf("wrong data: %s: first wrong byte at offset %d (got %#02x, want %#02x)", e.What, e.Offset, e.Got, e.Want)
}
