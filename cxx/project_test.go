package cxx

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// projectDir is the example project that CMake and make build.
const projectDir = "../examples/cxx/cmake-project"

// runTool runs name in dir with env added and returns its output; a
// failure fails the test with that output.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*exampleTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "%s %s\n%s", name, strings.Join(args, " "), out.String())
	return out.String()
}

// tool is tools/emud-c++ run once (--version), so that the emud it
// builds from this checkout is there before the project tests, which run
// in parallel, call it: each would build its own otherwise.
var tool struct {
	once sync.Once
	out  string
	err  error
}

// toolEnv makes tools/emud-c++ use this checkout and the emulator library
// the tests built (its freshness check then finds it up to date).
func toolEnv(t *testing.T) (root string, env []string) {
	t.Helper()
	root = setupCxx(t)
	env = []string{"EMUD_ROOT=" + root}
	tool.once.Do(func() {
		cmd := exec.Command(filepath.Join(root, "tools", "emud-c++"), "--version")
		cmd.Env = append(os.Environ(), env...)
		b, err := cmd.CombinedOutput()
		tool.out, tool.err = string(b), err
	})
	require.NoError(t, tool.err, "tools/emud-c++ --version:\n%s", tool.out)
	return root, env
}

// TestCMakeProject builds examples/cxx/cmake-project with
// cmake/emud.cmake (CMake's compiler identification and ABI probes
// through tools/emud-c++, a static library of kernels, a test executable)
// and runs it under ctest, with the kernels as CXX and as LANGUAGE HIP
// (hip::host/hip::device linked, as MORI's tests/cpp/cco marks them).
// Skipped where cmake or a C++ compiler is missing (CI installs both).
func TestCMakeProject(t *testing.T) {
	needCxx(t)
	if _, err := exec.LookPath("cmake"); err != nil {
		t.Skip("cmake is not installed")
	}
	root, env := toolEnv(t)
	t.Parallel()
	src, err := filepath.Abs(projectDir)
	require.NoError(t, err)
	for _, c := range []struct{ name, hip string }{{"cxx", "OFF"}, {"hip_language", "ON"}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			build := t.TempDir()
			out := runTool(t, build, env, "cmake", "-S", src, "-B", build, "-DKERNELS_AS_HIP="+c.hip,
				"-DCMAKE_TOOLCHAIN_FILE="+filepath.Join(root, "cmake", "emud.cmake"))
			assert.Contains(t, out, "The CXX compiler identification is GNU")
			if c.hip == "ON" {
				assert.Contains(t, out, "The HIP compiler identification is")
			}
			runTool(t, build, env, "cmake", "--build", build)
			out = runTool(t, build, env, "ctest", "--output-on-failure")
			assert.Contains(t, out, "100% tests passed, 0 tests failed out of 1")
		})
	}
}

// TestMakefileProject builds the same project with its Makefile and
// CXX=tools/emud-c++: each source compiled with -c and -MMD, the kernels
// archived, a plain g++ object linked beside emud's; `make check` runs the
// test. The dependency files name the user's sources, and a second make
// has nothing to do.
func TestMakefileProject(t *testing.T) {
	needCxx(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root, env := toolEnv(t)
	t.Parallel()
	out := t.TempDir()
	cxx := filepath.Join(root, "tools", "emud-c++")
	host := "g++"
	if _, err := exec.LookPath(host); err != nil {
		host = "clang++"
	}
	got := runTool(t, projectDir, env, "make", "CXX="+cxx, "HOSTCXX="+host, "OUT="+out, "check")
	assert.Contains(t, got, "test_kernels: PASS")
	d, err := os.ReadFile(filepath.Join(out, "kernels.d"))
	require.NoError(t, err)
	rule := strings.Join(strings.Fields(strings.ReplaceAll(string(d), "\\\n", " ")), " ")
	assert.True(t, strings.HasPrefix(rule, out+"/kernels.o: kernels.cpp include/kernels.hpp "), "the depfile's rule:\n%s", d)
	assert.Contains(t, string(d), "include/kernels.hpp")
	assert.NotContains(t, string(d), "emud-cxx-", "the rewritten copy's path leaked into the depfile")
	got = runTool(t, projectDir, env, "make", "CXX="+cxx, "HOSTCXX="+host, "OUT="+out)
	assert.Contains(t, got, "Nothing to be done")
}

// TestOffloadArch: --offload-arch bakes EMUD_ARCH into the program (a
// gfx1250 build runs wave32 kernels), at compile (-c) or at link, the
// link's winning; the environment still overrides it.
func TestOffloadArch(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := t.TempDir()
	src := filepath.Join("testdata", "arch", "arch.cpp")
	obj := filepath.Join(dir, "arch.o")
	run := func(args ...string) {
		var log bytes.Buffer
		require.NoError(t, Run(args, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}), log.String())
	}
	run("-c", "--offload-arch=gfx1250", src, "-o", obj)
	for _, c := range []struct {
		name string
		link []string
		env  string
		want string
	}{
		{"compiled for gfx1250", nil, "", "arch: warpSize 32"},
		{"the environment wins", nil, "EMUD_ARCH=gfx950", "arch: warpSize 64"},
		{"the link's arch wins", []string{"--offload-arch=gfx950"}, "", "arch: warpSize 64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			run(append(append([]string{obj}, c.link...), "-o", prog)...)
			var env []string
			if c.env != "" {
				env = append(env, c.env)
			}
			out, report, code := runExample(t, prog, env...)
			require.Equal(t, 0, code, report)
			assert.Contains(t, out, c.want)
		})
	}
}

// TestDepsAndPreprocess: -M, -MD in a one-step build and -E name the
// user's source, never the rewritten copy in the driver's temporary
// directory, and -S writes assembly beside it.
func TestDepsAndPreprocess(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "k 1.hip") // a space: escaped in make rules
	require.NoError(t, os.WriteFile(src, []byte("#include <hip/hip_runtime.h>\n__global__ void k(int* p) { *p = 1; }\nvoid go(int* p) { k<<<1, 1>>>(p); }\n"), 0o644))
	run := func(args ...string) string {
		var out, log bytes.Buffer
		require.NoError(t, Run(args, Options{Root: root, Library: lib.path, Stdout: &out, Stderr: &log}), log.String())
		return out.String()
	}
	deps := run("-MM", src)
	assert.True(t, strings.HasPrefix(deps, `k\ 1.o: `+strings.ReplaceAll(src, " ", `\ `)), "the -MM rule:\n%s", deps)
	assert.NotContains(t, deps, "emud-cxx-")
	pre := run("-E", src)
	assert.Contains(t, pre, `"`+src+`"`, "-E's line markers name the source")
	assert.Contains(t, pre, "::emud::launch(", "-E shows the rewritten launch")
	asm := filepath.Join(dir, "k.s")
	run("-S", src, "-o", asm)
	b, err := os.ReadFile(asm)
	require.NoError(t, err)
	assert.Contains(t, string(b), ".text")
}
