package cxx

import (
	"bytes"
	"os"
	"path/filepath"
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

// TestUnsupportedCUDACalls: a CUDA call emud does not emulate is a
// compile error at its line naming it and docs/cuda.md.
func TestUnsupportedCUDACalls(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "unsupported.cu")
	src := "#include <cuda_runtime.h>\n" +
		"void f() { float* p; (void)cudaMallocManaged(&p, 64); }\n" +
		"void g() { cudaStream_t s = nullptr; (void)cudaStreamBeginCapture(s, 0); }\n"
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	var log bytes.Buffer
	err := Run([]string{"-c", "-fmax-errors=0", file, "-o", filepath.Join(dir, "unsupported.o")},
		Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
	require.Error(t, err, "calls emud does not emulate must not build")
	for _, call := range []string{"cudaMallocManaged", "cudaStreamBeginCapture"} {
		assert.Contains(t, log.String(), call+" is not supported by emud (docs/cuda.md lists the CUDA calls emud emulates)")
	}
}
