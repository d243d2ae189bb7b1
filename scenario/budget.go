package scenario

import (
	"fmt"
	"math"
	"runtime/debug"
	"strings"
)

// The memory budget: before a run starts, its footprint is estimated from
// its flags and checked against --mem-budget, so a typo in --bytes is a
// one-line error instead of a machine out of memory. The estimate counts
// what grows with the flags: emulated memory backed by Go bytes (none for
// phantom buffers), host-side buffers the scenario fills and checks, SDMA
// queues (ring, state, metrics series), lanes (one coroutine each, plus the
// block's shared memory) and fabric operations in flight. The per-item
// costs are measured, with margin, from runs of this build (peak RSS with
// /usr/bin/time -v, see Usage's constants); they are an estimate, not a
// bound.

// Usage is a run's footprint, item by item.
type Usage struct {
	Backed uint64 // emulated memory backed by real bytes
	Host   uint64 // host buffers: inputs, expected values, read-backs
	Shared uint64 // kernel shared memory (LDS) of every block
	Queues int    // SDMA queues created
	Lanes  int    // lanes (coroutines)
	Ops    int    // fabric operations in flight at once
	Deliv  int    // fabric deliveries (one per destination of an op) pending at once
	Trace  uint64 // the trace recorder's records and their JSON
}

// Measured per-item costs: a queue's ring is 256 KiB of Go heap
// (ring.DefaultSize, allocated whole; a fresh process touches few of its
// pages, but a daemon reusing freed heap touches them all), its state and
// metrics series about 24 KiB more (64 × 64 ranks × 8 queue ids: 115 MB RSS
// for 4096 queues in a fresh process, 1.1 GB of heap); a lane's coroutine and kernel state to about
// 12 KiB (1024 × 32 lanes of the phantom CFT all-reduce: 468 MB); a fabric
// put in flight to about 1.2 KiB (1024 × 1023 puts of the phantom CFT
// all-to-all: 1.27 GB), a pending delivery to about 24 B: a multicast
// operation's deliveries are the steps of one queue entry (sim.AtWorkSteps),
// and the phantom CFT all-reduce's peak RSS fits 24 MB + 216 KB per rank +
// 24 B per rank × multicast member (140 MB, 265 MB, 554 MB and 1.28 GB at
// 512, 1024, 2048 and 4096 ranks; before the steps shared one entry a
// delivery was an event and its closure, about 128 B). Each but the ring is
// doubled for margin, the delivery rounded up; perRun is a run's fixed cost
// (simulator, node, registries). The process runs with the budget as Go's
// soft memory limit (WithMemLimit), so the garbage of finished operations
// does not pile up on top of what is live.
const (
	perQueue  = 256<<10 + 48<<10
	perLane   = 24 << 10
	perOp     = 2560
	perDeliv  = 64
	perTraced = 24 << 10
	perRun    = 4 << 20
)

// Bytes is the estimated total.
func (u Usage) Bytes() uint64 {
	return perRun + u.Backed + u.Host + u.Shared + uint64(u.Queues)*perQueue + uint64(u.Lanes)*perLane +
		uint64(u.Ops)*perOp + uint64(u.Deliv)*perDeliv + u.Trace
}

func (u Usage) String() string {
	var parts []string
	add := func(what string, n uint64) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", what, ApproxBytes(n)))
		}
	}
	add("emulated memory", u.Backed)
	add("host buffers", u.Host)
	add("shared memory", u.Shared)
	if u.Queues > 0 {
		add(fmt.Sprintf("%d SDMA queues", u.Queues), uint64(u.Queues)*perQueue)
	}
	add(fmt.Sprintf("%d lanes", u.Lanes), uint64(u.Lanes)*perLane)
	if u.Ops > 0 {
		add(fmt.Sprintf("%d fabric ops in flight", u.Ops), uint64(u.Ops)*perOp+uint64(u.Deliv)*perDeliv)
	}
	add("trace", u.Trace)
	return fmt.Sprintf("%s (%s)", ApproxBytes(u.Bytes()), strings.Join(parts, ", "))
}

// Footprint estimates what one run of sc with o takes.
func Footprint(sc *Scenario, o Options) Usage {
	if sc.Usage == nil {
		return Usage{}
	}
	u := sc.Usage(o)
	if o.Phantom {
		// A phantom run's memory has no bytes, and its host fills and
		// checks none.
		u.Backed, u.Host = 0, 0
	}
	if o.Traced && !sc.Fabric {
		// A recorder holds a record per packet and per call, and writing
		// the JSON buffers it all: measured about 100 MB over the run's
		// own for the 64-rank all-to-all (4096 queues and lanes, a 6.6 MB
		// trace), about 12 KiB per queue or lane; doubled.
		u.Trace = uint64(u.Queues+u.Lanes) * perTraced
	}
	return u
}

// BudgetError is a run over --mem-budget (or, with Machine, over the
// machine's physical memory); the message names the flag at fault
// (Field), the estimate and the limit.
type BudgetError struct {
	Scenario *Scenario
	Options  Options
	Usage    Usage // the estimate
	Budget   uint64
	// Machine says Budget is the machine's physical memory: no budget was
	// set (--mem-budget 0), and the run would not fit the machine anyway.
	Machine bool
}

// Field is the flag at fault: "mem-budget" when even the smallest run of
// the scenario does not fit, "ranks" when the run does not fit at the
// smallest --bytes, else "bytes".
func (e *BudgetError) Field() string {
	small := e.Options
	small.Bytes = 1
	if Footprint(e.Scenario, small).Bytes() <= e.Budget {
		return "bytes"
	}
	if e.Scenario.Shape == nil {
		small.Ranks = MinRanks
	}
	if Footprint(e.Scenario, small).Bytes() <= e.Budget || e.Machine {
		return "ranks"
	}
	return "mem-budget"
}

// Limit names what the run is over: --mem-budget and its value, or the
// machine's memory.
func (e *BudgetError) Limit() string {
	if e.Machine {
		return fmt.Sprintf("this machine's %s of %s (--mem-budget 0 sets no budget; the machine still has its memory)", ApproxBytes(e.Budget), MachineMemory().Source)
	}
	return "--mem-budget " + ApproxBytes(e.Budget)
}

func (e *BudgetError) Error() string {
	o, name := e.Options, e.Scenario.Name
	var what string
	switch e.Field() {
	case "mem-budget":
		return fmt.Sprintf("invalid --mem-budget %s: even the smallest %s run (--ranks %d, --bytes 1) needs an estimated %s; raise --mem-budget",
			ApproxBytes(e.Budget), name, MinRanks, Footprint(e.Scenario, Options{Ranks: MinRanks, Bytes: 1, Queues: o.Queues, Phantom: o.Phantom}))
	case "ranks":
		what = fmt.Sprintf("invalid --ranks %d: %s needs an estimated %s even at --bytes 1, over %s", o.Ranks, name, e.Usage, e.Limit())
	default:
		what = fmt.Sprintf("invalid --bytes %s with --ranks %d: %s needs an estimated %s, over %s", FormatBytes(o.Bytes), o.Ranks, name, e.Usage, e.Limit())
	}
	var fix []string
	if !o.Phantom && e.Scenario.Shape == nil { // a corpus program needs its bytes
		fix = append(fix, "use --phantom for a timing-only run")
	}
	if !e.Machine {
		fix = append(fix, "raise --mem-budget")
	}
	if len(fix) == 0 {
		return what
	}
	return what + "; " + strings.Join(fix, ", or ")
}

// CheckBudget refuses a run whose estimate exceeds budget (0: no budget).
func CheckBudget(sc *Scenario, o Options, budget uint64) error {
	if u := Footprint(sc, o); budget > 0 && u.Bytes() > budget {
		return &BudgetError{sc, o, u, budget, false}
	}
	return nil
}

// CheckMachine refuses a run whose estimate exceeds the machine's physical
// memory (MemTotal), whatever the budget: for a process that must survive
// every request (the daemon under --mem-budget 0). Nothing is refused
// where the memory cannot be read.
func CheckMachine(sc *Scenario, o Options) error {
	total := physicalMemory()
	if u := Footprint(sc, o); total > 0 && u.Bytes() > total {
		return &BudgetError{sc, o, u, total, true}
	}
	return nil
}

// WithMemLimit makes budget the Go runtime's soft memory limit until the
// returned function restores the previous one: near the limit the
// collector runs harder instead of letting garbage grow the heap to twice
// what is live. 0 leaves the limit alone.
func WithMemLimit(budget uint64) (restore func()) {
	if budget == 0 || budget > math.MaxInt64 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(int64(budget))
	return func() { debug.SetMemoryLimit(prev) }
}

// DefaultMemBudget is --mem-budget's default: a quarter of the memory this
// process may use (MachineMemory: MemTotal in /proc/meminfo, or its
// cgroup's limit where that is lower), or 4 GiB where neither can be
// read. A quarter leaves room for the rest of a shared machine and for
// the collector's headroom over what is live.
func DefaultMemBudget() uint64 {
	if total := physicalMemory(); total > 0 {
		return (total / 4) &^ (1<<20 - 1) // whole MiB, for --help
	}
	return 4 << 30
}

// physicalMemory is the memory this process may use (MachineMemory).
func physicalMemory() uint64 { return MachineMemory().Bytes }

// ExploreJobs caps explore's --jobs by the budget (each job holds one run)
// and by the processors (more runs than processors only cost memory). It
// returns the jobs to use and, when capped, why.
func ExploreJobs(jobs, procs int, perRun, budget uint64) (int, string) {
	n, why := jobs, ""
	if limit := 4 * procs; n > limit {
		n, why = limit, fmt.Sprintf("4 × %d processors", procs)
	}
	if budget > 0 && perRun > 0 {
		if fit := budget / perRun; uint64(n) > fit {
			n, why = int(max(fit, 1)), fmt.Sprintf("--mem-budget %s / %s per run", ApproxBytes(budget), ApproxBytes(perRun))
		}
	}
	return n, why
}

// ApproxBytes prints an estimate to three significant digits in binary
// units: 8.02GiB, 192KiB, 515MiB.
func ApproxBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%dB", n)
	case v >= 100:
		return fmt.Sprintf("%.0f%s", v, units[i])
	case v >= 10:
		return fmt.Sprintf("%.1f%s", v, units[i])
	}
	return fmt.Sprintf("%.2f%s", v, units[i])
}
