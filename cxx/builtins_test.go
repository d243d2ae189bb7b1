package cxx

import (
	"bytes"
	"os"
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
// gridDim on the host) under cuda_runtime.h. Three builds and seven
// runs of programs that Go's detector does not see: plainLine.
func TestBuiltinNames(t *testing.T) {
	plainLine(t)
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

// TestBuiltinNameAtFileScope: a declaration of a built-in's name in the
// global namespace itself conflicts with the built-in, as it does under
// hipcc and nvcc; the compiler's error names the declaration and the
// built-in's (hip_runtime.h). In a namespace of the program's it is
// another name and compiles.
func TestBuiltinNameAtFileScope(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	for _, c := range []struct{ name, decl, builtin string }{
		{"dim3 blockDim", "dim3 blockDim(16, 16);", "blockDim"},
		{"int threadIdx", "int threadIdx = 3;", "threadIdx"},
		{"extern gridDim", "extern dim3 gridDim;", "gridDim"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "#include <hip/hip_runtime.h>\n" + c.decl + "\nint main() { return 0; }\n"
			log := compileFails(t, root, "scope.cpp", src, "a global "+c.builtin+" conflicts with the built-in")
			assert.Regexp(t, `scope\.cpp:2:\d+: error: conflicting declaration .*`+c.builtin, log)
			assert.Regexp(t, `hip_runtime\.h:\d+:\d+: note: previous declaration as .const uint3 `+c.builtin, log)
		})
	}
	t.Run("in a namespace", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "ns.cpp")
		src := "#include <hip/hip_runtime.h>\nnamespace cfg { dim3 blockDim(16, 16); int threadIdx = 3; }\n" +
			"unsigned f() { return cfg::blockDim.x + (unsigned)cfg::threadIdx + blockDim.x; }\n"
		require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
		var log bytes.Buffer
		err := Run([]string{"-c", "-Wall", "-Werror", file, "-o", filepath.Join(dir, "ns.o")},
			Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
		require.NoError(t, err, log.String())
	})
}
