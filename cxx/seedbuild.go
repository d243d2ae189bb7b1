package cxx

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// seedFlags are the compile flags every object emud c++ makes gets, so
// that it can go into a program's seed form as well as its executable:
// position-independent code, and (GCC) no STB_GNU_UNIQUE symbols, which
// mark a shared object NODELETE: dlclose would leave it loaded, and the
// next seed's dlopen would see the last seed's globals.
func seedFlags(cc string) []string {
	if strings.Contains(filepath.Base(cc), "clang") {
		return []string{"-fPIC"} // clang makes no unique symbols and knows no -fno-gnu-unique
	}
	return []string{"-fPIC", "-fno-gnu-unique"}
}

// noSeedFlags are link arguments that make a shared object of the
// program meaningless.
func noSeedFlag(a string) bool {
	return a == "-static" || a == "-static-pie" || a == "-shared" || a == "-Wl,-static" || a == "-Wl,-Bstatic"
}

// seedForm links the program's inputs prog (objects, archives, -l, -L,
// -Wl, in order) as out's seed form, out+SeedSuffix, and returns the
// object file of the SeedSection that names it, to link into out; or ""
// and why there is none (a link that cannot make one is no error: the
// program then runs a process per seed).
func (o Options) seedForm(cc, tmp, out, lib string, prog []string) (string, string) {
	so := out + SeedSuffix
	os.Remove(so) // a stale one must not outlive a link that makes none
	for _, a := range prog {
		if noSeedFlag(a) {
			return "", "it is linked with " + a
		}
	}
	server, err := o.seedServer(cc, lib)
	if err != nil {
		return "", fmt.Sprintf("building the seed server: %v", err)
	}
	cmd := []string{"-shared", "-Wl,-Bsymbolic"}
	cmd = append(cmd, prog...)
	cmd = append(cmd, "-lpthread", "-ldl", "-o", so)
	if o.Verbose {
		fmt.Fprintln(o.Stderr, "emud c++: running", cc, strings.Join(cmd, " "))
	}
	// Quiet: a failed try is no error of the user's link.
	if err := o.quiet().run(cc, cmd, ""); err != nil {
		os.Remove(so)
		return "", "its objects do not link as a shared object (one not position-independent, compiled without -fPIC?)"
	}
	sym, err := perProcessSymbol(so)
	if err != nil {
		os.Remove(so)
		return "", fmt.Sprintf("reading %s: %v", so, err)
	}
	if sym != "" {
		os.Remove(so)
		return "", fmt.Sprintf("it calls %s: a program that forks, execs, spawns or runs MPI ranks keeps a process per seed", sym)
	}
	sum, err := fileSHA256(so)
	if err != nil {
		os.Remove(so)
		return "", err.Error()
	}
	sec := seedSection{server: server, object: filepath.Base(so), sha256: sum}
	src := filepath.Join(tmp, "emud-seeds.s")
	if err := os.WriteFile(src, seedAsm(sec), 0o644); err != nil {
		os.Remove(so)
		return "", err.Error()
	}
	obj := filepath.Join(tmp, "emud-seeds.o")
	if err := o.run(cc, []string{"-c", src, "-o", obj}, ""); err != nil {
		os.Remove(so)
		return "", fmt.Sprintf("assembling the %s section: %v", SeedSection, err)
	}
	return obj, ""
}

// quiet discards the tools' output.
func (o Options) quiet() Options {
	o.Stdout, o.Stderr, o.Verbose = discard{}, discard{}, false
	return o
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// serverMain is the seed server's C main: the server is capi's
// emud_seed_serve (seedsrv.c), linked from the same libemud.a as the
// programs it loads.
const serverMain = "int emud_seed_serve(int argc, char** argv);\nint main(int argc, char** argv) { return emud_seed_serve(argc, argv); }\n"

// seedServer returns the seed server of lib's build next to it, building
// it when it is absent. Its name carries the build (lib's size and
// modification time), and building one removes the servers of earlier
// builds: a program linked with an older library then finds no server
// (ReadSeedForm says so) and runs a process per seed, rather than its
// seed form running on another build's emulator. The server exports its
// dynamic symbols, so a seed form's references to the emulator's C ABI,
// its ThreadSanitizer callbacks and its pthread_create resolve to the
// server's.
func (o Options) seedServer(cc, lib string) (string, error) {
	dir, err := filepath.Abs(filepath.Dir(lib))
	if err != nil {
		return "", err
	}
	lst, err := os.Stat(lib)
	if err != nil {
		return "", err
	}
	server := filepath.Join(dir, fmt.Sprintf("%s-%016x", ServerName, fnv64(fmt.Sprint(lst.Size(), lst.ModTime().UnixNano()))))
	fresh := func() bool {
		_, err := os.Stat(server)
		return err == nil
	}
	if fresh() {
		return server, nil
	}
	unlock, err := lockFile(filepath.Join(dir, "seed-server.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if fresh() { // another link built it meanwhile
		return server, nil
	}
	src := filepath.Join(dir, ServerName+".c")
	if err := os.WriteFile(src, []byte(serverMain), 0o644); err != nil {
		return "", err
	}
	part := server + ".part"
	if err := o.run(cc, []string{"-no-pie", "-x", "c", src, "-x", "none", lib, "-lpthread", "-ldl",
		"-Wl,--export-dynamic", "-o", part}, ""); err != nil {
		os.Remove(part)
		return "", err
	}
	if err := os.Rename(part, server); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(dir, ServerName+"-*"))
	for _, f := range old {
		if f != server && !strings.HasSuffix(f, ".c") {
			os.Remove(f) // a running server keeps its inode
		}
	}
	return server, nil
}
