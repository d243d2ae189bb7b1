package cxx

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needMPI skips t when OpenMPI's mpirun or mpicxx is not installed
// (Debian's openmpi-bin and libopenmpi-dev; .ci/run installs them).
func needMPI(t *testing.T) {
	t.Helper()
	needCxx(t)
	for _, tool := range []string{"mpirun", "mpicxx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH (install openmpi-bin and libopenmpi-dev): the tests that run MPI programs are skipped", tool)
		}
	}
}

// buildMPI builds an MPI program with emud c++ and mpicxx's flags, once
// per test binary: its compile flags before the source, its link flags
// after it (the linker drops a shared library named before the objects
// that need it).
func buildMPI(t *testing.T, src string) string {
	t.Helper()
	root := setupCxx(t)
	return buildOnce(t, "mpicxx "+src, src, func(prog string) error {
		args := []string{"-O2", "-Wall", "-Werror"}
		for i, what := range []string{"compile", "link"} {
			out, err := exec.Command("mpicxx", "--showme:"+what).Output()
			if err != nil {
				return fmt.Errorf("mpicxx --showme:%s: %w", what, err)
			}
			if i == 1 {
				args = append(args, src, "-o", prog)
			}
			args = append(args, strings.Fields(string(out))...)
		}
		var log bytes.Buffer
		if err := Run(args, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}); err != nil {
			return fmt.Errorf("%w\n%s", err, log.String())
		}
		return nil
	})
}

// mpirun runs prog under OpenMPI's mpirun -np n with EMUD_NODE and env
// (NAME=value; other words are the program's arguments): its output,
// stdout and stderr of every rank together, and mpirun's exit status.
func mpirun(t *testing.T, prog string, n int, env ...string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	args := []string{"--oversubscribe", "-np", fmt.Sprint(n)}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root") // CI's containers run as root
	}
	var progArgs []string
	for _, e := range append([]string{"EMUD_NODE=" + filepath.Join(dir, "node.sock"), "TMPDIR=" + dir}, env...) {
		if strings.Contains(e, "=") {
			args = append(args, "-x", e)
		} else {
			progArgs = append(progArgs, e)
		}
	}
	args = append(append(args, prog), progArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), exampleTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", args...)
	// PMIx's munge security component, where munge is installed but its
	// daemon not running, retries its socket for about 2 s at every
	// mpirun (most of a short run's wall time, idle); one host's ranks
	// need no more than the native component's uid check.
	cmd.Env = append(os.Environ(), "PMIX_MCA_psec=native")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "mpirun %v did not finish in %v:\n%s", args, exampleTimeout, out)
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "mpirun %v:\n%s", args, out)
		code = ee.ExitCode()
	}
	return string(out), code
}

// TestMPIAlltoall runs examples/cxx/procs/mpi_alltoall.cpp under
// mpirun -np 4: rank 0 makes the unique id and broadcasts it with
// MPI_Bcast, the ranks run the all-to-all with ccoSdma on one emulated
// node, and each ends with MPI_Finalize, all after their first HIP call.
// Each blocking MPI call gives the rank's turn up (a free section), so
// it passes (before, MPI_Finalize held the turn: a false hang), and the
// same seed gives one digest run after run.
func TestMPIAlltoall(t *testing.T) {
	needMPI(t)
	root := setupCxx(t)
	prog := buildMPI(t, filepath.Join(root, "examples", "cxx", "procs", "mpi_alltoall.cpp"))
	mpiSameDigest(t, prog, 4, 3, []string{"EMUD_GPUS=4", "EMUD_SEED=1"}, func(run int, out string) {
		assert.Equal(t, 4, strings.Count(out, "mpi_alltoall: PASS"), "run %d: every rank passes:\n%s", run, out)
	})
}

// mpiSameDigest runs prog under mpirun -np n, runs times, with env and
// EMUD_SUMMARY=1: each run exits 0 with no warning, check passes it, and
// every run gives the first one's digest.
func mpiSameDigest(t *testing.T, prog string, n, runs int, env []string, check func(run int, out string)) {
	t.Helper()
	want := ""
	for run := range runs {
		out, code := mpirun(t, prog, n, append(append([]string{}, env...), "EMUD_SUMMARY=1")...)
		require.Equal(t, 0, code, "run %d:\n%s", run, out)
		check(run, out)
		assert.NotContains(t, out, "warning", "run %d", run)
		d := digestOf(t, out)
		if want == "" {
			want = d
		}
		assert.Equal(t, want, d, "run %d: another digest on the same seed", run)
	}
}

// TestMPIIpc runs examples/cxx/procs/mpi_ipc.cpp under mpirun -np 4:
// ranks share their inputs through IPC memory handles sent by
// MPI_Allgather and sum them with a kernel that reads the peers' buffers.
// It passes race-clean with one digest on two runs. The planted twin (no
// barrier between the fills and the kernels) is a race between a peer's
// hipMemcpy and the kernel's loads, and its failed ranks' exits (status
// 1) do not end the job before rank 0 reports: mpirun hears rank 0's
// status 5 first (before, it ended the job at the first rank's 1 and the
// race was never reported).
func TestMPIIpc(t *testing.T) {
	plainLine(t)
	needMPI(t)
	root := setupCxx(t)
	prog := buildMPI(t, filepath.Join(root, "examples", "cxx", "procs", "mpi_ipc.cpp"))
	mpiSameDigest(t, prog, 4, 2, []string{"EMUD_GPUS=4", "EMUD_RACE=1"}, func(run int, out string) {
		assert.Equal(t, 4, strings.Count(out, "PASS (0 of 1024 words wrong)"), "run %d: every rank passes:\n%s", run, out)
		assert.NotContains(t, out, "data race", "run %d", run)
	})
	out, code := mpirun(t, prog, 4, "EMUD_GPUS=4", "EMUD_RACE=1", "planted")
	require.Equal(t, 5, code, "%s", out)
	assert.Regexp(t, `load \(read\) of .* by kernel "sum" .*mpi_ipc\.cpp:\d+`, out)
	assert.Regexp(t, `hipMemcpy \(write\) of .*mpi_ipc\.cpp:\d+`, out)
	assert.Regexp(t, `Exit code:\s+5`, out)
}

// TestMPIHarness runs examples/cxx/procs/mpi_harness.cpp, MORI's MPI
// harness in shape, under mpirun -np 8: MPI_Bcast, MPI_Barrier, a ring
// of MPI_Recv and MPI_Send (each rank's receive waits for the previous
// rank's send, made in its own free section), MPI_Allreduce and
// MPI_Finalize after the first HIP call; it passes on 8 ranks with one
// digest on two runs.
func TestMPIHarness(t *testing.T) {
	needMPI(t)
	root := setupCxx(t)
	prog := buildMPI(t, filepath.Join(root, "examples", "cxx", "procs", "mpi_harness.cpp"))
	mpiSameDigest(t, prog, 8, 2, []string{"EMUD_SEED=2", "EMUD_PERTURB=1"}, func(run int, out string) {
		assert.Contains(t, out, "=== 8/8 PASSED ===", "run %d", run)
	})
}

// hangCauses is a hang report's headline cause and its "likely causes"
// list, and when: what the emulator says went wrong, without the list
// of blocked actors and their count, whose host threads are numbered by
// how the program made them (the threads' program has a main thread that
// is no rank).
func hangCauses(t *testing.T, report string) string {
	t.Helper()
	m := regexp.MustCompile(`hang \(deadlock\) at ([^,]+), seed \d+: .*?waiting; (likely cause: .*)\n`).FindStringSubmatch(report)
	require.NotNil(t, m, "no hang in:\n%s", report)
	i := strings.Index(report, "likely causes:\n")
	j := strings.Index(report, "\ndigest: ")
	require.True(t, i >= 0 && j > i, "no likely causes in:\n%s", report)
	return "at " + m[1] + ": " + m[2] + "\n" + report[i:j]
}

// TestMPIPlantedSlotReset plants alltoall_rank.hpp's bug (a lane zeroes
// the signal slot its peer's signals count in) under mpirun -np 4: the
// run hangs with the report of the same program with its ranks as
// threads, word for word in its headline and causes: the slot went back
// to 0 by the lane's store at its line; mpirun exits 2, the hang's
// status.
func TestMPIPlantedSlotReset(t *testing.T) {
	needMPI(t)
	root := setupCxx(t)
	dir := filepath.Join(root, "examples", "cxx", "procs")
	prog := buildMPI(t, filepath.Join(dir, "mpi_alltoall.cpp"))
	threads := buildExample(t, filepath.Join(dir, "thread_alltoall.cpp"), "-O2", "-Wall", "-Werror")
	out, treport, code := runExample(t, threads, "planted", "EMUD_GPUS=4", "TMPDIR="+t.TempDir())
	require.Equal(t, 2, code, "threads: a hang; stdout:\n%s\nstderr:\n%s", out, treport)
	mout, code := mpirun(t, prog, 4, "EMUD_GPUS=4", "planted")
	require.Equal(t, 2, code, "mpirun: the run's hang status:\n%s", mout)
	want := hangCauses(t, treport)
	assert.Regexp(t, `went from 1 back to 0 at [^ ]+ by kernel "alltoall" GPU 0 block 0 wave 0 lane 0's store at [^ ]*alltoall_rank.hpp:\d+\.`, want)
	assert.Equal(t, want, hangCauses(t, mout))
	assert.Contains(t, mout, "emud: ranks as processes (served by host threads of this one):\n  host thread 1 is rank process ")
	// Every rank exits with the run's status, so mpirun's is 2 whichever
	// rank it hears of first (the ranks exited 1, and mpirun's status was
	// 1 when it heard of one of them first), and says nothing: the report
	// names it, and mpirun, merging every process's stderr, put a rank's
	// line of its own inside the coordinator's report.
	assert.Contains(t, mout, "still running; it exits with this run's status, saying nothing")
	assert.NotContains(t, mout, "this rank exits")
}

// TestMPIKilledRank: under mpirun -np 4, rank 1 kills itself after its
// first HIP call; rank 0's node reports, well within the hang timeout,
// that the others wait for it at ccoCommCreate and names its process.
func TestMPIKilledRank(t *testing.T) {
	needMPI(t)
	root := setupCxx(t)
	prog := buildMPI(t, filepath.Join(root, "examples", "cxx", "procs", "mpi_alltoall.cpp"))
	var out string
	for try := range 2 {
		// mpirun, seeing rank 1 killed, ends the job's other ranks: rank 0
		// reports first (it hears the closed socket at once), but on a
		// loaded machine mpirun may win once.
		start := time.Now()
		var code int
		out, code = mpirun(t, prog, 4, "EMUD_GPUS=4", "EMUD_SPIN_LIMIT=20s", "kill")
		assert.NotEqual(t, 0, code, "%s", out)
		assert.Less(t, time.Since(start), 20*time.Second, "ended by the report, not by the spin watch")
		if strings.Contains(out, "emud: seed 1: hang") || try == 1 {
			break
		}
		t.Logf("try %d: mpirun ended rank 0 before its report:\n%s", try, out)
	}
	assert.Contains(t, out, "ccoCommCreate (rank 0): 3 of 4 ranks arrived")
	assert.Regexp(t, `host thread 1 is rank process \d+ \(GPU 1\), which ended \(started apart: its status is its launcher's\) after its last call \(its call at [^ ]*mpi_alltoall.cpp:\d+ returned\)`, out)
}

// TestMPIFreeGrace runs examples/cxx/procs/mpi_late.cpp under mpirun
// -np 3: rank 2's MPI_Recv waits for a send rank 0 makes only after a
// HIP call. At the quiescent point where ranks 0 and 1 are back, rank 2
// is still out: after EMUD_FREE_GRACE the others go on without it and
// the run says its order now depends on wall time; the program passes.
// With "mismatch", rank 0 alone calls MPI_Barrier while the others wait
// for it at ccoCommCreate: no call returns, and after EMUD_SPIN_LIMIT
// the run is an outside hang naming the call. With "spin", a lane's
// first spin wait ends at the quiescent point where rank 1 is out in
// MPI_Recv: no hang, no warning.
func TestMPIFreeGrace(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needMPI(t)
	root := setupCxx(t)
	prog := buildMPI(t, filepath.Join(root, "examples", "cxx", "procs", "mpi_late.cpp"))
	out, code := mpirun(t, prog, 3, "EMUD_GPUS=4", "EMUD_FREE_GRACE=300ms")
	require.Equal(t, 0, code, "%s", out)
	assert.Equal(t, 3, strings.Count(out, "mpi_late: PASS"), "%s", out)
	assert.Regexp(t, `emud: warning: at \S+ host thread 2's MPI_Recv had not returned 300ms \(EMUD_FREE_GRACE\) after another rank's call outside emud was back, with nothing else in the run left to do: .*the same seed may give another digest\)`, out)
	t.Run("mismatch", func(t *testing.T) {
		start := time.Now()
		out, code := mpirun(t, prog, 3, "EMUD_GPUS=4", "EMUD_SPIN_LIMIT=2s", "EMUD_FREE_GRACE=200ms", "mismatch")
		assert.NotEqual(t, 0, code, "%s", out)
		assert.Less(t, time.Since(start), time.Minute)
		assert.Contains(t, out, "hang (outside) at 0ps, seed 1: no actor can run, no event is pending, and the calls outside the simulation never returned")
		assert.Contains(t, out, "ranks (1):\n  host main thread [outside emud since 0ps]: its MPI_Barrier (in the section its MPI_Bcast opened) to return: not back for 2s of wall time (EMUD_SPIN_LIMIT)")
		assert.Contains(t, out, "host thread 1 [waiting since 0ps]: ccoCommCreate (rank 1): 2 of 3 ranks arrived")
	})
	// A lane's first spin wait and rank 1's section end at one quiescent
	// point: the lane goes on, so that point decides nothing (before,
	// rank 1's section waited there for its MPI_Recv, whose send comes
	// after the lane, and the run was an outside hang on every seed).
	t.Run("spin", func(t *testing.T) {
		for _, seed := range []string{"EMUD_SEED=1", "EMUD_SEED=2"} {
			out, code := mpirun(t, prog, 2, "EMUD_GPUS=2", "EMUD_SPIN_LIMIT=5s", seed, "spin")
			require.Equal(t, 0, code, "%s:\n%s", seed, out)
			assert.Equal(t, 2, strings.Count(out, "mpi_late: PASS"), "%s:\n%s", seed, out)
			assert.NotContains(t, out, "warning", seed)
		}
	})
	// One rank is enough: its start reads the variable.
	t.Run("bad_grace", func(t *testing.T) {
		out, code := mpirun(t, prog, 1, "EMUD_GPUS=4", "EMUD_FREE_GRACE=soon")
		assert.NotEqual(t, 0, code, "%s", out)
		assert.Contains(t, out, `EMUD_FREE_GRACE="soon": want a positive duration such as 2s`)
	})
}
