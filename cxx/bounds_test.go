package cxx

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxRSS runs prog with args and returns its peak resident set in bytes.
func maxRSS(t *testing.T, prog string, args ...string) int64 {
	t.Helper()
	cmd := exec.Command(prog, args...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "PASS")
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, ok, "no rusage on this platform")
	return ru.Maxrss << 10 // KiB on Linux
}

// The state of a launch's lanes goes when the launch retires: 300
// launches of 4096 lanes peak within 32 MiB of 30 launches. Before, the
// simulator kept each finished wave's actor function, and with it the
// wave's lanes (~0.9 KiB a lane): 100 launches peaked at 357 MB, 300 at
// 1069 MB; now 22 MB and about 35 MB.
func TestLaunchesFreeLaneState(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "launches.cpp"), "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	few, many := maxRSS(t, prog, "30"), maxRSS(t, prog, "300")
	t.Logf("peak RSS: 30 launches %d MiB, 300 launches %d MiB", few>>20, many>>20)
	assert.Less(t, many-few, int64(32<<20), fmt.Sprintf("270 more launches grew the peak by %d MiB", (many-few)>>20))
}
