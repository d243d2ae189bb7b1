package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/scenario"
)

// benchCxx times examples/cxx/alltoall_put.cpp, built by emud c++ (the C++
// kernels' path: C ABI, lane coroutines, host threads), against the Go
// alltoall scenario of the same shape (8 ranks, 64 KiB per pair, the
// default queues), per seed; the C++ time is a whole process (start,
// eight rank threads, setup, kernel, check). It needs emud's source tree
// and a C++ compiler; without them, and with Quick sizes, the row says so.
func benchCxx(runs int) (benchRow, error) {
	const what = "C++ alltoall_put (8 ranks, 64 KiB) vs Go alltoall"
	if runs == 0 {
		return benchRow{what, "skipped", "not with --quick (building the C++ program takes most of a minute)"}, nil
	}
	root, err := cxx.FindRoot()
	if err != nil {
		return benchRow{what, "skipped", err.Error()}, nil
	}
	dir, err := os.MkdirTemp("", "emud-bench-")
	if err != nil {
		return benchRow{}, err
	}
	defer os.RemoveAll(dir)
	prog := filepath.Join(dir, "alltoall_put")
	var log bytes.Buffer
	if err := cxx.Run([]string{"-O2", filepath.Join(root, "examples", "cxx", "alltoall_put.cpp"), "-o", prog},
		cxx.Options{Root: root, Stdout: &log, Stderr: &log}); err != nil {
		return benchRow{what, "skipped", fmt.Sprintf("build failed: %v", err)}, nil
	}
	start := time.Now()
	for i := range runs {
		c := exec.Command(prog)
		c.Env = append(os.Environ(), fmt.Sprintf("EMUD_SEED=%d", i+1))
		if out, err := c.CombinedOutput(); err != nil {
			return benchRow{}, fmt.Errorf("bench: %s (seed %d): %v\n%s", prog, i+1, err, out)
		}
	}
	cxxPer := time.Since(start) / time.Duration(runs)
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
	return benchRow{what, fmt.Sprintf("%.1f×", cxxPer.Seconds()/goPer.Seconds()),
		fmt.Sprintf("%d seeds: C++ %v per run (a whole process), Go %v per seed (in process)", runs, cxxPer.Round(time.Millisecond), goPer.Round(100*time.Microsecond))}, nil
}
