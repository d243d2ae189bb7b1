package scenario

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// Env is the host side every SDMA scenario starts from, as a MORI program
// does: one emulated MI355X node of O.Ranks GPUs, one comm per rank (rank r
// on GPU r), then windows and dev comms (package job builds them; Env
// adds only what the options decide: phantom windows, the debug checks,
// the finish times and the consumer's loads). Scenarios differ only in
// their kernels and checks.
type Env struct {
	*job.Job
	O Options
	// Finish is, per rank, when its kernel's work was done (Done).
	Finish []sim.Time
	// scratch receives consumer loads (Consume); lanes run one at a time.
	scratch []byte
}

// ProcessEnv is the process environment of a run: the caller's MORI_*
// variables (MORI_CCO_SDMA_DEBUG turns the debug checks on), with SDMA on
// unless the caller says otherwise.
func ProcessEnv() cco.Env {
	env := cco.OSEnv()
	if _, ok := env["MORI_ENABLE_SDMA"]; !ok {
		env["MORI_ENABLE_SDMA"] = "1"
	}
	return env
}

// JobConfig is the job.Config of a run with o: the seed, perturbation,
// strategy, race detector, faults, timing model and metrics registry.
func JobConfig(o Options) (job.Config, error) {
	m, err := model.Load(o.Model)
	if err != nil {
		return job.Config{}, fmt.Errorf("invalid --model: %w", err)
	}
	c := job.Config{Sim: sim.Config{Seed: o.Seed, Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT, Stop: o.Stop},
		Ranks: o.Ranks, Model: m, Registry: o.Registry, Env: ProcessEnv(), Race: o.Race, Scratch: o.Scratch}
	if o.Scratch != nil {
		c.Sim.Scratch = o.Scratch.Sim
	}
	if !o.Faults.Empty() {
		c.Inject = func(s *sim.Sim) *engine.InjectPlan { return o.Faults.For(s, o.Ranks, o.Queues) }
	}
	return c, nil
}

// NewEnv builds the job a run with o uses; o.Observe sees the node and
// host before anything runs.
func NewEnv(o Options) (*Env, error) {
	c, err := JobConfig(o)
	if err != nil {
		return nil, err
	}
	return Build(o, c)
}

// Build is NewEnv from a job configuration (JobConfig, adjusted: another
// GPU count, a node configuration hook).
func Build(o Options, c job.Config) (*Env, error) {
	j, err := job.New(c)
	if err != nil {
		return nil, err
	}
	if o.Observe != nil {
		o.Observe(j.Node, j.Host)
	}
	return &Env{Job: j, O: o, Finish: make([]sim.Time, o.Ranks)}, nil
}

// Mem is the node's memory, as the host reads and writes it.
func (e *Env) Mem() *engine.Memory { return e.Node.Memory() }

// Window allocates and registers a window of size bytes on every rank, in
// rank order, so that the k-th registration is symmetric across ranks as
// ccoWindowRegister requires. In a phantom run windows have no bytes.
func (e *Env) Window(size uint64) ([]cco.Window, error) {
	if e.O.Phantom {
		return e.PhantomWindow(size)
	}
	return e.Job.Window(size)
}

// SetupDevComms creates every rank's dev comm with O.Queues queue ids per peer
// and the debug checks when O.Debug is set (the race detector is the
// job's, O.Race).
func (e *Env) SetupDevComms() error {
	if err := e.CreateDevComms(e.O.Queues, e.O.Debug); err != nil {
		return err
	}
	for r, dc := range e.Job.DevComms {
		if dc.Sdma.SdmaNumQueue == 0 {
			return fmt.Errorf("rank %d has no SDMA queues: MORI_ENABLE_SDMA=%q in the environment turns SDMA off", r, e.Env["MORI_ENABLE_SDMA"])
		}
	}
	return nil
}

// LaunchRank starts fn as rank's kernel (grid blocks of threads threads),
// named rank<r> so that hang reports name the rank.
func (e *Env) LaunchRank(rank, grid, threads int, fn func(t *kernel.Thread, sdma *cco.Sdma)) error {
	_, err := e.Launch(rank, grid, threads, fn)
	return err
}

// LaunchAll starts fn on every rank, <<<grid, threads>>>.
func (e *Env) LaunchAll(grid, threads int, fn func(rank int, t *kernel.Thread, sdma *cco.Sdma)) error {
	for rank := range e.Comms {
		if err := e.LaunchRank(rank, grid, threads, func(t *kernel.Thread, sdma *cco.Sdma) { fn(rank, t, sdma) }); err != nil {
			return err
		}
	}
	return nil
}

// Consume is a lane's load of n received bytes at addr, what the data's
// consumer does next: the race detector checks it is ordered after the
// COPY that wrote them. The bytes themselves are checked from the host
// after the run. A phantom run has no bytes to load. Without the race
// detector nothing looks at the load but the memory (copies in flight
// land before it, as before any access): the bytes are reached in place
// instead of copied out.
func (e *Env) Consume(m cco.Mem, addr, n uint64) {
	if e.O.Phantom {
		return
	}
	if e.Sim.Race() == nil {
		// Nothing looks at the values: the load lands what is due and
		// leaves a block landed by reference (Env.setPristine) unmoved.
		if err := e.Mem().Reach("read", addr, n); err != nil {
			panic(fmt.Sprintf("scenario: consume: %v", err)) // the scenario's own window: a bug here
		}
		return
	}
	if uint64(cap(e.scratch)) < n {
		e.scratch = make([]byte, n)
	}
	m.Read(addr, e.scratch[:n])
}

// Done records that rank's work was done at t's current time (the latest
// of its lanes).
func (e *Env) Done(rank int, t *kernel.Thread) { e.Finish[rank] = max(e.Finish[rank], t.Now()) }

// Fill writes, on every rank r, Pattern(src(r, p)) for p in 0..blocks-1
// at offsets p × bytes of w (the pattern any scenario can check against).
// A phantom run has nowhere to put it and nothing to check it against.
func (e *Env) Fill(w []cco.Window, blocks int, bytes uint64, src func(r, p int) (int, int)) error {
	if e.O.Phantom {
		return nil
	}
	n := uint64(blocks) * bytes
	for r := range w {
		// Straight into the window (no staging buffer), then announced as
		// a host write.
		dst, err := e.Mem().Bytes("write", w[r].LocalPtr(0), n)
		if err != nil {
			return err
		}
		pats := patterns()
		for p := range blocks {
			a, b := src(r, p)
			fillPattern(pats, dst[uint64(p)*bytes:uint64(p+1)*bytes], a, b)
		}
		e.Mem().Notify(w[r].LocalPtr(0), n)
	}
	return nil
}

// SendRecv is an all-to-all's setup: a send and a receive window of
// O.Ranks blocks of blk bytes on every rank, each send window holding
// Pattern(r, p) at block p, then the dev comms.
func (e *Env) SendRecv(blk uint64) (send, recv []cco.Window, err error) {
	if send, err = e.PatternWindow(e.O.Ranks, blk, func(r, p int) (int, int) { return r, p }); err != nil {
		return nil, nil, err
	}
	if recv, err = e.Window(uint64(e.O.Ranks) * blk); err != nil {
		return nil, nil, err
	}
	e.TrackBlocks(recv, e.O.Ranks, blk)
	if err := e.SetupDevComms(); err != nil {
		return nil, nil, err
	}
	return send, recv, nil
}

// PatternWindow is Window of blocks × bytes holding what Fill writes
// there: on every rank r, Pattern(src(r, p)) at block p. Blocks from
// sumMin up (in whole 256 B granules, all in the pattern cache) are not
// written: the window reads as the cache's blocks (patternFill.Blocks).
// Otherwise the memory keeps the window's mapping for the next run by its
// content (engine.Memory.Prefill): a run after another of the same shape
// whose lanes did not write it gets it back filled, the pattern not
// written again.
func (e *Env) PatternWindow(blocks int, bytes uint64, src func(r, p int) (int, int)) ([]cco.Window, error) {
	span := uint64(blocks) * bytes
	if e.O.Phantom {
		return e.PhantomWindow(span)
	}
	ws := make([]cco.Window, len(e.Comms))
	// Each rank's content is one patternFill, the ranks' in one slice and
	// their pairs in another (a slice and two closures a rank before).
	fills := make([]patternFill, len(e.Comms))
	all := make([][2]int, blocks*len(e.Comms))
	for r, c := range e.Comms {
		pairs := all[r*blocks : (r+1)*blocks : (r+1)*blocks]
		for p := range pairs {
			a, b := src(r, p)
			pairs[p] = [2]int{a, b}
		}
		fills[r] = patternFill{pairs: pairs, bytes: bytes, span: span}
		e.Mem().PrefillContent(&fills[r])
		buf, err := cco.MemAlloc(c, span)
		if e.Mem().EndPrefill() && err == nil {
			// Allocated elsewhere than the node's memory: fill it by hand.
			if err = e.fillWindow(buf, span, pairs, bytes); err != nil {
				return nil, err
			}
		}
		if err != nil {
			return nil, err
		}
		if ws[r], err = cco.WindowRegister(c, buf, span); err != nil {
			return nil, err
		}
	}
	// A block received whole from one of the windows' blocks by reference
	// is checked by that block's cached sum.
	e.Mem().SetSourceSums(patternSourceSum)
	return ws, nil
}

// fillWindow writes PatternWindow's blocks at addr as the host does.
func (e *Env) fillWindow(addr, span uint64, pairs [][2]int, bytes uint64) error {
	dst, err := e.Mem().Bytes("write", addr, span)
	if err != nil || dst == nil {
		return err
	}
	fillBlocks(dst, pairs, bytes)
	e.Mem().Notify(addr, span)
	return nil
}

// patternFill is a PatternWindow rank's content (engine.Content): blocks
// of bytes holding Pattern(pairs[p]), zeros past span.
type patternFill struct {
	pairs       [][2]int
	bytes, span uint64
}

func (f *patternFill) Key() string {
	return fmt.Sprintf("scenario.Pattern blocks of %d B: %v", f.bytes, f.pairs)
}

func (f *patternFill) Fill(b []byte) {
	fillBlocks(b, f.pairs, f.bytes)
	clear(b[f.span:])
}

// Blocks is the window's content as the pattern cache's blocks
// (engine.Content) when they are large enough to be checked by their
// sums (sumMin) and all cached: the memory then writes none of the
// window, which reads as them (lsa.Space.Refer), copies from it land by
// reference, and a block received whole from one of them is checked by
// its cached sum, so an all-to-all's copies and check move no bytes.
func (f *patternFill) Blocks() (uint64, [][]byte) {
	if f.bytes < sumMin {
		return 0, nil
	}
	pats := patterns()
	blocks := make([][]byte, len(f.pairs))
	for p, ab := range f.pairs {
		if blocks[p] = pats.block(f.bytes, ab[0], ab[1]); blocks[p] == nil {
			return 0, nil // past the cache: filled in place
		}
		pats = patterns() // a miss published a new snapshot
	}
	return f.bytes, blocks
}

// fillBlocks writes Pattern(pairs[p]) at block p (bytes each) of b.
func fillBlocks(b []byte, pairs [][2]int, bytes uint64) {
	pats := patterns()
	for p, ab := range pairs {
		fillPattern(pats, b[uint64(p)*bytes:uint64(p+1)*bytes], ab[0], ab[1])
	}
}

// TrackBlocks has the memory sum the blocks of blk bytes of every rank's
// window w as copies land in them (engine.Memory.TrackSum), from sumMin
// bytes a block: CheckBlocks then compares a block's sum with the
// expected one without reading the block back (an 8-rank 1 MiB
// all-to-all's 64 MiB a seed). A block whose bytes were not landed once,
// in order, and written by nothing else has no sum, and CheckBlocks reads
// it as before; so has every block where the memory refuses to track (a
// C++ program's native memory).
func (e *Env) TrackBlocks(w []cco.Window, blocks int, blk uint64) {
	if e.O.Phantom || blk < sumMin {
		return
	}
	for r := range w {
		for p := range blocks {
			if e.Mem().TrackSum(w[r].LocalPtr(0)+uint64(p)*blk, blk) != nil {
				return // untracked: the check reads the blocks
			}
		}
	}
}

// CheckBlocks is the receive check: on every rank r, window w holds at
// block p (blk bytes at off(p)) Pattern(from(r, p)), for every p that
// want(r, p) keeps. A block summed as it landed (TrackBlocks) is checked
// by its sum; any other, and any whose sum differs, is read. Nothing is
// read in a phantom run.
func (e *Env) CheckBlocks(c *Checker, w []cco.Window, blocks int, blk uint64, want func(r, p int) (src, dst int, ok bool), what func(r, p int) string) error {
	if e.O.Phantom {
		return nil
	}
	pats := patterns()
	for r := range w {
		for p := range blocks {
			src, dst, ok := want(r, p)
			if !ok {
				continue
			}
			at := w[r].LocalPtr(0) + uint64(p)*blk
			if v, ok := e.Mem().LandedSum(at, blk); ok && v == pats.sum(blk, src, dst) {
				continue // equal sums: equal bytes, as patternEqual's would be
			}
			// The block's own bytes, read in place (the run is over):
			// only now, as a block landed by reference (Env.setPristine)
			// is copied in when read.
			blkGot, err := e.Mem().Bytes("read", at, blk)
			if err != nil {
				return err
			}
			if !patternEqual(pats, blkGot, src, dst) { // the whole expected block only to describe a mismatch
				c.Block(what(r, p), blkGot, PatternOf(blk, 0, src, dst))
			}
		}
	}
	return nil
}

// Outcome is the summary of a finished run; sent and received give each
// rank's byte counts.
func (e *Env) Outcome(sent, received func(r int) uint64) *Outcome {
	res := e.Result()
	for r := range e.Comms {
		res.Ranks = append(res.Ranks, RankResult{Rank: r, Finish: e.Finish[r], BytesSent: sent(r), BytesReceived: received(r)})
	}
	return res
}

// Result is the run's summary without per-rank rows.
func (e *Env) Result() *Outcome {
	return &Outcome{Model: e.Node.Model().Name(), End: e.Sim.Now(), Seed: e.Sim.Seed(), Digest: e.Sim.Digest(), Injected: e.Node.Injected(), Steps: e.Sim.Steps()}
}

// CheckSignals is the signal check: on every rank r, the slot of sender p
// and queue id q holds want(r, p, q), for every (p, q) that want keeps.
func (e *Env) CheckSignals(c *Checker, want func(r, p, q int) (v uint64, ok bool)) error {
	for r, dc := range e.Job.DevComms {
		for p := range e.O.Ranks {
			for q := range e.O.Queues {
				v, ok := want(r, p, q)
				if !ok {
					continue
				}
				if err := c.Signal(dc, r, p, q, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
