package main

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	emujob "github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// job is the host side every scenario starts from, as a MORI program does:
// one emulated MI355X node of o.Ranks GPUs, one comm per rank (rank r on
// GPU r), then windows and dev comms (package job builds them). Scenarios
// differ only in their kernels and checks.
type job struct {
	*emujob.Job
	o      options
	s      *sim.Sim
	n      *engine.Node
	mem    *engine.Memory
	env    cco.Env
	comms  []*cco.Comm
	dcs    []cco.DevComm
	finish []sim.Time // per rank: when its kernel's work was done
	// scratch receives consumer loads (consume); lanes run one at a time.
	scratch []byte
}

// runEnv is the process environment of a run: the caller's MORI_*
// variables (MORI_CCO_SDMA_DEBUG turns the debug checks on), with SDMA on
// unless the caller says otherwise.
func runEnv() cco.Env {
	env := cco.OSEnv()
	if _, ok := env["MORI_ENABLE_SDMA"]; !ok {
		env["MORI_ENABLE_SDMA"] = "1"
	}
	return env
}

// newJob builds the job a run uses: the seed, perturbation, strategy,
// race detector, faults, timing model and metrics registry from o; the
// observer sees the node and host before anything runs.
func newJob(o options) (*job, error) {
	m, err := model.Load(o.Model)
	if err != nil {
		return nil, fmt.Errorf("invalid --model: %w", err)
	}
	c := emujob.Config{Sim: sim.Config{Seed: o.Seed, Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT},
		Ranks: o.Ranks, Model: m, Registry: o.registry, Env: runEnv(), Race: o.Race}
	if !o.Faults.Empty() {
		c.Inject = func(s *sim.Sim) *engine.InjectPlan { return o.Faults.For(s, o.Ranks, o.Queues) }
	}
	j, err := emujob.New(c)
	if err != nil {
		return nil, err
	}
	if o.observe != nil {
		o.observe(j.Node, j.Host)
	}
	return &job{Job: j, o: o, s: j.Sim, n: j.Node, mem: j.Node.Memory(), env: j.Env, comms: j.Comms, finish: make([]sim.Time, o.Ranks)}, nil
}

// window allocates and registers a window of size bytes on every rank, in
// rank order, so that the k-th registration is symmetric across ranks as
// ccoWindowRegister requires.
// In a phantom run (--phantom) windows have no bytes.
func (j *job) window(size uint64) ([]cco.Window, error) {
	if j.o.Phantom {
		return j.PhantomWindow(size)
	}
	return j.Window(size)
}

// devComms creates every rank's dev comm with o.Queues queue ids per peer
// and the debug checks when o.Debug is set.
func (j *job) devComms() error {
	if err := j.CreateDevComms(j.o.Queues, j.o.Debug); err != nil { // the race detector is the job's (o.Race)
		return err
	}
	for r, dc := range j.DevComms {
		if dc.Sdma.SdmaNumQueue == 0 {
			return fmt.Errorf("rank %d has no SDMA queues: MORI_ENABLE_SDMA=%q in the environment turns SDMA off", r, j.env["MORI_ENABLE_SDMA"])
		}
	}
	j.dcs = j.DevComms
	return nil
}

// launch starts fn as rank's kernel (grid blocks of threads threads),
// named rank<r> so that hang reports name the rank.
func (j *job) launch(rank, grid, threads int, fn func(t *kernel.Thread, sdma *cco.Sdma)) error {
	_, err := j.launchNamed(fmt.Sprintf("rank%d", rank), rank, grid, threads, fn)
	return err
}

func (j *job) launchNamed(name string, rank, grid, threads int, fn func(t *kernel.Thread, sdma *cco.Sdma)) (*kernel.Kernel, error) {
	return j.LaunchNamed(name, rank, grid, threads, fn)
}

// consume is a lane's load of n received bytes at addr, what the data's
// consumer does next: the race detector checks it is ordered after the
// COPY that wrote them. The bytes themselves are checked from the host
// after the run. A phantom run has no bytes to load.
func (j *job) consume(m cco.Mem, addr, n uint64) {
	if j.o.Phantom {
		return
	}
	if uint64(cap(j.scratch)) < n {
		j.scratch = make([]byte, n)
	}
	m.Read(addr, j.scratch[:n])
}

// done records that rank's work was done at t's current time (the latest
// of its lanes).
func (j *job) done(rank int, t *kernel.Thread) { j.finish[rank] = max(j.finish[rank], t.Now()) }

// fill writes, on every rank r, fillBlock(r, p) for p in 0..ranks-1 at
// offsets p × bytes of w (the pattern any scenario can check against).
// A phantom run has nowhere to put it and nothing to check it against.
func (j *job) fill(w []cco.Window, blocks int, bytes uint64, src func(r, p int) (int, int)) error {
	if j.o.Phantom {
		return nil
	}
	buf := make([]byte, uint64(blocks)*bytes)
	for r := range w {
		for p := range blocks {
			a, b := src(r, p)
			fillBlock(buf[uint64(p)*bytes:uint64(p+1)*bytes], a, b)
		}
		if err := j.mem.Write(w[r].LocalPtr(0), buf); err != nil {
			return err
		}
	}
	return nil
}

// sendRecv is an all-to-all's setup: a send and a receive window of
// o.Ranks blocks of blk bytes on every rank, each send window holding
// fillBlock(r, p) at block p, then the dev comms.
func (j *job) sendRecv(blk uint64) (send, recv []cco.Window, err error) {
	span := uint64(j.o.Ranks) * blk
	if send, err = j.window(span); err != nil {
		return nil, nil, err
	}
	if recv, err = j.window(span); err != nil {
		return nil, nil, err
	}
	if err := j.fill(send, j.o.Ranks, blk, func(r, p int) (int, int) { return r, p }); err != nil {
		return nil, nil, err
	}
	if err := j.devComms(); err != nil {
		return nil, nil, err
	}
	return send, recv, nil
}

// outcome is the summary of a finished run; sent and received give each
// rank's byte counts.
func (j *job) outcome(sent, received func(r int) uint64) *outcome {
	res := &outcome{Model: j.n.Model().Name(), End: j.s.Now(), Seed: j.s.Seed(), Digest: j.s.Digest(), Injected: j.n.Injected(), Steps: j.s.Steps()}
	for r := range j.comms {
		res.Ranks = append(res.Ranks, rankResult{Rank: r, Finish: j.finish[r], BytesSent: sent(r), BytesReceived: received(r)})
	}
	return res
}

// checker collects data-check failures and keeps the first in detail.
type checker struct {
	bad   int
	first string
}

func (c *checker) failf(format string, args ...any) {
	c.bad++
	if c.first == "" {
		c.first = fmt.Sprintf(format, args...)
	}
}

// block compares got with want and records the first difference.
func (c *checker) block(what string, got, want []byte) {
	if string(got) == string(want) {
		return
	}
	n, at := 0, -1
	for i := range got {
		if got[i] != want[i] {
			if at < 0 {
				at = i
			}
			n++
		}
	}
	c.failf("%s: %d of %d bytes wrong, first at block offset %d (got %#02x, want %#02x)", what, n, len(got), at, got[at], want[at])
}

// signal checks one signal slot of rank r's pool.
func (c *checker) signal(dc cco.DevComm, r, src, q int, want uint64) error {
	v, err := dc.Signal(src, q)
	if err != nil {
		return err
	}
	if v != want {
		c.failf("rank %d's signal slot (sender %d, queue %d) is %d, want %d", r, src, q, v, want)
	}
	return nil
}

func (c *checker) err(scenario string, seed uint64) error {
	if c.bad == 0 {
		return nil
	}
	return &mismatchError{Scenario: scenario, Seed: seed, Wrong: c.bad, Detail: fmt.Sprintf("%d wrong blocks or signals; first: %s", c.bad, c.first)}
}
