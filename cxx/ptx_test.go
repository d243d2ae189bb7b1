package cxx

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRewritePTX: the inline PTX emud emulates becomes calls of
// ::emud::ptx with the operands in place and the memory order the
// instruction names, keeping the lines; anything else is a *PTXError
// naming the instruction.
func TestRewritePTX(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string // substrings of the rewritten source
		bad       string   // the instruction a *PTXError names
	}{
		{name: "red release", src: `asm volatile("red.release.sys.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");`,
			want: []string{"(void)::emud::ptx::rmw<uint64_t>(::emud::ptx::op_add, (uint64_t)(uintptr_t)(p), (uint64_t)(v), __ATOMIC_RELEASE"}},
		{name: "ld acquire", src: `asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(x) : "l"(p));`,
			want: []string{"(x) = (std::remove_reference_t<decltype(x)>)::emud::ptx::ld<uint32_t>((uint64_t)(uintptr_t)(p), __ATOMIC_ACQUIRE"}},
		{name: "st release", src: `__asm__ __volatile__("st.release.sys.global.s64 [%0], %1;" : : "l"(a + 1), "l"(f(2, 3)));`,
			want: []string{"::emud::ptx::st<int64_t>((uint64_t)(uintptr_t)(a + 1), (int64_t)(f(2, 3)), __ATOMIC_RELEASE"}},
		{name: "ld volatile", src: `asm("ld.volatile.global.b64 %0, [%1];" : "=l"(x) : "l"(p));`,
			want: []string{"::emud::ptx::ld<uint64_t>", "__ATOMIC_RELAXED"}},
		{name: "atom", src: `asm volatile("atom.acq_rel.gpu.global.exch.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(1));`,
			want: []string{"(old) = (std::remove_reference_t<decltype(old)>)::emud::ptx::rmw<uint32_t>(::emud::ptx::op_exch", "__ATOMIC_ACQ_REL"}},
		{name: "fence", src: `asm volatile("fence.acq_rel.sys;" ::: "memory");`, want: []string{"::emud::ptx::fence("}},
		{name: "membar", src: `asm volatile("membar.gl;");`, want: []string{"::emud::ptx::fence("}},
		{name: "compiler barrier", src: `asm volatile("" ::: "memory");`, want: []string{"(void)0;"}},
		{name: "nanosleep", src: `asm volatile("nanosleep.u32 %0;" :: "r"(100));`, want: []string{"(void)0"}},
		{name: "dead arch branch", src: "#if __CUDA_ARCH__ >= 900\nasm volatile(\"multimem.ld_reduce.global.add.f64 %0, [%1];\" : \"=d\"(r) : \"l\"(a));\n#endif\n",
			want: []string{"multimem.ld_reduce"}},
		{name: "live branch still checked", src: "#ifndef __CUDA_ARCH__\nasm volatile(\"bar.sync 0;\");\n#endif\n", bad: "bar.sync"},
		{name: "lines kept", src: "asm volatile(\"red.relaxed.gpu.global.add.u32 [%0], %1;\"\n :: \"l\"(p),\n \"r\"(1));\nint after;",
			want: []string{"__ATOMIC_RELAXED", "\n\n;\nint after;"}},
		{name: "not asm", src: `int asmx = 1; void f() { asm_helper("x"); }`, want: []string{`asm_helper("x")`}},
		{name: "unknown", src: `asm volatile("bar.sync 0;");`, bad: "bar.sync"},
		{name: "several", src: `asm volatile("{ .reg .pred p; setp.eq.u32 p, %0, 0; }" :: "r"(x));`, bad: ".reg .pred p"},
		{name: "ld release", src: `asm("ld.release.gpu.u32 %0, [%1];" : "=r"(x) : "l"(p));`, bad: "ld.release.gpu.u32"},
		{name: "red acquire", src: `asm("red.acquire.gpu.global.add.u32 [%0], %1;" :: "l"(p), "r"(1));`, bad: "red.acquire.gpu.global.add.u32"},
		{name: "float", src: `asm("red.relaxed.gpu.global.add.f32 [%0], %1;" :: "l"(p), "f"(1.0f));`, bad: "red.relaxed.gpu.global.add.f32"},
		{name: "bad operand", src: `asm("st.relaxed.gpu.u32 [%0], %5;" :: "l"(p), "r"(1));`, bad: "st.relaxed.gpu.u32"},
		{name: "not an address", src: `asm("st.relaxed.gpu.u32 %0, %1;" :: "l"(p), "r"(1));`, bad: "st.relaxed.gpu.u32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := RewritePTX([]byte(c.src), "k.cu")
			if c.bad != "" {
				var pe *PTXError
				require.True(t, errors.As(err, &pe), "want a *PTXError, got %v", err)
				assert.Equal(t, c.bad, pe.Instr)
				assert.Equal(t, "k.cu", pe.File)
				assert.Contains(t, pe.Error(), "docs/cuda.md")
				return
			}
			require.NoError(t, err)
			for _, w := range c.want {
				assert.Contains(t, string(out), w)
			}
			assert.Equal(t, strings.Count(c.src, "\n"), strings.Count(string(out), "\n"), "lines kept")
		})
	}
}

// FuzzRewritePTX: the PTX rewrite never panics, and what it accepts
// keeps the source's line count.
func FuzzRewritePTX(f *testing.F) {
	f.Add(`asm volatile("red.release.sys.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");`)
	f.Add(`asm("ld.acquire.gpu.u32 %0, [%1];" : "=r"(x) : "l"(p));`)
	f.Add(`asm volatile("atom.add.u32 %0, [%1], %2;" : "=r"(o) : "l"(p), "r"(1))`)
	f.Add(`asm("st.relaxed.gpu.u32 [%9], %0" :: "r"(1)`)
	f.Add(`asm(:::)`)
	f.Fuzz(func(t *testing.T, src string) {
		out, err := RewritePTX([]byte(src), "f.cu")
		if err == nil {
			assert.Equal(t, strings.Count(src, "\n"), strings.Count(string(out), "\n"))
		}
	})
}

// TestUnknownPTXFailsBuild: a CUDA source with inline PTX emud does not
// emulate fails to build, naming the file, line and instruction; a HIP
// source's asm is left to the compiler.
func TestUnknownPTXFailsBuild(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.cu")
	require.NoError(t, os.WriteFile(file, []byte("#include <cuda_runtime.h>\n__global__ void k() {\n  asm volatile(\"bar.sync 0;\");\n}\n"), 0o644))
	var log bytes.Buffer
	err := Run([]string{"-c", file, "-o", filepath.Join(dir, "bad.o")}, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
	require.Error(t, err)
	assert.Contains(t, err.Error()+log.String(), `bad.cu:3: inline PTX "bar.sync": the instruction is not emulated (docs/cuda.md lists the instructions emud emulates)`)
}
