package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// benchCxx times examples/cxx/alltoall_put.cpp, built by emud c++ (the C++
// kernels' path: C ABI, lane coroutines, host threads), against the Go
// alltoall scenario of the same shape (8 ranks, 64 KiB per pair, the
// default queues) on the same seeds. A C++ run is a whole process (start,
// eight rank threads, setup, kernel, check, exit), which is what emud
// explore -- PROGRAM pays per seed, so the row sets it beside both Go
// figures: a seed in this process (what explore pays, warm: no process
// start, its heap and mappings reused from the seed before) and a run as
// a whole emud run process. The detail also gives the C++ part from the
// program's first emud call to its exit (EMUD_SUMMARY's wall time), and
// where a C++ run's CPU time goes (EMUD_USAGE: up to the first call,
// which is the process's and the Go runtime's start; building the node;
// from there to exit; and after that, the process's teardown, which only
// the parent sees), with its page faults; and each figure's CPU time
// (user and system), which a loaded machine inflates less than wall time:
// a C++ run hands its turn between threads hundreds of times, and each
// handoff waits for a core. The same program runs with EMUD_MALLOC=system
// too (glibc's heap defaults, as before capi/heap.c), alternated with
// the default, so the heap's effect is measured in one run. The Go
// figures are taken on one P (GOMAXPROCS=1), as a C++ program's emulator
// runs. It needs emud's source tree and a C++ compiler; without them, and
// with Quick sizes, the row says so.
func benchCxx(runs int) (benchRow, error) {
	const what = "C++ vs Go alltoall, per run (alltoall_put.cpp, 8 ranks, 64 KiB)"
	if runs == 0 {
		return benchRow{what, "skipped", "not with --quick (building the C++ program takes most of a minute)"}, nil
	}
	load0 := loadAverage()
	prog, cleanup, skip := buildCxx("alltoall_put.cpp")
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanup()
	// The same program without lane instrumentation (emud c++ instruments
	// lane code by default, for the race detector): what it costs.
	plain, cleanupPlain, skip := buildCxx("alltoall_put.cpp", "-fno-sanitize=thread")
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanupPlain()
	var cxxP, plainP, sysP, goP procTimes
	var inside time.Duration
	var split, sysSplit usageSum
	for i := range runs {
		start := time.Now()
		c, err := runCxx(prog, i+1, "EMUD_USAGE=1")
		if err != nil {
			return benchRow{}, err
		}
		cxxP.add(time.Since(start), c.ps)
		inside += c.wall
		split.add(c)
		start = time.Now()
		if c, err = runCxx(prog, i+1, "EMUD_USAGE=1", "EMUD_MALLOC=system"); err != nil {
			return benchRow{}, err
		}
		sysP.add(time.Since(start), c.ps)
		sysSplit.add(c)
		start = time.Now()
		if c, err = runCxx(plain, i+1); err != nil {
			return benchRow{}, err
		}
		plainP.add(time.Since(start), c.ps)
	}
	sc, err := scenario.Lookup("alltoall")
	if err != nil {
		return benchRow{}, err
	}
	o := scenario.Options{Ranks: 8, Bytes: 64 << 10, Queues: cco.DefaultSdmaQueues}
	cpu0 := selfCPU()
	start := time.Now()
	defer oneProc()()
	x := scenario.Explore(sc, o, 1, runs, 1, nil)
	goSeed := procTimes{wall: time.Since(start), cpu: selfCPU() - cpu0, n: runs}
	if f := x.Found(); f != nil {
		return benchRow{}, fmt.Errorf("bench: alltoall: seed %d %s", f.O.Seed, f.Status)
	}
	exe, err := os.Executable()
	if err != nil {
		return benchRow{}, fmt.Errorf("bench: %w", err)
	}
	for i := range runs {
		c := exec.Command(exe, "run", sc.Name, "--ranks", fmt.Sprint(o.Ranks), "--bytes", scenario.FormatBytes(o.Bytes),
			"--queues", fmt.Sprint(o.Queues), "--seed", fmt.Sprint(i+1))
		c.Env = append(os.Environ(), ChildEnv+"=1", "GOMAXPROCS=1")
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			return benchRow{}, fmt.Errorf("bench: emud %s: %v\n%s", strings.Join(c.Args[1:], " "), err, out)
		}
		goP.add(time.Since(start), c.ProcessState)
	}
	insidePer := inside / time.Duration(runs)
	ratio := func(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }
	return benchRow{what,
		fmt.Sprintf("%.1f× (%.1f× in CPU time; %.1f× from the first call; %.1f× process to process; %.1f× uninstrumented; %.1f× in CPU time with glibc's heap)",
			ratio(cxxP.per(), goSeed.per()), ratio(cxxP.cpuPer(), goSeed.cpuPer()), ratio(insidePer, goSeed.per()), ratio(cxxP.per(), goP.per()),
			ratio(plainP.per(), goSeed.per()), ratio(sysP.cpuPer(), goSeed.cpuPer())),
		fmt.Sprintf("%d seeds, wall (CPU): C++ %s per run as a whole process (lanes instrumented, emud c++'s default), "+
			"%s built with -fno-sanitize=thread, %v from its first emud call to exit; "+
			"Go %s per seed in one process, %s per run as an emud run process; "+
			"C++ CPU per run: %s; with EMUD_MALLOC=system %s per run: %s; load average %s, then %s",
			runs, cxxP, plainP, insidePer.Round(time.Millisecond), goSeed, goP,
			split.String(cxxP), sysP, sysSplit.String(sysP), load0, loadAverage())}, nil
}

// usageSum adds up the EMUD_USAGE splits of runs.
type usageSum struct {
	call, node, rest                   time.Duration
	callFaults, nodeFaults, restFaults int64
	n                                  int
}

func (u *usageSum) add(c cxxRun) {
	u.call += c.usage.call
	u.node += c.usage.node
	u.rest += c.usage.rest
	u.callFaults += c.usage.callFaults
	u.nodeFaults += c.usage.nodeFaults
	u.restFaults += c.usage.restFaults
	u.n++
}

// String is the mean split of a run, the teardown being what the
// process's CPU time (p) has past the three parts the program measured.
func (u usageSum) String(p procTimes) string {
	if u.n == 0 {
		return "no EMUD_USAGE line"
	}
	n := time.Duration(u.n)
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	tear := p.cpuPer() - (u.call+u.node+u.rest)/n
	return fmt.Sprintf("%v to the first call (process and Go runtime start; %d page faults), %v building the node (%d), %v from there to exit (%d), %v after (teardown)",
		r(u.call/n), u.callFaults/int64(u.n), r(u.node/n), u.nodeFaults/int64(u.n), r(u.rest/n), u.restFaults/int64(u.n), r(tear))
}

// loadAverage is /proc/loadavg's 1-minute figure, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// oneProc sets GOMAXPROCS to 1, as the C ABI does for a C++ program (capi
// oneProc), so that the Go side of a comparison runs as the C++ side does;
// the function it returns restores the setting.
func oneProc() func() {
	n := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(n) }
}

// procTimes sums the wall and CPU time of n runs.
type procTimes struct {
	wall, cpu time.Duration
	n         int
}

func (p *procTimes) add(wall time.Duration, ps *os.ProcessState) {
	p.wall += wall
	p.cpu += ps.UserTime() + ps.SystemTime()
	p.n++
}

func (p procTimes) per() time.Duration { return p.wall / time.Duration(p.n) }

func (p procTimes) cpuPer() time.Duration { return p.cpu / time.Duration(p.n) }

// String is the mean wall time and, in parentheses, the mean CPU time.
func (p procTimes) String() string {
	r := func(d time.Duration) time.Duration {
		if d < 100*time.Millisecond {
			return d.Round(100 * time.Microsecond)
		}
		return d.Round(time.Millisecond)
	}
	return fmt.Sprintf("%v (%v)", r(p.per()), r(p.cpu/time.Duration(p.n)))
}

// selfCPU is this process's user and system time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCxxPackets times examples/cxx/bench/packets.cpp: a C++ program
// whose 8 ranks post 2.5 M copies and 1.5 M signals (4 M packets) through
// ccoSdma::put, one run, as a whole process (wall and CPU time).
func benchCxxPackets(run bool) (benchRow, error) {
	const what = "C++ program posting 4 M packets (8 ranks, packets.cpp)"
	if !run {
		return benchRow{what, "skipped", "not with --quick"}, nil
	}
	prog, cleanup, skip := buildCxx(filepath.Join("bench", "packets.cpp"))
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanup()
	start := time.Now()
	c, err := runCxx(prog, 1)
	if err != nil {
		return benchRow{}, err
	}
	total := time.Since(start)
	return benchRow{what, total.Round(100 * time.Millisecond).String(),
		fmt.Sprintf("%s; %v from its first emud call to exit; %v CPU; %.2f M packets/s", c.packets, c.wall.Round(100*time.Millisecond),
			(c.ps.UserTime() + c.ps.SystemTime()).Round(100*time.Millisecond), packetsPerSec(c.packets, total)/1e6)}, nil
}

// buildCxx builds examples/cxx/src with emud c++ -O2 and flags into a
// temporary directory; skip says why it could not.
func buildCxx(src string, flags ...string) (prog string, cleanup func(), skip string) {
	root, err := cxx.FindRoot()
	if err != nil {
		return "", nil, err.Error()
	}
	return buildCxxIn(root, filepath.Join(root, "examples", "cxx", src), flags...)
}

// buildCxxIn is buildCxx of the source path src of the tree root.
func buildCxxIn(root, src string, flags ...string) (prog string, cleanup func(), skip string) {
	dir, err := os.MkdirTemp("", "emud-bench-")
	if err != nil {
		return "", nil, err.Error()
	}
	prog = filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".cpp"))
	var log bytes.Buffer
	if err := cxx.Run(append(append([]string{"-O2"}, flags...), src, "-o", prog),
		cxx.Options{Root: root, Stdout: &log, Stderr: &log}); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Sprintf("build failed: %v", err)
	}
	return prog, func() { os.RemoveAll(dir) }, ""
}

var (
	packetsLine = regexp.MustCompile(`emud: (\d+ packets retired \([^)]*\)); (\S+) wall time`)
	endLine     = regexp.MustCompile(`emud: seed \d+: end (\d+) ps`)
	usageLine   = regexp.MustCompile(`emud: usage: CPU time (\S+) to the first call, (\S+) building the node, (\S+) from there to exit; (\d+), (\d+) and (\d+) page faults`)
)

// cxxUsage is a run's EMUD_USAGE line: CPU time and page faults up to the
// first call, building the node, and from there to exit.
type cxxUsage struct {
	call, node, rest                   time.Duration
	callFaults, nodeFaults, restFaults int64
}

// parseUsage reads the EMUD_USAGE line of out, if any.
func parseUsage(out []byte) (cxxUsage, bool, error) {
	m := usageLine.FindSubmatch(out)
	if m == nil {
		return cxxUsage{}, false, nil
	}
	var u cxxUsage
	for i, d := range []*time.Duration{&u.call, &u.node, &u.rest} {
		v, err := time.ParseDuration(string(m[1+i]))
		if err != nil {
			return u, false, fmt.Errorf("bench: EMUD_USAGE's time %q: %v", m[1+i], err)
		}
		*d = v
	}
	for i, f := range []*int64{&u.callFaults, &u.nodeFaults, &u.restFaults} {
		v, err := strconv.ParseInt(string(m[4+i]), 10, 64)
		if err != nil {
			return u, false, fmt.Errorf("bench: EMUD_USAGE's faults %q: %v", m[4+i], err)
		}
		*f = v
	}
	return u, true, nil
}

// cxxRun is what one run of a C++ program reported.
type cxxRun struct {
	ps      *os.ProcessState
	packets string        // the EMUD_SUMMARY packet count line
	wall    time.Duration // from the first emud call to exit
	end     sim.Time      // the emulated end time
	usage   cxxUsage      // with EMUD_USAGE=1 among args
}

// runCxx runs prog with args on seed with EMUD_SUMMARY=1; an argument
// with '=' is an environment variable (EMUD_USAGE=1), not an argument.
func runCxx(prog string, seed int, args ...string) (cxxRun, error) {
	var env, argv []string
	for _, a := range args {
		if strings.Contains(a, "=") {
			env = append(env, a)
		} else {
			argv = append(argv, a)
		}
	}
	c := exec.Command(prog, argv...)
	c.Env = append(append(os.Environ(), fmt.Sprintf("EMUD_SEED=%d", seed), "EMUD_SUMMARY=1"), env...)
	out, err := c.CombinedOutput()
	if err != nil {
		return cxxRun{}, fmt.Errorf("bench: %s (seed %d): %v\n%s", prog, seed, err, out)
	}
	m, e := packetsLine.FindSubmatch(out), endLine.FindSubmatch(out)
	if m == nil || e == nil {
		return cxxRun{}, fmt.Errorf("bench: %s (seed %d): no EMUD_SUMMARY end time and packet lines in its output\n%s", prog, seed, out)
	}
	wall, err := time.ParseDuration(string(m[2]))
	if err != nil {
		return cxxRun{}, fmt.Errorf("bench: %s: wall time %q: %v", prog, m[2], err)
	}
	end, err := strconv.ParseInt(string(e[1]), 10, 64)
	if err != nil {
		return cxxRun{}, fmt.Errorf("bench: %s: end time %q: %v", prog, e[1], err)
	}
	u, ok, err := parseUsage(out)
	if err != nil {
		return cxxRun{}, err
	}
	if !ok && slices.Contains(env, "EMUD_USAGE=1") {
		return cxxRun{}, fmt.Errorf("bench: %s (seed %d): no EMUD_USAGE line in its output\n%s", prog, seed, out)
	}
	return cxxRun{c.ProcessState, string(m[1]), wall, sim.Time(end), u}, nil
}

// packetsPerSec reads the count from a packet line.
func packetsPerSec(line string, d time.Duration) float64 {
	var n int
	fmt.Sscanf(line, "%d", &n)
	return float64(n) / d.Seconds()
}

// Round counts of the per-round row: the figure is the difference of the
// two divided by theirs, so what a run pays once cancels.
const fewRounds, manyRounds = 1, 201

// benchCxxRounds times examples/cxx/bench/alltoall_rounds.cpp (the
// all-to-all of alltoall_put.cpp, repeated in one kernel) at fewRounds and
// manyRounds, each a whole process, and AlltoallRounds, the same kernel in
// Go, in this process, reps times each, alternated; a figure is the
// difference of the two round counts over the rounds between them. That
// leaves out what a run pays once (the process, the node, comms, windows,
// the host's fill and check), which the per-run row counts, and leaves
// the cost of emulating the kernel's calls: C++ lanes on their own stacks
// calling emud through the C ABI against Go lanes calling it directly.
// The two must end at the same emulated time on the same seed, or the
// row is an error: they did not do the same work. Both run on one P.
func benchCxxRounds(reps int) (benchRow, error) {
	const what = "C++ vs Go alltoall, per round (8 ranks, 64 KiB, the same kernel)"
	if reps == 0 {
		return benchRow{what, "skipped", "not with --quick"}, nil
	}
	prog, cleanup, skip := buildCxx(filepath.Join("bench", "alltoall_rounds.cpp"))
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanup()
	var cxxT, goT [2]procTimes
	var end [2]sim.Time
	defer oneProc()()
	for range reps {
		for i, rounds := range []int{fewRounds, manyRounds} {
			start := time.Now()
			c, err := runCxx(prog, 1, fmt.Sprint(rounds))
			if err != nil {
				return benchRow{}, err
			}
			cxxT[i].add(time.Since(start), c.ps)
			cpu0 := selfCPU()
			start = time.Now()
			goEnd, err := AlltoallRounds(1, rounds)
			if err != nil {
				return benchRow{}, err
			}
			goT[i].wall += time.Since(start)
			goT[i].cpu += selfCPU() - cpu0
			goT[i].n++
			if goEnd != c.end {
				return benchRow{}, fmt.Errorf("bench: %d rounds: the C++ all-to-all ended at %d ps, the Go one at %d ps: not the same work", rounds, c.end, goEnd)
			}
			end[i] = goEnd
		}
	}
	per := func(t [2]procTimes) (wall, cpu time.Duration) {
		n := time.Duration(manyRounds - fewRounds)
		return (t[1].per() - t[0].per()) / n, (t[1].cpu/time.Duration(t[1].n) - t[0].cpu/time.Duration(t[0].n)) / n
	}
	cw, cc := per(cxxT)
	gw, gc := per(goT)
	r := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
	return benchRow{what, fmt.Sprintf("%.1f× (%.1f× in CPU time)", cw.Seconds()/gw.Seconds(), cc.Seconds()/gc.Seconds()),
		fmt.Sprintf("wall (CPU) per round: C++ %v (%v), Go %v (%v); %d and %d rounds, %d runs each; both end at %v and %v emulated",
			r(cw), r(cc), r(gw), r(gc), fewRounds, manyRounds, reps, end[0], end[1])}, nil
}

// AlltoallRounds runs examples/cxx/bench/alltoall_rounds.cpp's kernel in
// Go on a job of seed: 8 ranks, windows of 8 blocks of 64 KiB, one lane
// per peer putting its block with a remote signal, quieting the peer and
// waiting for the peer's round-th signal, rounds times. It returns the
// emulated end time. (The C++ program also fills the send blocks and
// checks the receive blocks; timing does not depend on the bytes.)
func AlltoallRounds(seed uint64, rounds int) (sim.Time, error) {
	const ranks, bytes = 8, 64 << 10
	j, err := job.New(job.Config{Sim: sim.Config{Seed: seed}, Ranks: ranks, Env: cco.Env{"MORI_ENABLE_SDMA": "1"}})
	if err != nil {
		return 0, err
	}
	span := uint64(ranks) * bytes
	send, err := j.Window(span)
	if err != nil {
		return 0, err
	}
	recv, err := j.Window(span)
	if err != nil {
		return 0, err
	}
	if err := j.CreateDevComms(0, false); err != nil {
		return 0, err
	}
	for r := range ranks {
		_, err := j.Launch(r, 1, ranks, func(th *kernel.Thread, sdma *cco.Sdma) {
			nq := sdma.DevComm().Sdma.SdmaNumQueue
			p := (r + 1 + th.ThreadIdx()) % ranks
			for k := 1; k <= rounds; k++ {
				sdma.Put(p, recv[r], uint64(r)*bytes, send[r], uint64(p)*bytes, bytes, p%nq, cco.RemoteSignal)
				sdma.Quiet(p)
				sdma.WaitSignal(p, r%nq, uint64(k))
			}
		})
		if err != nil {
			return 0, err
		}
	}
	if err := j.Run(); err != nil {
		return 0, err
	}
	return j.Sim.Now(), nil
}

// MoriIncludeEnv names the include directory of a MORI checkout (the one
// that holds mori/cco/cco.hpp) that the MORI header row also builds
// against; unset, the row builds against the two headers the repository
// has.
const MoriIncludeEnv = "EMUD_MORI_INCLUDE"

// benchCxxMori times cxx/testdata/mori/put.cpp (8 ranks, 3 rounds of one
// 4 KiB put and signal per lane, each lane on its own queue) built against
// emud's own MORI header (device calls run emud's Go model of ccoSdma),
// against the repository's MORI-shaped header (cxx/testdata/mori/include:
// MORI's device code shape run natively in the lanes, with call contexts
// and lock-step at atomic accesses, capi/doc.go), and, when
// EMUD_MORI_INCLUDE names a MORI checkout's include directory, against
// that MORI: what compiling against a user's MORI costs (issue 40). Each
// figure is the mean per run as a whole process, wall (CPU), and the
// part from the first emud call to exit.
func benchCxxMori(runs int) (benchRow, error) {
	const what = "C++ with a MORI header vs emud's (put.cpp, 8 ranks, 3 rounds)"
	if runs == 0 {
		return benchRow{what, "skipped", "not with --quick (building the C++ programs takes minutes)"}, nil
	}
	root, err := cxx.FindRoot()
	if err != nil {
		return benchRow{what, "skipped", err.Error()}, nil
	}
	src := filepath.Join(root, "cxx", "testdata", "mori", "put.cpp")
	type header struct{ name, inc string }
	hs := []header{{"emud's own", ""}, {"MORI-shaped (cxx/testdata/mori)", filepath.Join(root, "cxx", "testdata", "mori", "include")}}
	if inc := os.Getenv(MoriIncludeEnv); inc != "" {
		if _, err := os.Stat(filepath.Join(inc, "mori", "cco", "cco.hpp")); err != nil {
			return benchRow{}, fmt.Errorf("bench: %s=%s: no mori/cco/cco.hpp there", MoriIncludeEnv, inc)
		}
		hs = append(hs, header{"MORI at " + inc, inc})
	}
	type result struct {
		p      procTimes
		inside time.Duration
		end    sim.Time
	}
	res := make([]result, len(hs))
	for i, h := range hs {
		flags := []string{"-DBUILD_CCO_SDMA=1"}
		if h.inc != "" {
			flags = append(flags, "-I", h.inc)
		}
		prog, cleanup, skip := buildCxxIn(root, src, flags...)
		if skip != "" {
			return benchRow{what, "skipped", h.name + ": " + skip}, nil
		}
		for r := range runs {
			start := time.Now()
			c, err := runCxx(prog, r+1)
			if err != nil {
				cleanup()
				return benchRow{}, err
			}
			res[i].p.add(time.Since(start), c.ps)
			res[i].inside += c.wall
			res[i].end = c.end
		}
		cleanup()
	}
	ratio := func(i int) float64 { return res[i].p.per().Seconds() / res[0].p.per().Seconds() }
	cpuRatio := func(i int) float64 { return float64(res[i].p.cpu) / float64(res[0].p.cpu) }
	var figs, details []string
	for i, h := range hs {
		if i > 0 {
			figs = append(figs, fmt.Sprintf("%s %.1f× wall, %.1f× CPU", h.name, ratio(i), cpuRatio(i)))
		}
		details = append(details, fmt.Sprintf("%s: %s per run, %v from the first emud call, end %v (seed %d)",
			h.name, res[i].p, (res[i].inside/time.Duration(runs)).Round(time.Millisecond), res[i].end, runs))
	}
	return benchRow{what, strings.Join(figs, "; "), fmt.Sprintf("%d seeds, wall (CPU); ", runs) + strings.Join(details, "; ")}, nil
}
