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

// farm checks what goes into scripts and the sweep it farms out before
// anything is printed or submitted; before, each of these printed or
// wrote a job and exited 0.
func TestFarmRefusesWhatWouldBreakItsScripts(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"farm", "k8s", "--image", "x", "--name", "a; rm -rf ~", "--", "explore", "alltoall"}, `invalid --name "a; rm -rf ~": a Job name is lowercase letters`},
		{[]string{"farm", "k8s", "--image", "x", "--name", "Emud", "--", "explore", "alltoall"}, "invalid --name"},
		{[]string{"farm", "k8s", "--image", "x y", "--", "explore", "alltoall"}, "invalid --image"},
		{[]string{"farm", "k8s", "--image", "x", "--", "explore", "nosuch"}, `farm: the sweep explore: invalid --scenario "nosuch": known scenarios: `},
		{[]string{"farm", "k8s", "--image", "x", "--", "explore", "--scenario", "nosuch"}, `invalid --scenario "nosuch"`},
		{[]string{"farm", "k8s", "--image", "x", "--", "perf", "nosuch"}, `invalid --scenario "nosuch"`},
		{[]string{"farm", "k8s", "--image", "x", "--", "hunt", "nosuch"}, "farm: the sweep hunt:"},
		{[]string{"farm", "k8s", "--image", "x", "--", "explore", "alltoall", "--sedes", "5"}, "farm: the sweep explore: unknown flag: --sedes"},
		{[]string{"farm", "k8s", "--image", "x", "--", "explore", "alltoall", "relay"}, "takes one scenario"},
		{[]string{"farm", "slurm", "--dir", dir, "--sbatch", "--partition=gpu\nrm -rf ~", "--", "explore", "alltoall"}, "invalid --sbatch"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, errOut, status := execute(t, tc.args...)
			assert.Equal(t, scenario.ExitFailed, status, errOut)
			assert.Contains(t, errOut, tc.msg)
			assert.Empty(t, stdout, "no job printed")
		})
	}
	_, err := os.Stat(filepath.Join(dir, "emud.sbatch"))
	assert.True(t, os.IsNotExist(err), "no job script written")
}

// A new farm slurm sweep removes the records an earlier sweep left in
// --dir, and says so: they were merged with the new ones, or stood in for
// its failed tasks.
func TestFarmSlurmRemovesStaleRecords(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	// sbatch stand-in: prints a job id, runs nothing.
	require.NoError(t, os.WriteFile(filepath.Join(bin, "sbatch"), []byte("#!/bin/sh\necho 42\n"), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, f := range []string{"shard-0.json", "shard-7.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(`{"old": true}`), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	stdout, errOut, status := execute(t, "farm", "slurm", "--dir", dir, "--shards", "2", "--", "explore", "alltoall", "--seeds", "4")
	require.Zero(t, status, errOut)
	assert.Contains(t, stdout, "submitted job 42")
	assert.Contains(t, errOut, "removed 2 shard record(s) of an earlier sweep")
	left, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.Join(dir, "emud.sbatch"), filepath.Join(dir, "notes.txt")}, left)
}
