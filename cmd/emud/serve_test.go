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

func TestServeFlags(t *testing.T) {
	emptyFile := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(emptyFile, nil, 0o600))
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--max-runs", "0"}, "--max-runs"},
		{[]string{"--max-body", "0"}, "--max-body"},
		{[]string{"--keep", "0"}, "--keep"},
		{[]string{"--addr", "256.0.0.1:99999"}, "--addr"},
		{[]string{"--addr", "0.0.0.0:0"}, "invalid --addr 0.0.0.0:0: not a loopback address, and no --token-file"},
		{[]string{"--mem-budget", "1000000G"}, "invalid --mem-budget"},
		{[]string{"--token-file", "/nonexistent/token"}, "--token-file"},
		{[]string{"--token-file", "/dev/zero"}, "--token-file /dev/zero: larger than the 4 KiB"},
		{[]string{"--token-file", emptyFile}, "its first line is empty"},
		{[]string{"--allow-host", "a:1"}, "invalid --allow-host"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, status := execute(t, append([]string{"serve"}, tc.args...)...)
			assert.Equal(t, scenario.ExitFailed, status)
			assert.Contains(t, errOut, tc.flag)
		})
	}
}
