package cxx

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpinLoadSites: a lane that waits for a flag already set and then
// reads it at another line, twice (MORI's waitSignal then readSignal,
// test_gda_signal_ut's round C), finishes: a cycle of atomic loads is a
// spin only at the same lines. Before, the second wait-and-read was taken
// for a poll for good and the run ended in a hang report (checked).
func TestSpinLoadSites(t *testing.T) {
	needCxx(t)
	src, err := filepath.Abs(filepath.Join("testdata", "spin", "wait_then_read.cpp"))
	require.NoError(t, err)
	stdout, stderr, code := runExample(t, buildExample(t, src, "-O1"))
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "wait_then_read: PASS")
}
