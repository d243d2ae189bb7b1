//go:build cgo

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// laneRecordBytes is what emud keeps for each lane of a live grid: the
// kernel's thread record, its share of its wave's actor and goroutine,
// and the lane's slot in capi (measured: one launch of 1024 blocks of 64
// lanes peaked at 67 MB, of 8192 blocks at 489 MB, ~0.94 KiB a lane; the
// native lanes' stacks are mapped as they run and touched only as deep
// as their code goes, so they are not in it).
const laneRecordBytes = 1 << 10

// machineMemory is the memory this process may use: physical memory or,
// when lower, its cgroup v2 limit (a container's), and which. (The C++
// library is built with tags the scenario package's metrics do not
// build under, so scenario.MachineMemory's fuller reading, cgroup v1
// included, is not linked here.)
func machineMemory() (uint64, string) {
	var si syscall.Sysinfo_t
	lim, src := uint64(0), "physical memory"
	if syscall.Sysinfo(&si) == nil {
		lim = uint64(si.Totalram) * uint64(si.Unit)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil && len(b) < 64 {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (lim == 0 || v < lim) {
			lim, src = v, "memory (the cgroup limit in /sys/fs/cgroup/memory.max)"
		}
	}
	return lim, src
}

// parseSize reads a size: a whole number of bytes with an optional K, M,
// G or T (powers of 1024, "KiB" and "KB" alike).
func parseSize(s string) (uint64, bool) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if n := len(t); n > 0 {
		if k := strings.IndexByte("KMGT", t[n-1]); k >= 0 {
			shift, t = 10*(k+1), t[:n-1]
		}
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil || v == 0 || v > ^uint64(0)>>shift {
		return 0, false
	}
	return v << shift, true
}

// gib is n bytes in GiB, or MiB under one GiB.
func gib(n uint64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// gridBudget is the memory a launch's grid may take: EMUD_MEM_BUDGET, or
// half of what this process may use, and where the figure came from.
// It is found at the emulation's first launch and kept (rt.budget): a
// sysinfo call, a cgroup file and the words per launch were 1.3% of a
// small C++ seed's time.
func gridBudget() (uint64, string, error) {
	b := &rt.budget
	if !b.known {
		b.bytes, b.from, b.err = findGridBudget()
		b.known = true
	}
	return b.bytes, b.from, b.err
}

// launchBudget is gridBudget's answer, kept for the emulation.
type launchBudget struct {
	known bool
	bytes uint64
	from  string
	err   error
}

func findGridBudget() (uint64, string, error) {
	if v := os.Getenv("EMUD_MEM_BUDGET"); v != "" {
		b, ok := parseSize(v)
		if !ok {
			return 0, "", fmt.Errorf("EMUD_MEM_BUDGET=%q: want a size over 0 (4096, 64M, 2GiB)", v)
		}
		return b, "EMUD_MEM_BUDGET", nil
	}
	lim, src := machineMemory()
	if lim == 0 {
		return ^uint64(0), "no limit known", nil
	}
	return lim / 2, fmt.Sprintf("half of this machine's %s of %s; EMUD_MEM_BUDGET sets it", gib(lim), src), nil
}

// checkGrid refuses a grid of nb blocks of nt lanes, each block with dyn
// bytes of dynamic shared memory, whose estimated memory is over the
// budget, naming the estimate and the budget: such a grid was admitted
// and grew until the kernel killed the process (<<<1<<20, 64>>> needs
// about 64 GiB).
func checkGrid(nb, nt, dyn uint64) error {
	budget, from, err := gridBudget()
	if err != nil {
		return err
	}
	lanes := nb * nt // ≤ 2^20 blocks of ≤ 1024 lanes: no overflow
	est := lanes * laneRecordBytes
	if dyn > 0 && (dyn > budget/nb || est+nb*dyn > budget) {
		return fmt.Errorf("%d lanes and %d B of dynamic shared memory a block need more than the launch budget of %s (%s)", lanes, dyn, gib(budget), from)
	}
	if est > budget {
		return fmt.Errorf("%d lanes need about %s of emulator memory (%d B a lane), over the launch budget of %s (%s)", lanes, gib(est), laneRecordBytes, gib(budget), from)
	}
	return nil
}
