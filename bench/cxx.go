package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/scenario"
)

// benchCxx times examples/cxx/alltoall_put.cpp, built by emud c++ (the C++
// kernels' path: C ABI, lane coroutines, host threads), against the Go
// alltoall scenario of the same shape (8 ranks, 64 KiB per pair, the
// default queues), per seed. The C++ time is a whole process (start,
// eight rank threads, setup, kernel, check); the detail also gives the
// part from the program's first emud call to its exit (EMUD_SUMMARY's
// wall time), which leaves out the process and Go runtime start. It needs
// emud's source tree and a C++ compiler; without them, and with Quick
// sizes, the row says so.
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
	start := time.Now()
	var inside time.Duration
	for i := range runs {
		_, wall, err := runCxx(prog, i+1)
		if err != nil {
			return benchRow{}, err
		}
		inside += wall
	}
	cxxPer := time.Since(start) / time.Duration(runs)
	insidePer := inside / time.Duration(runs)
	sc, err := scenario.Lookup("alltoall")
	if err != nil {
		return benchRow{}, err
	}
	start = time.Now()
	x := scenario.Explore(sc, scenario.Options{Ranks: 8, Bytes: 64 << 10, Queues: cco.DefaultSdmaQueues}, 1, runs, 1, nil)
	goPer := time.Since(start) / time.Duration(runs)
	if f := x.Found(); f != nil {
		return benchRow{}, fmt.Errorf("bench: alltoall: seed %d %s", f.O.Seed, f.Status)
	}
	return benchRow{what, fmt.Sprintf("%.1f× (%.1f× from the first call)", cxxPer.Seconds()/goPer.Seconds(), insidePer.Seconds()/goPer.Seconds()),
		fmt.Sprintf("%d seeds: C++ %v per run (a whole process; %v from its first emud call to exit), Go %v per seed (in process)",
			runs, cxxPer.Round(time.Millisecond), insidePer.Round(time.Millisecond), goPer.Round(100*time.Microsecond))}, nil
}

// benchCxxPackets times examples/cxx/bench/packets.cpp: a C++ program
// whose 8 ranks post 2.5 M copies and 1.5 M signals (4 M packets) through
// ccoSdma::put, one run, as a whole process.
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
	packets, wall, err := runCxx(prog, 1)
	if err != nil {
		return benchRow{}, err
	}
	total := time.Since(start)
	return benchRow{what, total.Round(100 * time.Millisecond).String(),
		fmt.Sprintf("%s; %v from its first emud call to exit; %.2f M packets/s", packets, wall.Round(100*time.Millisecond), packetsPerSec(packets, total)/1e6)}, nil
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

// runCxx runs prog on seed with EMUD_SUMMARY=1 and returns its packet
// count line and its wall time from the first emud call to exit.
func runCxx(prog string, seed int) (string, time.Duration, error) {
	c := exec.Command(prog)
	c.Env = append(os.Environ(), fmt.Sprintf("EMUD_SEED=%d", seed), "EMUD_SUMMARY=1")
	out, err := c.CombinedOutput()
	if err != nil {
		return "", 0, fmt.Errorf("bench: %s (seed %d): %v\n%s", prog, seed, err, out)
	}
	m := packetsLine.FindSubmatch(out)
	if m == nil {
		return "", 0, fmt.Errorf("bench: %s (seed %d): no EMUD_SUMMARY packet line in its output\n%s", prog, seed, out)
	}
	wall, err := time.ParseDuration(string(m[2]))
	if err != nil {
		return "", 0, fmt.Errorf("bench: %s: wall time %q: %v", prog, m[2], err)
	}
	return string(m[1]), wall, nil
}

// packetsPerSec reads the count from a packet line.
func packetsPerSec(line string, d time.Duration) float64 {
	var n int
	fmt.Sscanf(line, "%d", &n)
	return float64(n) / d.Seconds()
}
