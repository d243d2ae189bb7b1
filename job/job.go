package job

import (
	"fmt"
	"strconv"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/internal/slab"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// Config describes a job.
type Config struct {
	// Sim configures the simulator: the seed, the timing perturbation, the
	// scheduling strategy.
	Sim sim.Config
	// Ranks is the number of ranks, rank r on GPU r.
	Ranks int
	// GPUs is the node's GPU count (cco.MI355X); 0 is Ranks.
	GPUs int
	// Model is the timing model; nil is model.Default().
	Model model.Model
	// Registry receives the node's metrics; nil is a registry of the job's
	// own.
	Registry *engine.Registry
	// Inject, if set, returns the node's fault plan, drawn for the job's
	// simulator (engine.InjectSpec.For).
	Inject func(s *sim.Sim) *engine.InjectPlan
	// Env is the process environment cco sees; nil is MORI_ENABLE_SDMA=1
	// alone.
	Env cco.Env
	// Configure, if set, adjusts the node's configuration (the MI355X
	// preset with Model, Registry and Inject applied) before the node is
	// built: ring options, read-pointer policy, a different GPU layout.
	Configure func(*engine.Config)
	// Race turns on the happens-before race detector (sim.EnableRace): the
	// run then ends with a *race.Error when lanes, engines or the fabric
	// made conflicting accesses that nothing ordered.
	Race bool
	// Scratch, if set, backs the node's small regions with buffers kept
	// across the jobs that share it one at a time (engine.Scratch).
	Scratch *engine.Scratch
}

// Job is one MORI program's host side on an emulated node. Build one per
// run (per seed).
type Job struct {
	Sim   *sim.Sim
	Node  *engine.Node
	Host  *cco.Host
	Env   cco.Env
	Comms []*cco.Comm
	// DevComms are set by CreateDevComms.
	DevComms []cco.DevComm
}

// New builds the simulator, the node, the host and one comm per rank.
func New(c Config) (*Job, error) {
	if c.Ranks < 1 {
		return nil, fmt.Errorf("job: %d ranks: need at least 1", c.Ranks)
	}
	gpus := c.GPUs
	if gpus == 0 {
		gpus = c.Ranks
	}
	if gpus < c.Ranks {
		return nil, fmt.Errorf("job: %d ranks on %d GPUs: one GPU per rank", c.Ranks, gpus)
	}
	s := sim.New(c.Sim)
	if c.Race {
		s.EnableRace()
	}
	cfg := cco.MI355X(gpus)
	if c.Model != nil {
		cfg.Model = c.Model
	}
	cfg.Registry, cfg.Scratch = c.Registry, c.Scratch
	if c.Inject != nil {
		cfg.Inject = c.Inject(s)
	}
	if c.Configure != nil {
		c.Configure(&cfg)
	}
	n, err := engine.NewNode(s, cfg)
	if err != nil {
		return nil, err
	}
	env := c.Env
	if env == nil {
		env = cco.Env{"MORI_ENABLE_SDMA": "1"}
	}
	h := cco.NewEmulatedHost(n, env)
	comms, err := cco.CommCreateAll(h, c.Ranks, 0)
	if err != nil {
		return nil, err
	}
	return &Job{Sim: s, Node: n, Host: h, Env: env, Comms: comms}, nil
}

// Window allocates and registers size bytes on every rank, in rank order
// (registrations must be symmetric), and returns the windows by rank.
func (j *Job) Window(size uint64) ([]cco.Window, error) { return cco.WindowAllocAll(j.Comms, size) }

// PhantomWindow is Window over phantom memory (cco.MemAllocPhantom):
// copies take their time but move nothing, for timing-only runs at scale.
func (j *Job) PhantomWindow(size uint64) ([]cco.Window, error) {
	ws := make([]cco.Window, len(j.Comms))
	for r, c := range j.Comms {
		buf, err := cco.MemAllocPhantom(c, size)
		if err != nil {
			return nil, err
		}
		if ws[r], err = cco.WindowRegister(c, buf, size); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// CreateDevComms creates every rank's dev comm with queues SDMA queue ids
// per peer (0: MORI's default) and MORI_CCO_SDMA_DEBUG's checks when
// debug is set.
func (j *Job) CreateDevComms(queues int, debug bool) error {
	reqs := cco.DevCommRequirementsInitializer()
	reqs.SdmaQueueCount, reqs.Debug = queues, debug
	return j.CreateDevCommsWith(reqs)
}

// CreateDevCommsWith creates every rank's dev comm with reqs (start from
// cco.DevCommRequirementsInitializer).
func (j *Job) CreateDevCommsWith(reqs cco.DevCommRequirements) error {
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
	var buf [24]byte // the name interned: a worker's seeds launch alike
	return j.LaunchNamed(j.Sim.Intern(strconv.AppendInt(append(buf[:0], "rank"...), int64(rank), 10)), rank, grid, block, fn)
}

// LaunchNamed is Launch with the kernel's name given. The kernel's waves
// are the node's architecture's (model.Arch.WaveSize: 32 on gfx1250, 64
// elsewhere), as hipcc compiles them for the target.
func (j *Job) LaunchNamed(name string, rank, grid, block int, fn func(t *kernel.Thread, sdma *cco.Sdma)) (*kernel.Kernel, error) {
	if j.DevComms == nil {
		return nil, fmt.Errorf("job: Launch before CreateDevComms")
	}
	if rank < 0 || rank >= len(j.DevComms) {
		return nil, fmt.Errorf("job: Launch on rank %d: the job has ranks 0..%d", rank, len(j.DevComms)-1)
	}
	dc := j.DevComms[rank]
	cfg := kernel.Config{Name: name, GPU: rank, Grid: grid, Block: block, WaveSize: j.Node.Arch().WaveSize}
	// The launch's state, its code's receiver: from the run's arena with
	// a Scratch (jobArenaOf), or one allocation (a closure over it and the
	// handles' variable were two a launch).
	var lc *launchCode
	ar := jobArenaOf(j.Sim)
	if ar != nil {
		lc = ar.launches.New()
	} else {
		lc = new(launchCode)
	}
	*lc = launchCode{j: j, ar: ar, dc: dc, grid: grid, block: block, fn: fn}
	return kernel.LaunchCode(j.Sim, cfg, lc)
}

// launchCode is a LaunchNamed kernel's code and state.
type launchCode struct {
	j           *Job
	ar          *jobArena
	dc          cco.DevComm
	grid, block int
	fn          func(t *kernel.Thread, sdma *cco.Sdma)
	// sdmas are the lanes' handles in one slice, made by the first lane
	// to run (so only once Launch has checked the grid), each lane
	// initialising its own (an allocation a lane before). Lanes run one
	// at a time. With a Scratch they come from its arena.
	sdmas []cco.Sdma
}

func (lc *launchCode) Run(t *kernel.Thread) {
	if lc.sdmas == nil {
		if lc.ar != nil {
			lc.sdmas = lc.ar.sdmas.Take(lc.grid * lc.block)
		} else {
			lc.sdmas = make([]cco.Sdma, lc.grid*lc.block)
		}
	}
	s := &lc.sdmas[t.BlockIdx()*lc.block+t.ThreadIdx()]
	s.Init(t, lc.dc)
	lc.fn(t, s)
}

// jobArena is where run s's launches make their states and their lanes'
// ccoSdma handles.
type jobArena struct {
	sdmas    slab.Arena[cco.Sdma]
	launches slab.Arena[launchCode]
}

// jobArenaKey keys a Scratch's job arena.
var jobArenaKey = sim.NewLocalKey[*jobArena]()

// jobArenaOf is run s's job arena: its Scratch's, kept across the runs
// that borrow it (an explore worker's seeds: a 4 KiB all-to-all seed
// made 10 KiB of handles) and reset at the run's first use, or nil
// without a Scratch. No handle or launch state outlives its run: lanes
// hold them, reports copy what they say.
func jobArenaOf(s *sim.Sim) *jobArena {
	return sim.RunScratch(s, jobArenaKey, func(ar *jobArena) {
		ar.sdmas.Reset()
		ar.launches.Reset()
	})
}

// Run runs the job to the end: nil, a *sim.HangError with the report, or
// the failure (a debug trap, an engine fault).
func (j *Job) Run() error { return j.Sim.Run() }

// Close gives back the node's memory (engine.Node.Close): call it once the
// run and its checks are over. A job nobody closes releases it when it is
// unreachable.
func (j *Job) Close() { j.Node.Close() }

// Read returns n bytes of window w at off on its own rank.
func (j *Job) Read(w cco.Window, off, n uint64) ([]byte, error) {
	b := make([]byte, n)
	return b, j.Node.Memory().Read(w.LocalPtr(off), b)
}

// Write stores b in window w at off on its own rank.
func (j *Job) Write(w cco.Window, off uint64, b []byte) error {
	return j.Node.Memory().Write(w.LocalPtr(off), b)
}
