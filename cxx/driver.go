package cxx

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Module is the import path of emud's module: the driver builds the
// emulator (package capi) from the source tree that declares it.
const Module = "github.com/emud-dev/emud"

// Options configure one driver run.
type Options struct {
	// Root is emud's source tree; "" finds it (FindRoot).
	Root string
	// Compiler is the C++ compiler; "" = $EMUD_CXX, else g++, else clang++.
	Compiler string
	// Stdout and Stderr receive the tools' output (nil: discarded).
	Stdout, Stderr io.Writer
	// Verbose prints each command before running it.
	Verbose bool
	// Library is the emulator archive to link; "" builds it from Root
	// (BuildLibrary), which costs a go build even when nothing changed.
	Library string
}

// FindRoot returns emud's source tree: $EMUD_ROOT, else the first
// directory holding emud's go.mod at or above the working directory or
// the running executable.
func FindRoot() (string, error) {
	if r := os.Getenv("EMUD_ROOT"); r != "" {
		if !isRoot(r) {
			return "", fmt.Errorf("EMUD_ROOT=%s: no go.mod of %s there", r, Module)
		}
		return r, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, d := range starts {
		for {
			if isRoot(d) {
				return d, nil
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	return "", fmt.Errorf("emud c++ needs emud's source tree (it builds the emulator from it): run it inside the tree or set EMUD_ROOT")
}

func isRoot(d string) bool {
	b, err := os.ReadFile(filepath.Join(d, "go.mod"))
	return err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+Module+"\n")) ||
		err == nil && strings.HasPrefix(string(b), "module "+Module+"\r\n")
}

// sourceExts are compiled as HIP C++ (rewritten first).
var sourceExts = map[string]bool{".cpp": true, ".cc": true, ".cxx": true, ".hip": true, ".cu": true, ".C": true}

// Run is `emud c++ args…`: compile the HIP sources among args as host
// C++ with emud's headers first, rewriting their launches, and link the
// emulator; other arguments go to the compiler as they are. With -c it
// only compiles.
func Run(args []string, o Options) error {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	root := o.Root
	if root == "" {
		r, err := FindRoot()
		if err != nil {
			return err
		}
		root = r
	}
	cc, err := compiler(o.Compiler)
	if err != nil {
		return err
	}
	var srcs, flags, linkFlags []string
	out, compileOnly, hasStd := "", false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o":
			if i+1 >= len(args) {
				return errors.New("emud c++: -o needs a file name")
			}
			out = args[i+1]
			i++
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			out = a[2:]
		case a == "-c":
			compileOnly = true
		case strings.HasPrefix(a, "-std="):
			hasStd = true
			flags = append(flags, a)
		case !strings.HasPrefix(a, "-") && sourceExts[filepath.Ext(a)]:
			srcs = append(srcs, a)
		case a == "-x":
			// -x hip / -x c++: every source here is HIP C++ already
			i++
		case strings.HasPrefix(a, "-l") || strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "-Wl,") ||
			!strings.HasPrefix(a, "-") || a == "-pthread" || a == "-static-libstdc++" || a == "-pie" || a == "-static-pie" || a == "-no-pie":
			linkFlags = append(linkFlags, a)
			if a == "-pthread" {
				flags = append(flags, a)
			}
		case a == "-I" || a == "-D" || a == "-U" || a == "-include" || a == "-isystem" || a == "-iquote":
			if i+1 >= len(args) {
				return fmt.Errorf("emud c++: %s needs an argument", a)
			}
			flags = append(flags, a, args[i+1])
			i++
		default:
			flags = append(flags, a)
		}
	}
	if len(srcs) == 0 {
		return errors.New("emud c++: no source file (.cpp, .cc, .cxx, .hip, .cu) given")
	}
	if compileOnly && out != "" && len(srcs) > 1 {
		return errors.New("emud c++: -c -o with several sources")
	}
	if !hasStd {
		flags = append([]string{"-std=c++17"}, flags...)
	}
	flags = instrument(flags)
	tmp, err := os.MkdirTemp("", "emud-cxx-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	inc := filepath.Join(root, "include")
	var objs []string
	for i, src := range srcs {
		abs, err := filepath.Abs(src)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(abs)
		if err != nil {
			return fmt.Errorf("emud c++: %w", err)
		}
		rw, err := Rewrite(b, abs)
		if err != nil {
			return fmt.Errorf("emud c++: %w", err)
		}
		base := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
		rsrc := filepath.Join(tmp, fmt.Sprintf("%d-%s.cpp", i, base))
		if err := os.WriteFile(rsrc, rw, 0o644); err != nil {
			return err
		}
		obj := filepath.Join(tmp, fmt.Sprintf("%d-%s.o", i, base))
		if compileOnly {
			obj = base + ".o"
			if out != "" {
				obj = out
			}
		}
		cmd := append([]string{"-I", inc, "-iquote", filepath.Dir(abs)}, flags...)
		cmd = append(cmd, "-x", "c++", "-c", rsrc, "-o", obj)
		if err := o.run(cc, cmd, ""); err != nil {
			return fmt.Errorf("emud c++: compiling %s: %w", src, err)
		}
		objs = append(objs, obj)
	}
	if compileOnly {
		return nil
	}
	if out == "" {
		out = "a.out"
	}
	lib := o.Library
	if lib == "" {
		if lib, err = BuildLibrary(root, o); err != nil {
			return err
		}
	}
	// Not position-independent unless asked (-pie): a PIE's dynamic
	// loader relocates the Go runtime's tables word by word at every
	// start (some 39,000 relocations, with the page faults of the pages
	// they dirty), a few milliseconds of each run of a program that
	// lives well under a second.
	var pie []string
	if !slices.Contains(linkFlags, "-pie") && !slices.Contains(linkFlags, "-static-pie") {
		pie = []string{"-no-pie"}
	}
	link := append(append(append(pie, objs...), linkFlags...), lib, "-lpthread", "-ldl",
		"-Wl,--export-dynamic-symbol=pthread_create", "-Wl,--export-dynamic-symbol=pthread_join", "-o", out)
	if err := o.run(cc, link, ""); err != nil {
		return fmt.Errorf("emud c++: linking %s: %w", out, err)
	}
	return nil
}

// instrument makes lane code instrumented by default: -fsanitize=thread
// (the emulator implements its callbacks: the race detector sees each
// lane load and store, and a lane's host access fails it), with -g1's
// line tables so a race report names the access's file:line; unless the
// flags say -fno-sanitize=thread or choose another sanitizer (a
// -fsanitize=thread or -g of their own is kept).
func instrument(flags []string) []string {
	tsan, debug := false, false
	for _, f := range flags {
		switch {
		case f == "-fno-sanitize=thread":
			return flags
		case f == "-fsanitize=thread":
			tsan = true
		case strings.HasPrefix(f, "-fsanitize="):
			return flags // a sanitizer of the user's own (TSan's callbacks do not mix with ASan's)
		case strings.HasPrefix(f, "-g"):
			debug = true
		}
	}
	if !tsan {
		flags = append(flags, "-fsanitize=thread")
	}
	if !debug {
		flags = append(flags, "-g1")
	}
	return flags
}

// BuildLibrary builds the emulator as a C archive (go build
// -buildmode=c-archive -tags emud_nometrics ./capi) in the user cache directory, in a directory
// of its own per source tree (two checkouts building at once must not
// link each other's library), and returns its path. Go's build cache makes
// a rebuild of an unchanged tree quick.
func BuildLibrary(root string, o Options) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		dir = os.TempDir()
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "emud", fmt.Sprintf("%016x", fnv64(abs)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lib := filepath.Join(dir, "libemud.a")
	goTool := "go"
	if g := os.Getenv("GO"); g != "" {
		goTool = g
	}
	// emud_nometrics: the C ABI serves no metrics, and without the tag
	// Prometheus's package initialisation runs at every program start
	// (engine's metrics.go).
	if err := o.run(goTool, []string{"build", "-buildmode=c-archive", "-tags", "emud_nometrics", "-o", lib, "./capi"}, root, "CGO_ENABLED=1"); err != nil {
		return "", fmt.Errorf("emud c++: building the emulator library (go build -buildmode=c-archive -tags emud_nometrics ./capi in %s): %w", root, err)
	}
	return lib, nil
}

func compiler(c string) (string, error) {
	if c == "" {
		c = os.Getenv("EMUD_CXX")
	}
	if c != "" {
		p, err := exec.LookPath(c)
		if err != nil {
			return "", fmt.Errorf("emud c++: compiler %q: %w", c, err)
		}
		return p, nil
	}
	for _, c := range []string{"g++", "clang++"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("emud c++: no C++ compiler: install g++ or clang++, or set EMUD_CXX")
}

func (o Options) run(name string, args []string, dir string, env ...string) error {
	if o.Verbose {
		fmt.Fprintln(o.Stderr, name, strings.Join(args, " "))
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	return cmd.Run()
}

func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
