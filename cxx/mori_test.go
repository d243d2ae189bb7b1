package cxx

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moriInclude is the include directory of the MORI-shaped header of
// emud's own writing that these tests compile against (testdata/mori).
func moriInclude(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", "mori", "include"))
	require.NoError(t, err)
	return d
}

// TestMoriHeaderFound: a user's mori/cco/cco.hpp is found on -I, -isystem
// and -idirafter, joined or not, the first one winning; with none (or
// only emud's own include directory) emud's stand-in stays the default.
func TestMoriHeaderFound(t *testing.T) {
	inc := moriInclude(t)
	want := filepath.Join(inc, "mori", "cco", "cco.hpp")
	emudInc, err := filepath.Abs(filepath.Join("..", "include"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"none", []string{"-O2", "-DX=1"}, ""},
		{"-I joined", []string{"-I" + inc}, want},
		{"-I apart", []string{"-I", inc}, want},
		{"-isystem", []string{"-isystem", inc}, want},
		{"-idirafter joined", []string{"-idirafter" + inc}, want},
		{"a directory without one first", []string{"-I", t.TempDir(), "-I", inc}, want},
		{"emud's own include directory", []string{"-I", emudInc}, ""},
		{"-I at the end with no value", []string{"-I"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, MoriHeader(tc.flags))
		})
	}
}

// buildMori builds testdata/mori/put.cpp against the test header with
// extra flags and returns the program.
func buildMori(t *testing.T, flags ...string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "mori", "put.cpp"))
	require.NoError(t, err)
	return buildExample(t, src, append([]string{"-O1", "-DBUILD_CCO_SDMA=1", "-I", moriInclude(t)}, flags...)...)
}

// TestMoriPut: a program built with -I a directory holding its own
// mori/cco/cco.hpp compiles against that header, not emud's (it prints
// the header's own name, and emud c++ -v says which header), links emud's
// host control plane for it, and runs the header's device code: lanes
// write raw packets into the ring, store wptr and ring the doorbell, and
// the engine fetches and runs them. Eight ranks, three rounds, correct
// data; the same seed gives the same digest; and the correct header is
// quiet under the race detector (the publish edge included) and under
// timing perturbation on every seed tried (1-8; a plain test binary's,
// plainLine).
func TestMoriPut(t *testing.T) {
	plainLine(t)
	needCxx(t)
	root := setupCxx(t)
	src, err := filepath.Abs(filepath.Join("testdata", "mori", "put.cpp"))
	require.NoError(t, err)
	// -v says which header at each source's compile step; -E stops there
	// (buildMori builds and links the program the runs below use).
	var log strings.Builder
	out := filepath.Join(t.TempDir(), "put.ii")
	require.NoError(t, Run([]string{"-v", "-E", "-DBUILD_CCO_SDMA=1", "-I", moriInclude(t), src, "-o", out},
		Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}), log.String())
	assert.Contains(t, log.String(), "compiles against the MORI header "+filepath.Join(moriInclude(t), "mori", "cco", "cco.hpp"))
	prog := buildMori(t)
	first := ""
	for run := range 2 {
		stdout, stderr, code := runExample(t, prog, "EMUD_SUMMARY=1")
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		assert.Contains(t, stdout, "header: emud-testdata-mori")
		assert.Contains(t, stdout, "mori put: PASS")
		if run == 0 {
			first = stderr
		} else {
			assert.Equal(t, first, stderr, "seed 1 twice: another digest")
		}
	}
	// -O0 gives the same end time and digest. The header's device code
	// copies and rereads its queue handle, and -O0 loads bytes that -O2
	// never does (a struct copied whole against the one field used): while
	// lane code paid for its loads, the two differed (at 2 rounds, end
	// 9135167 ps both, digests d2b338a4… and 907c56fd… at seed 1). Only
	// stores are paid for now, each byte once per span (capi/lanecost.go).
	digest := regexp.MustCompile(`emud: seed 1: end \d+ ps, digest [0-9a-f]+`)
	stdout, stderr, code := runExample(t, buildMori(t, "-O0"), "EMUD_SUMMARY=1")
	require.Equal(t, 0, code, "-O0: stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.NotEmpty(t, digest.FindString(first), first)
	assert.Equal(t, digest.FindString(first), digest.FindString(stderr), "-O0 against -O1: another end time or digest")
	for seed := 1; seed <= 8; seed++ {
		for _, env := range [][]string{{"EMUD_RACE=1"}, {"EMUD_STRATEGY=perturb"}} {
			stdout, stderr, code := runExample(t, prog, append(env, fmt.Sprintf("EMUD_SEED=%d", seed), "2")...)
			assert.Equal(t, 0, code, "seed %d %v: a false report\nstdout:\n%s\nstderr:\n%s", seed, env, stdout, stderr)
			assert.Contains(t, stdout, "mori put: PASS", "seed %d %v", seed, env)
		}
	}
}

// TestMoriPublishAfterACall: a lane whose ring stores reach the runtime
// at a device call before its publish (a wave barrier between them, the
// header's EMUD_TEST_MORI_CALL_FIRST) still publishes them at its
// s_waitcnt: no false MoriPublishError under the race detector, and
// correct data under perturbation. A fence with nothing logged since the
// lane's last call passes in its own code (lane.c emud_fence_skip), but
// not this one: its stores wait for it (lanes.go idleFences).
func TestMoriPublishAfterACall(t *testing.T) {
	plainLine(t)
	needCxx(t)
	prog := buildMori(t, "-DEMUD_TEST_MORI_CALL_FIRST")
	for seed := 1; seed <= 4; seed++ {
		for _, env := range [][]string{{"EMUD_RACE=1"}, {"EMUD_STRATEGY=perturb"}} {
			stdout, stderr, code := runExample(t, prog, append(env, fmt.Sprintf("EMUD_SEED=%d", seed), "2")...)
			assert.Equal(t, 0, code, "seed %d %v: a false report\nstdout:\n%s\nstderr:\n%s", seed, env, stdout, stderr)
			assert.Contains(t, stdout, "mori put: PASS", "seed %d %v", seed, env)
			assert.NotContains(t, stderr, "MORI ring publish", "seed %d %v", seed, env)
		}
	}
}

// TestMoriPutFork runs put.cpp's ranks as forked processes in MORI's
// fork harness shape (the unique id in the parent, a child per rank, the
// parent in waitpid) against the MORI-shaped header: it passes, and gives
// the digest of the same ranks as threads, exact and perturbed, each
// lane on its own queue and the lanes of a wave on one (its commit
// chain). Each child lane took the coordinator's copy of its stack bounds
// (zero), so its calls had no call context: lanes of one wave at two call
// chains of the header's one-line ds_bpermute helper met as one lock-step
// point, took each other's values, and put's grouping loop never emptied
// its mask, a loop of __ballot and __shfl at one virtual time that ran
// forever with no report.
func TestMoriPutFork(t *testing.T) {
	needCxx(t)
	prog := buildMori(t)
	for _, tc := range []struct {
		env  []string
		mode string
	}{
		{[]string{"EMUD_SEED=1"}, ""},
		{[]string{"EMUD_SEED=5", "EMUD_STRATEGY=perturb"}, "same"},
	} {
		t.Run(strings.Join(append(tc.env, tc.mode), ","), func(t *testing.T) {
			args := append([]string{"EMUD_SUMMARY=1", "EMUD_SPIN_LIMIT=10s", "2"}, tc.env...)
			if tc.mode != "" {
				args = append(args, tc.mode)
			}
			stdout, stderr, code := runExample(t, prog, args...)
			require.Equal(t, 0, code, "threads: stdout:\n%s\nstderr:\n%s", stdout, stderr)
			require.Contains(t, stdout, "mori put: PASS")
			want := digestOf(t, stderr)
			stdout, stderr, code = runExample(t, prog, append(args, "fork")...)
			require.Equal(t, 0, code, "processes: stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "mori put: PASS")
			assert.Equal(t, want, digestOf(t, stderr), "processes: the threads' digest")
		})
	}
}

// TestMoriMissingPublish: the header's submitPacket without its publish
// (no s_waitcnt(0) between the lane's ring stores and its doorbell
// store) is reported by the race detector on every seed (1-6; 1-2 in a
// -race test binary), naming the
// lane's store in the header, the doorbell and the missing wait; without
// the detector, under timing perturbation, an unpublished store the
// engine fetched before it landed corrupts a packet (here a signal that
// never comes: a hang, or wrong data) on some seed.
func TestMoriMissingPublish(t *testing.T) {
	plainLine(t)
	needCxx(t)
	prog := buildMori(t, "-DEMUD_TEST_MORI_NO_PUBLISH")
	hdr := filepath.Join(moriInclude(t), "mori", "cco", "cco.hpp")
	for seed := 1; seed <= 6; seed++ {
		stdout, stderr, code := runExample(t, prog, "EMUD_RACE=1", fmt.Sprintf("EMUD_SEED=%d", seed), "1")
		require.NotEqual(t, 0, code, "seed %d: the missing publish was not reported\nstdout:\n%s\nstderr:\n%s", seed, stdout, stderr)
		assert.Contains(t, stderr, "MORI ring publish: the engine of queue sdma gpu", "seed %d", seed)
		assert.Contains(t, stderr, "stored at "+hdr+":", "seed %d: the store's line", seed)
		assert.Contains(t, stderr, "and had not published: the doorbell store of", "seed %d", seed)
		assert.Contains(t, stderr, "with no s_waitcnt(0)", "seed %d", seed)
	}
	broken := 0
	for seed := 1; seed <= 20 && broken == 0; seed++ {
		stdout, _, code := runExample(t, prog, "EMUD_STRATEGY=perturb", fmt.Sprintf("EMUD_SEED=%d", seed), "1")
		if code != 0 || !strings.Contains(stdout, "mori put: PASS") {
			broken = seed
		}
	}
	assert.NotZero(t, broken, "no seed of 20 under perturbation fetched a packet before its stores landed")
}

// TestMoriLayoutMismatch: a header whose structures emud cannot fill
// fails the build, naming the header and the field, instead of running a
// shifted or half-filled layout: a field emud fills that the header
// renamed (the queue handle's committedWptr), and a field the header
// added that emud does not know (one in ccoSdmaContext).
func TestMoriLayoutMismatch(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	root := setupCxx(t)
	src, err := filepath.Abs(filepath.Join("testdata", "mori", "put.cpp"))
	require.NoError(t, err)
	hdr := filepath.Join(moriInclude(t), "mori", "cco", "cco.hpp")
	for _, tc := range []struct {
		variant string
		want    []string
	}{
		{"-DEMUD_TEST_MORI_RENAMED", []string{"committedWptr"}},
		{"-DEMUD_TEST_MORI_ADDED", []string{hdr + ":", "field laneHints of ccoSdmaContext is not one emud fills"}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			var log strings.Builder
			err := Run([]string{"-DBUILD_CCO_SDMA=1", tc.variant, "-I", moriInclude(t), src, "-o", filepath.Join(t.TempDir(), "put")},
				Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the MORI header "+hdr+" does not declare what emud fills")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestStructFields: the data members of a struct as unknownFields names
// them, whatever member functions, access labels, bit-fields, arrays,
// comments and nested bodies the struct has.
func TestStructFields(t *testing.T) {
	src := `// struct ccoSdmaContext { int decoy; };
struct other { int a; };
struct ccoSdmaContext {
  uint32_t sdmaNumQueue;  // 0 when off
  __device__ uint64_t ReserveSlot(uint64_t b, X* s) { if (b) { return 1; } return 0; }
 public:
  ccoSdmaQueueDeviceHandle** deviceHandles;
  uint64_t* expectSignals; /* new */
  static constexpr int kMax = 4;
  unsigned int op : 8;
  char name[16];
  using T = int;
  void f();
};
struct after { int z; };`
	got := structFields([]byte(src), "ccoSdmaContext")
	var names []string
	for _, f := range got {
		names = append(names, fmt.Sprintf("%s@%d", f.name, f.line))
	}
	assert.Equal(t, []string{"sdmaNumQueue@4", "deviceHandles@7", "expectSignals@8", "op@10", "name@11"}, names)
	assert.Nil(t, structFields([]byte(src), "missing"))
	assert.Nil(t, structFields([]byte("struct ccoSdmaContext {"), "ccoSdmaContext"), "an unterminated struct: none")
}

// FuzzStructFields: any source, any name: structFields returns, never
// panics or loops.
func FuzzStructFields(f *testing.F) {
	f.Add([]byte("struct S { int a; int b[2]; void g() { } };"), "S")
	f.Add([]byte("struct S { public: int a : 3; };"), "S")
	f.Add([]byte("struct S {"), "S")
	f.Fuzz(func(t *testing.T, src []byte, name string) {
		for _, fl := range structFields(src, name) {
			require.NotEmpty(t, fl.name)
		}
	})
}

// TestMoriCommitChainDeadlock: with a wave barrier after the commit
// chain's wait (MORI's submitPacket before #502), lanes of one wave that
// post to one queue at thread scope deadlock: the lane whose turn came
// first waits at the barrier for lanes that wait for it to publish. The
// hang report names the chain's spin in the header with the lanes waiting
// in it, and the lane at the barrier, on every seed (1-4; 1-2 in a -race
// test binary). The same program
// against the header without the barrier passes, race detector on; and
// the broken header with the lanes on distinct queues passes too (no
// chain is shared): the report is the bug's, not the header's.
func TestMoriCommitChainDeadlock(t *testing.T) {
	plainLine(t)
	needCxx(t)
	old := buildMori(t, "-DEMUD_TEST_MORI_OLD_CHAIN")
	good := buildMori(t)
	for seed := 1; seed <= 4; seed++ {
		s := fmt.Sprintf("EMUD_SEED=%d", seed)
		stdout, stderr, code := runExample(t, old, s, "1", "same")
		require.Equal(t, 2, code, "seed %d: the deadlock was not reported as a hang\nstdout:\n%s\nstderr:\n%s", seed, stdout, stderr)
		assert.Regexp(t, `atomic load \(spin\) by lanes 1-7 at cco.hpp:\d+; lanes 0 parked at syncwarp \(cco.hpp:\d+\)`, stderr, "seed %d", seed)
		assert.Contains(t, stderr, "spin on an atomic load of", "seed %d", seed)
		stdout, stderr, code = runExample(t, good, s, "EMUD_RACE=1", "1", "same")
		assert.Equal(t, 0, code, "seed %d: the fixed chain was reported\nstdout:\n%s\nstderr:\n%s", seed, stdout, stderr)
		assert.Contains(t, stdout, "mori put: PASS")
		stdout, stderr, code = runExample(t, old, s, "1")
		assert.Equal(t, 0, code, "seed %d: distinct queues share no chain\nstdout:\n%s\nstderr:\n%s", seed, stdout, stderr)
		assert.Contains(t, stdout, "mori put: PASS")
	}
}

// TestMoriLockstep: two shapes that are correct only because the lanes of
// a wave run in lock-step (testdata/mori/lockstep.cpp, the header's
// grouped posting in MORI 624002c8's structure), at -O0 and -O2 and
// under the race detector, on wave64 and wave32 (gfx1250):
//   - mixed: lanes of one wave post, in one branch, to two queues; the
//     header's group walk reaches its one-line broadcast helper from two
//     places. Without call contexts the two were one point, and the walk
//     livelocked (MORI's test_sdma_warp_issue mixed-queue case).
//   - warp: lane 0 posts at warp scope on queue 1 and lane 1 drains queue
//     1 in the quiet after it. Without lock-step at atomic accesses lane 1
//     drained before lane 0 posted, and the signal was not there after
//     the quiet (MORI's test_sdma_signal A[scope=1 q=1]).
func TestMoriLockstep(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	src, err := filepath.Abs(filepath.Join("testdata", "mori", "lockstep.cpp"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		flags []string
		env   []string
	}{
		{"O0", []string{"-O0"}, nil},
		{"O2 race", []string{"-O2"}, []string{"EMUD_RACE=1"}},
		{"gfx1250", []string{"-O2", "--offload-arch=gfx1250"}, []string{"EMUD_ARCH=gfx1250"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog := buildExample(t, src, append([]string{"-Wall", "-Werror", "-DBUILD_CCO_SDMA=1", "-I", moriInclude(t)}, tc.flags...)...)
			for _, mode := range []string{"mixed", "warp"} {
				stdout, stderr, code := runExample(t, prog, append(append([]string{}, tc.env...), "EMUD_SPIN_LIMIT=5s", mode)...)
				require.Equal(t, 0, code, "%s\nstdout:\n%s\nstderr:\n%s", mode, stdout, stderr)
				assert.Contains(t, stdout, "header: emud-testdata-mori")
				assert.Contains(t, stdout, "lockstep "+mode+": PASS")
			}
		})
	}
}

// TestMoriRingFull: lane 0 of each rank posts more 64-byte puts than its
// 256 KiB ring holds, so it waits for the engine to free ring space: with
// the header's fetch-add reservation (a wait on the read pointer alone),
// and with MORI 489dbfd5's compare-and-swap shape, which re-reads the
// write and read pointers in turn (a spin over two words; it ran its
// retry limit natively and trapped before). Both pass (lane 0's
// waitSignal counts its sender's 4196 signals), with the same
// virtual end time within a nanosecond, and emud's ring follows a doorbell
// that advances by a whole ring (it refused the reservation and the
// queue's destroy then found work in flight). The ends were equal to the
// picosecond while lanes ran ahead of each other; in lock-step (lanes 1-7
// wait at the put loop's exit for lane 0's 4196 rounds) the two shapes'
// different atomic sequences end 834 ps apart at 17.10 ms: lane code is
// paid at each group's call, each payment rounded to the picosecond.
func TestMoriRingFull(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	var ends []int64
	for _, flags := range [][]string{nil, {"-DEMUD_TEST_MORI_CAS_RESERVE"}} {
		prog := buildMori(t, flags...)
		stdout, stderr, code := runExample(t, prog, "EMUD_SUMMARY=1", "1", "full")
		require.Equal(t, 0, code, "%v\nstdout:\n%s\nstderr:\n%s", flags, stdout, stderr)
		assert.Contains(t, stdout, "mori put: PASS", "%v", flags)
		ends = append(ends, summaryEnd(t, stderr))
	}
	assert.InDelta(t, ends[0], ends[1], 1000, "the two reservation shapes wait the same virtual time (ps): %v", ends)
}

// TestMoriLinkHint: a link that fails on MORI's host calls without the
// MORI -I says what it lacks; other link failures, and links that have
// the -I, get no hint.
func TestMoriLinkHint(t *testing.T) {
	undef := []byte("put.o: undefined reference to `mori::cco::ccoCommCreate(mori::cco::ccoUniqueId const&, int, int, unsigned long, mori::cco::ccoComm**)'")
	assert.Contains(t, moriLinkHint(nil, undef), "the same -I and -D flags")
	assert.Empty(t, moriLinkHint(nil, []byte("undefined reference to `foo'")))
	assert.Empty(t, moriLinkHint([]string{"-I", moriInclude(t)}, undef))
}

// TestMoriRelativeInclude: a program built with the MORI header on a
// relative -I gives the same digest run from another directory. The line
// tables name the header relative to the build's directory (DWARF 5); the
// call contexts read its loops by that name, so run elsewhere they found
// none and ordered the lanes otherwise (put.cpp seed 1: digest 36c359af…
// from /tmp, 3f895695… from the build directory).
func TestMoriRelativeInclude(t *testing.T) {
	needCxx(t)
	src, err := filepath.Abs(filepath.Join("testdata", "mori", "put.cpp"))
	require.NoError(t, err)
	prog := buildExample(t, src, "-O1", "-DBUILD_CCO_SDMA=1", "-I", filepath.Join("testdata", "mori", "include"))
	var digests []string
	for _, dir := range []string{".", t.TempDir()} {
		r := runProgram(t, runOpts{dir: dir}, prog, "EMUD_SEED=1", "EMUD_SUMMARY=1")
		require.Equal(t, 0, r.code, "from %s: stdout:\n%s\nstderr:\n%s", dir, r.stdout, r.stderr)
		require.Contains(t, r.stdout, "mori put: PASS", "from %s", dir)
		digests = append(digests, digestOf(t, r.stderr))
	}
	assert.Equal(t, digests[0], digests[1], "run from another directory: another digest")
}

// TestMoriLogWithoutSpdlog: a user's MORI whose mori/utils/mori_log.hpp
// includes spdlog (MORI's does; spdlog is a submodule of MORI's checkout,
// often not built) builds a program that logs through emud's spdlog-free
// mori_log.hpp when spdlog is nowhere on the include path (MORI
// 624002c8's test_host and test_gda_modes failed to build on
// spdlog/sinks/basic_file_sink.h, and test_host now passes on 8 ranks);
// with spdlog on the include path, the user's own header is the one used.
func TestMoriLogWithoutSpdlog(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	root := setupCxx(t)
	inc := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(inc, "mori", "utils"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(moriInclude(t), "mori", "cco"), filepath.Join(inc, "mori", "cco")))
	require.NoError(t, os.WriteFile(filepath.Join(inc, "mori", "utils", "mori_log.hpp"),
		[]byte("#pragma once\n#include \"spdlog/spdlog.h\"\n#error \"the user's mori_log.hpp\"\n"), 0o644))
	spd := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(spd, "spdlog"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(spd, "spdlog", "spdlog.h"), []byte("#pragma once\n"), 0o644))
	src := filepath.Join(root, "cxx", "testdata", "mori_log", "mori_log.cpp")

	prog := buildExample(t, src, "-O1", "-DBUILD_CCO_SDMA=1", "-I", inc)
	out, report, code := runExample(t, prog, "MORI_APP_LOG_LEVEL=info")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.Contains(t, out, "[application] [info] 8 devices, warp 64")
	assert.Contains(t, out, "mori_log: done")

	var log bytes.Buffer
	err := Run([]string{"-O1", "-DBUILD_CCO_SDMA=1", "-I", inc, "-I", spd, "-c", src, "-o", filepath.Join(t.TempDir(), "log.o")},
		Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
	require.Error(t, err)
	assert.Contains(t, log.String(), "the user's mori_log.hpp")
}

// TestMoriDevCommPerRound: a program that makes and destroys a dev comm
// every round, as MORI's test_lsa_memcheck does, over the MORI-shaped
// header, passes with its ranks as threads and as processes, one digest,
// and a destroyed dev comm's MORI rings serve the next one, and what the
// header's host control plane hipMalloc'd for it goes back: each dev comm
// after the first keeps less than 8 KiB of device memory: its signal pool
// and barrier state, 5238 B, which are not reused (partial:
// cco.DevCommDestroy). 76 KiB with the control plane's allocations kept,
// and 16 rings of 256 KiB more before the rings were reused.
// Before, every dev comm took new rings for all its queues (8 peers × 2
// queues × 256 KiB) and kept their doorbell watches, and every lane call
// scanned the dead ones: MORI's test_lsa_memcheck (100 rounds) was past
// its round 17 at 60 s and took 175 s with the rings reused alone; the
// signal slots a destroyed dev comm left in the write log
// (cco.DevCommDestroy) made each round slower still.
func TestMoriDevCommPerRound(t *testing.T) {
	needCxx(t)
	prog := buildMori(t)
	kept := regexp.MustCompile(`device memory kept per dev comm: (\d+) bytes`)
	var digests []string
	for _, mode := range []string{"threads", "fork"} {
		args := []string{"EMUD_SUMMARY=1", "EMUD_SPIN_LIMIT=10s", "8", "redev"}
		if mode == "fork" {
			args = append(args, "fork")
		}
		stdout, stderr, code := runExample(t, prog, args...)
		require.Equal(t, 0, code, "%s: stdout:\n%s\nstderr:\n%s", mode, stdout, stderr)
		assert.Contains(t, stdout, "mori put: PASS", mode)
		m := kept.FindStringSubmatch(stdout)
		require.NotNil(t, m, "%s: %s", mode, stdout)
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		assert.Less(t, n, 8<<10, "%s: each dev comm keeps %d bytes of device memory", mode, n)
		digests = append(digests, digestOf(t, stderr))
	}
	assert.Equal(t, digests[0], digests[1], "processes: the threads' digest")
}

// TestMoriQuietDrainOrders: puts without signals, each quieted by its
// lane (a MORI header's quiet polls the queue's read-pointer word), then
// the host's synchronize and barrier before the receivers copy out
// (testdata/mori/put.cpp quiet, MORI's test_sdma_put's shape): race-clean
// under EMUD_RACE=1. Before, the engine's read-pointer write-back was no
// edge, and every put raced with its receiver's hipMemcpy (MORI's own
// test_sdma_put and test_sdma_signal reported 112 and 72 races).
func TestMoriQuietDrainOrders(t *testing.T) {
	plainLine(t)
	needCxx(t)
	prog := buildMori(t)
	for seed := 1; seed <= 3; seed++ {
		stdout, stderr, code := runExample(t, prog, fmt.Sprintf("EMUD_SEED=%d", seed), "EMUD_RACE=1", "EMUD_PERTURB=1", "2", "quiet")
		require.Equal(t, 0, code, "seed %d: stdout:\n%s\nstderr:\n%s", seed, stdout, stderr)
		assert.Contains(t, stdout, "mori put: PASS")
		assert.NotContains(t, stderr, "data race")
	}
}
