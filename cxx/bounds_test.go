package cxx

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxRSS runs prog with args and returns its peak resident set in bytes.
func maxRSS(t *testing.T, prog string, args ...string) int64 {
	t.Helper()
	return maxRSSEnv(t, nil, prog, args...)
}

// maxRSSEnv is maxRSS with env added to the environment.
func maxRSSEnv(t *testing.T, env []string, prog string, args ...string) int64 {
	t.Helper()
	r := runProgram(t, runOpts{peakRSS: true}, prog, append(append([]string{}, env...), args...)...)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout+r.stderr, "PASS")
	require.Positive(t, r.maxRSS, "no rusage on this platform")
	return r.maxRSS
}

// TestPeakRSSIsTheProgramsOwn: a program's peak RSS (runOpts.peakRSS) is
// its own, not the test binary's: with 192 MiB touched here, true(1)
// peaks under 16 MiB. The rusage of a child Go starts said 192 MiB and
// more (a vfork's exec keeps the test binary's peak), so the RSS bounds
// here compared the test binary's peak once it was the larger.
func TestPeakRSSIsTheProgramsOwn(t *testing.T) {
	needCxx(t)
	bin, err := exec.LookPath("true")
	require.NoError(t, err)
	ballast := make([]byte, 192<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	r := runProgram(t, runOpts{peakRSS: true}, bin)
	runtime.KeepAlive(ballast)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Positive(t, r.maxRSS)
	assert.Less(t, r.maxRSS, int64(16<<20), "true's peak RSS %d MiB", r.maxRSS>>20)
}

// The state of a launch's lanes goes when the launch retires: 300
// launches of 4096 lanes peak within 8 MiB of 30 launches. Before, the
// simulator kept each finished wave's actor function, and with it the
// wave's lanes (~0.9 KiB a lane): 100 launches peaked at 357 MB, 300 at
// 1069 MB; then 22 MB and about 35 MB, the finished actors' records
// growing ~49 KB a launch (3000 at 154 MB); now 19 MiB for 100, 1000 or
// 3000 (finished actors leave the simulator's list).
func TestLaunchesFreeLaneState(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "launches.cpp"), "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	few, many := maxRSS(t, prog, "30"), maxRSS(t, prog, "300")
	t.Logf("peak RSS: 30 launches %d MiB, 300 launches %d MiB", few>>20, many>>20)
	assert.Less(t, many-few, int64(8<<20), fmt.Sprintf("270 more launches grew the peak by %d MiB", (many-few)>>20))
}

// Under EMUD_RACE=1 the race detector reuses the thread slots of retired
// waves (package race, retire.go): 300 instrumented launches of 4096 lanes
// peak within 32 MiB of 30 launches, and the detector still tells ordered
// launches from unordered ones after hundreds of launches
// (cxx/testdata/bounds/race_launches.cpp: 300 launches on stream a, then
// one on stream b after hipStreamSynchronize(a), no race; or with nothing
// between, a race naming the kernel's line: b's grid runs beside a's
// first, as the host queues a's launches and goes on). Before, every wave ever made
// kept a slot and every vector clock grew with them: 100 launches peaked
// at 182 MB, 300 at 1159 MB, and 1000 were killed at 6.7 GB.
func TestRaceLaunchesBounded(t *testing.T) {
	plainLine(t)
	needCxx(t)
	root := setupCxx(t)
	race := []string{"EMUD_RACE=1"}
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "launches.cpp"), "-O2", "-Wall", "-Werror")
	few, many := maxRSSEnv(t, race, prog, "30"), maxRSSEnv(t, race, prog, "300")
	t.Logf("peak RSS under EMUD_RACE=1: 30 launches %d MiB, 300 launches %d MiB", few>>20, many>>20)
	assert.Less(t, many-few, int64(32<<20), fmt.Sprintf("270 more launches grew the peak by %d MiB", (many-few)>>20))

	src := filepath.Join(root, "cxx", "testdata", "bounds", "race_launches.cpp")
	prog = buildExample(t, src, "-O2", "-Wall", "-Werror")
	for _, c := range []struct {
		mode  string
		code  int
		words []string
	}{
		{"synced", 0, nil},
		{"unsynced", 5, []string{"emud: seed 1: 512 data race(s)", `by kernel "bump" GPU 0 block 0 wave 0 lane 0 (` + src + `:14`}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			out, report, code := runExample(t, prog, "300", c.mode, "EMUD_RACE=1")
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Contains(t, out, "race_launches 300 "+c.mode+": last word 301 (PASS)")
			if c.words == nil {
				assert.NotContains(t, report, "data race")
			}
			for _, w := range c.words {
				assert.Contains(t, report, w)
			}
		})
	}
}

// A grid whose estimated memory is over the launch budget is refused at
// once, naming the estimate, the budget, where the budget came from and
// the launch's own line (cxx/testdata/bounds/huge_grid.cpp); before, the
// launch was admitted and grew until the kernel killed the process, and a
// launch error named hip_runtime.h's line. A bad budget is an error
// naming the variable.
func TestLaunchOverBudget(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "huge_grid.cpp"), "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	for _, c := range []struct {
		name, budget string
		words        []string
	}{
		{"over", "8GiB", []string{"huge_grid.cpp:15: kernel launch touch (host main thread): grid (1048576,1,1) of blocks (64,1,1): 67108864 lanes need about 64.0 GiB of emulator memory (1024 B a lane), over the launch budget of 8.0 GiB (EMUD_MEM_BUDGET)"}},
		{"bad budget", "lots", []string{`huge_grid.cpp:15: kernel launch touch (host main thread): grid (1048576,1,1) of blocks (64,1,1): EMUD_MEM_BUDGET="lots": want a size over 0`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runFull(t, prog, "EMUD_MEM_BUDGET="+c.budget)
			out, report := r.stdout, r.stderr
			if c.name == "over" {
				require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", out, report)
				assert.Contains(t, out, "huge_grid: launch hipErrorOutOfMemory")
				assert.Contains(t, out, "the small grid counted 256")
				assert.Less(t, r.took, 30*time.Second, "refused at once, not after growing")
			}
			for _, w := range c.words {
				assert.Contains(t, report, w)
			}
		})
	}
}

// A lane whose recursion outgrows its 256 KiB stack stops the run with
// "lane stack overflow in kernel K at file:line" (with line tables; the
// pc without), exit 1 (examples/cxx/errors/stack_overflow.cpp). Before,
// it read as a memory fault at a host address that was never allocated.
func TestLaneStackOverflow(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "examples", "cxx", "errors", "stack_overflow.cpp")
	for _, c := range []struct {
		name  string
		flags []string
		at    string
	}{
		{"instrumented", []string{"-O2", "-Wall", "-Werror"}, `lane stack overflow in kernel "recurse" at ` + src + `:8: the lane used up its 256 KiB stack`},
		{"plain", []string{"-O2", "-Wall", "-Werror", "-fno-sanitize=thread"}, `lane stack overflow in kernel "recurse" at pc 0x`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, report, code := runExample(t, buildExample(t, src, c.flags...))
			require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.NotContains(t, out, "FAIL")
			assert.Contains(t, report, c.at)
			assert.NotContains(t, report, "host address")
		})
	}
}

// A loop made only of emud calls that take no virtual time and change
// nothing is a hang report (exit 2) naming the thread, the call and its
// line, once it has repeated for EMUD_SPIN_LIMIT of wall time
// (examples/cxx/errors/call_loop.cpp). Before, each ran forever at 100%
// CPU with no report: the spin watch saw the thread call in. A loop of
// two such calls in turn (cycle: __shfl and __ballot, the shape of a
// grouping loop whose mask never empties) ran forever until the watch
// counted a loop's calls whatever their sites. A loop of __threadfence
// over a plain load is one too, instrumented or not.
func TestCallLoopIsAHang(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "examples", "cxx", "errors", "call_loop.cpp")
	prog := buildExample(t, src, "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	// Instrumented (emud c++'s default), a fence with nothing to announce
	// passes in the lane's own code (lane.c emud_fence_skip), a few dozen
	// at a time: the loop must still reach the call watch, not run on in C
	// until the spin watch names the lane for holding the turn.
	instrumented := buildExample(t, src, "-O2", "-Wall", "-Werror")
	fence := `kernel "loopFence" GPU 0 block 0 wave 0 lane 0 loops on __threadfence at call_loop.cpp:41, which takes no virtual time`
	for _, c := range []struct {
		mode, words string
		prog        string
	}{
		{"sync", `kernel "loopSync" GPU 0 block 0 wave 0 lane 0 [calling __syncthreads in a loop since 0ps]`, prog},
		{"ballot", `loops on __ballot (or __any, __all) at call_loop.cpp:23`, prog},
		{"shfl", `loops on __shfl at call_loop.cpp:28`, prog},
		{"cycle", `kernel "loopCycle" GPU 0 block 0 wave 0 lane 0 loops on __shfl at call_loop.cpp:35 and __ballot (or __any, __all) at call_loop.cpp:36, which take no virtual time`, prog},
		{"fence", fence, prog},
		{"fence", fence, instrumented},
		{"device", `host main thread loops on hipDeviceSynchronize at ` + src + `:56`, prog},
	} {
		name := c.mode
		if c.prog == instrumented {
			name += " instrumented"
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			out, report, code := runExample(t, c.prog, c.mode, "EMUD_SPIN_LIMIT=1s")
			require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.NotContains(t, out, "FAIL")
			assert.Contains(t, report, "emud: seed 1: hang")
			assert.Contains(t, report, c.words)
			assert.Less(t, time.Since(start), 20*time.Second)
		})
	}
}

// A grid of 32,768 lanes alive at once runs (cxx/testdata/bounds/big_grid.cpp:
// every lane blocked at __syncthreads until every block has arrived).
// Before the lanes' stacks came from arenas with guard pages that do not
// split the mapping (MADV_GUARD_INSTALL), each stack was two mappings,
// over Linux's default vm.max_map_count, and the launch failed with
// "cannot allocate the lane's stack" (NCCL's 01_allreduce_lsa at 4
// ranks) or, run to run, went on without some guard pages. On a kernel
// older than 6.13 the guard is mprotect's again and the test is skipped.
func TestBigGrid(t *testing.T) {
	needCxx(t)
	if !kernelAtLeast(6, 13) {
		t.Skip("MADV_GUARD_INSTALL needs Linux 6.13: lane stacks' guard pages are mprotect's, a mapping each")
	}
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "big_grid.cpp"), "-I", filepath.Join(root, "examples", "cxx"), "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	start := time.Now()
	out, report, code := runExample(t, prog)
	t.Logf("%v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.Contains(t, out, "big_grid: 32768 lanes, PASS")
	// Fewer mappings than lanes: the stacks and their guard pages do not
	// cost a mapping each (before: 65,531 when the launch got through, the
	// guard pages past the limit silently not made).
	var maps int
	_, err := fmt.Sscanf(out[strings.Index(out, "big_grid: "):], "big_grid: %d mappings", &maps)
	require.NoError(t, err, out)
	assert.Less(t, maps, 32768/64, "mappings while every lane was alive")
}

// kernelAtLeast reports whether the running Linux kernel is major.minor or
// newer.
func kernelAtLeast(major, minor int) bool {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return false
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	var ma, mi int
	if _, err := fmt.Sscanf(string(b), "%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// probeRSSConstant is the constant of the C++ path's memory bound: a
// program's peak RSS stays within 1.2x the device memory it allocated
// (emulated bytes) plus this (capi/doc.go, "Memory"). Measured on the
// probes below: 9-16 MiB for bad pointers, huge grids and call loops,
// 19 MiB for 1000 launches, 34 MiB for 300 launches under EMUD_RACE=1,
// and 16 MiB to 2 GiB allocated at 1.02x plus 10-40 MiB.
const probeRSSConstant = 64 << 20

// The probes end with a clear error, or pass, within bounded time,
// and their peak RSS stays within 1.2x their emulated memory plus
// probeRSSConstant. Before this round's fixes, 3000 launches grew to
// 154 MB (finished actors stayed in the simulator) and 300 launches under
// EMUD_RACE=1 to 1.1 GB (a vector-clock slot per wave ever made).
func TestProbesRSSBound(t *testing.T) {
	plainLine(t)
	needCxx(t)
	root := setupCxx(t)
	errs := filepath.Join(root, "examples", "cxx", "errors")
	bounds := filepath.Join(root, "cxx", "testdata", "bounds")
	plain := []string{"-O2", "-Wall", "-Werror", "-fno-sanitize=thread"}
	for _, c := range []struct {
		name, src string
		flags     []string
		args, env []string
		code      int
		words     string // in stdout or stderr
		emulated  int64  // the device memory the program allocates
	}{
		{"bad pointer device", filepath.Join(errs, "bad_pointer.cpp"), plain, []string{"device"}, nil, 1, "memory fault", 4096},
		{"bad pointer host", filepath.Join(errs, "bad_pointer.cpp"), plain, []string{"host"}, nil, 1, "not device memory", 4096},
		{"host pointer null", filepath.Join(errs, "host_pointer.cpp"), plain, []string{"null"}, nil, 1, "hipErrorInvalidValue", 1 << 20},
		{"host pointer freed", filepath.Join(errs, "host_pointer.cpp"), plain, []string{"freed"}, nil, 1, "hipErrorInvalidValue", 1 << 20},
		{"huge grid", filepath.Join(bounds, "huge_grid.cpp"), plain, nil, []string{"EMUD_MEM_BUDGET=8GiB"}, 0, "over the launch budget", 4},
		{"call loop", filepath.Join(errs, "call_loop.cpp"), plain, []string{"sync"}, []string{"EMUD_SPIN_LIMIT=1s"}, 2, "calling __syncthreads in a loop", 4},
		{"host call loop", filepath.Join(errs, "call_loop.cpp"), plain, []string{"device"}, []string{"EMUD_SPIN_LIMIT=1s"}, 2, "loops on hipDeviceSynchronize", 4},
		{"atomic call loop", filepath.Join(bounds, "atomic_loop.cpp"), plain, []string{"cas"}, []string{"EMUD_SPIN_LIMIT=1s"}, 2, "spin on an atomic load", 16},
		{"1000 launches", filepath.Join(bounds, "launches.cpp"), plain, []string{"1000"}, nil, 0, "launches 1000: last word 1000 (PASS)", 16 << 10},
		{"300 launches, race detector", filepath.Join(bounds, "launches.cpp"), []string{"-O2", "-Wall", "-Werror"}, []string{"300"}, []string{"EMUD_RACE=1"}, 0, "launches 300: last word 300 (PASS)", 16 << 10},
		{"256 MiB allocated", filepath.Join(bounds, "big_alloc.cpp"), plain, []string{"256"}, nil, 0, "big_alloc 256 MiB: PASS", 256 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := buildExample(t, c.src, c.flags...)
			r := runProgram(t, runOpts{peakRSS: true}, prog, append(append([]string{}, c.env...), c.args...)...)
			out := r.stdout + r.stderr
			require.Equal(t, c.code, r.code, "%s", out)
			assert.Contains(t, out, c.words)
			assert.Less(t, r.took, 60*time.Second)
			require.Positive(t, r.maxRSS, "no rusage on this platform")
			rss, bound := r.maxRSS, c.emulated*6/5+probeRSSConstant
			t.Logf("peak RSS %d MiB (bound %d MiB), %v", rss>>20, bound>>20, r.took.Round(time.Millisecond))
			assert.LessOrEqual(t, rss, bound)
		})
	}
}

// A loop of atomic read-modify-writes that leave their word as it was (an
// atomicAdd of 0, a compare-and-swap on a lock held forever) is a spin: the
// lane waits for a write, and a write that never comes is a hang report
// naming the word, its value and the line (cxx/testdata/bounds/
// atomic_loop.cpp). Two lanes taking turns on one CAS lock still finish.
// Before, each loop ran forever at 100% CPU with no report: every
// read-modify-write counted as a write, which restarts the spin count.
func TestAtomicLoopIsASpin(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "atomic_loop.cpp"), "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	for _, c := range []struct {
		mode, words string
		code        int
	}{
		{"add0", "spin on an atomic load of 0x200800001000 (1 lanes) at atomic_loop.cpp:13: value 0x0, never written again", 2},
		{"cas", "spin on an atomic load of 0x200800000000 (1 lanes) at atomic_loop.cpp:17: value 0x1, never written again", 2},
		{"pair", "", 0},
	} {
		t.Run(c.mode, func(t *testing.T) {
			start := time.Now()
			out, report, code := runExample(t, prog, c.mode, "EMUD_SPIN_LIMIT=1s")
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Less(t, time.Since(start), 20*time.Second)
			if c.code == 0 {
				assert.Contains(t, out, "atomic_loop pair ended: 42 42")
				return
			}
			assert.Contains(t, report, "emud: seed 1: hang")
			assert.Contains(t, report, c.words)
		})
	}
}

// TestHostHeap: a program's host heap is set up for host threads that
// take turns (capi/heap.c): sixteen 512 KiB blocks filled by two host
// threads after the first emud call fault a few huge pages, not each
// block's 128 pages, as with glibc's defaults (EMUD_MALLOC=system, 2048
// faults and more); EMUD_USAGE prints the split either way. Without
// transparent huge pages (never) the heap's advice does nothing: skipped.
func TestHostHeap(t *testing.T) {
	needCxx(t)
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || strings.Contains(string(b), "[never]") {
		t.Skip("no transparent huge pages here")
	}
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "host_buffers.cpp"), "-O2", "-Wall", "-Werror")
	usage := regexp.MustCompile(`emud: usage: CPU time \S+ to the first call, \S+ building the node, \S+ from there to exit; \d+, \d+ and (\d+) page faults`)
	faults := map[string]int{}
	for _, heap := range []string{"emud", "system"} {
		r := runFull(t, prog, "EMUD_USAGE=1", "EMUD_MALLOC="+heap)
		require.Equal(t, 0, r.code, "%s%s", r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "host_buffers: PASS")
		m := usage.FindStringSubmatch(r.stderr)
		require.NotNil(t, m, "EMUD_USAGE's line on stderr:\n%s", r.stderr)
		faults[heap], _ = strconv.Atoi(m[1])
	}
	t.Logf("page faults from the node to exit: %v", faults)
	assert.GreaterOrEqual(t, faults["system"], 2048, "glibc's defaults fault each block's pages")
	assert.Less(t, faults["emud"], faults["system"]-1500, "emud's heap takes the blocks from huge pages")
}
