package cxx

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/model"
)

// TestKFDTopology runs examples/cxx/procs/kfd_topology.cpp: it counts
// GPUs in /sys/class/kfd/kfd/topology as MORI's test harness does and
// finds the emulated node's (EMUD_GPUS, as many as hipGetDeviceCount),
// under both presets; the tree it copies out reads back with hw/rocm's
// sysfs reader (what the ROCm backend reads on hardware) as the preset's
// engines say: the counts, and each io link's recommended engine mask
// as model.Engines.Mask places the link's channels.
func TestKFDTopology(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "procs", "kfd_topology.cpp"), "-O2", "-Wall", "-Werror")
	for _, c := range []struct {
		arch string
		gpus int
	}{{"gfx950", 8}, {"gfx950", 3}, {"gfx1250", 8}} {
		t.Run(fmt.Sprintf("%s/%d", c.arch, c.gpus), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "topology")
			out, report, code := runExample(t, prog, dir, "TMPDIR="+t.TempDir(), "EMUD_ARCH="+c.arch, fmt.Sprintf("EMUD_GPUS=%d", c.gpus))
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Contains(t, out, fmt.Sprintf("kfd_topology: %d GPUs in sysfs, %d HIP devices\n", c.gpus, c.gpus))
			assert.Contains(t, out, "kfd_topology: PASS")
			nodes, err := rocm.ReadTopology(dir)
			require.NoError(t, err)
			require.Len(t, nodes, c.gpus+1, "the host's node and one per GPU")
			assert.False(t, nodes[0].IsGPU())
			p, err := model.Load(c.arch)
			require.NoError(t, err)
			e := p.Engines()
			ids := map[uint32]bool{}
			for g := range c.gpus {
				n := nodes[g+1]
				require.True(t, n.IsGPU(), "node %d", g+1)
				b, err := os.ReadFile(filepath.Join(dir, "nodes", fmt.Sprint(g+1), "gpu_id"))
				require.NoError(t, err)
				var id uint32
				_, err = fmt.Sscan(string(b), &id)
				require.NoError(t, err)
				assert.NotZero(t, id, "node %d's gpu_id", g+1)
				ids[id] = true
				assert.Equal(t, e.General, n.SDMAEngines, "node %d num_sdma_engines", g+1)
				assert.Equal(t, e.XGMI, n.XGMIEngines, "node %d num_sdma_xgmi_engines", g+1)
				assert.Equal(t, uint32(e.HostLinkMask()), n.RecEngineMask[0], "node %d's host link", g+1)
				for peer := range c.gpus {
					if peer == g {
						continue
					}
					assert.Equal(t, uint32(e.Mask(g, peer)), n.RecEngineMask[peer+1], "GPU %d's link to GPU %d", g, peer)
				}
			}
			assert.Len(t, ids, c.gpus, "gpu_id differs per GPU")
		})
	}
}

// digestOf is the digest EMUD_SUMMARY printed on stderr.
func digestOf(t *testing.T, stderr string) string {
	t.Helper()
	m := regexp.MustCompile(`digest ([0-9a-f]{64})`).FindStringSubmatch(stderr)
	require.NotNil(t, m, "no digest in:\n%s", stderr)
	return m[1]
}

// TestForkAlltoall runs examples/cxx/procs/fork_alltoall.cpp, MORI's
// fork harness shape (GPUs counted in sysfs, the unique id through a
// file, one forked child per GPU, waitpid), and its twin with the ranks
// as threads: both pass, and on each seed, exact and perturbed, the
// processes give the threads' digest, run after run.
func TestForkAlltoall(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := filepath.Join(root, "examples", "cxx", "procs")
	forked := buildExample(t, filepath.Join(dir, "fork_alltoall.cpp"), "-O2", "-Wall", "-Werror")
	threads := buildExample(t, filepath.Join(dir, "thread_alltoall.cpp"), "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{"EMUD_SEED=1"}, {"EMUD_SEED=5", "EMUD_PERTURB=1"}} {
		t.Run(strings.Join(env, ","), func(t *testing.T) {
			env := append([]string{"EMUD_SUMMARY=1", "TMPDIR=" + t.TempDir()}, env...)
			out, report, code := runExample(t, threads, env...)
			require.Equal(t, 0, code, "threads: stdout:\n%s\nstderr:\n%s", out, report)
			assert.Contains(t, out, "thread_alltoall: 8/8 ranks passed")
			want := digestOf(t, report)
			if env[len(env)-1] == "EMUD_SEED=1" {
				// Lanes instrumented and the race detector on: the child's
				// lanes' logged accesses reach it with each device call.
				tforked := buildExample(t, filepath.Join(dir, "fork_alltoall.cpp"), "-O2", "-fsanitize=thread")
				out, report, code := runExample(t, tforked, append(env, "EMUD_RACE=1")...)
				require.Equal(t, 0, code, "processes, EMUD_RACE=1: stdout:\n%s\nstderr:\n%s", out, report)
				assert.Equal(t, want, digestOf(t, report), "processes, EMUD_RACE=1: the threads' digest")
			}
			for run := range 2 {
				out, report, code := runExample(t, forked, env...)
				require.Equal(t, 0, code, "processes, run %d: stdout:\n%s\nstderr:\n%s", run, out, report)
				assert.Contains(t, out, "fork_alltoall: 8/8 ranks passed")
				assert.Equal(t, want, digestOf(t, report), "processes, run %d: the threads' digest", run)
			}
		})
	}
}

// hangReport is a failed run's report from its "hang" line through its
// digest line: what the emulator says of the run, without what the
// processes' side adds after it.
func hangReport(t *testing.T, stderr string) string {
	t.Helper()
	i := strings.Index(stderr, "hang (deadlock)")
	require.GreaterOrEqual(t, i, 0, "no hang in:\n%s", stderr)
	j := strings.Index(stderr[i:], "\ndigest: ")
	require.GreaterOrEqual(t, j, 0, "no digest in:\n%s", stderr)
	return stderr[i : i+j]
}

// TestForkPlantedSlotReset plants a bug across processes: each rank's
// lanes zero, after the first round, the signal slot their peer's
// signals count in (alltoall_rank.hpp's "planted"). The processes hang
// with the report the threads give, word for word: the slot went back
// to 0 by the lane's store at its line, though the lane ran in a child.
func TestForkPlantedSlotReset(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := filepath.Join(root, "examples", "cxx", "procs")
	forked := buildExample(t, filepath.Join(dir, "fork_alltoall.cpp"), "-O2", "-Wall", "-Werror")
	threads := buildExample(t, filepath.Join(dir, "thread_alltoall.cpp"), "-O2", "-Wall", "-Werror")
	out, treport, code := runExample(t, threads, "planted", "TMPDIR="+t.TempDir())
	require.Equal(t, 2, code, "threads: a hang; stdout:\n%s\nstderr:\n%s", out, treport)
	out, freport, code := runExample(t, forked, "planted", "TMPDIR="+t.TempDir())
	require.Equal(t, 2, code, "processes: a hang; stdout:\n%s\nstderr:\n%s", out, freport)
	want := hangReport(t, treport)
	assert.Regexp(t, `the slot was overwritten: it went from 1 back to 0 at [^ ]+ by kernel "alltoall" GPU 0 block 0 wave 0 lane 0's store at [^ ]*alltoall_rank.hpp:\d+\.`, want)
	assert.Equal(t, want, hangReport(t, freport))
	assert.Contains(t, freport, "emud: ranks as processes (served by host threads of this one):\n  host thread 1 is rank process ")
}

// TestForkKilledRank kills rank 1's process after its first call: the
// run ends at once (well within the hang timeout) with a hang report
// whose waiters name what they wait for (7 of 8 ranks at ccoCommCreate),
// and the process is named by pid, host thread and GPU with its signal;
// the surviving children exit instead of waiting for a coordinator that
// is gone.
func TestForkKilledRank(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	forked := buildExample(t, filepath.Join(root, "examples", "cxx", "procs", "fork_alltoall.cpp"), "-O2", "-Wall", "-Werror")
	start := time.Now()
	out, report, code := runExample(t, forked, "kill", "TMPDIR="+t.TempDir(), "EMUD_SPIN_LIMIT=20s")
	require.Equal(t, 2, code, "a hang; stdout:\n%s\nstderr:\n%s", out, report)
	assert.Less(t, time.Since(start), 20*time.Second, "ended by the report, not by the spin watch")
	assert.Contains(t, report, "ccoCommCreate (rank 0): 7 of 8 ranks arrived")
	assert.Regexp(t, `host thread 2 is forked rank process \d+ \(GPU 1\), which was killed by signal 9 \(Killed\) after its last call \(its call at [^ ]*fork_alltoall.cpp:\d+ returned\)`, report)
}

// TestForkStuckRank: rank 1 of two forked ranks never calls emud again
// (its lane loops in its own code; or its host code does) while rank 0
// waits for it in ccoBarrierAll. The spin watch ends the run with a hang
// report that names rank 1's process and what the coordinator waits on
// its socket for, and both rank processes end with it, saying nothing:
// rank 1 in its loop too (a thread of it watches the socket), and rank 0,
// whose coordinator end rank 1 no longer holds (a fork took the earlier
// ranks' sockets along). Before, both stayed: rank 1 in its loop at 100%
// CPU and rank 0 blocked in its call, since rank 1's copy of rank 0's
// socket kept it from seeing the coordinator go.
func TestForkStuckRank(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	src, err := filepath.Abs(filepath.Join("testdata", "procs", "fork_stuck.cpp"))
	require.NoError(t, err)
	prog := buildExample(t, src, "-O2", "-Wall", "-Werror")
	rankPID := regexp.MustCompile(`host thread \d+ is rank process (\d+) \(GPU \d\), still running`)
	for _, tc := range []struct{ mode, waits string }{
		{"lane", `kernel "pollPlain" GPU 1 block 0 wave 0 lane 0 \[running its own code since 0ps\]: nothing: no device call for 2s of wall time since the kernel started \(it runs in rank process (\d+): the coordinator waits on its socket for its next device call\)`},
		{"host", `host thread 2 \[running its own code since 0ps\]: nothing: no emud call for 2s of wall time since its call at [^ ]*fork_stuck.cpp:\d+ returned \(it runs in rank process (\d+): the coordinator waits on its socket for its next call\)`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			// A rank process left behind holds the pipes open: the run
			// gives up on them after waitDelay, and the check below names it.
			r := runProgram(t, runOpts{waitDelay: 5 * time.Second}, prog, tc.mode, "EMUD_SPIN_LIMIT=2s", "TMPDIR="+t.TempDir())
			report := r.stderr
			require.Equal(t, 2, r.code, "a hang; stdout:\n%s\nstderr:\n%s", r.stdout, report)
			m := regexp.MustCompile(tc.waits).FindStringSubmatch(report)
			require.NotNil(t, m, "the spinner names rank 1's process:\n%s", report)
			var pids []int
			for _, pm := range rankPID.FindAllStringSubmatch(report, -1) {
				pids = append(pids, mustAtoi(t, pm[1]))
			}
			require.Len(t, pids, 2, report)
			assert.Contains(t, pids, mustAtoi(t, m[1]), "the spinner's process is rank 1's")
			t.Cleanup(func() {
				for _, pid := range pids {
					if processLive(pid) {
						_ = syscall.Kill(pid, syscall.SIGKILL) // ours: started by this test's program
					}
				}
			})
			deadline := time.Now().Add(5 * time.Second)
			for _, pid := range pids {
				for processLive(pid) && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				assert.False(t, processLive(pid), "rank process %d outlived its coordinator", pid)
			}
			assert.NotContains(t, report, "this rank exits", "the ranks say nothing: the report names them")
		})
	}
}

// processLive says whether process pid exists and has not exited (a
// zombie, which no one may reap here, has).
func processLive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// TestForkHandoff runs examples/cxx/procs/handoff.cpp at 500 calls: a
// rank's host calls and its lane's device calls return the same as a
// thread and as a forked process (it checks the values; the time each
// takes is what it prints, not asserted here).
func TestForkHandoff(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "procs", "handoff.cpp"), "-O2", "-Wall", "-Werror")
	out, report, code := runExample(t, prog, "500")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.Regexp(t, `handoff: as a thread: \d+ ns a host call, \d+ ns a device call\nhandoff: as a process: \d+ ns a host call, \d+ ns a device call\nhandoff: PASS`, out)
}

// TestForkLanesChannel runs testdata/procs/fork_lanes.cpp: 4 ranks of 256
// lanes, 5 device calls a lane a round for 20 rounds, each of which
// resumes its lane in its forked rank's process through the process's
// shared-memory channel (capi/procs.c pchan). The processes print what
// the threads print (each lane's sum depends on the order the simulator
// ran the lanes in) and give their digest, spinning or not (a bad
// EMUD_FORK_SPIN_US is named); a lane that traps
// fails the run as it does as a thread, its message crossing the
// channel; and a rank process that exits while the coordinator waits for
// its lane's next device call ends the run at once, naming the process
// and its exit status in the lane's failure and in the list of ranks
// (before, the lane said only "gone" and the list had the process
// "still running").
func TestForkLanesChannel(t *testing.T) {
	plainLine(t)
	needCxx(t)
	src, err := filepath.Abs(filepath.Join("testdata", "procs", "fork_lanes.cpp"))
	require.NoError(t, err)
	prog := buildExample(t, src, "-O2", "-Wall", "-Werror")
	rankLines := func(out string) []string {
		var ls []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "rank ") {
				ls = append(ls, l)
			}
		}
		sort.Strings(ls)
		return ls
	}
	r := runFull(t, prog, "threads", "EMUD_SUMMARY=1")
	require.Equal(t, 0, r.code, "threads: stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	want, wantDigest := rankLines(r.stdout), digestOf(t, r.stderr)
	require.Len(t, want, 4, r.stdout)
	for _, l := range want {
		require.Contains(t, l, "1 MiB back intact", "threads: each rank's 1 MiB round trip")
	}
	// The default spin; none, so every wait sleeps on its futex; and a
	// spin setting that is not a number, named, with the default.
	for _, spin := range []string{"", "EMUD_FORK_SPIN_US=0", "EMUD_FORK_SPIN_US=abc"} {
		r := runFull(t, prog, "fork", "EMUD_SUMMARY=1", spin)
		require.Equal(t, 0, r.code, "processes, %q: stdout:\n%s\nstderr:\n%s", spin, r.stdout, r.stderr)
		assert.Equal(t, want, rankLines(r.stdout), "processes, %q: the threads' sums", spin)
		assert.Equal(t, wantDigest, digestOf(t, r.stderr), "processes, %q: the threads' digest", spin)
		if spin == "EMUD_FORK_SPIN_US=abc" {
			assert.Contains(t, r.stderr, "emud: EMUD_FORK_SPIN_US=abc is not a whole number of µs from 0 to 1000000; forked ranks' lanes spin 50 µs\n")
		}
	}

	trap := regexp.MustCompile(`kernel "churn": GPU 1 block 1 thread 5 \(wave 0 lane 5\): __builtin_trap: lane trap: __builtin_trap \(at [^ ]*fork_lanes.cpp:\d+\)`)
	tr := runFull(t, prog, "threads", "trap", "EMUD_SUMMARY=1")
	require.NotEqual(t, 0, tr.code, "threads, trap: stdout:\n%s\nstderr:\n%s", tr.stdout, tr.stderr)
	assert.Regexp(t, trap, tr.stderr)
	fr := runFull(t, prog, "fork", "trap", "EMUD_SUMMARY=1")
	assert.Equal(t, tr.code, fr.code, "processes, trap: the threads' status; stderr:\n%s", fr.stderr)
	assert.Regexp(t, trap, fr.stderr)
	assert.Equal(t, digestOf(t, tr.stderr), digestOf(t, fr.stderr), "processes, trap: the threads' digest")

	start := time.Now()
	dr := runFull(t, prog, "fork", "die", "EMUD_SPIN_LIMIT=20s")
	assert.Less(t, time.Since(start), 20*time.Second, "ended by the lane's failure, not by the spin watch")
	require.NotEqual(t, 0, dr.code, "processes, die: stdout:\n%s\nstderr:\n%s", dr.stdout, dr.stderr)
	m := regexp.MustCompile(`kernel "churn": GPU 1 block 1 thread 5 \(wave 0 lane 5\): lane: the forked rank process (\d+) that runs this lane exited with status 3 while its kernel ran`).FindStringSubmatch(dr.stderr)
	require.NotNil(t, m, "the lane's failure names its process:\n%s", dr.stderr)
	assert.Contains(t, dr.stderr, "  host thread 2 is forked rank process "+m[1]+" (GPU 1), which exited with status 3 while its kernel ran\n")
}

// startRanks starts env_alltoall.cpp as world processes with the
// launcher's variables (RANK, WORLD_SIZE) and EMUD_NODE, in order, and
// returns each rank's stdout, stderr and exit status.
func startRanks(t *testing.T, prog string, world int, order []int, env ...string) (outs, errs []string, codes []int) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), exampleTimeout)
	defer cancel()
	outs, errs, codes = make([]string, world), make([]string, world), make([]int, world)
	cmds := make([]*exec.Cmd, world)
	bufs := make([][2]bytes.Buffer, world)
	for _, r := range order {
		cmd := exec.CommandContext(ctx, prog)
		cmd.Env = append(append(os.Environ(), env...), fmt.Sprintf("RANK=%d", r), fmt.Sprintf("WORLD_SIZE=%d", world),
			"UID_FILE="+filepath.Join(dir, "uid"), "EMUD_NODE="+filepath.Join(dir, "node.sock"), "TMPDIR="+dir)
		cmd.Stdout, cmd.Stderr = &bufs[r][0], &bufs[r][1]
		require.NoError(t, cmd.Start())
		cmds[r] = cmd
	}
	for r, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "rank %d", r)
			codes[r] = ee.ExitCode()
		}
		outs[r], errs[r] = bufs[r][0].String(), bufs[r][1].String()
	}
	require.NoError(t, ctx.Err(), "the ranks did not finish in %v", exampleTimeout)
	return outs, errs, codes
}

// TestNodeApart runs examples/cxx/procs/env_alltoall.cpp as 4 processes
// started apart (a per-rank launcher's RANK and WORLD_SIZE, and
// EMUD_NODE): they share rank 0's node and pass, and on one seed every
// run gives one digest, whatever order the processes start in. A rank
// of another world size is refused by name, and a rank whose rank 0
// never comes says so within EMUD_NODE_TIMEOUT.
func TestNodeApart(t *testing.T) {
	needCxx(t)
	t.Parallel()
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "procs", "env_alltoall.cpp"), "-O2", "-Wall", "-Werror")
	env := []string{"EMUD_GPUS=4", "EMUD_SEED=3", "EMUD_PERTURB=1", "EMUD_SUMMARY=1"}
	want := ""
	for run, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}} {
		outs, errs, codes := startRanks(t, prog, 4, order, env...)
		for r := range 4 {
			require.Equal(t, 0, codes[r], "run %d rank %d: stdout:\n%s\nstderr:\n%s", run, r, outs[r], errs[r])
			assert.Contains(t, outs[r], fmt.Sprintf("rank %d: 0 errors", r))
			assert.Contains(t, outs[r], "env_alltoall: PASS")
		}
		d := digestOf(t, errs[0])
		if want == "" {
			want = d
		}
		assert.Equal(t, want, d, "run %d (start order %v): another digest", run, order)
	}
	t.Run("wrong_world", func(t *testing.T) {
		dir := t.TempDir()
		r := runFull(t, prog, "RANK=1", "WORLD_SIZE=2", "UID_FILE="+filepath.Join(dir, "uid"),
			"EMUD_NODE="+filepath.Join(dir, "node.sock"), "EMUD_NODE_TIMEOUT=1")
		assert.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Contains(t, r.stdout+r.stderr, "rank 1 cannot reach rank 0's node there in 1 s (EMUD_NODE_TIMEOUT): is rank 0 running this job, or did the job end?")
	})
	t.Run("other_job", func(t *testing.T) {
		dir := t.TempDir()
		sock := filepath.Join(dir, "node.sock")
		rank0 := exec.Command(prog)
		rank0.Env = append(os.Environ(), "RANK=0", "WORLD_SIZE=2", "UID_FILE="+filepath.Join(dir, "uid"), "EMUD_NODE="+sock, "EMUD_NODE_TIMEOUT=3")
		var out0 bytes.Buffer
		rank0.Stdout, rank0.Stderr = &out0, &out0
		require.NoError(t, rank0.Start())
		// The other job's rank has its own unique id (so it makes its
		// first call, where it hears rank 0's answer).
		require.NoError(t, os.WriteFile(filepath.Join(dir, "uid1"), make([]byte, 128), 0o644))
		other := exec.Command(prog)
		other.Env = append(os.Environ(), "RANK=1", "WORLD_SIZE=3", "UID_FILE="+filepath.Join(dir, "uid1"), "EMUD_NODE="+sock, "EMUD_NODE_TIMEOUT=10")
		out, err := other.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s", out)
		assert.Contains(t, string(out), "rank 0 refused this rank: its world size 3 is not rank 0's 2 (another job's rank?)")
		err = rank0.Wait()
		require.ErrorAs(t, err, &ee, "%s", out0.String())
		assert.Contains(t, out0.String(), "rank 0 waited 3 s (EMUD_NODE_TIMEOUT) for ranks that never came: 1")
	})
}

// TestRuntimeThreadNotAHost: a thread a shared library starts before the
// first HIP call (MPI_Init's PMIx and libevent threads) and that never
// calls emud is no host thread; adopted, it held its first turn and the
// run ended in a false hang report.
func TestRuntimeThreadNotAHost(t *testing.T) {
	needCxx(t)
	cc, err := compiler("")
	require.NoError(t, err)
	dir := t.TempDir()
	libSrc := filepath.Join(dir, "rtthread.cpp")
	require.NoError(t, os.WriteFile(libSrc, []byte(`#include <pthread.h>
#include <unistd.h>
static int fds[2];
static void* progress(void*) { char c; while (read(fds[0], &c, 1) != 0) {} return nullptr; }
extern "C" void rt_start() { pipe(fds); pthread_t th; pthread_create(&th, nullptr, progress, nullptr); }
`), 0o644))
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(dir, "librtthread.so"), libSrc).CombinedOutput()
	require.NoError(t, err, "%s", out)
	src := filepath.Join(dir, "rt_main.cpp")
	require.NoError(t, os.WriteFile(src, []byte(`#include <hip/hip_runtime.h>
#include <cstdio>
extern "C" void rt_start();
__global__ void k(int* p) { atomicAdd(p, 1); }
int main() {
  rt_start();  // as MPI_Init: a runtime thread that never calls emud
  int* p;
  if (hipSetDevice(0) != hipSuccess || hipMalloc(&p, 4) != hipSuccess) return 3;
  hipLaunchKernelGGL(k, dim3(2), dim3(64), 0, 0, p);
  if (hipDeviceSynchronize() != hipSuccess) return 3;
  std::printf("rt_main: PASS\n");
  return 0;
}
`), 0o644))
	// The library after the source: the linker drops a shared library
	// named before the objects that need it (--as-needed).
	root := setupCxx(t)
	prog := filepath.Join(dir, "rt_main")
	var log bytes.Buffer
	require.NoError(t, Run([]string{"-O2", src, "-o", prog, "-L" + dir, "-lrtthread"},
		Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}), "%s", log.String())
	for seed := 1; seed <= 3; seed++ {
		r := runProgram(t, runOpts{timeout: time.Minute}, prog, "LD_LIBRARY_PATH="+dir, fmt.Sprintf("EMUD_SEED=%d", seed), "EMUD_PERTURB=1", "EMUD_SPIN_LIMIT=2s")
		require.Equal(t, 0, r.code, "seed %d:\nstdout:\n%s\nstderr:\n%s", seed, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "rt_main: PASS", "seed %d", seed)
	}
}
