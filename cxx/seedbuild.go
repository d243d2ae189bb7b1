package cxx

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// isClang says whether compiler cc is clang (by its name), whose flags
// differ from GCC's in places.
func isClang(cc string) bool { return strings.Contains(filepath.Base(cc), "clang") }

// seedFlags are the compile flags every object emud c++ makes gets, so
// that it can go into a program's seed form as well as its executable:
// position-independent code; calls to other objects' functions through
// the GOT rather than a PLT stub (the seed form's calls of the server's
// __tsan_* callbacks, millions a run: alltoall_put -O0 through a server
// went from 117-119 to 88 ms CPU a seed; in the executable the linker
// makes them direct calls); and (GCC) no STB_GNU_UNIQUE symbols, which
// mark a shared object NODELETE: dlclose would leave it loaded, and the
// next seed's dlopen would see the last seed's globals.
func seedFlags(cc string) []string {
	if isClang(cc) {
		return []string{"-fPIC", "-fno-plt"} // clang makes no unique symbols and knows no -fno-gnu-unique
	}
	return []string{"-fPIC", "-fno-plt", "-fno-gnu-unique"}
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
	cmd = append(cmd, "-lpthread", "-ldl", memWrap, "-o", so)
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

// serverMain is the seed server's main: the server is capi's
// emud_seed_serve (seedsrv.c), linked from the same libemud.a as the
// programs it loads. The C++ library is the server's, shared by every
// seed's object, so the standard streams' formatting (a seed's std::hex,
// setprecision, a failed state) and the global locales, which a process
// starts fresh, are saved before the first seed and put back after each
// (seedsrv.c calls these hooks).
const serverMain = `#include <clocale>
#include <iostream>
#include <locale>
#include <string>

extern "C" int emud_seed_serve(int argc, char** argv);

namespace {
std::ios saved_cout(nullptr), saved_cerr(nullptr), saved_clog(nullptr), saved_cin(nullptr);
std::wios saved_wcout(nullptr), saved_wcerr(nullptr), saved_wclog(nullptr), saved_wcin(nullptr);
std::locale saved_global;
std::string saved_c_locale;
}  // namespace

extern "C" void emud_seed_streams_save(void) {
  saved_cout.copyfmt(std::cout);
  saved_cerr.copyfmt(std::cerr);
  saved_clog.copyfmt(std::clog);
  saved_cin.copyfmt(std::cin);
  saved_wcout.copyfmt(std::wcout);
  saved_wcerr.copyfmt(std::wcerr);
  saved_wclog.copyfmt(std::wclog);
  saved_wcin.copyfmt(std::wcin);
  saved_global = std::locale();
  const char* l = std::setlocale(LC_ALL, nullptr);
  saved_c_locale = l ? l : "C";
}

extern "C" void emud_seed_streams_restore(void) {
  std::locale::global(saved_global);
  std::setlocale(LC_ALL, saved_c_locale.c_str());
  std::cout.copyfmt(saved_cout);
  std::cerr.copyfmt(saved_cerr);
  std::clog.copyfmt(saved_clog);
  std::cin.copyfmt(saved_cin);
  std::wcout.copyfmt(saved_wcout);
  std::wcerr.copyfmt(saved_wcerr);
  std::wclog.copyfmt(saved_wclog);
  std::wcin.copyfmt(saved_wcin);
  for (std::ios* s : {static_cast<std::ios*>(&std::cout), static_cast<std::ios*>(&std::cerr), static_cast<std::ios*>(&std::clog), static_cast<std::ios*>(&std::cin)}) s->clear();
  for (std::wios* s : {static_cast<std::wios*>(&std::wcout), static_cast<std::wios*>(&std::wcerr), static_cast<std::wios*>(&std::wclog), static_cast<std::wios*>(&std::wcin)}) s->clear();
}

int main(int argc, char** argv) { return emud_seed_serve(argc, argv); }
`

// serverLink is the link command of a server from src and lib, to out.
// The whole archive: a program's link takes each of the library's objects
// that defines a symbol it calls, among them interposers of the C
// library's (pthread_barrier_wait in pbarrier.c), which the server's own
// code never calls. Linked as needed, the server would lack them, and a
// seed object's calls would bind to the C library's silently (a barrier
// waited natively, holding the thread's turn).
func serverLink(src, lib, out string) []string {
	return []string{"-no-pie", "-O1", "-x", "c++", src, "-x", "none",
		"-Wl,--whole-archive", lib, "-Wl,--no-whole-archive", "-lpthread", "-ldl",
		"-Wl,--export-dynamic", memWrap, "-o", out}
}

// seedServer returns the seed server of lib's build next to it, building
// it when it is absent. Its name carries the build (lib's size and
// modification time), and building one removes the servers of earlier
// builds: a program linked with an older library then finds no server
// (ReadSeedForm says so) and runs a process per seed, rather than its
// seed form running on another build's emulator. The server exports its
// dynamic symbols, so a seed form's references to the emulator's C ABI,
// its ThreadSanitizer callbacks and its interposers of the C library's
// functions (pthread_create, pthread_barrier_wait) resolve to the server's.
func (o Options) seedServer(cc, lib string) (string, error) {
	dir, err := filepath.Abs(filepath.Dir(lib))
	if err != nil {
		return "", err
	}
	lst, err := os.Stat(lib)
	if err != nil {
		return "", err
	}
	// The name is the library's build and the way the server is linked
	// (serverLink's flags): a server of an older recipe is not taken for
	// this one.
	server := filepath.Join(dir, fmt.Sprintf("%s-%016x", ServerName, fnv64(fmt.Sprint(lst.Size(), lst.ModTime().UnixNano(), serverLink("", "", "")))))
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
	src := filepath.Join(dir, ServerName+".cpp")
	if err := os.WriteFile(src, []byte(serverMain), 0o644); err != nil {
		return "", err
	}
	part := server + ".part"
	if err := o.run(cc, serverLink(src, lib, part), ""); err != nil {
		os.Remove(part)
		return "", err
	}
	if err := os.Rename(part, server); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(dir, ServerName+"-*"))
	for _, f := range old {
		if f != server && !strings.HasSuffix(f, ".cpp") {
			os.Remove(f) // a running server keeps its inode
		}
	}
	return server, nil
}
