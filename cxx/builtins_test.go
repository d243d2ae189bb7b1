package cxx

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuiltinNames builds cxx/testdata/builtins/names.cpp with -Wall
// -Werror at -O0 and -O2: host variables (an int and dim3s) named
// blockDim and gridDim launching with <<<>>> and hipLaunchKernelGGL,
// parameters, members of a user's header's struct, a kernel's local
// blockDim and a lambda's gridDim parameter, beside the built-ins read
// through printf, std::min, auto and the AMDGCN builtins. Before the
// built-ins were objects the program did not compile (the macros turned
// `int blockDim` into a cast). It passes, prints the one lane's line
// with the built-ins' values, and the same seed gives the same digest;
// race-clean. names.cu is the CUDA tutorials' shape (dim3 blockDim,
// gridDim on the host) under cuda_runtime.h.
func TestBuiltinNames(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "cxx", "testdata", "builtins", "names.cpp")
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			prog := buildExample(t, src, opt, "-Wall", "-Werror")
			want := ""
			for _, env := range []string{"EMUD_SUMMARY=1", "EMUD_SUMMARY=1", "EMUD_RACE=1"} {
				out, sum, code := runExample(t, prog, env)
				require.Equal(t, 0, code, "%s\nstdout:\n%s\nstderr:\n%s", env, out, sum)
				assert.Contains(t, out, "names: lane 3 of block 1 (blockDim 64, gridDim 2)\n")
				assert.Contains(t, out, "names: PASS\n")
				if env != "EMUD_SUMMARY=1" {
					continue
				}
				if want == "" {
					want = sum
				}
				assert.Equal(t, want, sum, "another digest on the same seed")
			}
		})
	}
	t.Run("cuda", func(t *testing.T) {
		prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "builtins", "names.cu"), "-O2", "-Wall", "-Werror")
		out, report, code := runExample(t, prog, "EMUD_SEED=3")
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
		assert.Contains(t, out, "names_cu: thread (2, 5) of block (1, 1), warpSize 32\n")
		assert.Contains(t, out, "names_cu: PASS\n")
	})
}
