package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sourceLine matches the file:line a report names a kernel call by.
var sourceLine = regexp.MustCompile(`\.go:\d+`)

// golden compares got with testdata/name, or rewrites the file under
// -update: for tests that pin a whole report. Source line numbers are
// blanked (file.go:N) so that editing a scenario's code does not change
// its report's golden file.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = sourceLine.ReplaceAllString(got, ".go:N")
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: run go test -run %s -update", t.Name())
	require.Equal(t, string(want), got, "report differs from %s (rewrite with -update if the change is meant)", path)
}
