package cxx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedClient is a SeedServer (the client emud explore's workers use)
// whose seeds come back as ran values, a signal's status as a shell gives
// it (128 + the signal, as runProgram's).
type seedClient struct{ *SeedServer }

func newSeedClient(t testing.TB, form SeedForm, env []string) *seedClient {
	t.Helper()
	s, err := NewSeedServer(form.Server, form.Object, env)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(s.dir) })
	return &seedClient{s}
}

// run runs one seed (argv, env: the whole environment) and returns what
// a process run would give: status, stdout, stderr.
func (c *seedClient) run(argv, env []string) (ran, error) {
	var out, errb bytes.Buffer
	start := time.Now()
	end, err := c.Run(argv, env, &out, &errb)
	if err != nil {
		return ran{}, err
	}
	r := ran{code: end.Code, stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if end.Signal != 0 {
		r.code = 128 + int(end.Signal)
	}
	return r, nil
}

// stop ends the server: an error when it exited other than with 0.
func (c *seedClient) stop() error { return c.Close() }

// hostAddr is a host stack or mapping address in a message: it differs
// between two process runs too (ASLR), and is no part of a digest.
var hostAddr = regexp.MustCompile(`0x7ff[0-9a-f]{9}`)

// wallLines drops the lines that print wall time or CPU use, which the
// server and a process need not share, and masks host addresses.
func wallLines(s string) string {
	s = hostAddr.ReplaceAllString(s, "0xHOST")
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.Contains(l, "wall time") || strings.HasPrefix(l, "emud: usage:") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "")
}

// seedEnv is the test's environment without the variables a case sets.
func seedEnv(set []string) []string {
	drop := map[string]bool{"EMUD_SEED": true}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// TestSeedServerEquivalence: for every seed, a seed server gives the
// status, stdout and stderr a process run of the same program gives
// (save lines of wall time), whatever seeds the server ran before: seeds
// 1..N through one server against N processes, and seed N again through
// a fresh server.
func TestSeedServerEquivalence(t *testing.T) {
	plainLine(t)
	needCxx(t)
	root := setupCxx(t)
	ex := func(p ...string) string { return filepath.Join(append([]string{root, "examples", "cxx"}, p...)...) }
	mori, err := filepath.Abs(filepath.Join("testdata", "mori", "lockstep.cpp"))
	require.NoError(t, err)
	moriFlags := []string{"-Wall", "-Werror", "-DBUILD_CCO_SDMA=1", "-I", moriInclude(t), "-O2"} // TestMoriLockstep's build
	gda, err := filepath.Abs(filepath.Join("testdata", "morigda", "gda.cpp"))
	require.NoError(t, err)
	gdaInc, err := filepath.Abs(filepath.Join("testdata", "morigda", "include"))
	require.NoError(t, err)
	gdaFlags := []string{"-O1", "-DBUILD_CCO_SDMA=1", "-DEMUD_TEST_GDA_THREADS_ONLY", "-I", gdaInc} // buildMoriGda's, without fork
	for _, c := range []struct {
		name  string
		src   string
		flags []string
		args  []string
		env   []string
		seeds int
		fails bool // every seed ends the server (a race, a hang, exit): one server per seed
		// restarts: servers started over the seeds when not 1 or seeds
		restarts int
	}{
		{name: "alltoall_put", src: ex("alltoall_put.cpp"), seeds: 3},
		{name: "alltoall_put summary", src: ex("alltoall_put.cpp"), env: []string{"EMUD_SUMMARY=1", "EMUD_PERTURB=realistic", "EMUD_STEPS=1", "EMUD_STRATEGY=pct"}, seeds: 3},
		{name: "put_overwrite races", src: ex("errors", "put_overwrite.cpp"), env: []string{"EMUD_RACE=1"}, seeds: 2, fails: true},
		{name: "put_overwrite fixed", src: ex("errors", "put_overwrite.cpp"), args: []string{"fixed"}, env: []string{"EMUD_RACE=1", "EMUD_SUMMARY=1"}, seeds: 3},
		{name: "planted hang", src: ex("planted", "expected_per_lane.cpp"), flags: []string{"-O2"}, seeds: 2, fails: true},
		{name: "globals", src: "testdata/seedsrv/globals.cpp", args: []string{"a", "b c"}, seeds: 3},
		{name: "late static", src: "testdata/seedsrv/late_static.cpp", env: []string{"EMUD_SUMMARY=1"}, seeds: 2},
		// Process state a seed changes: put back (cwd, umask), or the
		// server ends after the seed (a signal handler; descriptors past
		// the slack).
		{name: "cwd", src: "testdata/seedsrv/process_state.cpp", args: []string{"cwd"}, seeds: 2},
		{name: "umask", src: "testdata/seedsrv/process_state.cpp", args: []string{"umask"}, seeds: 2},
		{name: "signal handler", src: "testdata/seedsrv/process_state.cpp", args: []string{"signal"}, seeds: 2, fails: true},
		{name: "cout format", src: "testdata/seedsrv/process_state.cpp", args: []string{"cout"}, seeds: 2},
		{name: "rand", src: "testdata/seedsrv/process_state.cpp", args: []string{"rand"}, seeds: 2},
		{name: "getopt", src: "testdata/seedsrv/process_state.cpp", args: []string{"getopt", "-v", "-n", "7"}, seeds: 2},
		{name: "wide stdout", src: "testdata/seedsrv/process_state.cpp", args: []string{"wide"}, seeds: 2, fails: true},
		{name: "leaked fds", src: "testdata/seedsrv/process_state.cpp", args: []string{"fd"}, seeds: 20, restarts: 2},
		{name: "exit 3", src: "testdata/seedsrv/exit3.cpp", seeds: 2, fails: true},
		{name: "hip calls", src: ex("hip_calls.cpp"), env: []string{"EMUD_SUMMARY=1"}, seeds: 2},
		// The built-in variables are the emulator's objects, which the
		// seed form reaches in the server (--export-dynamic).
		{name: "builtin names", src: "testdata/builtins/names.cpp", flags: []string{"-O2", "-Wall", "-Werror"}, env: []string{"EMUD_SUMMARY=1"}, seeds: 2},
		{name: "early threads", src: ex("errors", "early_threads.cpp"), env: []string{"EMUD_SUMMARY=1"}, seeds: 2},
		// An interposer the server's own code never calls (pbarrier.c).
		{name: "pthread barrier", src: "testdata/seedsrv/barrier.cpp", env: []string{"EMUD_SUMMARY=1", "EMUD_SPIN_LIMIT=5s"}, seeds: 2},
		{name: "thread ranks", src: ex("procs", "thread_alltoall.cpp"), flags: []string{"-O2"}, env: []string{"EMUD_SUMMARY=1"}, seeds: 2},
		// The object's constructor sets EMUD_ARCH: Go's copy must see it.
		{name: "offload arch", src: ex("alltoall_put.cpp"), flags: []string{"--offload-arch=gfx1250"}, env: []string{"EMUD_SUMMARY=1"}, seeds: 2},
		// A user's MORI header: emud's host control plane is an object of
		// the seed form too, and lanes are told apart by their call chains,
		// read from the seed form's line table at its load bias (a wrong
		// lookup changes the lanes' order, and the digest).
		{name: "MORI lockstep", src: mori, flags: moriFlags, args: []string{"mixed"}, env: []string{"EMUD_RACE=1", "EMUD_SUMMARY=1", "EMUD_SPIN_LIMIT=5s"}, seeds: 2},
		{name: "MORI lockstep warp", src: mori, flags: moriFlags, args: []string{"warp"}, env: []string{"EMUD_SUMMARY=1", "EMUD_SPIN_LIMIT=5s"}, seeds: 2},
		// MORI's GDA over emud's NIC: its keys, queue pairs and network
		// are the emulation's, made anew for the next seed.
		{name: "MORI GDA", src: gda, flags: gdaFlags, args: []string{"1"}, env: []string{"EMUD_SUMMARY=1"}, seeds: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := buildExample(t, c.src, c.flags...)
			form, err := ReadSeedForm(prog)
			require.NoError(t, err)
			base := seedEnv(c.env)
			cl := newSeedClient(t, form, base)
			defer cl.stop()
			argv := append([]string{prog}, c.args...)
			var last ran
			for seed := 1; seed <= c.seeds; seed++ {
				env := append(append([]string{}, base...), fmt.Sprintf("EMUD_SEED=%d", seed))
				got, err := cl.run(argv, env)
				require.NoError(t, err)
				want := runProgram(t, runOpts{env: env}, prog, c.args...)
				assert.Equal(t, want.code, got.code, "seed %d status; server stderr:\n%s", seed, got.stderr)
				assert.Equal(t, want.stdout, got.stdout, "seed %d stdout", seed)
				assert.Equal(t, wallLines(want.stderr), wallLines(got.stderr), "seed %d stderr", seed)
				last = got
			}
			switch {
			case c.restarts > 0:
				assert.Equal(t, c.restarts, cl.starts, "servers started")
			case c.fails:
				assert.Equal(t, c.seeds, cl.starts, "servers started: each seed ended its process")
			default:
				assert.Equal(t, 1, cl.starts, "servers started: every seed ended clean, and one server ran them all")
			}
			fresh := newSeedClient(t, form, base)
			defer fresh.stop()
			env := append(append([]string{}, base...), fmt.Sprintf("EMUD_SEED=%d", c.seeds))
			got, err := fresh.run(argv, env)
			require.NoError(t, err)
			assert.Equal(t, last.code, got.code, "seed %d: a fresh server's status", c.seeds)
			assert.Equal(t, last.stdout, got.stdout)
			assert.Equal(t, wallLines(last.stderr), wallLines(got.stderr))
		})
	}
}

// TestNoSeedForm: a program that forks (its ranks are processes), one
// that may call MPI_Init, and one with an object that is not
// position-independent get no seed form, and -v says why; the link
// itself succeeds and the program runs as before.
func TestNoSeedForm(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	for _, c := range []struct{ name, src, why string }{
		{"fork", filepath.Join(root, "examples", "cxx", "procs", "fork_alltoall.cpp"), "it calls fork"},
		{"MPI", "testdata/seedsrv/weak_mpi.cpp", "it calls MPI_Init"},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := filepath.Join(t.TempDir(), "p")
			var log, out bytes.Buffer // apart: the link's stderr is a MultiWriter, its stdout not
			require.NoError(t, Run([]string{"-v", c.src, "-o", prog}, Options{Root: root, Library: lib.path, Stdout: &out, Stderr: &log}), out.String()+log.String())
			assert.Contains(t, log.String(), "has no seed form")
			assert.Contains(t, log.String(), c.why)
			_, err := ReadSeedForm(prog)
			require.ErrorIs(t, err, ErrNoSeedForm)
			_, err = os.Stat(prog + SeedSuffix)
			assert.True(t, os.IsNotExist(err), "no stale seed form beside it: %v", err)
		})
	}
	t.Run("mpicxx", func(t *testing.T) {
		if _, err := exec.LookPath("mpicxx"); err != nil {
			t.Skip("no mpicxx")
		}
		prog := buildMPI(t, filepath.Join(root, "examples", "cxx", "procs", "mpi_alltoall.cpp"))
		_, err := ReadSeedForm(prog)
		require.ErrorIs(t, err, ErrNoSeedForm)
	})
	t.Run("not PIC", func(t *testing.T) {
		cc, err := compiler("")
		require.NoError(t, err)
		dir := t.TempDir()
		src := filepath.Join(dir, "helper.c")
		require.NoError(t, os.WriteFile(src, []byte("int helper_value = 42;\nint* helper(void) { return &helper_value; } /* an absolute address: R_X86_64_32 */\n"), 0o644))
		obj := filepath.Join(dir, "helper.o")
		cout, err := exec.Command(cc, "-x", "c", "-fno-pic", "-mcmodel=small", "-c", src, "-o", obj).CombinedOutput()
		require.NoError(t, err, string(cout))
		main := filepath.Join(dir, "main.cpp")
		require.NoError(t, os.WriteFile(main, []byte("extern \"C\" int* helper(void);\nint main() { return *helper() == 42 ? 0 : 1; }\n"), 0o644))
		prog := filepath.Join(dir, "p")
		var log, out bytes.Buffer // apart: the link's stderr is a MultiWriter, its stdout not
		require.NoError(t, Run([]string{"-v", main, obj, "-o", prog}, Options{Root: root, Library: lib.path, Stdout: &out, Stderr: &log}), out.String()+log.String())
		_, err = ReadSeedForm(prog)
		require.ErrorIs(t, err, ErrNoSeedForm)
		assert.Contains(t, log.String(), "do not link as a shared object")
		r := runFull(t, prog)
		assert.Equal(t, 0, r.code, r.stderr)
	})
}

// BenchmarkSeedCPU is the CPU time a seed of alltoall_put.cpp (8 ranks,
// 64 KiB) costs a sweep, as the children's rusage says: a process per
// seed, against seeds through one seed server (its start shared by b.N
// seeds). cpu-ms/seed is the figure docs/performance.md quotes.
func BenchmarkSeedCPU(b *testing.B) {
	needCxx(b)
	root := setupCxx(b)
	children := func() time.Duration {
		var ru syscall.Rusage
		require.NoError(b, syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru))
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	env := seedEnv(nil)
	for _, opt := range []string{"-O0", "-O2"} {
		prog := buildExample(b, filepath.Join(root, "examples", "cxx", "alltoall_put.cpp"), opt)
		form, err := ReadSeedForm(prog)
		require.NoError(b, err)
		b.Run(opt+"/process", func(b *testing.B) {
			before := children()
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(prog)
				cmd.Env = append(append([]string{}, env...), fmt.Sprintf("EMUD_SEED=%d", i+1))
				out, err := cmd.CombinedOutput()
				require.NoError(b, err, string(out))
			}
			b.ReportMetric(float64(children()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/seed")
		})
		b.Run(opt+"/server", func(b *testing.B) {
			before := children()
			cl := newSeedClient(b, form, env)
			for i := 0; i < b.N; i++ {
				r, err := cl.run([]string{prog}, append(append([]string{}, env...), fmt.Sprintf("EMUD_SEED=%d", i+1)))
				require.NoError(b, err)
				require.Equal(b, 0, r.code, r.stderr)
			}
			require.NoError(b, cl.stop())
			b.ReportMetric(float64(children()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/seed")
			b.ReportMetric(float64(cl.starts), "servers")
		})
	}
}

// TestSeedServerFreshGlobals: each seed's dlopen sees the program's
// globals as a fresh process does (a counter main increments, a
// function-local static), and its static destructor runs at the seed's
// end, all in one server.
func TestSeedServerFreshGlobals(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "testdata/seedsrv/globals.cpp")
	form, err := ReadSeedForm(prog)
	require.NoError(t, err)
	cl := newSeedClient(t, form, seedEnv(nil))
	defer cl.stop()
	for i := 0; i < 3; i++ {
		r, err := cl.run([]string{prog}, seedEnv(nil))
		require.NoError(t, err)
		assert.Equal(t, 0, r.code)
		assert.Equal(t, "counter 1, local 1, argc 1\ndestructor: counter 1, local 1\n", r.stdout, "seed %d", i+1)
	}
	assert.Equal(t, 1, cl.starts)
	assert.Equal(t, 3, cl.served)
}

// TestSeedServerBadInput: a request the server cannot read ends it with
// status 1 and words naming what was wrong; the end of the requests ends
// it with 0; a wrong command line is a usage message and status 2.
func TestSeedServerBadInput(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "testdata/seedsrv/globals.cpp")
	form, err := ReadSeedForm(prog)
	require.NoError(t, err)
	send := func(req []byte) (int, string) {
		cl := newSeedClient(t, form, seedEnv(nil))
		require.NoError(t, cl.start())
		if req != nil {
			_, err := cl.req.Write(req)
			require.NoError(t, err)
		}
		return cl.wait().Code, cl.log.String() // wait closes the requests
	}
	frame := func(strs ...string) []byte {
		var body bytes.Buffer
		for _, s := range strs {
			body.WriteString(s)
			body.WriteByte(0)
		}
		hdr := binary.LittleEndian.AppendUint32(nil, uint32(body.Len()))
		return append(hdr, body.Bytes()...)
	}
	dir := t.TempDir()
	out, errp := filepath.Join(dir, "o"), filepath.Join(dir, "e")
	for _, c := range []struct {
		name string
		req  []byte
		code int
		want string
	}{
		{"no requests", nil, 0, ""},
		{"another protocol", frame("emud-seed/2", out, errp, "0"), 1, "not emud-seed/1"},
		{"argc past the strings", frame("emud-seed/1", out, errp, "3", "a"), 1, "argc"},
		{"argc not a number", frame("emud-seed/1", out, errp, "x"), 1, "argc"},
		{"environment without =", frame("emud-seed/1", out, errp, "1", prog, "PATH"), 1, "K=V"},
		{"unopenable stdout", frame("emud-seed/1", filepath.Join(dir, "no", "such"), errp, "1", prog), 1, "No such file"},
		{"length zero", []byte{0, 0, 0, 0}, 1, "length"},
		{"length past the bound", []byte{0, 0, 0, 2}, 1, "length"},
		{"cut short", []byte{9, 0, 0, 0, 'e'}, 1, "cut short"},
		{"no final NUL", []byte{3, 0, 0, 0, 'a', 'b', 'c'}, 1, "NUL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stderr := send(c.req)
			assert.Equal(t, c.code, code, stderr)
			assert.Contains(t, stderr, c.want)
		})
	}
	cmd := exec.Command(form.Server)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, string(b), "usage")
}

// TestSeedServerDeviceMemoryZero: a seed server keeps the device chunks
// an earlier seed mapped (parked, capi's emud_seed_reset_c), and the next
// seed must still find its regions, at the same addresses, all zero, a
// stray store past a region inside its chunk too, and an address no
// region of its own holds must still fault: each seed is compared with a
// process run of it, and the check seeds must report no byte left over.
func TestSeedServerDeviceMemoryZero(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "testdata/seedsrv/devmem.cpp")
	form, err := ReadSeedForm(prog)
	require.NoError(t, err)
	base := seedEnv(nil)
	cl := newSeedClient(t, form, base)
	defer cl.stop()
	var addr string
	for i, args := range [][]string{{"write"}, {"check"}, {"write"}, {"write"}, {"check"}} {
		got, err := cl.run(append([]string{prog}, args...), base)
		require.NoError(t, err)
		want := runProgram(t, runOpts{env: base}, prog, args...)
		assert.Equal(t, want.code, got.code, "seed %d (%s) status; stderr:\n%s", i+1, args[0], got.stderr)
		assert.Equal(t, want.stdout, got.stdout, "seed %d (%s) stdout", i+1, args[0])
		require.Equal(t, 0, got.code, "seed %d (%s): device memory left by an earlier seed: %s", i+1, args[0], got.stdout)
		a, _, ok := strings.Cut(strings.TrimPrefix(got.stdout, "region "), ":")
		require.True(t, ok, got.stdout)
		if addr != "" {
			assert.Equal(t, addr, a, "seed %d: the region's address", i+1)
		}
		addr = a
		assert.Contains(t, got.stdout, ": 0 nonzero bytes, past it 0\n", "seed %d (%s)", i+1, args[0])
	}
	assert.Equal(t, 1, cl.starts, "one server ran every seed")
	// The chunk is parked, not mapped: a read of it faults as in a process.
	cmd := exec.Command(prog, "touch", addr)
	cmd.Env = base
	out, err := cmd.Output()
	require.Error(t, err, "a process's read of an address no region holds: %s", out)
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled(), "a process's read of an address no region holds: %v", cmd.ProcessState)
	got, err := cl.run([]string{prog, "touch", addr}, base)
	require.NoError(t, err)
	assert.Equal(t, 128+int(ws.Signal()), got.code, "touch %s: status; stderr:\n%s", addr, got.stderr)
	assert.Equal(t, string(out), got.stdout)
}

// TestSeedServerKeepsRings: a seed's node is closed when the server
// resets, so its rings go back to the process's pool for the next seed's
// node to take (resident, their written part cleared) instead of staying
// out until a collection ran the dropped node's cleanup, while each seed
// took 32 MiB of rings more (8 GPUs, two queues a pair). With the
// collector off, the server's address space then stays put from seed to
// seed; it grew by the rings of every seed before (checked: 128 MiB and
// more over four seeds without the close).
func TestSeedServerKeepsRings(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "../examples/cxx/alltoall_put.cpp", "-O2")
	form, err := ReadSeedForm(prog)
	require.NoError(t, err)
	env := seedEnv([]string{"GOGC=off"})
	cl := newSeedClient(t, form, env)
	defer cl.stop()
	size := func() uint64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cl.Pid()))
		require.NoError(t, err)
		m := regexp.MustCompile(`(?m)^VmSize:\s+(\d+) kB$`).FindSubmatch(b)
		require.NotNil(t, m, "%s", b)
		kb, err := strconv.ParseUint(string(m[1]), 10, 64)
		require.NoError(t, err)
		return kb << 10
	}
	var at2 uint64
	for seed := 1; seed <= 6; seed++ {
		r, err := cl.run([]string{prog}, append(append([]string{}, env...), fmt.Sprintf("EMUD_SEED=%d", seed)))
		require.NoError(t, err)
		require.Equal(t, 0, r.code, "seed %d: stderr:\n%s", seed, r.stderr)
		if seed == 2 {
			at2 = size()
		}
	}
	grew := int64(size()) - int64(at2)
	t.Logf("VmSize grew by %d MiB over seeds 3-6", grew>>20)
	assert.Less(t, grew, int64(96<<20), "the server's address space grew by %d MiB over seeds 3-6", grew>>20)
	assert.Equal(t, 1, cl.Starts(), "one server ran every seed")
}

// TestSeedServerEarlyStart: early threads whose first call builds the
// emulation while the main thread still starts and joins others (each
// seed a fresh build in the same server, so the build's race with the
// main thread is tried once a seed). A thread made during the build used
// to be left out of the adoption (its call refused as a stranger's), and
// a join read the build as not yet done and waited natively while the
// main thread held its first turn (a spin hang after EMUD_SPIN_LIMIT);
// and a server's early-thread entry kept the last seed's thread handle,
// which an adoption before the create returned tracked, so that a later
// thread given the same handle was joined as the old one, natively. And
// the digest depended on where the main thread was in making its threads
// when the build came; now the threads are adopted at the main thread's
// own first call, the same at every run.
func TestSeedServerEarlyStart(t *testing.T) {
	plainLine(t)
	needCxx(t)
	prog := buildExample(t, "testdata/seedsrv/early_start.cpp")
	form, err := ReadSeedForm(prog)
	require.NoError(t, err)
	env := seedEnv([]string{"EMUD_SPIN_LIMIT=5s", "EMUD_SUMMARY=1"})
	seeds := 150
	// Two servers run the same seeds: each seed's digest is the same in
	// both, whichever thread's call built the emulation and wherever the
	// main thread was in making its threads then.
	digests := func() []string {
		cl := newSeedClient(t, form, env)
		defer cl.stop()
		var ds []string
		for seed := 1; seed <= seeds; seed++ {
			r, err := cl.run([]string{prog}, append(append([]string{}, env...), fmt.Sprintf("EMUD_SEED=%d", seed)))
			require.NoError(t, err)
			require.Equal(t, 0, r.code, "seed %d: stderr:\n%s", seed, r.stderr)
			require.Equal(t, "early_start: PASS\n", r.stdout, "seed %d", seed)
			d := digestLine.FindString(r.stderr)
			require.NotEmpty(t, d, "seed %d: stderr:\n%s", seed, r.stderr)
			ds = append(ds, d)
		}
		assert.Equal(t, 1, cl.starts, "every seed ended clean in one server")
		return ds
	}
	assert.Equal(t, digests(), digests())
}

// digestLine is a run's end and digest (EMUD_SUMMARY=1).
var digestLine = regexp.MustCompile(`seed \d+: end \d+ ps, digest [0-9a-f]{64}`)

// TestSeedServerPin: a seed server holds each seed's threads on one CPU
// (on a machine of more), where EMUD_SEED_PIN=0 does not; either way the
// program's affinity queries give what a process's give, before and
// after it sets one of its own, from main and from a thread.
func TestSeedServerPin(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "testdata/seedsrv/affinity.cpp")
	form, err := ReadSeedForm(prog)
	require.NoError(t, err)
	base := seedEnv([]string{"EMUD_SEED_PIN=1"})
	want := runProgram(t, runOpts{env: base}, prog)
	require.Equal(t, 0, want.code, want.stderr)
	held := runProgram(t, runOpts{env: base}, prog, "held")
	require.Equal(t, 0, held.code, held.stderr)
	var n int
	_, err = fmt.Sscanf(held.stdout, "held: main %d", &n)
	require.NoError(t, err, held.stdout)
	assert.Equal(t, fmt.Sprintf("held: main %d, thread %d\n", n, n), held.stdout, "a process is not held")
	for _, pin := range []string{"1", "0"} {
		env := seedEnv([]string{"EMUD_SEED_PIN=" + pin})
		cl := newSeedClient(t, form, env)
		for i := 0; i < 2; i++ {
			got, err := cl.run([]string{prog}, env)
			require.NoError(t, err)
			assert.Equal(t, want.code, got.code, "EMUD_SEED_PIN=%s, seed %d: %s", pin, i+1, got.stderr)
			assert.Equal(t, want.stdout, got.stdout, "EMUD_SEED_PIN=%s, seed %d", pin, i+1)
			got, err = cl.run([]string{prog, "held"}, env)
			require.NoError(t, err)
			w := held.stdout
			if pin == "1" && n > 1 {
				w = "held: main 1, thread 1\n"
			}
			assert.Equal(t, w, got.stdout, "EMUD_SEED_PIN=%s, seed %d", pin, i+1)
		}
		require.NoError(t, cl.stop())
		assert.Equal(t, 1, cl.starts)
	}
}
