package fileio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	exact := filepath.Join(dir, "exact")
	require.NoError(t, os.WriteFile(exact, []byte("12345678"), 0o644))
	for _, tc := range []struct {
		name, path string
		limit      int64
		want, err  string
	}{
		{"under", exact, 100, "12345678", ""},
		{"exactly the limit", exact, 8, "12345678", ""},
		{"one over", exact, 7, "", "--x " + exact + ": larger than the 7 bytes that --x reads"},
		{"endless", "/dev/zero", 1 << 20, "", "larger than the 1 MiB that --x reads"},
		{"missing", filepath.Join(dir, "nope"), 10, "", "--x: open"},
		{"directory", dir, 10, "", "a directory, not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadFile(tc.path, tc.limit, "--x")
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
		})
	}
	_, err := ReadFile("/dev/zero", 1<<10, "--table")
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(1<<10), tl.Limit)
}

// An output is whole or absent: the old file survives a failed write, and
// no temporary file is left over.
func TestCreateCommitAbort(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	require.NoError(t, os.WriteFile(out, []byte("old"), 0o644))

	f, err := Create(out, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("half")
	require.NoError(t, err)
	got, _ := os.ReadFile(out)
	assert.Equal(t, "old", string(got), "nothing changes before Commit")
	f.Abort()
	got, _ = os.ReadFile(out)
	assert.Equal(t, "old", string(got), "an aborted write leaves the old file")
	assertOnly(t, dir, "out.json")

	require.NoError(t, WriteFile(out, []byte("new"), 0o600))
	got, _ = os.ReadFile(out)
	assert.Equal(t, "new", string(got))
	st, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	assertOnly(t, dir, "out.json")

	// A rename that fails (the target is a non-empty directory) leaves
	// no temporary file.
	blocked := filepath.Join(dir, "blocked")
	require.NoError(t, os.MkdirAll(filepath.Join(blocked, "x"), 0o755))
	err = WriteFile(blocked, []byte("data"), 0o644)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "writing "+blocked)
	assertOnly(t, dir, "blocked", "out.json")

	_, err = Create(filepath.Join(dir, "no", "such", "dir", "f"), 0o644)
	assert.Error(t, err)
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	assert.Equal(t, names, got, "files in %s: %s", dir, strings.Join(got, " "))
}
