package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Strategy is how the scheduler makes the choices a seed fixes.
type Strategy uint8

const (
	// StrategyRandom picks uniformly among the events due at one instant.
	StrategyRandom Strategy = iota
	// StrategyPCT is probabilistic concurrency testing (Burckhardt et al.,
	// ASPLOS 2010) adapted to virtual time: see [PCT].
	StrategyPCT
)

var strategyNames = [...]string{"random", "pct"}

func (st Strategy) String() string {
	if int(st) < len(strategyNames) {
		return strategyNames[st]
	}
	return fmt.Sprintf("strategy(%d)", st)
}

// ParseStrategy reads a strategy name.
func ParseStrategy(s string) (Strategy, error) {
	for i, n := range strategyNames {
		if s == n {
			return Strategy(i), nil
		}
	}
	return 0, fmt.Errorf("strategy %q: want random or pct", s)
}

// PCT configures StrategyPCT. Every actor (a wave, a host thread) gets a
// distinct random priority when it first competes; among the actors due at
// one instant the highest priority runs first (events that are not actors,
// such as the SDMA engines' steps, draw a fresh priority each time, so
// their order among themselves stays random). Depth−1 change points are
// drawn uniformly over the first Steps scheduling steps. At a change point
// the item about to run, actor or engine event, is preempted: an actor's
// priority drops below every other (the j-th change point gives it j), and
// because ties alone are rare in timed runs, the item is also deferred by
// a delay drawn log-uniformly in [MaxDelay/100, MaxDelay]: a wave
// descheduled, a queue's engine time-sliced away, a GPU paused. A bug that
// needs d such preemptions is found with probability about 1/(n·k^(d−1))
// per run, the PCT bound, for n actors and k steps.
type PCT struct {
	Depth    int  // d: bug depth; Depth−1 change points. 0 = 3
	Steps    int  // k: steps the change points are spread over. 0 = 20000
	MaxDelay Time // longest preemption. 0 = 50 µs
}

// Defaults of PCT.
const (
	DefaultPCTDepth    = 3
	DefaultPCTSteps    = 20000
	DefaultPCTMaxDelay = 50 * Microsecond
	pctStream          = 0x9c7
)

// Check reports a PCT configuration outside its range.
func (c PCT) Check() error {
	switch {
	case c.Depth < 0 || c.Depth > 64:
		return fmt.Errorf("pct depth %d: need 1..64 (0 = %d)", c.Depth, DefaultPCTDepth)
	case c.Steps < 0 || c.Steps > 1<<30:
		return fmt.Errorf("pct steps %d: need 1..2^30 (0 = %d)", c.Steps, DefaultPCTSteps)
	case c.MaxDelay < 0 || c.MaxDelay > Second:
		return fmt.Errorf("pct max delay %v: need 0..1s (0 = %v)", c.MaxDelay, DefaultPCTMaxDelay)
	}
	return nil
}

type pctState struct {
	cfg    PCT
	rng    *rand.Rand
	prio   map[*Actor]int
	change []int // step numbers of the change points, ascending
	next   int   // index into change
}

func newPCT(s *Sim, c PCT) *pctState {
	if c.Depth == 0 {
		c.Depth = DefaultPCTDepth
	}
	if c.Steps == 0 {
		c.Steps = DefaultPCTSteps
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = DefaultPCTMaxDelay
	}
	p := &pctState{cfg: c, rng: s.Rand(pctStream), prio: map[*Actor]int{}}
	for range c.Depth - 1 {
		p.change = append(p.change, 1+p.rng.IntN(c.Steps))
	}
	slices.Sort(p.change)
	return p
}

func (p *pctState) priority(e *event) int {
	if e.actor == nil {
		return p.cfg.Depth + p.rng.IntN(1<<30)
	}
	v, ok := p.prio[e.actor]
	if !ok {
		v = p.cfg.Depth + p.rng.IntN(1<<30)
		p.prio[e.actor] = v
	}
	return v
}

// pick chooses among the events due now: the highest priority.
func (p *pctState) pick(batch []*event) int {
	best, bi := -1, 0
	for i, e := range batch {
		if v := p.priority(e); v > best {
			best, bi = v, i
		}
	}
	return bi
}

// preempt reports whether step is a change point and, if so, lowers the
// actor's priority and returns how long to defer the item.
func (p *pctState) preempt(step int, e *event) (Time, bool) {
	hit := false
	for p.next < len(p.change) && p.change[p.next] <= step {
		p.next++
		hit = true
	}
	if !hit {
		return 0, false
	}
	if e.actor != nil {
		p.prio[e.actor] = p.next // the j-th change point: priority j, below all initial ones
	}
	lo := float64(p.cfg.MaxDelay) / 100
	d := Time(math.Round(lo * math.Pow(100, p.rng.Float64())))
	return max(d, 1), true
}

// Steps returns how many scheduling steps (events and actor turns) the run
// has taken: what PCT's change points are spread over.
func (s *Sim) Steps() int { return s.steps }

// Strategy returns the run's scheduling strategy.
func (s *Sim) Strategy() Strategy { return s.cfg.Strategy }
