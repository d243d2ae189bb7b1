package cxx

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
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

// Run is `emud c++ args…`, a compiler driver as build systems drive g++:
// response files (@file) are read first; every HIP C++ source (.cpp, .cc,
// .cxx, .hip, .cu, or any file after -x hip/c++/cuda) is rewritten
// (launches, __shared__) and compiled as host C++ with emud's include
// directory first; -c, -S, -E and -M/-MM stop there, one output per
// source, with -MD/-MMD dependency files naming the user's source; a link
// takes the objects of those sources and every other input in command-line
// order (objects and archives, emud-compiled or plain host ones, -l, -L,
// -Wl,) and links the emulator once. A run with no input file
// (--version, -v, -dumpversion, -print-*) is the compiler's answer.
func Run(args []string, o Options) error {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	args, err := ExpandResponseFiles(args)
	if err != nil {
		return err
	}
	inv, err := Parse(args)
	if err != nil {
		return err
	}
	for _, n := range inv.Notes {
		fmt.Fprintln(o.Stderr, n)
	}
	if err := inv.CheckOutput(); err != nil {
		return err
	}
	cc, err := compiler(o.Compiler)
	if err != nil {
		return err
	}
	if inv.Verbose {
		o.Verbose = true
	}
	if inv.Mode == ModeInfo {
		return o.info(cc, inv)
	}
	root := o.Root
	if root == "" {
		if root, err = FindRoot(); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "emud-cxx-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	objs := make([]string, len(inv.Sources))
	for i, s := range inv.Sources {
		if objs[i], err = o.compile(cc, root, tmp, inv, i, s); err != nil {
			return err
		}
	}
	if inv.Mode != ModeLink {
		return nil
	}
	return o.link(cc, root, tmp, inv, objs)
}

// info answers a run with no input: --version says emud's driver first.
func (o Options) info(cc string, inv *Invocation) error {
	var pass []string
	if inv.Version {
		fmt.Fprintf(o.Stdout, "emud c++ (%s %s): HIP C++ over emud's emulator, compiled by %s\n", Module, moduleVersion(), cc)
		pass = append(pass, "--version")
	}
	if inv.Verbose {
		fmt.Fprintf(o.Stderr, "emud c++ (%s %s): HIP C++ over emud's emulator, compiled by %s\n", Module, moduleVersion(), cc)
		pass = append(pass, "-v")
	}
	pass = append(pass, inv.Flags...)
	for _, l := range inv.link {
		pass = append(pass, l.arg)
	}
	if len(pass) == 0 {
		return errors.New("emud c++: no input files")
	}
	return o.run(cc, pass, "")
}

func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// archInit is C++ that sets EMUD_ARCH before the program's (and the
// emulator's) initialisation unless the environment already sets it: a
// constructor of priority prio runs before every unprioritised one, the
// headers' warpSize and Go's runtime start included. The link's (101)
// runs before the objects' (102), so the link's --offload-arch wins.
func archInit(arch string, prio int) string {
	return fmt.Sprintf("\n#include <stdlib.h>\nnamespace { __attribute__((constructor(%d))) void emud_offload_arch_%d() { setenv(\"EMUD_ARCH\", %q, 0); } }\n", prio, prio, arch)
}

// compile rewrites source i into tmp and compiles it as inv's mode asks;
// it returns the object (in tmp for a link).
func (o Options) compile(cc, root, tmp string, inv *Invocation, i int, s source) (string, error) {
	abs, err := filepath.Abs(s.path)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return "", fmt.Errorf("emud c++: %w", err)
	}
	if isCUDA(s) {
		if b, err = RewritePTX(b, abs); err != nil {
			return "", fmt.Errorf("emud c++: %w", err)
		}
	}
	// The user's headers that need the rewrite too (headers.go), copied
	// under the source's own directory.
	dir := filepath.Join(tmp, fmt.Sprint(i))
	shadow := filepath.Join(dir, ".emud-headers")
	if b, err = shadowHeaders(b, abs, userSearchPath(root, filepath.Dir(abs), inv.Flags), isCUDA(s), shadow); err != nil {
		return "", fmt.Errorf("emud c++: %w", err)
	}
	rw, err := Rewrite(b, abs)
	if err != nil {
		return "", fmt.Errorf("emud c++: %w", err)
	}
	if inv.Arch != "" {
		rw = append(rw, archInit(inv.Arch, 102)...)
	}
	// The rewritten source keeps the user's file name (in a directory of
	// its own), so the compiler's default names (a -M rule's target, an
	// object's) are the ones the user's source would get.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	rsrc := filepath.Join(dir, filepath.Base(s.path))
	if err := os.WriteFile(rsrc, rw, 0o644); err != nil {
		return "", err
	}
	base := strings.TrimSuffix(filepath.Base(s.path), filepath.Ext(s.path))
	cmd := []string{"-I", filepath.Join(root, "include")}
	if h := MoriHeader(inv.Flags); h != "" { // the user's own MORI (mori.go)
		if cmd, err = moriIncludes(root, tmp, h, inv.Arch, inv.Flags); err != nil {
			return "", err
		}
		if o.Verbose {
			fmt.Fprintf(o.Stderr, "emud c++: %s compiles against the MORI header %s\n", s.path, h)
		}
	}
	cmd = append(cmd, "-iquote", filepath.Dir(abs))
	if !inv.hasStd {
		cmd = append(cmd, "-std=c++17")
	}
	switch {
	case isCUDA(s):
		cmd = append(cmd, cudaDefines...)
	case s.lang == "hip" || (s.lang == "" && filepath.Ext(s.path) == ".hip"):
		// What clang predefines for -x hip (CMake's HIP language checks
		// __HIP__ before it accepts a compiler).
		cmd = append(cmd, "-D__HIP__=1", "-D__HIPCC__=1")
	}
	// What a cast of a kernel to a void pointer becomes (Rewrite) is
	// declared there, in every source: one that includes no HIP header
	// may cast pointers too. From a directory of its own, searched as a
	// system header's (so -MMD's dependency rules leave it out, as they
	// leave out the C++ library), holding nothing else a program could
	// include by mistake.
	cmd = append(cmd, "-isystem", filepath.Join(root, "include", "emud-forced"), "-include", "emud_kernel_addr.h")
	// Before the user's flags, so a -fno-PIC of theirs wins (and the
	// program then has no seed form).
	cmd = append(cmd, seedFlags(cc)...)
	cmd = append(cmd, instrument(cc, inv.Flags)...)
	if MoriHeader(inv.Flags) != "" {
		cmd = append(cmd, callContextFlags(cmd)...)
	}
	if inv.Verbose {
		cmd = append(cmd, "-v")
	}
	out := inv.Out
	switch inv.Mode {
	case ModeLink:
		out = filepath.Join(dir, base+".o")
	case ModeCompile:
		if out == "" {
			out = base + ".o"
		}
	case ModeAssemble:
		if out == "" {
			out = base + ".s"
		}
	}
	depfile := ""
	if inv.DepFile && (inv.Mode == ModeCompile || inv.Mode == ModeLink) {
		depfile = inv.MF
		if depfile == "" && inv.Mode == ModeCompile {
			depfile = strings.TrimSuffix(out, filepath.Ext(out)) + ".d"
		} else if depfile == "" {
			depfile = base + ".d"
		}
		cmd = append(cmd, "-MF", depfile)
		if !inv.MT && inv.Mode == ModeLink {
			cmd = append(cmd, "-MT", base+".o")
		}
	} else if inv.MF != "" {
		cmd = append(cmd, "-MF", inv.MF)
		depfile = inv.MF
	}
	cmd = append(cmd, "-x", "c++")
	switch inv.Mode {
	case ModeLink, ModeCompile:
		cmd = append(cmd, "-c")
	case ModePreprocess:
		cmd = append(cmd, "-E")
	case ModeAssemble:
		cmd = append(cmd, "-S")
	}
	cmd = append(cmd, rsrc)
	// -E and -M without -o write to standard output: the rewritten
	// source's name is mapped back there too.
	toStdout := out == "" && (inv.Mode == ModePreprocess || inv.Mode == ModeDeps)
	if !toStdout {
		cmd = append(cmd, "-o", out)
	}
	o2 := o
	var captured bytes.Buffer
	if toStdout {
		o2.Stdout = &captured
	}
	if err := o2.run(cc, cmd, ""); err != nil {
		return "", fmt.Errorf("emud c++: compiling %s: %w", s.path, err)
	}
	if toStdout {
		_, err := o.Stdout.Write(unmapPath(unmapPath(captured.Bytes(), rsrc, s.path, inv.Mode == ModeDeps), shadow, "", inv.Mode == ModeDeps))
		return "", err
	}
	if inv.Mode == ModeDeps && out != "" {
		depfile = out
	}
	if depfile != "" {
		if err := fixDepFile(depfile, rsrc, s.path); err != nil {
			return "", err
		}
		if err := fixDepFile(depfile, shadow, ""); err != nil { // a header's copy is the header
			return "", err
		}
	}
	return out, nil
}

// fixDepFile makes a dependency file name the user's source where the
// compiler wrote the rewritten copy's path.
func fixDepFile(path, rsrc, src string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("emud c++: the dependency file the compiler wrote: %w", err)
	}
	return os.WriteFile(path, unmapPath(b, rsrc, src, true), 0o644)
}

// unmapPath replaces the rewritten source's path by the user's; in a
// make rule (rule) both are as GCC escapes them there (spaces, #, $).
func unmapPath(b []byte, rsrc, src string, rule bool) []byte {
	if rule {
		esc := strings.NewReplacer(" ", `\ `, "#", `\#`, "$", "$$")
		rsrc, src = esc.Replace(rsrc), esc.Replace(src)
	}
	return bytes.ReplaceAll(b, []byte(rsrc), []byte(src))
}

// link links the program: inv's inputs in order (a source's object where
// the source stood), the emulator library and what it needs.
func (o Options) link(cc, root, tmp string, inv *Invocation, objs []string) error {
	out := inv.Out
	if out == "" {
		out = "a.out"
	}
	lib := o.Library
	if lib == "" {
		var err error
		if lib, err = BuildLibrary(root, o); err != nil {
			return err
		}
	}
	// Not position-independent unless asked (-pie): a PIE's dynamic
	// loader relocates the Go runtime's tables word by word at every
	// start (some 39,000 relocations, with the page faults of the pages
	// they dirty), a few milliseconds of each run of a program that
	// lives well under a second.
	// prog is the program's own inputs, in order: the executable links
	// them with the emulator, the seed form without it.
	var prog []string
	for _, l := range inv.link {
		if l.src >= 0 {
			prog = append(prog, objs[l.src])
		} else {
			prog = append(prog, l.arg)
		}
	}
	if inv.Arch != "" {
		src := filepath.Join(tmp, "offload-arch.cpp")
		if err := os.WriteFile(src, []byte(archInit(inv.Arch, 101)), 0o644); err != nil {
			return err
		}
		obj := filepath.Join(tmp, "offload-arch.o")
		if err := o.run(cc, append(seedFlags(cc), "-x", "c++", "-c", src, "-o", obj), ""); err != nil {
			return fmt.Errorf("emud c++: --offload-arch=%s: %w", inv.Arch, err)
		}
		prog = append(prog, obj)
	}
	if h := MoriHeader(inv.Flags); h != "" { // the user's own MORI: emud's host control plane for it (mori.go)
		obj, err := o.moriHost(cc, root, tmp, h, inv)
		if err != nil {
			return err
		}
		prog = append(prog, obj)
	}
	var cmd []string
	if !inv.pie {
		cmd = append(cmd, "-no-pie")
	}
	if inv.Verbose {
		cmd = append(cmd, "-v")
	}
	cmd = append(cmd, prog...)
	if sec, why := o.seedForm(cc, tmp, out, lib, prog); sec != "" {
		cmd = append(cmd, sec)
	} else if o.Verbose {
		fmt.Fprintf(o.Stderr, "emud c++: %s has no seed form (a seed sweep starts it once per seed): %s\n", out, why)
	}
	cmd = append(cmd, lib, "-lpthread", "-ldl",
		"-Wl,--export-dynamic-symbol=pthread_create", "-Wl,--export-dynamic-symbol=pthread_join", memWrap, "-o", out)
	var linkErr bytes.Buffer
	o2 := o
	o2.Stderr = io.MultiWriter(o.Stderr, &linkErr)
	if err := o2.run(cc, cmd, ""); err != nil {
		return fmt.Errorf("emud c++: linking %s: %w%s", out, err, moriLinkHint(inv.Flags, linkErr.Bytes()))
	}
	return nil
}

// memWrap links the program's calls of the C library's memcpy, memmove
// and memset (and their _FORTIFY_SOURCE forms) to capi's lane.c wrappers,
// which note a lane's call on device memory: a store its access log,
// fed by -fsanitize=thread's callbacks, does not see (GCC leaves these
// calls to the sanitizer runtime's interceptors, which emud does not
// have). The program, its seed form and the seed server are linked so.
const memWrap = "-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset,--wrap=__memcpy_chk,--wrap=__memmove_chk,--wrap=__memset_chk"

// instrument makes lane code instrumented by default: -fsanitize=thread
// (the emulator implements its callbacks: the race detector sees each
// lane load and store, and a lane's host access fails it), with -g1's
// line tables so a race report names the access's file:line; unless the
// flags say -fno-sanitize=thread or choose another sanitizer (a
// -fsanitize=thread or -g of their own is kept). Volatile accesses get
// callbacks of their own (compiler cc's tsan-distinguish-volatile): a
// lane's loop of volatile loads is a poll (lane.c volatile_load).
func instrument(cc string, flags []string) []string {
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
	if isClang(cc) {
		flags = append(flags, "-mllvm", "-tsan-distinguish-volatile=1")
	} else {
		flags = append(flags, "--param=tsan-distinguish-volatile=1")
	}
	if !debug {
		flags = append(flags, "-g1")
	}
	return flags
}

// BuildLibrary builds the emulator as a C archive (go build
// -buildmode=c-archive -tags emud_nometrics ./capi) in the user cache directory, in a directory
// of its own per source tree (two checkouts building at once must not
// link each other's library), and returns its path. The archive is
// rebuilt only when a file of the tree that can go into it (Go, C,
// assembly, go.mod, go.sum) or a directory is newer than the last build's
// start, or EMUD_REBUILD is set: a build system links many programs, and
// even an up-to-date go build costs seconds. Builds of one tree take a
// lock, so parallel links (make -j) build it once.
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
	stamp := filepath.Join(dir, "libemud.stamp")
	unlock, err := lockFile(filepath.Join(dir, "lock"))
	if err != nil {
		return "", fmt.Errorf("emud c++: locking %s: %w", dir, err)
	}
	defer unlock()
	if os.Getenv("EMUD_REBUILD") == "" && upToDate(abs, lib, stamp) {
		return lib, nil
	}
	start := time.Now()
	goTool := "go"
	if g := os.Getenv("GO"); g != "" {
		goTool = g
	}
	// emud_nometrics: the C ABI serves no metrics, and without the tag
	// Prometheus's package initialisation runs at every program start
	// (engine's metrics.go).
	part := filepath.Join(dir, "libemud.part.a")
	if err := o.run(goTool, []string{"build", "-buildmode=c-archive", "-tags", "emud_nometrics", "-o", part, "./capi"}, abs, "CGO_ENABLED=1"); err != nil {
		return "", fmt.Errorf("emud c++: building the emulator library (go build -buildmode=c-archive -tags emud_nometrics ./capi in %s): %w", abs, err)
	}
	os.Remove(filepath.Join(dir, "libemud.part.h")) // go build's C header: the headers are include/'s
	if err := os.Rename(part, lib); err != nil {
		return "", err
	}
	if err := os.WriteFile(stamp, []byte(abs+"\n"), 0o644); err != nil {
		return "", err
	}
	// The stamp dates the build's start: a file saved during the build
	// is newer, so the next link rebuilds.
	return lib, os.Chtimes(stamp, start, start)
}

// upToDate says whether lib exists and no file that can go into it, and
// no directory, of tree root is newer than stamp.
func upToDate(root, lib, stamp string) bool {
	st, err := os.Stat(stamp)
	if err != nil {
		return false
	}
	if _, err := os.Stat(lib); err != nil {
		return false
	}
	built := st.ModTime()
	newer := errors.New("newer")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "examples" || name == "docs") {
			return filepath.SkipDir
		}
		switch filepath.Ext(name) {
		case ".go", ".c", ".h", ".s", ".S":
		default:
			if !d.IsDir() && name != "go.mod" && name != "go.sum" {
				return nil
			}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.ModTime().After(built) {
			return newer
		}
		return nil
	})
	return err == nil
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
		fmt.Fprintln(o.Stderr, "emud c++: running", name, strings.Join(args, " "))
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
