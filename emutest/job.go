package emutest

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Job is the host side of a MORI program on one emulated MI355X node: one
// comm per rank (rank r on GPU r), windows, dev comms. Build one per seed.
type Job struct {
	Sim   *sim.Sim
	Node  *engine.Node
	Host  *cco.Host
	Comms []*cco.Comm
	// DevComms are set by CreateDevComms.
	DevComms []cco.DevComm
}

// NewJob builds a node of ranks GPUs for seed, with SDMA on
// (MORI_ENABLE_SDMA=1), one comm per rank, the timing perturbation level
// of Level (realistic unless -emutest.perturb says otherwise) and the race
// detector when -emutest.race is set.
func NewJob(seed uint64, ranks int) (*Job, error) {
	return NewJobWith(seed, ranks, Options{Perturb: Level(), Race: Race()})
}

// NewJobAt is NewJob at perturbation level l.
func NewJobAt(seed uint64, ranks int, l sim.Level) (*Job, error) {
	return NewJobWith(seed, ranks, Options{Perturb: l, Race: Race()})
}

// Options are what NewJobWith takes beyond the seed and the ranks.
type Options struct {
	Perturb sim.Level
	// Race turns on the happens-before race detector (package race): the
	// run then ends with a *race.Error when lanes, engines or the fabric
	// made conflicting accesses that nothing ordered.
	Race bool
}

// NewJobWith is NewJob with explicit options.
func NewJobWith(seed uint64, ranks int, o Options) (*Job, error) {
	l := o.Perturb
	if ranks < 1 {
		return nil, fmt.Errorf("emutest: NewJob with %d ranks: need at least 1", ranks)
	}
	if l > sim.MaxLevel {
		return nil, fmt.Errorf("emutest: NewJob at perturbation level %d: need 0..%d", l, sim.MaxLevel)
	}
	s := sim.New(sim.Config{Seed: seed, Perturb: l})
	if o.Race {
		s.EnableRace()
	}
	n, err := engine.NewNode(s, cco.MI355X(ranks))
	if err != nil {
		return nil, err
	}
	h := cco.NewEmulatedHost(n, cco.Env{"MORI_ENABLE_SDMA": "1"})
	comms, err := cco.CommCreateAll(h, ranks, 0)
	if err != nil {
		return nil, err
	}
	return &Job{Sim: s, Node: n, Host: h, Comms: comms}, nil
}

// Window allocates and registers size bytes on every rank, in rank order
// (registrations must be symmetric), and returns the windows by rank.
func (j *Job) Window(size uint64) ([]cco.Window, error) { return cco.WindowAllocAll(j.Comms, size) }

// CreateDevComms creates every rank's dev comm with queues SDMA queue ids
// per peer (0: MORI's default) and MORI_CCO_SDMA_DEBUG's checks when
// debug is set.
func (j *Job) CreateDevComms(queues int, debug bool) error {
	reqs := cco.DevCommRequirementsInitializer()
	reqs.SdmaQueueCount, reqs.Debug = queues, debug
	dcs, err := cco.DevCommCreateAll(j.Comms, &reqs)
	if err != nil {
		return err
	}
	j.DevComms = dcs
	return nil
}

// Launch starts fn on every thread of a <<<grid, block>>> kernel on rank's
// GPU, named rank<r> in reports, each thread with its ccoSdma handle.
func (j *Job) Launch(rank, grid, block int, fn func(t *kernel.Thread, sdma *cco.Sdma)) (*kernel.Kernel, error) {
	if j.DevComms == nil {
		return nil, fmt.Errorf("emutest: Launch before CreateDevComms")
	}
	if rank < 0 || rank >= len(j.DevComms) {
		return nil, fmt.Errorf("emutest: Launch on rank %d: the job has ranks 0..%d", rank, len(j.DevComms)-1)
	}
	dc := j.DevComms[rank]
	return kernel.Launch(j.Sim, kernel.Config{Name: fmt.Sprintf("rank%d", rank), GPU: rank, Grid: grid, Block: block},
		func(t *kernel.Thread) { fn(t, cco.NewSdma(t, dc)) })
}

// Run runs the job to the end: nil, a *sim.HangError with the report, or
// the failure (a debug trap, an engine fault).
func (j *Job) Run() error { return j.Sim.Run() }

// Read returns n bytes of rank's window w at off.
func (j *Job) Read(w cco.Window, off, n uint64) ([]byte, error) {
	b := make([]byte, n)
	return b, j.Node.Memory().Read(w.LocalPtr(off), b)
}

// Write stores b in rank's window w at off.
func (j *Job) Write(w cco.Window, off uint64, b []byte) error {
	return j.Node.Memory().Write(w.LocalPtr(off), b)
}
