package cxx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rewriter honours preprocessor conditionals: a dead branch is left
// as it is (the compiler never sees it), each branch of an unknown
// condition is rewritten, and a launch split across branches is followed
// along each branch. Before, every line was rewritten as one text, so a
// half launch under #if 0 or a launch head per branch failed to rewrite.
func TestRewriteConditionals(t *testing.T) {
	const launch = "::emud::launch(::emud::cfg("
	for _, c := range []struct {
		name, in  string
		launches  int    // rewritten launches
		has       string // in the output
		unchanged bool   // the output is the input
	}{
		{name: "if 0 launch", in: "#if 0\nk<<<1,2>>>(a);\n#endif\n", unchanged: true},
		{name: "if 0 half launch", in: "#if 0\n  k<<<\n#endif\nint x;\n", unchanged: true},
		{name: "if false shared with initializer", in: "#if false\n__shared__ int x = 3;\n#endif\n", unchanged: true},
		{name: "if 0 nested", in: "#if 0\n#ifdef X\nk<<<\n#else\nk<<<1>>>\n#endif\n#elif 1\nk<<<1,1>>>();\n#else\nj<<<\n#endif\n", launches: 1, has: `"k", [=](auto&... emud_a_) { k(emud_a_...); })`},
		{name: "if 1 else dead", in: "#if 1\nk<<<1,1>>>(a);\n#else\nk<<<\n#endif\n", launches: 1},
		{name: "head per branch", in: "#ifdef S\n  k<<<g, b, 0, s>>>(\n#else\n  k<<<g, b>>>(\n#endif\n  a);\n", launches: 2, has: "cfg(g, b), \"k\", [=](auto&... emud_a_) { k(emud_a_...); }, \n#endif\n  a);"},
		{name: "tail after branches", in: "#ifdef S\n  k<<<g, b, 0, s\n#else\n  k<<<g, b\n#endif\n  >>>(a);\n", launches: 2},
		{name: "shared per branch", in: "#ifdef X\n__shared__ int a[4];\n#else\n__shared__ float a[4];\n#endif\n", has: "shared_t<float[4]>"},
		{name: "stringizing is no directive", in: "#define S(x) #x\n#if 0\nk<<<\n#endif\n", unchanged: true},
		{name: "unmatched endif", in: "#endif\nk<<<1,1>>>();\n", launches: 1},
		// The device pass's macros are never defined (host code only).
		{name: "cuda arch at least", in: "#if __CUDA_ARCH__ >= 900\nk<<<\n#endif\n", unchanged: true},
		{name: "cuda arch below is live", in: "#if __CUDA_ARCH__ < 700\nk<<<1,1>>>();\n#endif\n", launches: 1},
		{name: "ifdef cuda arch", in: "#ifdef __CUDA_ARCH__\nk<<<\n#else\nk<<<1,1>>>();\n#endif\n", launches: 1},
		{name: "ifndef cuda arch", in: "#ifndef __CUDA_ARCH__\nk<<<1,1>>>();\n#else\nk<<<\n#endif\n", launches: 1},
		{name: "defined and unknown", in: "#if defined(__CUDA_ARCH__) && X > 2\nk<<<\n#elif defined __HIP_DEVICE_COMPILE__ || !defined(__CUDA_ARCH__)\nk<<<1,1>>>();\n#else\nk<<<\n#endif\n", launches: 1},
		{name: "unknown or cuda arch", in: "#if X || __CUDA_ARCH__\nk<<<1,1>>>();\n#else\nk<<<2,2>>>();\n#endif\n", launches: 2},
		{name: "arithmetic is unknown", in: "#if __CUDA_ARCH__ + 1\nk<<<1,1>>>();\n#endif\n", launches: 1},
		{name: "parentheses and hex", in: "#if (0x10 == 16) && !(__CUDA_ARCH__ != 0)\nk<<<1,1>>>();\n#else\nk<<<\n#endif\n", launches: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Rewrite([]byte(c.in), "a.cpp")
			require.NoError(t, err)
			body := strings.SplitN(string(out), "\n", 2)[1]
			assert.Equal(t, strings.Count(c.in, "\n"), strings.Count(body, "\n"), "lines kept")
			if c.unchanged {
				assert.Equal(t, c.in, body)
			}
			assert.Equal(t, c.launches, strings.Count(body, launch), body)
			if c.has != "" {
				assert.Contains(t, body, c.has)
			}
		})
	}
	for _, c := range []struct{ in, want string }{
		{"#ifdef X\n__shared__ int\n#else\n__shared__ float\n#endif\n a[4];\n", "split by a preprocessor conditional"},
		{"k<<<1,1>>>\n#ifdef X\n(a);\n#else\n(b);\n#endif\n", "a preprocessor conditional between >>> and ("},
		{"#ifdef X\nk<<<1,1>>>(\n#endif\n", "unbalanced parentheses"},
	} {
		_, err := Rewrite([]byte(c.in), "a.cpp")
		assert.ErrorContains(t, err, c.want, c.in)
	}
}
