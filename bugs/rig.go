package bugs

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// rig is one run's node, comms, windows and dev comms: the host side of a
// MORI program on an emulated MI355X node, rank r on GPU r.
type rig struct {
	s     *sim.Sim
	n     *engine.Node
	mem   *engine.Memory
	comms []*cco.Comm
	dcs   []cco.DevComm
}

// newRig builds a node of ranks GPUs for run c with queues queue ids per
// peer, under the fault spec (the bug's environment) if any.
func newRig(c Config, ranks, queues int, faults engine.InjectSpec) (*rig, error) {
	s := sim.New(sim.Config{Seed: c.Seed, Perturb: c.Perturb, Strategy: c.Strategy, PCT: c.PCT})
	cfg := cco.MI355X(ranks)
	if !faults.Empty() {
		cfg.Inject = faults.For(s, ranks, queues)
	}
	n, err := engine.NewNode(s, cfg)
	if err != nil {
		return nil, err
	}
	host := cco.NewEmulatedHost(n, cco.Env{"MORI_ENABLE_SDMA": "1"})
	if c.Observe != nil {
		c.Observe(n, host)
	}
	comms, err := cco.CommCreateAll(host, ranks, 0)
	if err != nil {
		return nil, err
	}
	r := &rig{s: s, n: n, mem: n.Memory(), comms: comms}
	reqs := cco.DevCommRequirementsInitializer()
	reqs.SdmaQueueCount = queues
	// Windows are registered by the bug before dev comms in MORI; here dev
	// comms come first and windows after, which ccoSdma allows.
	if r.dcs, err = cco.DevCommCreateAll(comms, &reqs); err != nil {
		return nil, err
	}
	return r, nil
}

// window allocates and registers size bytes on every rank.
func (r *rig) window(size uint64) ([]cco.Window, error) { return cco.WindowAllocAll(r.comms, size) }

// launch starts fn on rank's GPU, <<<grid, block>>>, after delay.
func (r *rig) launch(rank, grid, block int, fn func(t *kernel.Thread, sdma *cco.Sdma)) (*kernel.Kernel, error) {
	dc := r.dcs[rank]
	return kernel.Launch(r.s, kernel.Config{Name: fmt.Sprintf("rank%d", rank), GPU: rank, Grid: grid, Block: block},
		func(t *kernel.Thread) { fn(t, cco.NewSdma(t, dc)) })
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

// load64 reads memory the corpus allocated; it cannot fail.
func (r *rig) load64(addr uint64) uint64 {
	v, err := r.mem.Load64(addr)
	if err != nil {
		panic(err)
	}
	return v
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
