// Package golden compares a test's whole output (a hang report, a trace)
// with a file under testdata/, and rewrites the file when the test runs
// with -update: for tests that pin a whole report rather than pieces of it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with what the tests produce")

// sourceLine matches a file:line a report names kernel code by.
var sourceLine = regexp.MustCompile(`\.go:\d+`)

// Check compares got with testdata/name, or writes it there under -update.
// Source line numbers (file.go:123) are blanked to file.go:N first, so
// that editing the code a report points into does not change the file.
func Check(t testing.TB, name, got string) {
	t.Helper()
	got = sourceLine.ReplaceAllString(got, ".go:N")
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file %s: run go test -run '%s' -update", path, t.Name())
	require.Equal(t, string(want), got, "output differs from %s (go test -run '%s' -update rewrites it if the change is meant)", path, t.Name())
}
