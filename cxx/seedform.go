package cxx

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The seed form of a program (docs/guide-cxx.md; capi's doc, "The seed
// server"): the program's objects linked as a shared object beside the
// executable, which emud's seed server (a warm process that holds the
// emulator) loads afresh for every seed of a sweep.
const (
	// SeedSection is the executable's ELF section naming its seed form.
	SeedSection = ".emud_seeds"
	// SeedSuffix is appended to the executable's name for its seed form.
	SeedSuffix = ".emud-seeds.so"
	// ServerName starts the seed server's file name, next to the cached
	// libemud.a; the rest names the library's build (seedServer).
	ServerName = "emud-seed-server"
	// maxSeedSection bounds the section a reader accepts: three lines of
	// paths and a hash.
	maxSeedSection = 64 << 10
)

// SeedForm is where a program's seed sweep can run without a process per
// seed: the server binary and the program's shared object, both absolute.
type SeedForm struct {
	Server, Object string
}

// ErrNoSeedForm says the executable was linked without a seed form (not
// by emud c++, or by one that could not make it: -v says why).
var ErrNoSeedForm = errors.New("no seed form (no " + SeedSection + " section)")

// SeedFormError says why an executable's seed form cannot be used.
type SeedFormError struct {
	Exe    string
	Reason string
}

func (e *SeedFormError) Error() string {
	return fmt.Sprintf("%s: seed form unusable: %s", e.Exe, e.Reason)
}

// seedSection is the section's parsed content.
type seedSection struct {
	server, object, sha256 string
}

// parseSeedSection reads the section's `key=value\n` lines: server (an
// absolute path), object (relative to the executable's directory, no
// "..") and sha256 (64 hex digits), each once, nothing else.
func parseSeedSection(b []byte) (seedSection, error) {
	var s seedSection
	if len(b) > maxSeedSection {
		return s, fmt.Errorf("section of %d bytes, over %d", len(b), maxSeedSection)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return s, errors.New("section does not end in a newline")
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b[:len(b)-1]), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return s, fmt.Errorf("line %q is not key=value", line)
		}
		if seen[k] {
			return s, fmt.Errorf("key %q twice", k)
		}
		seen[k] = true
		if v == "" || strings.ContainsRune(v, 0) {
			return s, fmt.Errorf("key %q: empty or NUL in value", k)
		}
		switch k {
		case "server":
			if !filepath.IsAbs(v) {
				return s, fmt.Errorf("server=%q is not an absolute path", v)
			}
			s.server = v
		case "object":
			if filepath.IsAbs(v) || v != filepath.Clean(v) || v == "." || strings.HasPrefix(v, "../") || v == ".." {
				return s, fmt.Errorf("object=%q is not a clean path inside the executable's directory", v)
			}
			s.object = v
		case "sha256":
			if len(v) != 64 || strings.ToLower(v) != v {
				return s, fmt.Errorf("sha256=%q: want 64 lowercase hex digits", v)
			}
			if _, err := hex.DecodeString(v); err != nil {
				return s, fmt.Errorf("sha256=%q: want 64 lowercase hex digits", v)
			}
			s.sha256 = v
		default:
			return s, fmt.Errorf("unknown key %q", k)
		}
	}
	for _, k := range []string{"server", "object", "sha256"} {
		if !seen[k] {
			return s, fmt.Errorf("no %s= line", k)
		}
	}
	return s, nil
}

// formatSeedSection is parseSeedSection's inverse.
func formatSeedSection(s seedSection) []byte {
	return []byte("server=" + s.server + "\nobject=" + s.object + "\nsha256=" + s.sha256 + "\n")
}

// ReadSeedForm reads exe's seed form: ErrNoSeedForm when exe has none, a
// *SeedFormError when the section is malformed, a file is missing, the
// server is not executable or the object is not the one exe was linked
// with (its SHA-256 differs).
func ReadSeedForm(exe string) (SeedForm, error) {
	bad := func(format string, args ...any) (SeedForm, error) {
		return SeedForm{}, &SeedFormError{exe, fmt.Sprintf(format, args...)}
	}
	f, err := elf.Open(exe)
	if err != nil {
		return bad("reading its ELF headers: %v", err)
	}
	defer f.Close()
	sec := f.Section(SeedSection)
	if sec == nil {
		return SeedForm{}, ErrNoSeedForm
	}
	if sec.Size > maxSeedSection {
		return bad("section %s of %d bytes, over %d", SeedSection, sec.Size, maxSeedSection)
	}
	b, err := sec.Data()
	if err != nil {
		return bad("reading section %s: %v", SeedSection, err)
	}
	s, err := parseSeedSection(b)
	if err != nil {
		return bad("section %s: %v", SeedSection, err)
	}
	dir, err := filepath.Abs(filepath.Dir(exe))
	if err != nil {
		return bad("%v", err)
	}
	form := SeedForm{Server: s.server, Object: filepath.Join(dir, s.object)}
	st, err := os.Stat(form.Server)
	switch {
	case err != nil:
		return bad("the seed server: %v", err)
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return bad("the seed server %s is not an executable file", form.Server)
	}
	sum, err := fileSHA256(form.Object)
	if err != nil {
		return bad("the seed object: %v", err)
	}
	if sum != s.sha256 {
		return bad("the seed object %s has SHA-256 %s, not the %s it was linked with (rebuilt or replaced since)", form.Object, sum, s.sha256)
	}
	return form, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// perProcessSymbols are the functions whose use keeps a process per
// seed: a program that forks, execs or spawns (procs.c's fork interposer
// makes ranks of children; a server cannot hand those a fresh process),
// or runs its ranks as MPI processes (mpi.c).
var perProcessSymbols = map[string]bool{
	"fork": true, "vfork": true, "clone": true, "clone3": true, "__clone": true,
	"posix_spawn": true, "posix_spawnp": true,
	"execv": true, "execve": true, "execvp": true, "execvpe": true, "execl": true, "execle": true, "execlp": true,
	"fexecve": true, "execveat": true, "system": true, "popen": true,
	"wait": true, "waitpid": true, "wait3": true, "wait4": true, "waitid": true,
	"daemon": true,
}

// perProcessSymbol names the first undefined dynamic symbol of the shared
// object so that keeps a process per seed, or "".
func perProcessSymbol(so string) (string, error) {
	f, err := elf.Open(so)
	if err != nil {
		return "", err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return "", err
	}
	var hit []string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			continue
		}
		name, _, _ := strings.Cut(s.Name, "@")
		if perProcessSymbols[name] || strings.HasPrefix(name, "MPI_") || strings.HasPrefix(name, "PMPI_") {
			hit = append(hit, name)
		}
	}
	sort.Strings(hit)
	if len(hit) == 0 {
		return "", nil
	}
	return hit[0], nil
}

// seedAsm is the assembler source of the section object.
func seedAsm(s seedSection) []byte {
	var b bytes.Buffer
	b.WriteString("\t.section " + SeedSection + ",\"\",@progbits\n")
	for _, line := range strings.SplitAfter(string(formatSeedSection(s)), "\n") {
		if line == "" {
			continue
		}
		b.WriteString("\t.ascii \"")
		for _, c := range []byte(line) {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20 || c >= 0x7f:
				fmt.Fprintf(&b, "\\%03o", c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteString("\"\n")
	}
	// An object without this note makes the linker give the program an
	// executable stack.
	b.WriteString("\t.section .note.GNU-stack,\"\",@progbits\n")
	return b.Bytes()
}
