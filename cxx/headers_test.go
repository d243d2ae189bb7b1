package cxx

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShadowHeaders: the headers a source includes from its own
// directories are copied rewritten when they need it (a launch, a
// __shared__ declaration), and so are the headers on the way to them;
// the copies' quote includes of files beside the originals become
// absolute, the source's directives point at the copies, headers that
// need nothing and emud's own are left alone, and a source whose headers
// need nothing is returned as it was.
func TestShadowHeaders(t *testing.T) {
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc")
	stop := filepath.Join(dir, "emud", "include")
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(dir, "src", "launch.h"), "#pragma once\n#include \"plain.h\"\n#include \"sub/shared.h\"\ntemplate <class K> void go(K k) { k<<<1, 2>>>(); }\n")
	write(filepath.Join(dir, "src", "plain.h"), "#pragma once\nint plain;\n")
	write(filepath.Join(dir, "src", "sub", "shared.h"), "#pragma once\n__global__ void s() { __shared__ int x[4]; x[0] = 1; }\n")
	write(filepath.Join(dir, "src", "via.h"), "#pragma once\n#include <deep.h>\n")
	write(filepath.Join(inc, "deep.h"), "#pragma once\n#include \"cuda_runtime.h\"\ninline void d() { k<<<1, 1>>>(); }\n")
	write(filepath.Join(stop, "cuda_runtime.h"), "k<<<\n") // emud's: never followed (it would not rewrite)
	write(filepath.Join(dir, "src", "alone.h"), "int alone;\n")
	src := []byte("#include \"launch.h\"\n#include \"alone.h\"\n  #  include \"via.h\"\n#include <vector>\nint main() {}\n")
	path := filepath.Join(dir, "src", "main.cu")
	d := searchPath{quote: []string{filepath.Join(dir, "src")}, both: []string{stop, inc}, stop: []string{stop}}
	shadow := filepath.Join(dir, "shadow")

	out, err := shadowHeaders(src, path, d, true, shadow)
	require.NoError(t, err)
	copyOf := func(p string) string { return filepath.Join(shadow, p) }
	lines := strings.Split(string(out), "\n")
	assert.Equal(t, `#include "`+copyOf(filepath.Join(dir, "src", "launch.h"))+`"`, lines[0])
	assert.Equal(t, `#include "alone.h"`, lines[1], "a header that needs nothing stays")
	assert.Equal(t, `  #  include "`+copyOf(filepath.Join(dir, "src", "via.h"))+`"`, lines[2], "on the way to one that does")
	assert.Equal(t, "#include <vector>", lines[3])
	assert.Equal(t, strings.Count(string(src), "\n"), strings.Count(string(out), "\n"), "lines kept")

	read := func(p string) string {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return string(b)
	}
	launch := read(copyOf(filepath.Join(dir, "src", "launch.h")))
	assert.True(t, strings.HasPrefix(launch, `#line 1 "`+filepath.Join(dir, "src", "launch.h")+`"`), launch)
	assert.Contains(t, launch, `#include "`+filepath.Join(dir, "src", "plain.h")+`"`, "beside the original: absolute")
	assert.Contains(t, launch, `#include "`+copyOf(filepath.Join(dir, "src", "sub", "shared.h"))+`"`)
	assert.Contains(t, launch, "::emud::launch(")
	assert.Contains(t, read(copyOf(filepath.Join(dir, "src", "sub", "shared.h"))), "shared_t<int[4]>")
	assert.Contains(t, read(copyOf(filepath.Join(inc, "deep.h"))), "::emud::launch(")
	assert.Contains(t, read(copyOf(filepath.Join(inc, "deep.h"))), `#include "cuda_runtime.h"`, "emud's header is found by the search as before")
	for _, p := range []string{filepath.Join(dir, "src", "plain.h"), filepath.Join(dir, "src", "alone.h"), filepath.Join(stop, "cuda_runtime.h")} {
		_, err := os.Stat(copyOf(p))
		assert.True(t, os.IsNotExist(err), "%s needs no copy", p)
	}

	// Nothing to rewrite: the source comes back as it was, no copies.
	plain := []byte("#include \"plain.h\"\n#include \"alone.h\"\n")
	out, err = shadowHeaders(plain, path, d, false, filepath.Join(dir, "shadow2"))
	require.NoError(t, err)
	assert.Equal(t, plain, out)
	_, err = os.Stat(filepath.Join(dir, "shadow2"))
	assert.True(t, os.IsNotExist(err))

	// A header the rewrite refuses names itself.
	write(filepath.Join(dir, "src", "bad.h"), "void f() { k<<<1, 1>>>; }\n")
	_, err = shadowHeaders([]byte("#include \"bad.h\"\n"), path, d, false, filepath.Join(dir, "shadow3"))
	assert.ErrorContains(t, err, "bad.h:1: kernel launch: no >>>( after <<<")
}

// TestHeaderLaunchBuilds: a program whose launches and __shared__
// buffers are in its own header builds and runs, compiler messages name
// the header, and -MD's dependency file names the header, not its copy.
func TestHeaderLaunchBuilds(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k.h"), []byte("#include <hip/hip_runtime.h>\n"+
		"__global__ void twice(int* p) {\n  __shared__ int s[64];\n  s[threadIdx.x] = 2 * p[threadIdx.x];\n  __syncthreads();\n  p[threadIdx.x] = s[threadIdx.x];\n}\n"+
		"template <class T> void run(T* p, int n) { twice<<<1, n>>>(p); }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.cpp"), []byte("#include <cstdio>\n#include \"k.h\"\n"+
		"int main() {\n  int* d;\n  int h[64];\n  for (int i = 0; i < 64; i++) h[i] = i;\n  hipMalloc(&d, sizeof h);\n  hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice);\n"+
		"  run(d, 64);\n  hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost);\n  int bad = 0;\n  for (int i = 0; i < 64; i++) bad += h[i] != 2 * i;\n"+
		"  std::printf(\"header launch: %d wrong\\n\", bad);\n  return bad;\n}\n"), 0o644))
	var log bytes.Buffer
	obj := filepath.Join(dir, "main.o")
	require.NoError(t, Run([]string{"-c", "-MD", filepath.Join(dir, "main.cpp"), "-o", obj}, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}), log.String())
	dep, err := os.ReadFile(filepath.Join(dir, "main.d"))
	require.NoError(t, err)
	assert.Contains(t, string(dep), filepath.Join(dir, "k.h"))
	assert.NotContains(t, string(dep), ".emud-headers")
	prog := filepath.Join(dir, "main")
	require.NoError(t, Run([]string{obj, "-o", prog}, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}), log.String())
	r := runProgram(t, runOpts{}, prog)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "header launch: 0 wrong")

	// An error in the header is reported at the header's own line.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k.h"), []byte("#include <hip/hip_runtime.h>\n__global__ void twice(int* p) { p[0] = 1; }\n"+
		"template <class T> void run(T* p, int n) { twice<<<1, n>>>(p, undeclared_thing); }\n"), 0o644))
	log.Reset()
	require.Error(t, Run([]string{"-c", filepath.Join(dir, "main.cpp"), "-o", obj}, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}))
	assert.Contains(t, log.String(), filepath.Join(dir, "k.h")+":3:")
	assert.Contains(t, log.String(), "undeclared_thing")
}

// FuzzShadowHeaders: whatever a source's text, following its includes
// never panics, and what it returns keeps the source's lines (only
// directives' names change).
func FuzzShadowHeaders(f *testing.F) {
	dir := f.TempDir()
	for name, text := range map[string]string{"a.h": "#include \"b.h\"\nvoid f() { k<<<1, 1>>>(); }\n", "b.h": "#include <c.h>\n", "c.h": "int c;\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for _, s := range []string{"#include \"a.h\"\n", "#include <c.h>\n#include \"b.h\"", "#  include \"a.h\" // x\n#include \"none.h\"\n", "#include \"\n", "#include <a.h\n"} {
		f.Add(s)
	}
	d := searchPath{quote: []string{dir}, both: []string{dir}}
	n := 0
	f.Fuzz(func(t *testing.T, src string) {
		n++
		out, err := shadowHeaders([]byte(src), filepath.Join(dir, "main.cu"), d, n%2 == 0, filepath.Join(dir, "shadow"))
		if err == nil && strings.Count(string(out), "\n") != strings.Count(src, "\n") {
			t.Fatalf("line count changed: %q -> %q", src, out)
		}
	})
}
