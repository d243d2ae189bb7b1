package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/sim"
)

// InjectSpec is fault injection as a user states it: an explicit plan,
// or "draw one from the seed" (Seeded, with the chance Rate that a run
// gets a fault at all), or both.
type InjectSpec struct {
	Plan   InjectPlan
	Seeded bool
	Rate   float64 // chance of a seeded fault per run; 0 with Seeded = DefaultSeededRate
}

// DefaultSeededRate is the chance that a seeded plan plants a fault in a
// run: in the range ROCr's lost completion signals showed (2.5–14% of runs).
const DefaultSeededRate = 0.1

// seededStream is the sim.Rand stream a seeded plan is drawn from (its
// per-use draws come from InjectStream).
const seededStream = InjectStream + 1

// Empty reports whether the spec injects nothing.
func (sp InjectSpec) Empty() bool { return !sp.Seeded && sp.Plan.Empty() }

// For returns the plan of the run on s, for a node of gpus GPUs using
// queue ids below queues: the explicit entries plus, when seeded, what the
// seed draws.
func (sp InjectSpec) For(s *sim.Sim, gpus, queues int) *InjectPlan {
	p := sp.Plan
	if sp.Seeded {
		rate := sp.Rate
		if rate == 0 {
			rate = DefaultSeededRate
		}
		d := SeededPlan(s.Rand(seededStream), rate, gpus, queues)
		p.DropSignals = append(p.DropSignals, d.DropSignals...)
		p.SignalDropRate = max(p.SignalDropRate, d.SignalDropRate)
		if p.StallBytes == 0 {
			p.StallBytes = d.StallBytes
		}
		p.DeadQueues = append(p.DeadQueues, d.DeadQueues...)
		p.DoorbellLossRate = max(p.DoorbellLossRate, d.DoorbellLossRate)
		if p.DoorbellDelayRate == 0 {
			p.DoorbellDelayRate, p.DoorbellDelay = d.DoorbellDelayRate, d.DoorbellDelay
		}
		if p.RptrLag == 0 {
			p.RptrLag = d.RptrLag
		}
	}
	return &p
}

// String renders the spec in the form ParseInject reads.
func (sp InjectSpec) String() string {
	var parts []string
	if sp.Seeded {
		s := "seed"
		if sp.Rate != 0 {
			s += "=" + strconv.FormatFloat(sp.Rate, 'g', -1, 64)
		}
		parts = append(parts, s)
	}
	if !sp.Plan.Empty() {
		parts = append(parts, sp.Plan.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// ParseInject reads a comma-separated fault spec:
//
//	none                      nothing (also "")
//	seed[=RATE]               a plan drawn from the run's seed (RATE: chance of a fault per run)
//	drop-signal=G:P:Q#N       lose the N-th ATOMIC of queue gpuG→gpuP qQ
//	signal-drop-rate=F        lose each ATOMIC with chance F
//	stall-bytes=SIZE          stall the engine on copies ≥ SIZE (K, M, G: powers of 1024)
//	dead=G:P:Q                the queue is on a dead engine
//	lost-doorbell=G:P:Q#N     lose the N-th doorbell of the queue
//	doorbell-loss-rate=F      lose each doorbell with chance F
//	doorbell-delay=DUR@F      delay each doorbell, with chance F, by up to DUR
//	rptr-lag=DUR[@G:P:Q...]   write rptr back DUR late (on the listed queues only)
//
// DUR is a number with ps, ns, us (µs) or ms.
func ParseInject(s string) (InjectSpec, error) {
	var sp InjectSpec
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return sp, nil
	}
	for _, item := range strings.Split(s, ",") {
		key, val, _ := strings.Cut(strings.TrimSpace(item), "=")
		bad := func(err error) (InjectSpec, error) {
			return InjectSpec{}, fmt.Errorf("fault spec %q: %s: %w", s, item, err)
		}
		var err error
		switch key {
		case "seed":
			sp.Seeded = true
			if val != "" {
				if sp.Rate, err = parseRate(val); err != nil {
					return bad(err)
				}
			}
		case "drop-signal", "lost-doorbell":
			var r PacketRef
			if r, err = parseRef(val); err != nil {
				return bad(err)
			}
			if key == "drop-signal" {
				sp.Plan.DropSignals = append(sp.Plan.DropSignals, r)
			} else {
				sp.Plan.LostDoorbells = append(sp.Plan.LostDoorbells, r)
			}
		case "signal-drop-rate":
			if sp.Plan.SignalDropRate, err = parseRate(val); err != nil {
				return bad(err)
			}
		case "doorbell-loss-rate":
			if sp.Plan.DoorbellLossRate, err = parseRate(val); err != nil {
				return bad(err)
			}
		case "stall-bytes":
			if sp.Plan.StallBytes, err = parseSize(val); err != nil {
				return bad(err)
			}
		case "dead":
			var id QueueID
			if id, err = parseQueue(val); err != nil {
				return bad(err)
			}
			sp.Plan.DeadQueues = append(sp.Plan.DeadQueues, id)
		case "doorbell-delay":
			d, f, ok := strings.Cut(val, "@")
			if !ok {
				return bad(fmt.Errorf("want DUR@RATE"))
			}
			if sp.Plan.DoorbellDelay, err = parseDuration(d); err != nil {
				return bad(err)
			}
			if sp.Plan.DoorbellDelayRate, err = parseRate(f); err != nil {
				return bad(err)
			}
		case "rptr-lag":
			parts := strings.Split(val, "@")
			if sp.Plan.RptrLag, err = parseDuration(parts[0]); err != nil {
				return bad(err)
			}
			for _, qs := range parts[1:] {
				id, err := parseQueue(qs)
				if err != nil {
					return bad(err)
				}
				sp.Plan.RptrLagQueues = append(sp.Plan.RptrLagQueues, id)
			}
		default:
			return bad(fmt.Errorf("unknown fault %q (want seed, drop-signal, signal-drop-rate, stall-bytes, dead, lost-doorbell, doorbell-loss-rate, doorbell-delay, rptr-lag)", key))
		}
	}
	if sp.Plan.DoorbellDelayRate > 0 && sp.Plan.DoorbellDelay == 0 {
		return InjectSpec{}, fmt.Errorf("fault spec %q: doorbell-delay needs a positive duration", s)
	}
	return sp, nil
}

func parseRate(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= 0 && f <= 1) {
		return 0, fmt.Errorf("rate %q: want a number in [0, 1]", s)
	}
	return f, nil
}

func parseQueue(s string) (QueueID, error) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return QueueID{}, fmt.Errorf("queue %q: want GPU:PEER:Q", s)
	}
	var v [3]int
	for i, x := range f {
		n, err := strconv.Atoi(x)
		if err != nil || n < 0 || n > 1<<20 {
			return QueueID{}, fmt.Errorf("queue %q: %q is not a small non-negative integer", s, x)
		}
		v[i] = n
	}
	return QueueID{GPU: v[0], Peer: v[1], Q: v[2]}, nil
}

func parseRef(s string) (PacketRef, error) {
	q, n, ok := strings.Cut(s, "#")
	if !ok {
		return PacketRef{}, fmt.Errorf("%q: want GPU:PEER:Q#N", s)
	}
	id, err := parseQueue(q)
	if err != nil {
		return PacketRef{}, err
	}
	k, err := strconv.Atoi(n)
	if err != nil || k < 0 {
		return PacketRef{}, fmt.Errorf("%q: index %q is not a non-negative integer", s, n)
	}
	return PacketRef{id, k}, nil
}

func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("size %q: want a positive byte count (K, M, G suffixes), at most 1 PiB", s)
	}
	return n * mult, nil
}

func parseDuration(s string) (sim.Time, error) {
	units := []struct {
		suffix string
		unit   sim.Time
	}{{"ps", sim.Picosecond}, {"ns", sim.Nanosecond}, {"us", sim.Microsecond}, {"µs", sim.Microsecond}, {"ms", sim.Millisecond}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || !(f >= 0) || f*float64(u.unit) > float64(sim.Second) {
				return 0, fmt.Errorf("duration %q: want a non-negative number up to 1s", s)
			}
			return sim.Time(f * float64(u.unit)), nil
		}
	}
	return 0, fmt.Errorf("duration %q: want a number with ps, ns, us or ms", s)
}
