package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/scenario"
)

// benchCxx times examples/cxx/alltoall_put.cpp, built by emud c++ (the C++
// kernels' path: C ABI, lane coroutines, host threads), against the Go
// alltoall scenario of the same shape (8 ranks, 64 KiB per pair, the
// default queues) on the same seeds. A C++ run is a whole process (start,
// eight rank threads, setup, kernel, check, exit), so the row sets it
// beside both Go figures: a seed in this process (what explore pays, warm:
// no process start, its heap and mappings reused from the seed before)
// and a run as a whole emud run process. The detail also gives the C++
// part from the program's first emud call to its exit (EMUD_SUMMARY's wall
// time), which leaves out the process and Go runtime start, and each
// figure's CPU time (user and system), which a loaded machine inflates
// less than wall time: a C++ run hands its turn between threads hundreds
// of times, and each handoff waits for a core. It needs emud's source tree
// and a C++ compiler; without them, and with Quick sizes, the row says so.
func benchCxx(runs int) (benchRow, error) {
	const what = "C++ alltoall_put (8 ranks, 64 KiB) vs Go alltoall"
	if runs == 0 {
		return benchRow{what, "skipped", "not with --quick (building the C++ program takes most of a minute)"}, nil
	}
	prog, cleanup, skip := buildCxx("alltoall_put.cpp")
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanup()
	var cxxP, goP procTimes
	var inside time.Duration
	for i := range runs {
		start := time.Now()
		c, _, wall, err := runCxx(prog, i+1)
		if err != nil {
			return benchRow{}, err
		}
		cxxP.add(time.Since(start), c)
		inside += wall
	}
	sc, err := scenario.Lookup("alltoall")
	if err != nil {
		return benchRow{}, err
	}
	o := scenario.Options{Ranks: 8, Bytes: 64 << 10, Queues: cco.DefaultSdmaQueues}
	cpu0 := selfCPU()
	start := time.Now()
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
		c.Env = append(os.Environ(), ChildEnv+"=1")
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			return benchRow{}, fmt.Errorf("bench: emud %s: %v\n%s", strings.Join(c.Args[1:], " "), err, out)
		}
		goP.add(time.Since(start), c.ProcessState)
	}
	insidePer := inside / time.Duration(runs)
	ratio := func(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }
	return benchRow{what,
		fmt.Sprintf("%.1f× (%.1f× from the first call; %.1f× process to process)",
			ratio(cxxP.per(), goSeed.per()), ratio(insidePer, goSeed.per()), ratio(cxxP.per(), goP.per())),
		fmt.Sprintf("%d seeds, wall (CPU): C++ %s per run as a whole process, %v from its first emud call to exit; "+
			"Go %s per seed in one process, %s per run as an emud run process",
			runs, cxxP, insidePer.Round(time.Millisecond), goSeed, goP)}, nil
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
	ps, packets, wall, err := runCxx(prog, 1)
	if err != nil {
		return benchRow{}, err
	}
	total := time.Since(start)
	return benchRow{what, total.Round(100 * time.Millisecond).String(),
		fmt.Sprintf("%s; %v from its first emud call to exit; %v CPU; %.2f M packets/s", packets, wall.Round(100*time.Millisecond),
			(ps.UserTime() + ps.SystemTime()).Round(100*time.Millisecond), packetsPerSec(packets, total)/1e6)}, nil
}

// buildCxx builds examples/cxx/src with emud c++ -O2 into a temporary
// directory; skip says why it could not.
func buildCxx(src string) (prog string, cleanup func(), skip string) {
	root, err := cxx.FindRoot()
	if err != nil {
		return "", nil, err.Error()
	}
	dir, err := os.MkdirTemp("", "emud-bench-")
	if err != nil {
		return "", nil, err.Error()
	}
	prog = filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".cpp"))
	var log bytes.Buffer
	if err := cxx.Run([]string{"-O2", filepath.Join(root, "examples", "cxx", src), "-o", prog},
		cxx.Options{Root: root, Stdout: &log, Stderr: &log}); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Sprintf("build failed: %v", err)
	}
	return prog, func() { os.RemoveAll(dir) }, ""
}

var (
	packetsLine = regexp.MustCompile(`emud: (\d+ packets retired \([^)]*\)); (\S+) wall time`)
)

// runCxx runs prog on seed with EMUD_SUMMARY=1 and returns its process
// state, its packet count line and its wall time from the first emud call
// to exit.
func runCxx(prog string, seed int) (*os.ProcessState, string, time.Duration, error) {
	c := exec.Command(prog)
	c.Env = append(os.Environ(), fmt.Sprintf("EMUD_SEED=%d", seed), "EMUD_SUMMARY=1")
	out, err := c.CombinedOutput()
	if err != nil {
		return nil, "", 0, fmt.Errorf("bench: %s (seed %d): %v\n%s", prog, seed, err, out)
	}
	m := packetsLine.FindSubmatch(out)
	if m == nil {
		return nil, "", 0, fmt.Errorf("bench: %s (seed %d): no EMUD_SUMMARY packet line in its output\n%s", prog, seed, out)
	}
	wall, err := time.ParseDuration(string(m[2]))
	if err != nil {
		return nil, "", 0, fmt.Errorf("bench: %s: wall time %q: %v", prog, m[2], err)
	}
	return c.ProcessState, string(m[1]), wall, nil
}

// packetsPerSec reads the count from a packet line.
func packetsPerSec(line string, d time.Duration) float64 {
	var n int
	fmt.Sscanf(line, "%d", &n)
	return float64(n) / d.Seconds()
}
