package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
)

// Every file a command reads has a size bound, named when it is passed:
// --table /dev/zero and merge /dev/zero read until the process died "out
// of memory" with exit status 2 (the hang's).
func TestFileReadersAreBounded(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"calibrate", "--table", "/dev/zero"}, "invalid --table /dev/zero: larger than the 16 MiB that --table reads"},
		{[]string{"merge", "/dev/zero"}, `merge: /dev/zero: not an emud shard record: it starts with '\x00'`},
		{[]string{"fit", "/dev/zero"}, "longer than 4096 bytes"},
		{[]string{"serve", "--token-file", "/dev/zero"}, "larger than the 4 KiB that --token-file reads"},
		{[]string{"calibrate", "--table", "/"}, "a directory, not a file"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, status := execute(t, tc.args...)
			assert.Equal(t, scenario.ExitFailed, status, errOut)
			assert.Contains(t, errOut, tc.msg)
		})
	}
}

// Outputs are whole or absent: a failed write leaves the old file and no
// temporary one (a failed --shard-out rename left OUT.tmp).
func TestOutputsAreWholeOrAbsent(t *testing.T) {
	dir := t.TempDir()
	blocked := filepath.Join(dir, "rec.json")
	require.NoError(t, os.MkdirAll(filepath.Join(blocked, "x"), 0o755)) // a rename over it fails
	_, errOut, status := execute(t, "explore", "alltoall", "--ranks", "2", "--bytes", "64", "--seeds", "2", "--shard", "0/2", "--shard-out", blocked)
	assert.Equal(t, scenario.ExitFailed, status, errOut)
	assert.Contains(t, errOut, "--shard-out")
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, es, 1, "only the directory in the way: no temporary file left")
	assert.Equal(t, "rec.json", es[0].Name())
}
