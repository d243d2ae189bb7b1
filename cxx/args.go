package cxx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is what a driver run produces.
type Mode int

const (
	// ModeLink compiles the sources and links a program with the emulator.
	ModeLink Mode = iota
	// ModeCompile is -c: one object per source.
	ModeCompile
	// ModeAssemble is -S: assembly per source.
	ModeAssemble
	// ModePreprocess is -E: the preprocessed (rewritten) source.
	ModePreprocess
	// ModeDeps is -M or -MM: the dependency rules only.
	ModeDeps
	// ModeInfo is a run with no input file (--version, -v, -dumpversion,
	// -print-*): the compiler answers it.
	ModeInfo
)

// ArgError is a driver argument emud refuses or cannot read; Arg names it.
type ArgError struct {
	Arg string
	Why string
}

func (e *ArgError) Error() string { return fmt.Sprintf("emud c++: %s: %s", e.Arg, e.Why) }

// Arches are the --offload-arch values emud emulates (EMUD_ARCH's).
var Arches = []string{"gfx950", "gfx1250"}

// linkItem is one link input in command-line order: an object, archive,
// -l/-L/-Wl, flag or other file, or (src >= 0) the object of source src.
type linkItem struct {
	arg   string
	src   int
	input bool // a file or -l library, not a flag
}

// source is a HIP C++ input.
type source struct {
	path string
	lang string // the -x language it was given under ("" by extension)
}

// Invocation is one parsed `emud c++` command line.
type Invocation struct {
	Mode    Mode
	Out     string   // -o ("" = the compiler's default name)
	Sources []source // HIP C++ inputs, compiled after the rewrite
	Flags   []string // to every compile
	link    []linkItem
	Arch    string   // --offload-arch
	DepFile bool     // -MD/-MMD
	MF      string   // -MF
	MT      bool     // -MT/-MQ given
	Verbose bool     // -v
	Version bool     // --version
	Notes   []string // one line each, printed to stderr: flags accepted without effect
	hasStd  bool
	raw     []string // the arguments after response files, for ModeInfo
	pie     bool     // -pie/-static-pie asked
}

// sourceExts are compiled as HIP C++ (rewritten first).
var sourceExts = map[string]bool{".cpp": true, ".cc": true, ".cxx": true, ".c++": true, ".cp": true, ".hip": true, ".cu": true, ".C": true, ".CPP": true}

// hipLangs are the -x languages whose inputs are HIP C++ to emud.
var hipLangs = map[string]bool{"hip": true, "c++": true, "cu": true, "cuda": true}

// valued are flags whose value is the next argument when not joined.
var valued = map[string]bool{
	"-I": true, "-D": true, "-U": true, "-include": true, "-imacros": true, "-isystem": true, "-iquote": true,
	"-idirafter": true, "-isysroot": true, "--sysroot": true, "-MF": true, "-MT": true, "-MQ": true, "-Xlinker": true,
	"-L": true, "-l": true, "-x": true, "-o": true, "--offload-arch": true, "--rocm-path": true, "--hip-path": true,
	"-target": true, "--target": true,
}

// linkOnly are flags that matter only when linking; linkBoth matter to
// compiling and linking both.
func linkOnly(a string) bool {
	return strings.HasPrefix(a, "-l") || strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "-Wl,") ||
		a == "-static-libstdc++" || a == "-static-libgcc" || a == "-pie" || a == "-static-pie" || a == "-no-pie" ||
		a == "-rdynamic" || a == "-s" || strings.HasPrefix(a, "-fuse-ld=")
}

func linkBoth(a string) bool {
	return a == "-pthread" || a == "-fopenmp" || strings.HasPrefix(a, "-flto") || a == "-m64" ||
		a == "--coverage" || a == "-fprofile-arcs" || (strings.HasPrefix(a, "-fsanitize=") && a != "-fsanitize=thread") ||
		strings.HasPrefix(a, "--sysroot") || strings.HasPrefix(a, "-B")
}

// Parse reads an `emud c++` command line (response files @file already
// expanded, see ExpandResponseFiles). It runs no tool.
func Parse(args []string) (*Invocation, error) {
	inv := &Invocation{raw: args}
	modes := map[string]Mode{"-c": ModeCompile, "-E": ModePreprocess, "-S": ModeAssemble, "-M": ModeDeps, "-MM": ModeDeps}
	lang := ""
	var arches []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, error) {
			if i+1 >= len(args) {
				return "", &ArgError{a, "needs a value after it"}
			}
			i++
			return args[i], nil
		}
		if a == "-fsyntax-only" {
			// a check with no output (editors, clangd): compile, never link
			inv.Mode = max(inv.Mode, ModeCompile)
			inv.Flags = append(inv.Flags, a)
			continue
		}
		if m, ok := modes[a]; ok {
			if m > inv.Mode {
				inv.Mode = m // -E over -S over -c, as the compiler has it
			}
			if a == "-M" || a == "-MM" {
				inv.Flags = append(inv.Flags, a)
			}
			continue
		}
		switch {
		case a == "-o" || (strings.HasPrefix(a, "-o") && len(a) > 2):
			v := strings.TrimPrefix(a, "-o")
			if a == "-o" {
				var err error
				if v, err = val(); err != nil {
					return nil, err
				}
			}
			if inv.Out != "" {
				return nil, &ArgError{"-o " + v, "a second -o (the first was " + inv.Out + ")"}
			}
			inv.Out = v
		case a == "-x" || (strings.HasPrefix(a, "-x") && len(a) > 2):
			v := strings.TrimPrefix(a, "-x")
			if a == "-x" {
				var err error
				if v, err = val(); err != nil {
					return nil, err
				}
			}
			switch {
			case v == "none":
				lang = ""
			case hipLangs[v]:
				lang = v
			default:
				return nil, &ArgError{"-x " + v, "emud c++ compiles HIP C++ only (-x hip, -x c++, -x cuda, -x none); build other languages with their own compiler and link the objects"}
			}
		case a == "--offload-arch" || strings.HasPrefix(a, "--offload-arch="):
			v := strings.TrimPrefix(a, "--offload-arch=")
			if a == "--offload-arch" {
				var err error
				if v, err = val(); err != nil {
					return nil, err
				}
			}
			for _, x := range strings.Split(v, ",") {
				x, _, _ = strings.Cut(x, ":") // gfx950:xnack- names a feature set of one architecture
				if !slices.Contains(Arches, x) {
					return nil, &ArgError{"--offload-arch=" + v, fmt.Sprintf("emud emulates %s only (EMUD_ARCH)", strings.Join(Arches, " and "))}
				}
				if !slices.Contains(arches, x) {
					arches = append(arches, x)
				}
			}
		case a == "--cuda-device-only" || a == "--offload-device-only":
			return nil, &ArgError{a, "emud has no device code object: device code is compiled for the host, with the rest of the source"}
		case a == "-fgpu-rdc" || a == "-fno-gpu-rdc" || a == "--hip-link" || a == "--cuda-host-only" || a == "--offload-host-only":
			// (--cuda-host-only, as CMake's HIP language compiles: the host
			// side is the whole of a source here.)
			// Device code is host code here: every translation unit's
			// kernels are linked as any other function, so relocatable
			// device code is what emud always does; nothing to pass on.
		case a == "--rocm-path" || a == "--hip-path" || strings.HasPrefix(a, "--rocm-path=") || strings.HasPrefix(a, "--hip-path="):
			if !strings.Contains(a, "=") {
				if _, err := val(); err != nil {
					return nil, err
				}
			}
			inv.Notes = append(inv.Notes, fmt.Sprintf("emud c++: %s ignored: emud's own HIP headers and emulator replace ROCm's", strings.SplitN(a, "=", 2)[0]))
		case a == "-munsafe-fp-atomics" || a == "-mno-unsafe-fp-atomics" || strings.HasPrefix(a, "-mcode-object-version=") ||
			a == "-fhip-new-launch-api" || a == "-fno-hip-new-launch-api" || a == "-mwavefrontsize64" || a == "-mno-wavefrontsize64" ||
			strings.HasPrefix(a, "-mllvm") || a == "-fgpu-flush-denormals-to-zero" || a == "-fno-gpu-flush-denormals-to-zero":
			// AMDGPU code generation flags: there is no GPU code to generate.
			inv.Notes = append(inv.Notes, fmt.Sprintf("emud c++: %s ignored: it tunes AMDGPU code, and emud compiles device code for the host", a))
			if a == "-mllvm" {
				if _, err := val(); err != nil {
					return nil, err
				}
			}
		case a == "-D__HIP_PLATFORM_NVIDIA__" || a == "-D__HIP_PLATFORM_NVCC__" || strings.HasPrefix(a, "-D__HIP_PLATFORM_NVIDIA__=") || strings.HasPrefix(a, "-D__HIP_PLATFORM_NVCC__="):
			return nil, &ArgError{a, "emud emulates AMD GPUs: HIP's AMD platform (__HIP_PLATFORM_AMD__, which emud's hip_runtime.h defines)"}
		case a == "-shared":
			return nil, &ArgError{a, "a shared library of HIP code is not supported: the emulator is linked once, into the program; build a static library (ar) of emud c++ -c objects instead"}
		case a == "-MD" || a == "-MMD":
			inv.DepFile = true
			inv.Flags = append(inv.Flags, a)
		case a == "-MF" || a == "-MT" || a == "-MQ":
			v, err := val()
			if err != nil {
				return nil, err
			}
			if a == "-MF" {
				inv.MF = v
			} else {
				inv.MT = true
				inv.Flags = append(inv.Flags, a, v)
			}
		case strings.HasPrefix(a, "-MF"):
			inv.MF = a[3:]
		case strings.HasPrefix(a, "-MT") || strings.HasPrefix(a, "-MQ"):
			inv.MT = true
			inv.Flags = append(inv.Flags, a)
		case a == "-v":
			inv.Verbose = true
		case a == "--version":
			inv.Version = true
		case strings.HasPrefix(a, "-std="):
			inv.hasStd = true
			inv.Flags = append(inv.Flags, a)
		case a == "-Xlinker":
			v, err := val()
			if err != nil {
				return nil, err
			}
			inv.link = append(inv.link, linkItem{a, -1, false}, linkItem{v, -1, false})
		case a == "-l" || a == "-L":
			v, err := val()
			if err != nil {
				return nil, err
			}
			inv.link = append(inv.link, linkItem{a + v, -1, a == "-l"})
		case linkOnly(a):
			if a == "-pie" || a == "-static-pie" {
				inv.pie = true
			}
			inv.link = append(inv.link, linkItem{a, -1, strings.HasPrefix(a, "-l")})
		case linkBoth(a):
			inv.Flags = append(inv.Flags, a)
			inv.link = append(inv.link, linkItem{a, -1, false})
		case valued[a]:
			v, err := val()
			if err != nil {
				return nil, err
			}
			inv.Flags = append(inv.Flags, a, v)
		case a == "-":
			return nil, &ArgError{a, "emud c++ reads sources from files, not standard input"}
		case strings.HasPrefix(a, "-"):
			inv.Flags = append(inv.Flags, a)
		case lang != "" || sourceExts[filepath.Ext(a)]:
			inv.link = append(inv.link, linkItem{"", len(inv.Sources), true})
			inv.Sources = append(inv.Sources, source{path: a, lang: lang})
		default:
			// objects, archives, shared libraries, linker scripts
			inv.link = append(inv.link, linkItem{a, -1, true})
		}
	}
	if len(arches) > 1 {
		return nil, &ArgError{"--offload-arch=" + strings.Join(arches, ","), "emud emulates one architecture per program: give one"}
	}
	if len(arches) == 1 {
		inv.Arch = arches[0]
	}
	inputs := 0
	for _, l := range inv.link {
		if l.input {
			inputs++
		}
	}
	if inputs == 0 {
		if inv.Mode != ModeLink || inv.Out != "" {
			return nil, errors.New("emud c++: no input files")
		}
		inv.Mode = ModeInfo
		return inv, nil
	}
	if inv.Mode != ModeLink && len(inv.Sources) == 0 {
		return nil, errors.New("emud c++: no HIP C++ source (.cpp, .cc, .cxx, .hip, .cu, or any file after -x hip) to compile")
	}
	if inv.Mode != ModeLink && inv.Out != "" && len(inv.Sources) > 1 {
		return nil, &ArgError{"-o " + inv.Out, "with -c, -S or -E and several sources (each gets its own output)"}
	}
	return inv, nil
}

// CheckOutput refuses an -o that names one of the inputs: the compiler
// would replace the source (or object) it reads.
func (inv *Invocation) CheckOutput() error {
	if inv.Out == "" {
		return nil
	}
	out, err := os.Stat(inv.Out)
	if err != nil {
		return nil // a new file
	}
	var ins []string
	for _, s := range inv.Sources {
		ins = append(ins, s.path)
	}
	for _, l := range inv.link {
		if l.src < 0 && l.input && !strings.HasPrefix(l.arg, "-") {
			ins = append(ins, l.arg)
		}
	}
	for _, in := range ins {
		if st, err := os.Stat(in); err == nil && os.SameFile(st, out) {
			return &ArgError{"-o " + inv.Out, "names an input file (" + in + "); it would be overwritten"}
		}
	}
	return nil
}

// maxResponse bounds one response file and the expansion's depth: a
// response file that names itself must end in an error, not eat memory.
const (
	maxResponse      = 1 << 20
	maxResponseDepth = 16
	maxArgs          = 1 << 16
)

// ExpandResponseFiles replaces each @file argument by the arguments the
// file holds, split as GCC splits them (white space; single and double
// quotes; a backslash takes the next character as it is), recursively.
func ExpandResponseFiles(args []string) ([]string, error) {
	return expand(args, 0)
}

func expand(args []string, depth int) ([]string, error) {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "@") || len(a) == 1 {
			out = append(out, a)
			continue
		}
		if depth >= maxResponseDepth {
			return nil, &ArgError{a, fmt.Sprintf("response files nested more than %d deep (does one name itself?)", maxResponseDepth)}
		}
		f, err := os.Open(a[1:])
		if err != nil {
			return nil, &ArgError{a, fmt.Sprintf("cannot read the response file: %v", err)}
		}
		b := make([]byte, maxResponse+1)
		n, _ := readFull(f, b)
		f.Close()
		if n > maxResponse {
			return nil, &ArgError{a, fmt.Sprintf("response file over %d bytes", maxResponse)}
		}
		words, err := SplitResponse(string(b[:n]))
		if err != nil {
			return nil, &ArgError{a, err.Error()}
		}
		sub, err := expand(words, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
		if len(out) > maxArgs {
			return nil, &ArgError{a, fmt.Sprintf("over %d arguments", maxArgs)}
		}
	}
	return out, nil
}

func readFull(f *os.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// SplitResponse splits a response file's text into arguments as GCC
// does. An unterminated quote is an error.
func SplitResponse(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in := false // inside an argument
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}
