package cxx

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSeedFormSection: the section's parser takes what the driver writes
// and refuses, with words, what it does not.
func TestSeedFormSection(t *testing.T) {
	good := seedSection{server: "/c/emud-seed-server", object: "a.out" + SeedSuffix, sha256: strings.Repeat("ab", 32)}
	got, err := parseSeedSection(formatSeedSection(good))
	require.NoError(t, err)
	assert.Equal(t, good, got)
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "newline"},
		{"no newline", "server=/x", "newline"},
		{"not key=value", "server\n", "not key=value"},
		{"relative server", "server=x\nobject=a\nsha256=" + strings.Repeat("0", 64) + "\n", "absolute"},
		{"object escapes", "server=/x\nobject=../a\nsha256=" + strings.Repeat("0", 64) + "\n", "inside"},
		{"absolute object", "server=/x\nobject=/a\nsha256=" + strings.Repeat("0", 64) + "\n", "inside"},
		{"short hash", "server=/x\nobject=a\nsha256=00\n", "64"},
		{"upper hash", "server=/x\nobject=a\nsha256=" + strings.Repeat("A", 64) + "\n", "64"},
		{"twice", "server=/x\nserver=/y\n", "twice"},
		{"unknown", "server=/x\nobject=a\nsha256=" + strings.Repeat("0", 64) + "\nmore=1\n", "unknown"},
		{"missing", "server=/x\nobject=a\n", "no sha256"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseSeedSection([]byte(c.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// The assembler text escapes what .ascii must.
	asm := string(seedAsm(seedSection{server: `/a "b"\c`, object: "o", sha256: "s"}))
	assert.Contains(t, asm, `.ascii "server=/a \"b\"\\c\012"`)
	assert.Contains(t, asm, ".note.GNU-stack", "without it the program's stack is executable")
}

// FuzzSeedSection: the parser never panics, and what it accepts prints
// back as the same bytes.
func FuzzSeedSection(f *testing.F) {
	f.Add([]byte("server=/c/s\nobject=p.emud-seeds.so\nsha256=" + strings.Repeat("0f", 32) + "\n"))
	f.Add([]byte("server=/x\n"))
	f.Add([]byte("=\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseSeedSection(b)
		if err != nil {
			return
		}
		back, err := parseSeedSection(formatSeedSection(s))
		require.NoError(t, err)
		require.Equal(t, s, back)
	})
}

// TestReadSeedFormErrors: no section is ErrNoSeedForm; a changed object
// or a missing server is a *SeedFormError saying which.
func TestReadSeedFormErrors(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "../examples/cxx/alltoall_put.cpp")
	form, err := ReadSeedForm(prog)
	require.NoError(t, err)
	assert.True(t, filepath.IsAbs(form.Object) && filepath.IsAbs(form.Server), "%+v", form)
	// The section's object must not give the program an executable stack.
	ef, err := elf.Open(prog)
	require.NoError(t, err)
	stack := false
	for _, p := range ef.Progs {
		if p.Type == elf.PT_GNU_STACK {
			stack = true
			assert.Zero(t, p.Flags&elf.PF_X, "the program's stack is executable")
		}
	}
	ef.Close()
	assert.True(t, stack, "no PT_GNU_STACK header")

	// A copy of the executable beside a changed object.
	dir := t.TempDir()
	exe := filepath.Join(dir, "p")
	b, err := os.ReadFile(prog)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(exe, b, 0o755))
	var se *SeedFormError
	_, err = ReadSeedForm(exe)
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "seed object")
	obj, err := os.ReadFile(form.Object)
	require.NoError(t, err)
	name := filepath.Join(dir, filepath.Base(form.Object))
	require.NoError(t, os.WriteFile(name, append(obj, 0), 0o644))
	_, err = ReadSeedForm(exe)
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "SHA-256")
	require.NoError(t, os.WriteFile(name, obj, 0o644))
	_, err = ReadSeedForm(exe)
	require.NoError(t, err)

	cc, err := compiler("")
	require.NoError(t, err)
	plain := filepath.Join(dir, "plain")
	src := plain + ".c"
	require.NoError(t, os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644))
	out, err := exec.Command(cc, "-x", "c", src, "-o", plain).CombinedOutput()
	require.NoError(t, err, string(out))
	_, err = ReadSeedForm(plain)
	require.ErrorIs(t, err, ErrNoSeedForm)
	_, err = ReadSeedForm(filepath.Join(dir, "absent"))
	require.ErrorAs(t, err, &se)
}

// TestSeedServerPerLibraryBuild: the seed server is named after its
// library's build, and a new build's server replaces the old one, so a
// program linked with the old library finds no server (and runs a
// process per seed) instead of loading its seed form into another
// build's emulator.
func TestSeedServerPerLibraryBuild(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := t.TempDir()
	lib2 := filepath.Join(dir, "libemud.a")
	b, err := os.ReadFile(lib.path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(lib2, b, 0o644))
	src, err := filepath.Abs("testdata/seedsrv/globals.cpp")
	require.NoError(t, err)
	build := func(name string) string {
		prog := filepath.Join(dir, name)
		var log, out bytes.Buffer // apart: the link's stderr is a MultiWriter, its stdout not
		require.NoError(t, Run([]string{src, "-o", prog}, Options{Root: root, Library: lib2, Stdout: &out, Stderr: &log}), out.String()+log.String())
		return prog
	}
	old := build("old")
	form, err := ReadSeedForm(old)
	require.NoError(t, err)
	assert.Equal(t, dir, filepath.Dir(form.Server))

	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(lib2, later, later)) // a rebuilt library
	newer := build("new")
	form2, err := ReadSeedForm(newer)
	require.NoError(t, err)
	assert.NotEqual(t, form.Server, form2.Server)
	var se *SeedFormError
	_, err = ReadSeedForm(old)
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "seed server")
}
