package cxx

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCudaProgram builds examples/cxx/cuda/warp_reduce.cu, a CUDA program
// (warp shuffles and a ballot in warps of 32, cuda::atomic_ref, streams,
// events, an error and cudaGetLastError): it passes, the same seed gives
// the same digest twice, and with the race detector on it passes clean.
func TestCudaProgram(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "examples", "cxx", "cuda", "warp_reduce.cu")
	prog := buildExample(t, src, "-O2", "-Wall", "-Werror")
	want := ""
	for run := range 2 {
		out, sum, code := runExample(t, prog, "EMUD_SUMMARY=1")
		require.Equal(t, 0, code, "run %d\nstdout:\n%s\nstderr:\n%s", run, out, sum)
		assert.Contains(t, out, "warp_reduce: PASS (device 1, 16 warps of 32)")
		if want == "" {
			want = sum
		}
		assert.Equal(t, want, sum, "run %d: another digest", run)
	}
	out, report, code := runExample(t, prog, "EMUD_RACE=1")
	require.Equal(t, 0, code, "EMUD_RACE=1\nstdout:\n%s\nstderr:\n%s", out, report)
	assert.Contains(t, out, "warp_reduce: PASS")
}

// TestCudaCoopGroups builds examples/cxx/cuda/coop_groups.cu (a block
// maximum by thread_block_tile<32> shuffles and ballots, and the block's
// sync): it passes, and passes race-clean.
func TestCudaCoopGroups(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "cuda", "coop_groups.cu"), "-O2", "-Wall", "-Werror")
	for _, env := range []string{"EMUD_SEED=2", "EMUD_RACE=1"} {
		out, report, code := runExample(t, prog, env)
		require.Equal(t, 0, code, "%s\nstdout:\n%s\nstderr:\n%s", env, out, report)
		assert.Contains(t, out, "coop_groups: PASS")
	}
}

// TestCudaPTXProgram builds examples/cxx/cuda/ptx_flags.cu, whose kernel
// hands a buffer from one block to another with st.release and a
// polled ld.acquire, and counts with red.release.sys.global.add.u64 and
// atom.add: it passes, and the race detector finds the release/acquire
// pair orders the buffer (no race).
func TestCudaPTXProgram(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "cuda", "ptx_flags.cu"), "-O2", "-Wall", "-Werror")
	for _, env := range []string{"EMUD_SEED=1", "EMUD_RACE=1"} {
		out, report, code := runExample(t, prog, env)
		require.Equal(t, 0, code, "%s\nstdout:\n%s\nstderr:\n%s", env, out, report)
		assert.Contains(t, out, "ptx_flags: PASS")
	}
}

// TestUnsupportedCUDACalls: a CUDA call emud does not emulate, and an
// NCCL device type or call not built in C++ yet (ncclGin::get), is a
// compile error naming it and docs/cuda.md.
func TestUnsupportedCUDACalls(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := "#include <cuda_runtime.h>\n#include <cooperative_groups.h>\n" +
		"void f() { float* p; (void)cudaMalloc3D(&p, 64); }\n" +
		"void g() { (void)cudaMemPrefetchAsync(nullptr, 64, 0); }\n" +
		"void h() { cooperative_groups::this_multi_grid(); }\n" +
		"#include <nccl_device.h>\n" +
		"void i(ncclDevComm dc, ncclWindow_t w) { ncclGin gin{dc, 0}; gin.get(ncclTeamWorld(dc), 0, w, 0, w, 0, 8); }\n"
	log := compileFails(t, root, "unsupported.cu", src, "calls emud does not emulate must not build")
	for _, call := range []string{"cudaMalloc3D", "cudaMemPrefetchAsync"} {
		assert.Contains(t, log, call+" is not supported by emud (docs/cuda.md lists the CUDA calls emud emulates)")
	}
	assert.Contains(t, log, "cooperative_groups::this_multi_grid is not supported by emud (docs/cuda.md lists what is)")
	assert.Contains(t, log, "emud: ncclGin::get is not emulated yet (docs/cuda.md)")
}

// TestDeviceMath: the device math and vector types CUDA and HIP kernels
// use beyond C++ (rsqrtf, __fdividef, __expf, bit casts, uint4, float4,
// make_*, __lanemask_lt; cxx/testdata/cuda/device_math.cu) build and
// compute what <cmath> does, as CUDA and as HIP, and as HIP clang's
// scoped __hip_atomic_fetch_max/min/or/xor/and/sub and
// compare_exchange_weak fold 64 lanes' values. Before, rsqrtf was
// undeclared, so each of NCCL's four RMS-norm kernel-fusion examples
// failed to build, and __hip_atomic_fetch_max each of MORI's GDA tests.
func TestDeviceMath(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "cxx", "testdata", "cuda", "device_math.cu")
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"cuda", []string{"-O2", "-Wall", "-Werror"}},
		{"hip", []string{"-O2", "-Wall", "-Werror", "-x", "hip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, report, code := runExample(t, buildExample(t, src, c.flags...), "EMUD_SEED=1")
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Contains(t, out, "device_math: PASS")
		})
	}
}

// TestNcclRefusedCallsNameThemselves: a program calling what emud does
// not emulate (ncclSignal, ncclPutSignal, ncclGroupSimulateEnd,
// ncclCommGrow) fails to build with the
// refused calls' own messages, not with undeclared ncclFloat or
// ncclConfig_t, while its ncclCommSplit with a configuration builds; and the LSA multimem pointer calls are declared (NCCL's
// multimem example checks multimemSupport first and stops, as on a GPU
// without multimem).
func TestNcclRefusedCallsNameThemselves(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := "#include <nccl.h>\n#include <nccl_device.h>\n" +
		"void f(ncclComm_t c, ncclComm_t* out, float* p, cudaStream_t s) {\n" +
		"  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;\n  config.CTAPolicy = 2;\n" +
		"  (void)ncclCommSplit(c, 0, 0, out, &config);\n" +
		"  (void)ncclSignal(1, 0, 0, 0, c, s);\n" +
		"  (void)ncclPutSignal(p, 4, ncclFloat, 1, c, s);\n" +
		"  ncclSimInfo_t si = NCCL_SIM_INFO_INITIALIZER;\n  (void)ncclGroupSimulateEnd(&si);\n" +
		"  (void)ncclCommGrow(c, 4, nullptr, -1, out, &config);\n}\n" +
		"__global__ void k(ncclWindow_t w, ncclDevComm dc) { *(float*)ncclGetLsaMultimemPointer(w, 0, dc) = 1; }\n" +
		"void g(ncclWindow_t w) { void* p; (void)ncclGetLsaMultimemDevicePointer(w, 0, &p); }\n"
	log := compileFails(t, root, "collectives.cu", src, "calls emud does not emulate must not build")
	for _, call := range []string{"ncclSignal", "ncclPutSignal", "ncclGroupSimulateEnd", "ncclCommGrow"} {
		assert.Contains(t, log, call+" is not supported by emud (docs/cuda.md lists the NCCL calls emud emulates)")
	}
	assert.NotContains(t, log, "ncclCommSplit")
	assert.NotContains(t, log, "not declared")
	assert.NotContains(t, log, "does not name a type")
	assert.Equal(t, 4, strings.Count(log, "error: static assertion failed"), "one error a refused call:\n%s", log)
}

// TestCudaCallsDocumented: docs/cuda.md names, as a code span, every
// CUDA and NCCL call emud's cuda_runtime.h, nccl.h, nccl_device.h and
// nccl_device/gin.h declare, and every call they refuse by name, so the page stays the
// whole subset.
func TestCudaCallsDocumented(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	read := func(p ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{root}, p...)...))
		require.NoError(t, err)
		return string(b)
	}
	page := read("docs", "cuda.md")
	for _, c := range []struct {
		header string
		call   *regexp.Regexp
	}{
		{read("include", "cuda_runtime.h"), regexp.MustCompile(`\b(cuda[A-Z][A-Za-z0-9_]*)\s*\(`)},
		{read("include", "cuda_runtime.h"), regexp.MustCompile(`(?m)^EMUD_CUDA_UNSUPPORTED\((cuda\w+)\)`)},
		{read("include", "nccl.h") + read("include", "nccl_device.h") + read("include", "nccl_device", "cft.h"), regexp.MustCompile(`\b(nccl[A-Z][A-Za-z0-9_]*)\s*[({]`)},
		{read("include", "nccl.h"), regexp.MustCompile(`(?m)^EMUD_NCCL_UNSUPPORTED\((nccl\w+)\)`)},
		{read("include", "nccl_device", "gin.h"), regexp.MustCompile(`\b(nccl[A-Z][A-Za-z0-9_]*)\s*[({]`)},
	} {
		names := map[string]bool{}
		for _, m := range c.call.FindAllStringSubmatch(c.header, -1) {
			names[m[1]] = true
		}
		require.NotEmpty(t, names, "the header reader found calls (%s)", c.call)
		var missing []string
		for n := range names {
			if !strings.Contains(page, "`"+n+"`") {
				missing = append(missing, n)
			}
		}
		sort.Strings(missing)
		assert.Empty(t, missing, "docs/cuda.md does not name these (%s)", c.call)
	}
}

// TestIsCUDA: .cu sources and -x cuda are CUDA; -x hip before a .cu
// source keeps it HIP.
func TestIsCUDA(t *testing.T) {
	for _, c := range []struct {
		s    source
		want bool
	}{
		{source{path: "k.cu"}, true},
		{source{path: "k.cu", lang: "hip"}, false},
		{source{path: "k.cpp", lang: "cuda"}, true},
		{source{path: "k.cpp"}, false},
		{source{path: "k.hip"}, false},
	} {
		assert.Equal(t, c.want, isCUDA(c.s), "%+v", c.s)
	}
}

// compileFails compiles src (as the file name) with every error shown,
// requires the compile to fail (why says why it must) and returns what
// the compiler printed.
func compileFails(t *testing.T, root, name, src, why string) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	var log bytes.Buffer
	err := Run([]string{"-c", "-fmax-errors=0", file, "-o", filepath.Join(dir, name+".o")},
		Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
	require.Error(t, err, why)
	return log.String()
}

// TestCudaMoreCalls: the CUDA runtime calls a harness makes beyond the
// basic ones (cxx/testdata/cuda/more_calls.cu), over the HIP layer's
// emulation with CUDA's names, enums and figures, each result checked in
// the program: it passes, race-clean.
func TestCudaMoreCalls(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, filepath.Join("testdata", "cuda", "more_calls.cu"), "-O2", "-Wall", "-Werror")
	for _, env := range []string{"EMUD_SEED=1", "EMUD_RACE=1"} {
		r := runFull(t, prog, env)
		require.Equal(t, 0, r.code, "%s; stdout:\n%s\nstderr:\n%s", env, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "cuda more_calls: PASS")
		assert.NotContains(t, r.stderr, "data race")
	}
}

// TestCudaDriverCallsRefused: cuda.h gives the driver API's version and
// types, and a driver call fails the build with its own name.
func TestCudaDriverCallsRefused(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := "#include <cuda.h>\nstatic_assert(CUDA_VERSION >= 12000, \"version\");\n" +
		"int f() { CUdevice d; CUdeviceptr p = 0; (void)p; return (int)cuDeviceGet(&d, 0); }\n"
	log := compileFails(t, root, "driver.cu", src, "a driver call must not build")
	assert.Contains(t, log, "cuDeviceGet: emud emulates CUDA's runtime API, not the driver's (docs/cuda.md)")
	assert.Equal(t, 1, strings.Count(log, "error: static assertion failed"), log)
}

// TestPerThreadStream runs testdata/streams/per_thread.cu: each thread's
// cudaStreamPerThread is a stream of its own that the legacy stream
// (cudaStreamLegacy, the null stream) waits for and that waits for it, so
// the ordered run is right and clean under the race detector, and
// destroying either default stream is refused; two threads' per-thread
// streams do not order each other, so the planted twin, one thread's
// kernel reading what another's writes, is a race naming both kernels.
func TestPerThreadStream(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "testdata/streams/per_thread.cu", "-O2", "-Wall", "-Werror")
	r := runFull(t, prog, "EMUD_RACE=1", "ordered")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "per_thread ordered: 0 wrong")
	assert.NotContains(t, r.stderr, "race")
	assert.Contains(t, r.stderr, "hipStreamDestroy (host main thread): stream 0x2: not a stream hipStreamCreate made (the default streams are not destroyed)")
	r = runFull(t, prog, "EMUD_RACE=1", "cross")
	require.Equal(t, 5, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `data race on LSA memory .*\n\s+store \(write\) of \[[^)]*\) by kernel "fill" GPU 0 .*\n\s+load \(read\) of \[[^)]*\) by kernel "copyPlusOne" GPU 0`, r.stderr)
}
