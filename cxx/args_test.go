package cxx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParse: what each command line a build system or hipcc user gives
// compiles and links, and the ones refused, with the argument named.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		mode    Mode
		srcs    []string
		link    []string // link arguments in order, a source's object as "<src>"
		flags   []string
		out     string
		arch    string
		notes   int
		errArg  string // the ArgError's argument
		errText string // a plain error's text
	}{
		{name: "cmake compile", args: []string{"-DX=1", "-I/inc", "-O3", "-fPIC", "-MD", "-MT", "k.o", "-MF", "k.o.d", "-o", "k.o", "-c", "/src/k.hip"},
			mode: ModeCompile, srcs: []string{"/src/k.hip"}, link: []string{"<src>"}, flags: []string{"-DX=1", "-I/inc", "-O3", "-fPIC", "-MD", "-MT", "k.o"}, out: "k.o"},
		{name: "link of objects and archives", args: []string{"-O2", "main.o", "-o", "prog", "libk.a", "-L/l", "-lm", "plain.o", "-Wl,-rpath,/x"},
			mode: ModeLink, link: []string{"main.o", "libk.a", "-L/l", "-lm", "plain.o", "-Wl,-rpath,/x"}, flags: []string{"-O2"}, out: "prog"},
		{name: "sources and objects keep their order", args: []string{"a.o", "b.cpp", "-lfoo"},
			mode: ModeLink, srcs: []string{"b.cpp"}, link: []string{"a.o", "<src>", "-lfoo"}},
		{name: "-x hip makes any file a source", args: []string{"-x", "hip", "k.inc", "-x", "none", "o.o", "-c"},
			mode: ModeCompile, srcs: []string{"k.inc"}, link: []string{"<src>", "o.o"}},
		{name: "-xc++ joined", args: []string{"-xc++", "k.txt", "-c"}, mode: ModeCompile, srcs: []string{"k.txt"}, link: []string{"<src>"}},
		{name: "separate -l and -L", args: []string{"m.o", "-L", "/l", "-l", "k"}, mode: ModeLink, link: []string{"m.o", "-L/l", "-lk"}},
		{name: "-pthread compiles and links", args: []string{"-pthread", "a.cpp"}, mode: ModeLink, srcs: []string{"a.cpp"},
			link: []string{"-pthread", "<src>"}, flags: []string{"-pthread"}},
		{name: "offload-arch", args: []string{"--offload-arch=gfx1250", "a.cpp", "-c"}, mode: ModeCompile, srcs: []string{"a.cpp"}, link: []string{"<src>"}, arch: "gfx1250"},
		{name: "offload-arch with features, twice", args: []string{"--offload-arch=gfx950:xnack-", "--offload-arch", "gfx950", "a.o"}, mode: ModeLink, link: []string{"a.o"}, arch: "gfx950"},
		{name: "hipcc flags accepted", args: []string{"-fgpu-rdc", "--hip-link", "-D__HIP_PLATFORM_AMD__", "a.o"}, mode: ModeLink, link: []string{"a.o"}, flags: []string{"-D__HIP_PLATFORM_AMD__"}},
		{name: "CMake's HIP language", args: []string{"--cuda-host-only", "--offload-arch=gfx950", "-o", "t.o", "-c", "t.hip"}, mode: ModeCompile, srcs: []string{"t.hip"}, link: []string{"<src>"}, out: "t.o", arch: "gfx950"},
		{name: "device only", args: []string{"--cuda-device-only", "t.hip"}, errArg: "--cuda-device-only"},
		{name: "rocm-path noted", args: []string{"--rocm-path=/opt/rocm", "--rocm-path", "/opt/rocm", "-munsafe-fp-atomics", "a.o"}, mode: ModeLink, link: []string{"a.o"}, notes: 3},
		{name: "-E", args: []string{"-E", "a.cpp"}, mode: ModePreprocess, srcs: []string{"a.cpp"}, link: []string{"<src>"}},
		{name: "-E over -S over -c", args: []string{"-c", "-E", "-S", "a.cpp"}, mode: ModePreprocess, srcs: []string{"a.cpp"}, link: []string{"<src>"}},
		{name: "-fsyntax-only does not link", args: []string{"-fsyntax-only", "a.cpp"}, mode: ModeCompile, srcs: []string{"a.cpp"}, link: []string{"<src>"}, flags: []string{"-fsyntax-only"}},
		{name: "-S over -c", args: []string{"-S", "-c", "a.cpp"}, mode: ModeAssemble, srcs: []string{"a.cpp"}, link: []string{"<src>"}},
		{name: "-MM", args: []string{"-MM", "a.cpp"}, mode: ModeDeps, srcs: []string{"a.cpp"}, link: []string{"<src>"}, flags: []string{"-MM"}},
		{name: "--version", args: []string{"--version"}, mode: ModeInfo},
		{name: "-v alone", args: []string{"-v"}, mode: ModeInfo},
		{name: "-dumpversion", args: []string{"-dumpversion"}, mode: ModeInfo, flags: []string{"-dumpversion"}},

		{name: "several arches", args: []string{"--offload-arch=gfx950,gfx1250", "a.cpp"}, errArg: "--offload-arch=gfx950,gfx1250"},
		{name: "unknown arch", args: []string{"--offload-arch=gfx942", "a.cpp"}, errArg: "--offload-arch=gfx942"},
		{name: "nvidia platform", args: []string{"-D__HIP_PLATFORM_NVIDIA__", "a.cpp"}, errArg: "-D__HIP_PLATFORM_NVIDIA__"},
		{name: "shared", args: []string{"-shared", "a.o", "-o", "lib.so"}, errArg: "-shared"},
		{name: "-x c", args: []string{"-x", "c", "a.c"}, errArg: "-x c"},
		{name: "-o with no value", args: []string{"a.cpp", "-o"}, errArg: "-o"},
		{name: "-MF with no value", args: []string{"a.cpp", "-c", "-MF"}, errArg: "-MF"},
		{name: "two -o", args: []string{"a.cpp", "-o", "x", "-o", "y"}, errArg: "-o y"},
		{name: "-c -o of several", args: []string{"a.cpp", "b.cpp", "-c", "-o", "x.o"}, errArg: "-o x.o"},
		{name: "stdin", args: []string{"-x", "c++", "-"}, errArg: "-"},
		{name: "-c with only objects", args: []string{"-c", "a.o"}, errText: "emud c++: no HIP C++ source (.cpp, .cc, .cxx, .hip, .cu, or any file after -x hip) to compile"},
		{name: "-c with nothing", args: []string{"-c"}, errText: "emud c++: no input files"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Parse(c.args)
			if c.errArg != "" || c.errText != "" {
				require.Error(t, err)
				var ae *ArgError
				if c.errArg != "" {
					require.True(t, errors.As(err, &ae), "%v", err)
					assert.Equal(t, c.errArg, ae.Arg)
				} else {
					assert.EqualError(t, err, c.errText)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.mode, inv.Mode)
			var srcs, link []string
			for _, s := range inv.Sources {
				srcs = append(srcs, s.path)
			}
			for _, l := range inv.link {
				if l.src >= 0 {
					link = append(link, "<src>")
				} else {
					link = append(link, l.arg)
				}
			}
			assert.Equal(t, c.srcs, srcs)
			assert.Equal(t, c.link, link)
			assert.Equal(t, c.flags, inv.Flags)
			assert.Equal(t, c.out, inv.Out)
			assert.Equal(t, c.arch, inv.Arch)
			assert.Len(t, inv.Notes, c.notes)
		})
	}
}

// TestCheckOutput: -o naming an input (emud c++ x.cpp -o x.cpp once
// replaced the source) is refused before anything runs.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "x.cpp")
	obj := filepath.Join(dir, "x.o")
	require.NoError(t, os.WriteFile(src, []byte("int main() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(obj, []byte("obj"), 0o644))
	for _, c := range []struct {
		args []string
		bad  bool
	}{
		{[]string{src, "-o", src}, true},
		{[]string{src, "-o", filepath.Join(dir, ".", "x.cpp")}, true},
		{[]string{obj, "-o", obj}, true},
		{[]string{src, "-c", "-o", obj}, false}, // an object rebuilt in place
		{[]string{src, "-o", filepath.Join(dir, "prog")}, false},
	} {
		inv, err := Parse(c.args)
		require.NoError(t, err)
		err = inv.CheckOutput()
		if c.bad {
			var ae *ArgError
			require.True(t, errors.As(err, &ae), "%v: %v", c.args, err)
			assert.Contains(t, ae.Why, "names an input file")
		} else {
			assert.NoError(t, err, "%v", c.args)
		}
	}
	// The driver refuses before it runs anything (emud c++ x.cpp -o x.cpp
	// once compiled and replaced the source with the program).
	err := Run([]string{"-O2", src, "-o", src}, Options{})
	var ae *ArgError
	require.True(t, errors.As(err, &ae), "%v", err)
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	assert.Equal(t, "int main() {}\n", string(b))
}

// TestSplitResponse: GCC's quoting in response files.
func TestSplitResponse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"-O2 -c\n a.cpp\t-o a.o\n", []string{"-O2", "-c", "a.cpp", "-o", "a.o"}, ""},
		{`-DMSG="hello world" 'a b.cpp' c\ d.cpp`, []string{"-DMSG=hello world", "a b.cpp", "c d.cpp"}, ""},
		{`"" x`, []string{"", "x"}, ""},
		{"", nil, ""},
		{`"open`, nil, `unterminated " quote`},
	} {
		got, err := SplitResponse(c.in)
		if c.err != "" {
			assert.EqualError(t, err, c.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%q", c.in)
	}
}

// TestExpandResponseFiles: nested files expand in place; a file that
// names itself, or one that is missing, is an error naming it.
func TestExpandResponseFiles(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "inner.rsp")
	outer := filepath.Join(dir, "outer.rsp")
	loop := filepath.Join(dir, "loop.rsp")
	require.NoError(t, os.WriteFile(inner, []byte("-O2 -DX"), 0o644))
	require.NoError(t, os.WriteFile(outer, []byte("-c @"+inner+" a.cpp"), 0o644))
	require.NoError(t, os.WriteFile(loop, []byte("-c @"+loop), 0o644))
	got, err := ExpandResponseFiles([]string{"-g", "@" + outer, "-o", "a.o"})
	require.NoError(t, err)
	assert.Equal(t, []string{"-g", "-c", "-O2", "-DX", "a.cpp", "-o", "a.o"}, got)
	var ae *ArgError
	_, err = ExpandResponseFiles([]string{"@" + loop})
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Contains(t, ae.Why, "nested more than")
	_, err = ExpandResponseFiles([]string{"@" + filepath.Join(dir, "missing.rsp")})
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, "@"+filepath.Join(dir, "missing.rsp"), ae.Arg)
}

// FuzzSplitResponse: any text splits or fails cleanly, and what it
// splits into round-trips through quoting.
func FuzzSplitResponse(f *testing.F) {
	for _, s := range []string{"-O2 -c a.cpp", `"a b" 'c d' e\ f`, `"`, `\`, "a\nb\tc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitResponse(s)
		if err != nil {
			return
		}
		var q []byte
		for _, w := range words {
			q = append(q, '\'')
			for i := 0; i < len(w); i++ {
				if w[i] == '\'' || w[i] == '\\' {
					q = append(q, '\\')
				}
				q = append(q, w[i])
			}
			q = append(q, '\'', ' ')
		}
		again, err := SplitResponse(string(q))
		require.NoError(t, err)
		assert.Equal(t, len(words), len(again))
		for i := range words {
			assert.Equal(t, words[i], again[i])
		}
	})
}

// FuzzParse: no command line panics the parser, and every error it
// gives names itself as emud c++'s.
func FuzzParse(f *testing.F) {
	f.Add("-c\x00a.cpp\x00-o\x00a.o")
	f.Add("--offload-arch=gfx950\x00-x\x00hip\x00k\x00-MD\x00-MF")
	f.Fuzz(func(t *testing.T, s string) {
		var args []string
		start := 0
		for i := 0; i <= len(s); i++ {
			if i == len(s) || s[i] == 0 {
				args = append(args, s[start:i])
				start = i + 1
			}
		}
		inv, err := Parse(args)
		if err != nil {
			assert.Contains(t, err.Error(), "emud c++: ")
			return
		}
		for _, l := range inv.link {
			if l.src >= 0 {
				assert.Less(t, l.src, len(inv.Sources))
			}
		}
	})
}
