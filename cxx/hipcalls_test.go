package cxx

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hipHeaderCalls reads include/hip/hip_runtime.h: the HIP calls it
// defines and the ones it declares unsupported (EMUD_UNSUPPORTED).
func hipHeaderCalls(t *testing.T) (supported, unsupported []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "include", "hip", "hip_runtime.h"))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(?:template <[^>]*>\s*)?inline (?:hipError_t|const char\*) (hip\w+)\(`).FindAllSubmatch(b, -1) {
		if n := string(m[1]); !seen[n] {
			seen[n] = true
			supported = append(supported, n)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^EMUD_UNSUPPORTED\((\w+)\)`).FindAllSubmatch(b, -1) {
		unsupported = append(unsupported, string(m[1]))
	}
	return supported, unsupported
}

// TestHIPCallsDocumented: docs/hip.md, which the unsupported calls' error
// points at, lists every call the header emulates under "Emulated" and
// every call it refuses under "Not emulated", and no call is both.
func TestHIPCallsDocumented(t *testing.T) {
	supported, unsupported := hipHeaderCalls(t)
	require.Greater(t, len(supported), 40)
	require.Greater(t, len(unsupported), 40) // the parse found the list (it shrinks as calls become emulated)
	b, err := os.ReadFile(filepath.Join("..", "docs", "hip.md"))
	require.NoError(t, err)
	doc := string(b)
	emulated, notEmulated, ok := strings.Cut(doc, "## Not emulated")
	require.True(t, ok, "docs/hip.md has a Not emulated section")
	for _, n := range supported {
		assert.Contains(t, emulated, "`"+n+"`", "docs/hip.md's Emulated table names %s", n)
	}
	for _, n := range unsupported {
		assert.Contains(t, notEmulated, "`"+n+"`", "docs/hip.md's Not emulated list names %s", n)
		assert.NotContains(t, supported, n, "%s is both emulated and refused", n)
	}
}

// TestUnsupportedHIPCalls compiles a program that calls every HIP call
// the header refuses, each on its own line, and a few as MORI's code
// would call them (with HIP's own constants): each call is one error at
// its line naming it and pointing at docs/hip.md, and nothing else fails.
func TestUnsupportedHIPCalls(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	_, unsupported := hipHeaderCalls(t)
	var src strings.Builder
	src.WriteString("#include <hip/hip_runtime.h>\n")
	want := map[int]string{} // line -> call
	line := 2
	emit := func(call, stmt string) {
		fmt.Fprintf(&src, "void f%d() { %s; }\n", line, stmt)
		want[line] = call
		line++
	}
	for _, n := range unsupported {
		emit(n, "(void)"+n+"()")
	}
	// The constants and types these calls take are declared, so the
	// call's own message is the error.
	emit("hipMemAdvise", "int* p = nullptr; (void)hipMemAdvise(p, 64, hipMemAdviseSetReadMostly, 0)")
	emit("hipMemPoolCreate", "hipMemPool_t pool; (void)hipMemPoolCreate(&pool, nullptr)")
	emit("hipMemcpy3D", "(void)hipMemcpy3D(nullptr)")
	emit("hipIpcGetEventHandle", "hipIpcEventHandle_t h; hipEvent_t e = nullptr; (void)hipIpcGetEventHandle(&h, e)")
	emit("hipGraphAddKernelNode", "hipGraphNode_t n = nullptr; hipGraph_t g = nullptr; (void)hipGraphAddKernelNode(&n, g, nullptr, 0, nullptr)")
	emit("hipModuleLoad", "hipModule_t m = nullptr; (void)hipModuleLoad(&m, \"k.hsaco\")")
	emit("hipMemPrefetchAsync", "float* p = nullptr; hipStream_t s = nullptr; (void)hipMemPrefetchAsync(p, 64, 0, s)")
	dir := t.TempDir()
	file := filepath.Join(dir, "unsupported.cpp")
	require.NoError(t, os.WriteFile(file, []byte(src.String()), 0o644))
	var log bytes.Buffer
	err := Run([]string{"-c", "-fmax-errors=0", file, "-o", filepath.Join(dir, "unsupported.o")},
		Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
	require.Error(t, err, "calls emud does not emulate must not build")
	msg := regexp.MustCompile(`unsupported\.cpp:(\d+):\d+:\s+required from here`)
	assertRe := regexp.MustCompile(`static assertion failed: (hip\w+) is not supported by emud \(docs/hip\.md lists the HIP calls emud emulates\)`)
	// GCC reports each failed instantiation: the assertion's message,
	// then "required from here" at the user's line.
	lines := strings.Split(log.String(), "\n")
	got := map[int]string{}
	for i, l := range lines {
		m := assertRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for j := i - 1; j >= 0 && j >= i-8; j-- {
			if w := msg.FindStringSubmatch(lines[j]); w != nil {
				var n int
				fmt.Sscan(w[1], &n)
				got[n] = m[1]
				break
			}
		}
	}
	assert.Equal(t, want, got, "each unsupported call fails at its own line naming itself\n%s", truncate(log.String(), 4000))
	assert.NotContains(t, log.String(), "was not declared", "an argument of an unsupported call is undeclared")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// TestNotEmulatedMoriHeaders: a source that includes MORI's scale-out
// (GDA) or RDMA headers, as MORI's GDA tests do, fails at the include
// with one message saying what emud does not emulate, not with a cascade
// of undeclared names.
func TestNotEmulatedMoriHeaders(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	for _, h := range []string{"mori/cco/cco_scale_out.hpp", "mori/core/transport/rdma/core_device_types.hpp"} {
		t.Run(filepath.Base(h), func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "gda.cpp")
			require.NoError(t, os.WriteFile(file, []byte("#include \""+h+"\"\nint f() { return ccoGdaUndeclared(); }\n"), 0o644))
			var log bytes.Buffer
			err := Run([]string{"-c", file, "-o", filepath.Join(dir, "gda.o")}, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
			require.Error(t, err)
			assert.Contains(t, log.String(), "is not emulated by emud")
			assert.NotContains(t, log.String(), "ccoGdaUndeclared", "compilation went on past the header")
		})
	}
}

// A loop of hipMalloc and hipFree of 1 GiB runs as long as a GPU runs it:
// hipFree gives the block back (hipMemGetInfo's free is the same after 40
// rounds as before), hipMalloc reuses it, and hipFree's implicit
// hipDeviceSynchronize orders the freed block's last kernel (on a stream
// the program never synchronizes) before the block's next user, so the
// race detector is quiet. Before, freed blocks were never reused: the
// 33rd round's hipMalloc ran out of the 32 GiB half-slice, and free
// memory fell by 2 GiB a round.
func TestHipFreeGivesBack(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "testdata/memory/free_loop.cpp", "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{"EMUD_SUMMARY=1"}, {"EMUD_SUMMARY=1", "EMUD_RACE=1"}} {
		stdout, stderr, code := runExample(t, prog, env...)
		require.Equal(t, 0, code, "%v\nstdout:\n%s\nstderr:\n%s", env, stdout, stderr)
		assert.Contains(t, stdout, "free loop: PASS", "%v", env)
		assert.NotContains(t, stderr, "race", "%v", env)
	}
}

// TestMoreHIPCalls: the HIP calls of a program's own harness beyond
// MORI's (cxx/testdata/hip/more_calls.cpp): copies by kind and between
// devices, stream queries, flags and priorities, device queries and
// versions, settings, kernels' attributes and occupancy by emud's CU
// model, and hipDeviceReset, each result checked in the program. A loop
// of hipStreamQuery whose kernel waits for a flag the host sets after
// its third query ends (a query that waited for the stream's work would
// hang), and the query that succeeds orders the kernel's stores to
// pinned memory before the host's reads (race-clean); its twin clearing
// them with a memset on another stream while the kernel runs is a race.
// hipEventRecord returns at once in the same way, and hipStreamWaitEvent
// orders one stream's kernel after another's; without it, a race.
func TestMoreHIPCalls(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "hip", "more_calls.cpp"), "-O2", "-Wall", "-Werror")
	for _, arch := range []string{"gfx950", "gfx1250"} {
		r := runFull(t, prog, "EMUD_ARCH="+arch)
		require.Equal(t, 0, r.code, "%s; stdout:\n%s\nstderr:\n%s", arch, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "more_calls query: 12800 counted, polled until the flag was set")
		assert.Contains(t, r.stdout, "more_calls: PASS")
	}
	r := runFull(t, prog, "query", "EMUD_RACE=1", "EMUD_PERTURB=1")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.NotContains(t, r.stderr, "data race")
	r = runFull(t, prog, "racy", "EMUD_RACE=1")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "data race")
	assert.Contains(t, r.stderr, "more_calls.cpp:")
	// Events: a record returns at once (its kernel waits for the host's
	// third query), and a stream that waits for the event is ordered
	// after its work; the twin without hipStreamWaitEvent is a race.
	for _, env := range [][]string{{"EMUD_RACE=1"}, {"EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED=3"}} {
		r = runFull(t, prog, append([]string{"events"}, env...)...)
		require.Equal(t, 0, r.code, "%v; stdout:\n%s\nstderr:\n%s", env, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, fmt.Sprintf("more_calls events: %d of %d words copied after the fill", 256, 256))
		assert.NotContains(t, r.stderr, "data race")
	}
	r = runFull(t, prog, "nowait", "EMUD_RACE=1")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "data race")
	assert.Contains(t, r.stderr, "copy_out")
}

// TestHIPIpc runs cxx/testdata/hip/ipc.cpp: four rank threads share their
// buffers through IPC memory handles and write each other's slots. The
// exchange passes, race-clean under EMUD_RACE=1 at two seeds; a handle
// made from a pointer into a buffer opens to that pointer (HIP's base
// plus offset); the twin without the barrier before the check is a race
// naming the kernel's store and the host's copy; every refusal gives its
// code with the line naming why.
func TestHIPIpc(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "hip", "ipc.cpp"), "-O2", "-Wall", "-Werror")
	for _, words := range [][]string{{}, {"EMUD_RACE=1"}, {"EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED=4"}, {"interior", "EMUD_RACE=1"}} {
		r := runFull(t, prog, words...)
		require.Equal(t, 0, r.code, "%v; stdout:\n%s\nstderr:\n%s", words, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "ipc: PASS", "%v", words)
		assert.NotContains(t, r.stderr, "data race", "%v", words)
	}
	r := runFull(t, prog, "racy", "EMUD_RACE=1")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `store \(write\) of .* by kernel "put" .*ipc\.cpp:\d+`, r.stderr)
	assert.Regexp(t, `hipMemcpy \(read\) of .*ipc\.cpp:\d+`, r.stderr)
	r = runFull(t, prog, "errors")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, want := range []string{
		"host pointer: hipErrorInvalidDevicePointer",
		"flags 0: hipErrorInvalidValue",
		"zeroed handle: hipErrorInvalidHandle",
		"altered handle: hipErrorInvalidHandle",
		"closed too often: hipErrorInvalidHandle",
		"close of a pointer not opened: hipErrorInvalidHandle",
		"freed: hipErrorInvalidHandle",
		"freed and reused: hipErrorInvalidHandle",
		"ipc: PASS",
	} {
		assert.Contains(t, r.stdout, want)
	}
	for _, want := range []string{
		"is not device memory",
		"the flags must be hipIpcMemLazyEnablePeerAccess",
		"the handle was not made by hipIpcGetMemHandle, or its bytes changed after",
		"was not returned by hipIpcOpenMemHandle in this process",
		"was freed since the handle was made",
	} {
		assert.Contains(t, r.stderr, want)
	}
}

// TestStreamMemOps runs cxx/testdata/hip/stream_mem.cpp: a stream waits
// (hipStreamWaitValue32) for the flag another stream writes
// (hipStreamWriteValue32) after its kernel, and copies what the kernel
// filled: all of it, race-clean at two seeds. Each wait condition holds
// its stream's kernels until the host's store, which the host makes
// after launching them (a launch behind unfinished work is queued: it
// hung, the host waiting at the launch for a wait on its own later
// store). Managed, stream-ordered and host allocation, pitched memory
// and 2D copies, registered host memory a kernel writes, address ranges
// and device queries pass with their refusals. The twin that copies
// without waiting is a race; the flag nobody writes is a hang naming the
// wait.
func TestStreamMemOps(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "hip", "stream_mem.cpp"), "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{}, {"EMUD_RACE=1"}, {"EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED=3"}} {
		r := runFull(t, prog, env...)
		require.Equal(t, 0, r.code, "%v; stdout:\n%s\nstderr:\n%s", env, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "stream_mem handover: 256 of 256 words as filled")
		assert.Contains(t, r.stdout, "stream_mem conditions: 5 kernels ran after their waits")
		assert.Contains(t, r.stdout, "stream_mem: PASS")
		assert.NotContains(t, r.stderr, "data race")
	}
	r := runFull(t, prog, "nowait", "EMUD_RACE=1")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `store \(write\) of .* by kernel "fill" .*stream_mem\.cpp:\d+`, r.stderr)
	assert.Contains(t, r.stderr, "hipMemcpyAsync (read)")
	r = runFull(t, prog, "never")
	require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `hipStreamWaitValue32 at stream_mem\.cpp:\d+ waits for the word at 0x[0-9a-f]+ \(now 0x0\) & 0xffffffff == 0x1`, r.stderr)
}

// TestCooperativeLaunch runs cxx/testdata/hip/coop.cpp and
// cxx/testdata/cuda/coop.cu: a grid-wide sync (cooperative groups'
// this_grid().sync()) in a cooperative launch orders every thread's
// writes before every thread's reads after it (PASS, race-clean), also
// for a grid past the resident-lane budget that the GPU's CUs hold and
// through cudaLaunchKernelEx's cooperative attribute; left
// out, the reads race with other blocks' writes; a thread that returns
// before the sync is a hang naming the sync and the counts; a sync in a
// kernel launched with hipLaunchKernel (as <<<>>>) fails the lane naming
// why; a grid larger
// than the CUs hold is hipErrorCooperativeLaunchTooLarge. The kernel is
// named from its address (DWARF). Kernels passed as void pointers
// (cudaLaunchCooperativeKernel((void*)k, ...); launch_addr.cpp's
// hipLaunchKernel and hipLaunchCooperativeKernel, its arguments copied
// at the launch) launch as the typed ones do; an address the program
// never cast from a kernel is hipErrorInvalidDeviceFunction, said at its
// line.
func TestCooperativeLaunch(t *testing.T) {
	plainLine(t)
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "hip", "coop.cpp"), "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{}, {"EMUD_RACE=1"}, {"EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED=2"}} {
		r := runFull(t, prog, env...)
		require.Equal(t, 0, r.code, "%v; stdout:\n%s\nstderr:\n%s", env, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "coop sync: 0 of 256 words wrong (PASS)")
		assert.NotContains(t, r.stderr, "data race")
	}
	r := runFull(t, prog, "nosync", "EMUD_RACE=1")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `by kernel "shift" GPU 0 block \d+ wave 0 lane \d+ \(.*coop\.cpp:\d+`, r.stderr)
	r = runFull(t, prog, "returned")
	require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, `this_grid().sync() of kernel "shift" (coop.cpp:30): 255 of 256 threads arrived, 1 returned without it`)
	r = runFull(t, prog, "plain")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, `this_grid().sync(): kernel "shift" was not launched cooperatively`)
	r = runFull(t, prog, "toolarge")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "coop toolarge: hipErrorCooperativeLaunchTooLarge")
	assert.Contains(t, r.stderr, "a cooperative grid of 600 blocks of 1024 threads: the GPU's 256 CUs hold 512 such blocks at once")

	cu := buildExample(t, filepath.Join("testdata", "cuda", "coop.cu"), "-O2", "-Wall", "-Werror")
	for _, words := range [][]string{{"EMUD_RACE=1"}, {"big"}, {"ex", "EMUD_RACE=1"}, {"addr", "EMUD_RACE=1"}} {
		r := runFull(t, cu, words...)
		require.Equal(t, 0, r.code, "%v; stdout:\n%s\nstderr:\n%s", words, r.stdout, r.stderr)
		assert.Regexp(t, `cuda coop \d+ x \d+: 0 of \d+ sums wrong \(PASS\)`, r.stdout)
		assert.NotContains(t, r.stderr, "data race")
	}

	// Kernels launched by address (cxx/testdata/hip/launch_addr.cpp):
	// registered where the source casts them to void pointers.
	la := buildExample(t, filepath.Join("testdata", "hip", "launch_addr.cpp"), "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{}, {"EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED=3"}} {
		r := runFull(t, la, env...)
		require.Equal(t, 0, r.code, "%v; stdout:\n%s\nstderr:\n%s", env, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "launch_addr: 0 of 768 values wrong (PASS)")
		assert.NotContains(t, r.stderr, "data race")
	}
	r = runFull(t, la, "unknown")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "launch_addr unknown: hipErrorInvalidDeviceFunction")
	assert.Regexp(t, `launch_addr\.cpp:\d+: hipLaunchKernel: 0x[0-9a-f]+ is no kernel emud knows`, r.stderr)
}

// TestSymbols runs cxx/testdata/hip/symbols.cpp: a __constant__ table
// and a __device__ counter filled and read through hipMemcpyToSymbol,
// hipMemcpyFromSymbol (with an offset, and their async forms on a
// stream), hipGetSymbolAddress and hipGetSymbolSize; a copy past the
// symbol's end and a wrong kind are refused. Two rank threads loading
// the same table pass; loading different ones is refused, naming both
// GPUs (emud's GPUs share one copy of a symbol).
func TestSymbols(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "hip", "symbols.cpp"), "-O2", "-Wall", "-Werror")
	for _, words := range [][]string{{}, {"EMUD_RACE=1"}, {"ranks"}, {"conflict"}} {
		r := runFull(t, prog, words...)
		require.Equal(t, 0, r.code, "%v; stdout:\n%s\nstderr:\n%s", words, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "symbols: PASS", "%v", words)
		assert.NotContains(t, r.stderr, "data race")
	}
	r := runFull(t, prog)
	assert.Contains(t, r.stdout, "symbols: 0 of 64 words wrong, counter 32")
	assert.Contains(t, r.stderr, "hipMemcpyToSymbol: 16 bytes at offset 4 of a 16-byte symbol")
	assert.Contains(t, r.stderr, "kind 2: a copy to a symbol is hipMemcpyHostToDevice, hipMemcpyDeviceToDevice or hipMemcpyDefault")
	r = runFull(t, prog, "conflict")
	assert.Contains(t, r.stdout, "symbols conflict: rank 1: hipErrorInvalidValue")
	assert.Regexp(t, `the symbol at 0x[0-9a-f]+ was filled for GPU 0 \(.*symbols\.cpp:\d+\) with other bytes: emud's GPUs share one copy`, r.stderr)
}

// TestHostFunc runs cxx/testdata/hip/host_func.cpp: a host function on a
// stream (hipLaunchHostFunc) runs after the stream's kernel, seeing all
// it filled, and before the next kernel, which sees the flag it set; a
// callback (hipStreamAddCallback) gets the stream and hipSuccess. Two
// rounds pass, race-clean, with one digest a seed, and under emud
// explore's seed server.
func TestHostFunc(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "hip", "host_func.cpp"), "-O2", "-Wall", "-Werror")
	digests := map[string]bool{}
	for range 2 {
		r := runFull(t, prog, "EMUD_RACE=1", "EMUD_PERTURB=1", "EMUD_SEED=3", "EMUD_SUMMARY=1")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "host_func round 2: sum 264128 (want 264128), flag seen 2000, callbacks 2")
		assert.Contains(t, r.stdout, "host_func: PASS")
		assert.NotContains(t, r.stderr, "data race")
		digests[digestOf(t, r.stderr)] = true
	}
	assert.Len(t, digests, 1, "one digest for the seed")
}

// TestGraphCapture runs cxx/testdata/hip/graph.cpp: a stream's kernel and
// async copy between hipStreamBeginCapture and hipStreamEndCapture are
// recorded, not run, and a stream that waits for an event recorded in
// the capture joins it (fork and join); each hipGraphLaunch runs the work
// in order with the arguments of the capture, race-clean; a synchronize
// of the capturing stream, an end by the joined stream, a second begin
// or end and a capture of the null stream are refused. The same graph launched on two streams
// with nothing between them races.
func TestGraphCapture(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "hip", "graph.cpp"), "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{}, {"EMUD_RACE=1"}} {
		r := runFull(t, prog, env...)
		require.Equal(t, 0, r.code, "%v; stdout:\n%s\nstderr:\n%s", env, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "graph: 0 of 256 words wrong after the graph's runs")
		assert.Contains(t, r.stdout, "graph: PASS")
		assert.NotContains(t, r.stderr, "data race")
		assert.Contains(t, r.stderr, "hipStreamSynchronize on a stream being captured: its work is in the graph")
		assert.Contains(t, r.stderr, "hipStreamEndCapture: the stream joined a capture another stream began: that stream ends it")
	}
	r := runFull(t, prog, "racy", "EMUD_RACE=1")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `by kernel "addTo" GPU 0 block \d+ wave 0 lane \d+ \(.*graph\.cpp:\d+`, r.stderr)
}
