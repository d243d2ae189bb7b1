package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Level selects how far a run's timing strays, from the seed, from the
// calibrated model: the spreads hardware shows between runs and between
// events of one run. LevelExact (0) is the model's timing itself.
type Level uint8

// Perturbation levels.
const (
	// LevelExact: every duration is the model's, only tie-breaks vary.
	LevelExact Level = 0
	// LevelRealistic: spreads within what copy-engine hardware shows (see
	// [Spread] for the figures and their sources). The default of
	// exploration.
	LevelRealistic Level = 1
	// LevelStress: spreads about twice the realistic ones and heavier
	// tails, for a search that may look past what hardware usually does.
	LevelStress Level = 2
	// MaxLevel is the highest level.
	MaxLevel = LevelStress
)

var levelNames = [...]string{"exact", "realistic", "stress"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return fmt.Sprintf("%d (%s)", l, levelNames[l])
	}
	return fmt.Sprintf("%d (invalid)", l)
}

// ParseLevel reads a level as its number or its name.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if s == n || s == fmt.Sprint(i) {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("perturbation level %q: want 0..%d or one of exact, realistic, stress", s, MaxLevel)
}

// Spread is what a perturbation level does. A perturbed duration is
//
//	d × run(key) × event
//
// where run(key) is drawn once per run for each key (one SDMA queue's
// engine, one link direction, one GPU's CUs) and event once per use.
//
// Sources of the realistic figures:
//   - The seed document's numbers are medians of 100 runs. Real copy-engine
//     runs spread about ±20% between their fastest and slowest (min–max
//     around the median), with tails of 2–3× (the measurements on
//     real copy engines; emud has no GPU to measure its own). Run ±12% and
//     event ±8% together span about ±20% per duration; RunTail and
//     EventTail give the 2–3× tails: in a rare run one key is slow for
//     all of it (a throttled engine, a busy link), and a rare event is
//     slow once (a fetch
//     that misses, a preempted doorbell).
//   - Launch skew: host launches of one collective's kernels on several
//     GPUs do not land together (one process per GPU, each with its own
//     launch latency and scheduling). Up to 10 µs with a 2% tail to 100
//     µs (a descheduled host thread, the "pause one GPU" that reproduced
//     RCCL's 20% deadlock) is an estimate of that, not a measurement: no
//     document here measures launch skew. Likewise the up to 1 µs between
//     blocks of one grid (the workgroup dispatcher places blocks one after
//     another and waits for free CUs) is a choice, and so is its tail: 2%
//     of blocks start up to 20 µs late (their CUs still busy with another
//     kernel's waves, a dispatcher that stalls), so that CTAs of one grid
//     can start tens of µs apart, as on a loaded GPU. The tail's draws come
//     from a stream of their own, so a block that does not take it starts
//     when it did before the tail existed.
//   - Poll phase: an engine's POLL_REGMEM re-reads on its own interval
//     timer, not in step with the writer; the first re-read lands anywhere
//     in one interval.
//
// The stress figures are choices (twice the spreads, more frequent and
// heavier tails), not measurements.
type Spread struct {
	Run, Event       float64 // relative half-widths of the uniform factors
	RunTailP         float64 // chance a run has one key slow for all of it...
	EventTailP       float64 // ...chance one use is slow...
	TailMin, TailMax float64 // ...by a factor in [TailMin, TailMax]
	GPUSkew          Time    // a launch starts up to this late
	GPUSkewTailP     float64 // chance a launch is up to GPUSkewTail late instead
	GPUSkewTail      Time
	BlockSkew        Time    // each block of a launch starts up to this later
	BlockSkewTailP   float64 // chance a block starts up to BlockSkewTail later instead
	BlockSkewTail    Time
	PollPhase        bool // an engine poll's first re-read falls anywhere in its interval
}

// Spreads returns the spread of level l (the zero Spread for LevelExact).
func Spreads(l Level) Spread {
	switch l {
	case LevelRealistic:
		return Spread{Run: 0.12, Event: 0.08, RunTailP: 0.02, EventTailP: 0.01, TailMin: 2, TailMax: 3,
			GPUSkew: 10 * Microsecond, GPUSkewTailP: 0.02, GPUSkewTail: 100 * Microsecond,
			BlockSkew: Microsecond, BlockSkewTailP: 0.02, BlockSkewTail: 20 * Microsecond, PollPhase: true}
	case LevelStress:
		return Spread{Run: 0.25, Event: 0.15, RunTailP: 0.05, EventTailP: 0.03, TailMin: 2, TailMax: 5,
			GPUSkew: 20 * Microsecond, GPUSkewTailP: 0.05, GPUSkewTail: 200 * Microsecond,
			BlockSkew: 2 * Microsecond, BlockSkewTailP: 0.05, BlockSkewTail: 50 * Microsecond, PollPhase: true}
	}
	return Spread{}
}

// Key names what a run-long factor belongs to: a kind of cost and an
// identity within it (a queue, a link direction, a GPU).
type Key struct {
	Kind uint16
	A, B uint32
}

// Kinds of Key the layers above use. Each consumer kind also draws its
// per-use factors from its own stream, so that one consumer drawing more
// numbers does not move another's.
const (
	KeyEngine    uint16 = iota + 1 // an SDMA queue's engine: packet gaps (A: queue subject)
	KeyDoorbell                    // an SDMA queue's doorbell-to-fetch latency
	KeyLink                        // a directed path A → B
	KeyCU                          // CU issue and read costs (A: cost kind)
	KeyHostStore                   // host store visibility
	KeySignal                      // signal visibility to a polling CU
	KeyLane                        // C++ lane code between device calls (A: GPU), host code (A: ^0)
	keyKinds
)

// Perturber applies a run's perturbation level. Its methods are the
// identity at LevelExact and draw nothing, so exact runs keep their digest.
type Perturber struct {
	s      *Sim
	level  Level
	sp     Spread
	run    map[Key]float64
	runRng *rand.Rand
	tail   uint8 // 0: undecided, 1: this run has a slow key still to place, 2: no (more)
	ev     [keyKinds]*rand.Rand
	launch *rand.Rand
	phase  *rand.Rand
	block  *rand.Rand // the block-skew tail's draws (perturbBlockStream)
}

// runTailPick is the chance that each newly keyed cost of a run with a
// tail is the slow one: the tail lands among the first few keys a run
// uses, which are the ones on its critical path as often as any.
const runTailPick = 0.25

// Streams of the perturbation's PRNGs (Sim.Rand), away from the streams
// other packages use.
const (
	perturbRunStream    = 0x9e7_0000
	perturbEventStream  = 0x9e7_0100
	perturbLaunchStream = 0x9e7_0200
	perturbPhaseStream  = 0x9e7_0300
	perturbBlockStream  = 0x9e7_0400
)

func newPerturber(s *Sim, l Level) *Perturber {
	return &Perturber{s: s, level: l, sp: Spreads(l)}
}

// Perturb returns the run's perturber (Config.Perturb).
func (s *Sim) Perturb() *Perturber { return s.perturb }

// Level returns the run's perturbation level.
func (p *Perturber) Level() Level { return p.level }

// On reports whether durations are perturbed at all.
func (p *Perturber) On() bool { return p.level != LevelExact }

func (p *Perturber) runFactor(k Key) float64 {
	if f, ok := p.run[k]; ok {
		return f
	}
	if p.run == nil {
		p.run = map[Key]float64{}
		p.runRng = p.s.Rand(perturbRunStream)
	}
	// float64(…) around each product rounds it, so no platform or compiler
	// flag fuses it into a multiply-add (the Go spec's rule): the same seed
	// draws the same factors everywhere.
	f := 1 + float64(p.sp.Run*(2*p.runRng.Float64()-1))
	if p.tail == 0 {
		// Once per run: does one key of this run get the tail?
		p.tail = 2
		if p.runRng.Float64() < p.sp.RunTailP {
			p.tail = 1
		}
	}
	if p.tail == 1 && p.runRng.Float64() < runTailPick {
		p.tail = 2 // at most one slow key per run
		f *= p.sp.TailMin + float64((p.sp.TailMax-p.sp.TailMin)*p.runRng.Float64())
	}
	p.run[k] = f
	return f
}

func (p *Perturber) eventFactor(kind uint16) float64 {
	r := p.ev[kind%keyKinds]
	if r == nil {
		r = p.s.Rand(perturbEventStream + uint64(kind))
		p.ev[kind%keyKinds] = r
	}
	f := 1 + float64(p.sp.Event*(2*r.Float64()-1))
	if r.Float64() < p.sp.EventTailP {
		f *= p.sp.TailMin + float64((p.sp.TailMax-p.sp.TailMin)*r.Float64())
	}
	return f
}

// Factor is the multiplier of one use of a cost keyed k: 1 at LevelExact.
func (p *Perturber) Factor(k Key) float64 {
	if !p.On() {
		return 1
	}
	return float64(p.runFactor(k) * p.eventFactor(k.Kind))
}

// Duration perturbs d, one use of a cost keyed k.
func (p *Perturber) Duration(k Key, d Time) Time {
	if !p.On() || d <= 0 {
		return d
	}
	return Time(math.Round(float64(float64(d) * p.Factor(k))))
}

// Rate perturbs a rate (a bandwidth): a slower use divides it.
func (p *Perturber) Rate(k Key, r float64) float64 {
	if !p.On() || r <= 0 {
		return r
	}
	return r / p.Factor(k)
}

// LaunchSkew is how late a kernel launch starts after it was asked for.
func (p *Perturber) LaunchSkew() Time {
	if !p.On() {
		return 0
	}
	r := p.launchRng()
	if r.Float64() < p.sp.GPUSkewTailP {
		return Time(r.Int64N(int64(p.sp.GPUSkewTail)))
	}
	return Time(r.Int64N(int64(p.sp.GPUSkew)))
}

// BlockSkew is how much later than its launch one block starts: up to
// Spread.BlockSkew, or, in the tail, up to Spread.BlockSkewTail.
func (p *Perturber) BlockSkew() Time {
	if !p.On() || p.sp.BlockSkew <= 0 {
		return 0
	}
	d := Time(p.launchRng().Int64N(int64(p.sp.BlockSkew)))
	if p.sp.BlockSkewTailP > 0 {
		if p.block == nil {
			p.block = p.s.Rand(perturbBlockStream)
		}
		if p.block.Float64() < p.sp.BlockSkewTailP {
			d += Time(p.block.Int64N(int64(p.sp.BlockSkewTail)))
		}
	}
	return d
}

func (p *Perturber) launchRng() *rand.Rand {
	if p.launch == nil {
		p.launch = p.s.Rand(perturbLaunchStream)
	}
	return p.launch
}

// Phase is the offset, in [0, interval), of a poller's read ticks against
// the moment it started: 0 at LevelExact.
func (p *Perturber) Phase(interval Time) Time {
	if !p.On() || !p.sp.PollPhase || interval <= 1 {
		return 0
	}
	if p.phase == nil {
		p.phase = p.s.Rand(perturbPhaseStream)
	}
	return Time(p.phase.Int64N(int64(interval)))
}

// SpawnAfter is Spawn with the actor's first run d after Now: a launch that
// lands late.
func (s *Sim) SpawnAfter(d Time, name string, fn func(a *Actor)) *Actor {
	a := s.newActor(name, fn)
	s.trace.record(s, s.traceSched, a.id, 1, 0, 0)
	s.wake(a, s.now+max(d, 0))
	return a
}

// Body is an actor's code as a method of what it runs on (a kernel's
// wave), for SpawnBodyAfter.
type Body interface{ Run(a *Actor) }

// SpawnBodyAfter is SpawnAfter running b.Run: for a pointer that already
// holds the actor's state, so that spawning makes no function value.
func (s *Sim) SpawnBodyAfter(d Time, name string, b Body) *Actor {
	a := s.SpawnAfter(d, name, nil)
	a.body = b
	return a
}
