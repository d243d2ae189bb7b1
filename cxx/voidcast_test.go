package cxx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRewriteVoidCasts(t *testing.T) {
	const kern = "__global__ void k(int* p, int n) {}\ntemplate <class T> __global__ void __launch_bounds__(256) tk(T x) {}\n"
	cases := []struct{ name, in, want string }{
		{"c cast", "hipLaunchKernel((const void*)k, g, b, args);",
			`hipLaunchKernel((const void*)::emud::kernel_addr(k, "k"), g, b, args);`},
		{"spaced, address of", "f((void *) &k);", `f((void *) ::emud::kernel_addr(&k, "k"));`},
		{"reinterpret_cast", "f(reinterpret_cast<const void*>(&k));",
			`f(reinterpret_cast<const void*>(::emud::kernel_addr(&k, "k")));`},
		{"template kernel", "cudaLaunchCooperativeKernel((void*)tk<float>, g, b, a);",
			`cudaLaunchCooperativeKernel((void*)::emud::kernel_addr(tk<float>, "tk<float>"), g, b, a);`},
		{"qualified, parenthesized", "p = (const void*)(ns::k);", `p = (const void*)::emud::kernel_addr((ns::k), "ns::k");`},
		{"after return", "return (void*)buf;", `return (void*)::emud::kernel_addr(buf, "buf");`},
		{"data pointer in a memcpy", "hipMemcpy((void*)dst, src, n, k);", `hipMemcpy((void*)::emud::kernel_addr(dst, "dst"), src, n, k);`},
		{"in a macro: named by address", "#define L(f) hipLaunchKernel((const void*)f, 1, 1, a)\n",
			"#define L(f) hipLaunchKernel((const void*)::emud::kernel_addr(f, nullptr), 1, 1, a)\n"},
		// Left as they are.
		{"parameter list", "void f(void*); typedef void (*fp)(void*); std::function<void(void*)> g;",
			"void f(void*); typedef void (*fp)(void*); std::function<void(void*)> g;"},
		{"sizeof", "n = sizeof(void*);", "n = sizeof(void*);"},
		{"postfix binds first", "(void*)a[1]; (void*)s.p; (void*)q->p; (void*)f(x); (void*)i++;",
			"(void*)a[1]; (void*)s.p; (void*)q->p; (void*)f(x); (void*)i++;"},
		{"a cast of a cast", "(void*)(uintptr_t)x;", "(void*)(uintptr_t)x;"},
		{"a comparison, not template arguments", "b = (void*)a < c;", "b = (void*)a < c;"},
		{"keywords", "(void*)this; (void*)nullptr; (void*)0;", "(void*)this; (void*)nullptr; (void*)0;"},
		{"void** and int*", "(void**)k; (int*)k;", "(void**)k; (int*)k;"},
		{"other directives", "#include <x.h>\n#if (void*)k\n#endif\n", "#include <x.h>\n#if (void*)k\n#endif\n"},
		{"dead branch", "#if 0\n(void*)k;\n#endif\n", "#if 0\n(void*)k;\n#endif\n"},
		{"a macro's name", "p = (void*)BASE_AT; q = (void*)NULL;", "p = (void*)BASE_AT; q = (void*)NULL;"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Rewrite([]byte(kern+c.in), "/src/a.cpp")
			require.NoError(t, err)
			s := strings.TrimPrefix(string(out), "#line 1 \"/src/a.cpp\"\n"+kern)
			assert.Equal(t, c.want, s)
		})
	}
}

func TestKernelNames(t *testing.T) {
	src := `__global__ void a(int);
extern "C" __global__ void __launch_bounds__(128, 2) b(float* x) {}
template <int N> __global__ __attribute__((noinline)) void c(int) {}
__global__ void [[gnu::cold]] d();
static __global__ void ns::e(int) {}
__device__ void notKernel(int);`
	assert.Equal(t, map[string]bool{"a": true, "b": true, "c": true, "d": true, "e": true}, kernelNames(lex([]byte(src))))
}
