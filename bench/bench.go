// Package bench measures the emulator itself, in wall-clock time on this
// machine: how fast the engine retires packets, how an engine copy compares
// with Go's copy(), how many cco puts and fabric operations a second it
// emulates, how explore scales with jobs, and what the scale runs cost in
// wall time and peak RSS (each in a child process, so its peak is its own).
// The numbers depend on the machine and its load; docs/performance.md's table says
// where it was taken. "emud bench" prints Run's table.
package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	_ "github.com/emud-dev/emud/scenario/all" // the scenarios the rows run
	"github.com/emud-dev/emud/scenario/cft"

	"github.com/emud-dev/emud/scenario"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// ChildEnv marks a child process the bench started to run one scale
// run: the test binary sees it in TestMain and runs the command instead of
// the tests.
const ChildEnv = "EMUD_BENCH_CHILD"

// Sizes are the sizes bench runs at: the full ones, or --quick's for
// a smoke test.
type Sizes struct {
	packets, bigCopies, putRounds, fabricRanks, fabricReps, seeds, bigSeeds, cxxRuns int
	// scalingSeeds are the scaling rows' seeds per job (or process), for
	// the 4 KiB and the 1 MiB shape: enough that a 16-core machine's rows
	// last a second or so each, not the few milliseconds in which a
	// process's start and first seeds' mappings were most of the row.
	scalingSeeds [2]int
	// hostScale divides the host ceiling rows' loops (1 at Full).
	hostScale int
	scale     []scaleRun
	only      string // a group of rows (Groups), "" for all
}

// Groups are the groups of rows Sizes.Only selects.
var Groups = []string{"engine", "copy", "cco", "fabric", "explore", "scaling", "cxx", "scale"}

// Only returns sz restricted to one group of rows (one of Groups), so that
// one figure can be measured again without the whole table.
func (sz Sizes) Only(group string) (Sizes, error) {
	if !slices.Contains(Groups, group) {
		return sz, fmt.Errorf("bench: no group of rows %q (the groups: %s)", group, strings.Join(Groups, ", "))
	}
	sz.only = group
	return sz, nil
}

// scaleRun is one command the bench times in a child process.
type scaleRun struct {
	label string
	name  string
	o     scenario.Options
}

// args is the scale run's emud command line.
func (sr scaleRun) args() []string {
	a := []string{"run", sr.name, "--ranks", fmt.Sprint(sr.o.Ranks), "--bytes", scenario.FormatBytes(sr.o.Bytes)}
	if sr.o.LsaSize > 0 {
		a = append(a, "--lsa-size", fmt.Sprint(sr.o.LsaSize))
	}
	if sr.o.Phantom {
		a = append(a, "--phantom")
	}
	return a
}

// scale is a CFT all-reduce or all-to-all of ranks × bytes.
func scale(label, name string, ranks int, bytes uint64, phantom bool) scaleRun {
	return scaleRun{label, name, scenario.Options{Ranks: ranks, Bytes: bytes, Queues: scenario.DefaultQueues, Seed: 1, Phantom: phantom}}
}

// Full is the measurement.
func Full() Sizes {
	return Sizes{packets: 200_000, bigCopies: 64, putRounds: 256, fabricRanks: 128, fabricReps: 8, seeds: 2000, bigSeeds: 20, cxxRuns: 20, scalingSeeds: [2]int{1000, 200}, hostScale: 1, scale: []scaleRun{
		scale("cft-allreduce, 1024 ranks × 64 MiB, phantom", "cft-allreduce", 1024, 64<<20, true),
		scale("cft-allreduce, 4096 ranks × 256 B, phantom", "cft-allreduce", 4096, 256, true),
		scale("cft-alltoall, 1024 ranks × 128 B per pair, phantom", "cft-alltoall", 1024, 128, true),
		scale("cft-allreduce, 72 ranks × 64 MiB, phantom", "cft-allreduce", 72, 64<<20, true),
		scale("cft-allreduce, 72 ranks × 64 MiB, real bytes", "cft-allreduce", 72, 64<<20, false),
		scale("cft-allreduce, 72 ranks × 16 MiB, real bytes", "cft-allreduce", 72, 16<<20, false),
		nodes(scale("gin-allgather, 16 nodes × 8 GPUs (128 ranks) × 1 MiB, phantom", "gin-allgather", 128, 1<<20, true), 8),
	}}
}

// nodes splits a scale run's ranks into nodes of gpus GPUs (--lsa-size).
func nodes(sr scaleRun, gpus int) scaleRun {
	sr.o.LsaSize = gpus
	return sr
}

// Quick is a smoke test of the bench, not a measurement.
func Quick() Sizes {
	return Sizes{packets: 2000, bigCopies: 2, putRounds: 4, fabricRanks: 8, fabricReps: 1, seeds: 8, bigSeeds: 2, scalingSeeds: [2]int{4, 1}, hostScale: 1000, scale: []scaleRun{
		scale("cft-allreduce, 64 ranks × 1 MiB, phantom", "cft-allreduce", 64, 1<<20, true),
		scale("cft-allreduce, 8 ranks × 1 MiB, real bytes", "cft-allreduce", 8, 1<<20, false),
	}}
}

// benchRow is one line of the table.
type benchRow struct {
	what, result, detail string
}

// Run measures sz, printing progress as it goes and the table to w at the
// end; explore's second row runs jobs jobs, and a scale run whose estimate
// exceeds budget is skipped (the table says so).
func Run(w, progress io.Writer, sz Sizes, jobs int, budget uint64) error {
	var rows []benchRow
	add := func(r benchRow) {
		rows = append(rows, r)
		fmt.Fprintf(progress, "bench: %s: %s\n", r.what, r.result)
	}
	type step struct {
		group string
		run   func() (benchRow, error)
	}
	var cr copyRun
	steps := []step{
		{"engine", func() (benchRow, error) { return benchEnginePackets(sz.packets) }},
		{"copy", func() (benchRow, error) {
			var err error
			cr, err = benchCopies(sz.bigCopies)
			return cr.engineRow(), err
		}},
		{"copy", func() (benchRow, error) { return cr.goRow(), nil }},
		{"copy", func() (benchRow, error) { return cr.ratioRow(), nil }},
		{"copy", func() (benchRow, error) { return cr.phantomRow(), nil }},
		{"cco", func() (benchRow, error) { return benchPuts(sz.putRounds) }},
		{"fabric", func() (benchRow, error) { return benchFabricOps(sz.fabricRanks) }},
		{"fabric", func() (benchRow, error) { return benchFabricPuts(sz.putRounds*2, sz.fabricReps) }},
		{"explore", func() (benchRow, error) { return benchExplore(sz.seeds, 1) }},
		{"explore", func() (benchRow, error) {
			r, err := benchExplore(sz.seeds, jobs)
			r.detail += " (" + exploreBefore + ")"
			return r, err
		}},
		{"cxx", func() (benchRow, error) { return benchCxx(sz.cxxRuns) }},
		{"cxx", func() (benchRow, error) { return benchCxxSeed(sz.cxxRuns) }},
		{"cxx", func() (benchRow, error) { return benchCxxRounds(sz.cxxRuns / 5) }},
		{"cxx", func() (benchRow, error) { return benchCxxPackets(sz.cxxRuns > 0) }},
		{"cxx", func() (benchRow, error) { return benchCxxProcs(sz.cxxRuns / 4) }},
		{"cxx", func() (benchRow, error) { return benchCxxMori(sz.cxxRuns / 4) }},
		{"explore", func() (benchRow, error) {
			r, err := benchExploreOf("alltoall (8 ranks, 1 MiB)", scenario.Options{Ranks: 8, Bytes: 1 << 20, Queues: 1}, sz.bigSeeds, 1)
			r.detail += " (" + explore1MBefore + ")"
			return r, err
		}},
	}
	for _, h := range hostLoops(sz.hostScale) {
		steps = append(steps, step{"scaling", func() (benchRow, error) { return h.row(runtime.GOMAXPROCS(0)), nil }})
	}
	for _, sh := range scalingShapes(sz) {
		for _, j := range scalingJobs(runtime.GOMAXPROCS(0)) {
			steps = append(steps, step{"scaling", func() (benchRow, error) { return sh.row(j) }})
		}
		steps = append(steps, step{"scaling", func() (benchRow, error) { return sh.shardRow(runtime.GOMAXPROCS(0)) }})
	}
	for _, st := range steps {
		if sz.only != "" && st.group != sz.only {
			continue
		}
		r, err := st.run()
		if err != nil {
			return err
		}
		add(r)
	}
	for _, sr := range sz.scale {
		if sz.only != "" && sz.only != "scale" {
			break
		}
		r, err := benchScale(sr, budget)
		if err != nil {
			return err
		}
		add(r)
	}
	fmt.Fprintf(w, "emud bench: %s/%s, %d CPUs, GOMAXPROCS %d, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tresult\tdetail")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.what, r.result, r.detail)
	}
	return tw.Flush()
}

// rate formats n per second with an SI prefix.
func rate(n float64, unit string) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.2fM %s", n/1e6, unit)
	case n >= 1e3:
		return fmt.Sprintf("%.1fk %s", n/1e3, unit)
	}
	return fmt.Sprintf("%.1f %s", n, unit)
}

// benchNode is a 2-GPU node with src on GPU 0 and dst on GPU 1 and the
// queue 0 → 1 whose every ring unit holds a COPY of size bytes.
func benchNode(size uint64) (*sim.Sim, *engine.Queue, error) {
	return benchNodeOf(size, nil)
}

// benchNodeOf is benchNode with the source's bytes (len size) written
// first, or with phantom regions (no bytes: only the engine's work is
// left) where fill is nil and size is past a page.
func benchNodeOf(size uint64, fill []byte) (*sim.Sim, *engine.Queue, error) {
	s := sim.New(sim.Config{Seed: 1, Watchdog: -1})
	n, err := engine.NewNode(s, engine.Config{GPUs: 2})
	if err != nil {
		return nil, nil, err
	}
	m := n.Memory()
	alloc := m.Alloc
	if fill == nil && size > 4096 {
		alloc = m.AllocPhantom
	}
	src, err := alloc(0, size, "src")
	if err != nil {
		return nil, nil, err
	}
	if fill != nil {
		if err := m.Write(src, fill); err != nil {
			return nil, nil, err
		}
	}
	dst, err := alloc(1, size, "dst")
	if err != nil {
		return nil, nil, err
	}
	q, err := n.Queue(0, 1, 0)
	if err != nil {
		return nil, nil, err
	}
	p := ring.Copy(dst, src, size)
	for u := uint64(0); u < q.Ring().Size(); u += ring.Unit {
		if err := q.WriteUnit(u, &p); err != nil {
			return nil, nil, err
		}
	}
	return s, q, nil
}

// ringPackets rings count packets already in q's ring, a chunk of units at
// a time, and waits until they have run.
func ringPackets(s *sim.Sim, q *engine.Queue, count int, chunk uint64) error {
	total := uint64(count) * ring.Unit
	var ferr error
	s.Spawn("ringer", func(a *sim.Actor) {
		for rung := uint64(0); rung < total; {
			c := min(chunk*ring.Unit, total-rung)
			base, err := q.Reserve(a, c)
			if err == nil {
				err = q.Submit(a, base, base+c)
			}
			if err != nil {
				ferr = err
				return
			}
			rung += c
		}
		q.AwaitDrained(a, total)
	})
	if err := s.Run(); err != nil {
		return err
	}
	return ferr
}

func benchEnginePackets(count int) (benchRow, error) {
	s, q, err := benchNode(64)
	if err != nil {
		return benchRow{}, err
	}
	start := time.Now()
	if err := ringPackets(s, q, count, 4096); err != nil {
		return benchRow{}, fmt.Errorf("bench: engine packets: %w", err)
	}
	el := time.Since(start)
	return benchRow{"engine: 64 B COPY packets on one queue", rate(float64(count)/el.Seconds(), "packets/s"),
		fmt.Sprintf("%d packets in %v", count, el.Round(time.Millisecond))}, nil
}

const benchBigCopy = 8 << 20

// copyRun is the engine's 8 MiB COPYs and Go's copy() of 8 MiB, measured
// in turns (copyTurns of each, alternating) so that both see the same
// machine: its memory bandwidth moves from minute to minute, and on a
// loaded machine a turn can lose its processor. The ratio is the median of
// the turns' ratios, each from two neighbouring measurements.
//
// Both sources hold the same non-zero bytes: a source never written reads
// the kernel's shared zero page, a 4 KiB one that stays in L1 for Go's
// heap but a 2 MiB one (THP) for the engine's regions, which made the
// ratio a comparison of caches rather than of copies.
//
// phantom is the same COPYs on regions without bytes: the engine's own
// work per COPY (fetch, decode, chunk events, landing bookkeeping), which
// does not depend on the machine's memory bandwidth.
type copyRun struct {
	count     int
	eng, goes time.Duration
	ratios    []float64 // per turn: Go's time over the engine's
	phantom   time.Duration
}

const copyTurns = 16

func benchCopies(count int) (copyRun, error) {
	src, dst := make([]byte, benchBigCopy), make([]byte, benchBigCopy)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	s, q, err := benchNodeOf(benchBigCopy, src)
	if err != nil {
		return copyRun{}, err
	}
	copy(dst, src) // both sides start with their pages touched
	cr := copyRun{count: count}
	turns := min(count, copyTurns)
	var ferr error
	s.Spawn("ringer", func(a *sim.Actor) {
		if ferr = ringCopies(a, q, 1); ferr != nil { // touches the engine's pages
			return
		}
		for i := range turns {
			k := count/turns + btoi(i < count%turns)
			start := time.Now()
			if ferr = ringCopies(a, q, k); ferr != nil {
				return
			}
			e := time.Since(start)
			start = time.Now()
			for range k {
				copy(dst, src)
			}
			g := time.Since(start)
			cr.eng, cr.goes = cr.eng+e, cr.goes+g
			cr.ratios = append(cr.ratios, g.Seconds()/e.Seconds())
		}
	})
	if err := s.Run(); err != nil {
		ferr = err
	}
	if ferr != nil {
		return copyRun{}, fmt.Errorf("bench: engine 8 MiB copy: %w", ferr)
	}
	if cr.phantom, err = phantomCopies(count); err != nil {
		return copyRun{}, err
	}
	return cr, nil
}

// phantomCopies times count 8 MiB COPYs on phantom regions.
func phantomCopies(count int) (time.Duration, error) {
	s, q, err := benchNodeOf(benchBigCopy, nil)
	if err != nil {
		return 0, err
	}
	var el time.Duration
	var ferr error
	s.Spawn("ringer", func(a *sim.Actor) {
		if ferr = ringCopies(a, q, 1); ferr != nil {
			return
		}
		start := time.Now()
		ferr = ringCopies(a, q, count)
		el = time.Since(start)
	})
	if err := s.Run(); err != nil {
		ferr = err
	}
	if ferr != nil {
		return 0, fmt.Errorf("bench: engine 8 MiB phantom copy: %w", ferr)
	}
	return el, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ringCopies rings count of the COPYs in q's ring, one at a time, and
// waits until they have run.
func ringCopies(a *sim.Actor, q *engine.Queue, count int) error {
	for range count {
		base, err := q.Reserve(a, ring.Unit)
		if err == nil {
			err = q.Submit(a, base, base+ring.Unit)
		}
		if err != nil {
			return err
		}
	}
	q.AwaitDrained(a, q.QuietTarget())
	return nil
}

func (cr copyRun) gbps(d time.Duration) float64 {
	return float64(cr.count) * benchBigCopy / d.Seconds() / 1e9
}

func (cr copyRun) engineRow() benchRow {
	return benchRow{"engine: 8 MiB COPY", fmt.Sprintf("%.2f GB/s", cr.gbps(cr.eng)),
		fmt.Sprintf("%d copies in %v (wall clock, all engine work included)", cr.count, cr.eng.Round(time.Millisecond))}
}

func (cr copyRun) goRow() benchRow {
	return benchRow{"Go copy() of 8 MiB", fmt.Sprintf("%.2f GB/s", cr.gbps(cr.goes)),
		fmt.Sprintf("%d copies in %v", cr.count, cr.goes.Round(time.Millisecond))}
}

func (cr copyRun) ratioRow() benchRow {
	r := slices.Clone(cr.ratios)
	slices.Sort(r)
	if len(r) == 0 {
		return benchRow{"engine 8 MiB COPY vs Go copy()", "no turns", ""}
	}
	return benchRow{"engine 8 MiB COPY vs Go copy()", fmt.Sprintf("%.2f×", r[len(r)/2]),
		fmt.Sprintf("median of %d turns of the rows above, each turn's copies of both side by side (%.2f-%.2f×; %.2f× in total; goal: at least 0.8×)",
			len(r), r[0], r[len(r)-1], cr.goes.Seconds()/cr.eng.Seconds())}
}

// phantomRow is the engine's own work per 8 MiB COPY, and its share of
// one Go copy() of the bytes.
func (cr copyRun) phantomRow() benchRow {
	per := cr.phantom / time.Duration(max(cr.count, 1))
	share := 0.0
	if cr.goes > 0 {
		share = 100 * cr.phantom.Seconds() / cr.goes.Seconds()
	}
	return benchRow{"engine: 8 MiB COPY, phantom (no bytes)", fmt.Sprintf("%v a COPY", per.Round(100*time.Nanosecond)),
		fmt.Sprintf("the engine's own work per COPY: %.1f%% of a Go copy() of 8 MiB above (%d copies in %v)",
			share, cr.count, cr.phantom.Round(time.Microsecond))}
}

// benchPuts posts rounds SameQueue puts of 64 B from each of 64 lanes of
// one wave, then quiets: issue, ring, engine and quiet, end to end.
func benchPuts(rounds int) (benchRow, error) {
	o := scenario.Options{Ranks: 2, Bytes: 64 * 64, Queues: 1, Seed: 1}
	j, err := scenario.NewEnv(o)
	if err != nil {
		return benchRow{}, err
	}
	send, err := j.Window(o.Bytes)
	if err != nil {
		return benchRow{}, err
	}
	recv, err := j.Window(o.Bytes)
	if err != nil {
		return benchRow{}, err
	}
	if err := j.SetupDevComms(); err != nil {
		return benchRow{}, err
	}
	err = j.LaunchRank(0, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
		off := uint64(t.Lane()) * 64
		for range rounds {
			sdma.Put(1, recv[0], off, send[0], off, 64, 0, cco.SdmaThreadSameQueue)
		}
		sdma.QuietQueue(1, 0)
	})
	if err != nil {
		return benchRow{}, err
	}
	start := time.Now()
	if err := j.Sim.Run(); err != nil {
		return benchRow{}, fmt.Errorf("bench: puts: %w", err)
	}
	el := time.Since(start)
	n := 64 * rounds
	return benchRow{"cco: 64-lane wave, 64 B SameQueue puts", rate(float64(n)/el.Seconds(), "puts/s"),
		fmt.Sprintf("%d puts in %v, issue to quiet", n, el.Round(time.Millisecond))}, nil
}

// benchFabricOps times a CFT all-to-all: ranks × (ranks − 1) puts, and as
// many again by the closing barrier (one 16 B put to every peer), with the
// system's setup and the host's check of every byte.
func benchFabricOps(ranks int) (benchRow, error) {
	start, cpu0 := time.Now(), cpuTime()
	if _, err := cft.RunAllToAll(cft.AllToAllConfig{Seed: 1, Topology: fabric.Topology{NRanks: ranks}, Block: 256}); err != nil {
		return benchRow{}, fmt.Errorf("bench: fabric: %w", err)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	n := ranks * (ranks - 1)
	return benchRow{"fabric: puts of a CFT all-to-all", rate(float64(n)/el.Seconds(), "ops/s"),
		fmt.Sprintf("%d ranks, %d puts of 256 B (+%d barrier puts), setup and check included, in %v (%v CPU)", ranks, n, n, el.Round(time.Millisecond), cpu.Round(time.Millisecond))}, nil
}

// benchFabricPuts is the fabric's row like cco's: one wave of 32 lanes on
// rank 0 of 2 posting 64 B puts to rank 1, each lane its own thread group
// submitting after every put, one flush at the end; only the runs are
// timed. It runs the wave reps times (the first run's setup warms nothing
// the others need) and reports the rate over all of them, and per put the
// CPU time, the bytes and the allocations of the runs (setup excluded).
func benchFabricPuts(rounds, reps int) (benchRow, error) {
	var el, cpu time.Duration
	var bytes, mallocs uint64
	for range max(reps, 1) {
		j, err := cft.PutWave("bench-puts", rounds)
		if err != nil {
			return benchRow{}, err
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start, cpu0 := time.Now(), cpuTime()
		err = j.Sim.Run()
		el, cpu = el+time.Since(start), cpu+cpuTime()-cpu0
		runtime.ReadMemStats(&m1)
		j.Sys.Close()
		if err != nil {
			return benchRow{}, fmt.Errorf("bench: fabric puts: %w", err)
		}
		bytes += m1.TotalAlloc - m0.TotalAlloc
		mallocs += m1.Mallocs - m0.Mallocs
	}
	n := float64(32 * rounds * max(reps, 1))
	return benchRow{"fabric: 32-lane wave, 64 B puts", rate(n/el.Seconds(), "ops/s"),
		fmt.Sprintf("%d × %d puts in %v, issue to flush; %s per CPU second, %.0f B and %.2f allocations per put (%s)",
			max(reps, 1), 32*rounds, el.Round(time.Millisecond), rate(n/max(cpu.Seconds(), 1e-9), "ops"), float64(bytes)/n, float64(mallocs)/n, fabricPutsBefore)}, nil
}

// fabricPutsBefore is the row's figure before the fabric's per-operation
// allocations and the event queue's cost were cut (issue 27): the same
// workload on the development machine, run back to back with the new
// code (docs/performance.md has the runs).
const fabricPutsBefore = "before: 273k-349k ops per CPU second, 1091 B and 7.12 allocations per put"

// explore1MBefore is the 1 MiB explore row's figure before issue 27's
// work: the issue's, this row at 9982a65^ on the development machine
// (fresh mappings' page faults dominate it there), and at 0e45ec2, before
// the send windows' pattern was kept across seeds and fresh mappings got
// huge pages, run in alternation with the new code (docs/performance.md
// has the runs).
const explore1MBefore = "before: issue 27 0.18 s a run; 9982a65^ 646ms, 0e45ec2 67-104ms CPU per seed"

// exploreBefore is the small explore rows' allocation before the node
// stopped making a 256 KiB ring to check its ring options, at 0e45ec2
// (the row's bytes and collections, BenchmarkExploreAlltoall4K's
// allocations), and before its first rings came from buffers kept across
// nodes, at dca9ccc (which made them on the heap).
const exploreBefore = "before: 574KiB and 1280 allocations per seed, 45-60 GCs at 0e45ec2; 4.56MiB, 143-210 GCs at dca9ccc"

// realBytesBefore is the real-bytes rows' ratio before issue 27's work:
// the 72 × 64 MiB run, and 72 × 16 MiB at 3be52fd^ (before the
// fabric's memory was mapped outside the Go heap) on the development
// machine (docs/performance.md has the runs).
const realBytesBefore = "before: issue 27 16.1GiB for ~9GiB; 3be52fd^ 72 × 16 MiB 3.59GiB, 1.59×"

// cpuTime is the process's CPU time so far (user and system, every
// thread: the collector's too). On a loaded machine it says what a run
// cost where the wall clock says how long it waited.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchExplore(seeds, jobs int) (benchRow, error) {
	return benchExploreOf("alltoall (4 ranks, 4 KiB)", scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2}, seeds, jobs)
}

// benchExploreOf times explore of alltoall over seeds at jobs, and what
// bounds its parallel efficiency beside the cores: the allocation per
// seed, the collections, and the collector's share of the CPU time (the
// collector's marking and the allocators' assists are work every job
// adds to; runtime/metrics' GC CPU estimate).
func benchExploreOf(what string, o scenario.Options, seeds, jobs int) (benchRow, error) {
	r, _, err := exploreRow("explore "+what, o, seeds, jobs)
	return r, err
}

// exploreRow is benchExploreOf's row, titled what, and its seeds/s.
func exploreRow(what string, o scenario.Options, seeds, jobs int) (benchRow, float64, error) {
	sc, err := scenario.Lookup("alltoall")
	if err != nil {
		return benchRow{}, 0, err
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	gc0 := gcCPU()
	start, cpu0 := time.Now(), cpuTime()
	x := scenario.Explore(sc, o, 1, seeds, jobs, nil)
	el, cpu := time.Since(start), cpuTime()-cpu0
	gc := gcCPU() - gc0
	runtime.ReadMemStats(&m1)
	if f := x.Found(); f != nil {
		return benchRow{}, 0, fmt.Errorf("bench: explore: seed %d %s", f.O.Seed, f.Status)
	}
	perSeed := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(seeds)
	seedRate := float64(seeds) / el.Seconds()
	return benchRow{fmt.Sprintf("%s, --jobs %d", what, jobs), rate(seedRate, "seeds/s"),
		fmt.Sprintf("%d seeds in %v; per seed %v CPU, %s and %.0f allocations; %s",
			seeds, el.Round(time.Millisecond), (cpu / time.Duration(seeds)).Round(10*time.Microsecond), scenario.ApproxBytes(uint64(perSeed)),
			float64(m1.Mallocs-m0.Mallocs)/float64(seeds), gcShare(m1.NumGC-m0.NumGC, gc, cpu))}, seedRate, nil
}

// scalingShape is one explore shape the scaling rows run at 1, 2, 4 ...
// jobs: seeds per job at each, and the seeds/s at 1 job that the
// efficiency divides by (set by the 1-job row, which runs first).
type scalingShape struct {
	what    string
	o       scenario.Options
	perJob  int
	oneRate float64
}

func scalingShapes(sz Sizes) []*scalingShape {
	return []*scalingShape{
		{what: "alltoall (4 ranks, 4 KiB)", o: scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2}, perJob: sz.scalingSeeds[0]},
		{what: "alltoall (8 ranks, 1 MiB)", o: scenario.Options{Ranks: 8, Bytes: 1 << 20, Queues: 1}, perJob: max(sz.scalingSeeds[1], 1)},
	}
}

// scalingJobs is 1, 2, 4 ... up to procs, and procs itself.
func scalingJobs(procs int) []int {
	var js []int
	for j := 1; j < procs; j *= 2 {
		js = append(js, j)
	}
	return append(js, max(procs, 1))
}

// row runs the shape at jobs jobs, perJob seeds each, and gives its
// parallel efficiency: its seeds/s over jobs times the 1-job row's.
func (sh *scalingShape) row(jobs int) (benchRow, error) {
	seeds := max(sh.perJob*jobs, 2*jobs)
	if jobs == 1 {
		// Untimed first: the process's first seeds map and fault in the
		// buffers later ones reuse, which made the 1-job row look slow
		// (the 2-job row came out at 129% efficiency).
		if _, _, err := exploreRow("warm-up", sh.o, max(sh.perJob/4, 2), 1); err != nil {
			return benchRow{}, err
		}
	}
	r, rate, err := exploreRow(fmt.Sprintf("explore scaling, %s", sh.what), sh.o, seeds, jobs)
	if err != nil {
		return r, err
	}
	if jobs == 1 {
		sh.oneRate = rate
	}
	if sh.oneRate > 0 {
		r.result += fmt.Sprintf(", %.0f%% efficiency", 100*rate/(float64(jobs)*sh.oneRate))
	}
	return r, nil
}

// shardRow runs the shape as procs emud processes at once, each
// `emud explore --shard k/procs --jobs 1` of perJob×procs seeds (the
// options the in-process rows use: --perturb 0, --strategy random), and
// gives their seeds/s and efficiency against the 1-job row: workers that
// share no heap, no collector and no runtime, beside the jobs of one
// process. Its CPU and peak RSS are the children's, process start
// included; bytes, allocations and GC share are not seen from outside.
func (sh *scalingShape) shardRow(procs int) (benchRow, error) {
	procs = max(procs, 1)
	seeds := max(sh.perJob*procs, 2*procs)
	exe, err := os.Executable()
	if err != nil {
		return benchRow{}, fmt.Errorf("bench: %w", err)
	}
	o := sh.o
	cmds := make([]*exec.Cmd, procs)
	errs := make([]bytes.Buffer, procs)
	start := time.Now()
	for k := range cmds {
		args := []string{"explore", "alltoall", "--ranks", fmt.Sprint(o.Ranks), "--bytes", scenario.FormatBytes(o.Bytes),
			"--queues", fmt.Sprint(o.Queues), "--perturb", "0", "--strategy", "random", "--seeds", fmt.Sprint(seeds),
			"--jobs", "1", "--shard", fmt.Sprintf("%d/%d", k, procs), "--shard-out", os.DevNull}
		c := exec.Command(exe, args...)
		c.Env = append(os.Environ(), ChildEnv+"=1")
		c.Stderr = &errs[k]
		if err := c.Start(); err != nil {
			return benchRow{}, fmt.Errorf("bench: emud %s: %w", strings.Join(args, " "), err)
		}
		cmds[k] = c
	}
	var cpu time.Duration
	var peak uint64
	var firstErr error
	for k, c := range cmds {
		if err := c.Wait(); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("bench: emud explore --shard %d/%d: %v: %s", k, procs, err, strings.TrimSpace(errs[k].String()))
		}
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		if p, ok := childPeak(errs[k].String(), c.ProcessState); ok {
			peak = max(peak, p)
		}
	}
	el := time.Since(start)
	if firstErr != nil {
		return benchRow{}, firstErr
	}
	seedRate := float64(seeds) / el.Seconds()
	r := benchRow{fmt.Sprintf("explore scaling, %s, %d processes × --shard k/%d", sh.what, procs, procs), rate(seedRate, "seeds/s"),
		fmt.Sprintf("%d seeds in %v; per seed %v CPU (process start included); peak RSS %s a process",
			seeds, el.Round(time.Millisecond), (cpu / time.Duration(seeds)).Round(10*time.Microsecond), scenario.ApproxBytes(peak))}
	if sh.oneRate > 0 {
		r.result += fmt.Sprintf(", %.0f%% efficiency", 100*seedRate/(float64(procs)*sh.oneRate))
	}
	return r, nil
}

// gcCPU is runtime/metrics' estimate of the CPU time the collector has
// taken so far, without the idle marking it does on otherwise idle
// processors (which costs the run nothing).
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(s)
	var v [2]float64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindFloat64 {
			v[i] = s[i].Value.Float64()
		}
	}
	return time.Duration((v[0] - v[1]) * float64(time.Second))
}

// gcShare says what the collector took of a row's CPU time (the
// process's, from getrusage): n collections and gc of estimated
// collector time over cpu. The share was once taken of runtime/metrics'
// own estimate of the CPU used (its total less its idle time), but that
// idle time is credited in lumps: over a row that ran no collection, on
// one job of two processors, it came to nearly the whole window, and the
// row read "0 GCs, GC 15553400% of CPU". The collector's estimate is an
// overestimate too, so the share is capped at 100%.
func gcShare(n uint32, gc, cpu time.Duration) string {
	if n == 0 {
		return "0 GCs"
	}
	if cpu <= 0 {
		return fmt.Sprintf("%d GCs (no CPU time read: no GC share)", n)
	}
	return fmt.Sprintf("%d GCs, GC %.0f%% of CPU", n, min(100, 100*max(gc.Seconds(), 0)/cpu.Seconds()))
}

// benchScale runs emud with sr.args in a child process and reports its
// wall time and peak RSS; a run whose estimate exceeds budget is skipped.
func benchScale(sr scaleRun, budget uint64) (benchRow, error) {
	args := sr.args()
	sc, err := scenario.Lookup(sr.name)
	if err == nil {
		err = scenario.Admit(sc, sr.o, 0)
	}
	if err != nil {
		return benchRow{}, fmt.Errorf("bench: %w", err)
	}
	if u := scenario.Footprint(sc, sr.o); budget > 0 && u.Bytes() > budget {
		return benchRow{sr.label, "skipped", fmt.Sprintf("needs an estimated %s, over --mem-budget %s: emud %s",
			scenario.ApproxBytes(u.Bytes()), scenario.ApproxBytes(budget), strings.Join(args, " "))}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return benchRow{}, fmt.Errorf("bench: %w", err)
	}
	c := exec.Command(exe, append(args, "--mem-budget", fmt.Sprint(budget))...)
	c.Env = append(os.Environ(), ChildEnv+"=1")
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	start := time.Now()
	err = c.Run()
	el := time.Since(start)
	if err != nil {
		return benchRow{}, fmt.Errorf("bench: emud %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	rss, ratio := "peak RSS unknown", ""
	if peak, ok := childPeak(errOut.String(), c.ProcessState); ok {
		rss = scenario.ApproxBytes(peak)
		if emu := scenario.Footprint(sc, sr.o).Backed; emu > 0 && !sr.o.Phantom {
			// The emulated bytes: the device memory the run backs with
			// real bytes (its windows), as the scenario's footprint counts it.
			ratio = fmt.Sprintf("; peak RSS %.2f× the %s of emulated memory (%s)", float64(peak)/float64(emu), scenario.ApproxBytes(emu), realBytesBefore)
		}
	}
	emulated := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "0" {
			emulated = fmt.Sprintf(", %s µs emulated", f[1]) // rank 0's finish time
			break
		}
	}
	return benchRow{sr.label, fmt.Sprintf("%.2f s, %s", el.Seconds(), rss),
		fmt.Sprintf("wall, peak RSS: emud %s%s%s", strings.Join(args, " "), emulated, ratio)}, nil
}
