package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
)

// runShards runs sweep as n shards, each writing its record to
// dir/<prefix>K.json, and returns the files.
func runShards(t *testing.T, dir, prefix string, sweep []string, n int) []string {
	t.Helper()
	var files []string
	for k := range n {
		f := filepath.Join(dir, fmt.Sprintf("%s%d.json", prefix, k))
		_, stderr, status := execute(t, append(sweep, "--shard", fmt.Sprintf("%d/%d", k, n), "--shard-out", f)...)
		require.Zero(t, status, stderr)
		files = append(files, f)
	}
	return files
}

// assertMergeIsSingle checks that merging files prints what sweep run
// whole prints, as text and as JSON (stdout, stderr and exit status), and
// returns that status.
func assertMergeIsSingle(t *testing.T, sweep, files []string) int {
	t.Helper()
	status := 0
	for _, js := range [][]string{nil, {"--json"}} {
		wantOut, wantErr, wantStatus := execute(t, append(sweep, js...)...)
		gotOut, gotErr, gotStatus := execute(t, append(append([]string{"merge"}, js...), files...)...)
		assert.Equal(t, wantOut, gotOut)
		assert.Equal(t, wantErr, gotErr)
		assert.Equal(t, wantStatus, gotStatus)
		status = gotStatus
	}
	return status
}

// Shards of a sweep merge into exactly what one explore prints (text and
// JSON, exit status), with a planted bug found in the third shard; merge
// names a missing shard, a duplicate one and a mismatched flag.
func TestMergeShardsIsTheSingleRun(t *testing.T) {
	dir := t.TempDir()
	sweep := []string{"explore", "alltoall-early-reuse", "--seeds", "12", "--first-seed", "3", "--ranks", "2", "--bytes", "4K"}
	files := runShards(t, dir, "s", sweep, 4)
	assert.NotZero(t, assertMergeIsSingle(t, sweep, files), "the planted bug is found")

	other := filepath.Join(dir, "other.json")
	_, stderr, status := execute(t, append(sweep, "--perturb", "2", "--shard", "2/4", "--shard-out", other)...)
	require.Zero(t, status, stderr)
	for _, tc := range []struct {
		files []string
		err   string
	}{
		{[]string{files[0], files[1], files[3]}, "merge: missing shard(s) 2/4 of 4"},
		{append(files, files[1]), "merge: duplicate shard 1/4: " + files[1] + " and " + files[1]},
		{[]string{files[0], files[1], other, files[3]}, "flag --perturb differs: " + files[0] + ` (shard 0/4) has it unset (the default), ` + other + ` (shard 2/4) has "2"`},
	} {
		_, stderr, status := execute(t, append([]string{"merge"}, tc.files...)...)
		assert.NotZero(t, status)
		assert.Contains(t, stderr, tc.err)
	}
	require.NoError(t, os.WriteFile(other, []byte("{"), 0o644))
	_, stderr, _ = execute(t, "merge", other)
	assert.Contains(t, stderr, "not an emud shard record")
}

// perf's shards (ranges of sizes) merge into exactly the table, stderr and
// exit status one perf over every size prints, a failing size included;
// a missing shard is named.
func TestMergePerfShards(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		sweep  []string
		status int
		has    string
	}{
		{[]string{"perf", "alltoall", "--ranks", "2", "-b", "1K", "-e", "64K", "-f", "4", "-n", "2", "--phantom"}, 0, "# Avg bus bandwidth"},
		// Sizes below the 16 B granule are skipped lines.
		{[]string{"perf", "cft-allreduce", "--ranks", "2", "-b", "1", "-e", "4K", "-f", "8"}, 0, "8 B: too small"},
		// The planted bug's early reuse shows as wrong data (exit 3).
		{[]string{"perf", "alltoall-early-reuse", "--ranks", "2", "-b", "1", "-e", "16K", "-f", "8"}, scenario.ExitMismatch, "4 wrong blocks"},
	} {
		sweep := tc.sweep
		var files []string
		for k := range 3 {
			f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", sweep[1], k))
			_, stderr, status := execute(t, append(sweep, "--shard", fmt.Sprintf("%d/3", k), "--shard-out", f)...)
			require.Zero(t, status, stderr)
			files = append(files, f)
		}
		wantOut, wantErr, wantStatus := execute(t, sweep...)
		assert.Equal(t, tc.status, wantStatus, sweep[1])
		assert.Contains(t, wantOut+wantErr, tc.has, sweep[1])
		gotOut, gotErr, gotStatus := execute(t, append([]string{"merge"}, files...)...)
		assert.Equal(t, wantOut, gotOut, sweep[1])
		assert.Equal(t, wantErr, gotErr, sweep[1])
		assert.Equal(t, wantStatus, gotStatus, sweep[1])
		_, stderr, status := execute(t, "merge", files[0], files[2])
		assert.NotZero(t, status)
		assert.Contains(t, stderr, "merge: missing shard(s) 1/3 of 3")
	}
}

// The Indexed Job uses only batch/v1 Job fields (decoded strictly against
// the subset of the schema it uses) and maps JOB_COMPLETION_INDEX to
// --shard.
func TestFarmK8sManifest(t *testing.T) {
	stdout, stderr, status := execute(t, "farm", "k8s", "--shards", "5", "--image", "emud:test", "--", "explore", "alltoall", "--seeds", "50")
	require.Zero(t, status, stderr)
	job := decodeK8sJob(t, stdout)
	assert.Equal(t, "batch/v1", job.APIVersion)
	assert.Equal(t, "Job", job.Kind)
	assert.Equal(t, "Indexed", job.Spec.CompletionMode)
	assert.Equal(t, 5, *job.Spec.Completions)
	assert.Equal(t, 5, *job.Spec.Parallelism)
	assert.Equal(t, "Never", job.Spec.Template.Spec.RestartPolicy)
	require.Len(t, job.Spec.Template.Spec.Containers, 1)
	c := job.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "emud:test", c.Image)
	assert.Equal(t, []string{"/bin/sh", "-c", `exec emud explore alltoall --seeds 50 --jobs 1 --shard "$JOB_COMPLETION_INDEX/5" --shard-out -`}, c.Command)
	assert.Contains(t, stderr, "batch.kubernetes.io/job-completion-index=$k")
	assert.Contains(t, stderr, "emud merge shard-*.json")

	_, stderr, status = execute(t, "farm", "k8s", "--image", "x", "--", "run")
	assert.NotZero(t, status)
	assert.Contains(t, stderr, "only explore, hunt and perf are sharded")
	stdout, _, status = execute(t, "farm", "k8s", "--shards", "3", "--image", "x", "--", "perf", "alltoall")
	require.Zero(t, status)
	c = decodeK8sJob(t, stdout).Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{"/bin/sh", "-c", `exec emud perf alltoall --shard "$JOB_COMPLETION_INDEX/3" --shard-out -`}, c.Command, "perf has no --jobs")
	_, stderr, _ = execute(t, "farm", "slurm", "--dir", t.TempDir(), "--", "explore", "alltoall", "--shard", "1/2")
	assert.Contains(t, stderr, "--shard is farm's to set")

	// A C++ program's sweep: the task's flags go before the "--" that
	// starts the program's own arguments (a --shard after it is the
	// program's).
	stdout, stderr, status = execute(t, "farm", "k8s", "--shards", "2", "--image", "x", "--", "explore", "--seeds", "50", "--", "./prog", "--shard", "x")
	require.Zero(t, status, stderr)
	c = decodeK8sJob(t, stdout).Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{"/bin/sh", "-c", `exec emud explore --seeds 50 --jobs 1 --shard "$JOB_COMPLETION_INDEX/2" --shard-out - -- ./prog --shard x`}, c.Command)
	stdout, stderr, status = execute(t, "farm", "k8s", "--shards", "2", "--image", "x", "--", "hunt", "--seeds", "50", "--", "./bug:./bug fixed")
	require.Zero(t, status, stderr)
	c = decodeK8sJob(t, stdout).Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{"/bin/sh", "-c", `exec emud hunt --seeds 50 --jobs 1 --shard "$JOB_COMPLETION_INDEX/2" --shard-out - -- './bug:./bug fixed'`}, c.Command)
	_, stderr, _ = execute(t, "farm", "k8s", "--image", "x", "--", "hunt", "--", "./bug:")
	assert.Contains(t, stderr, "farm: the sweep hunt: invalid program pair")
	_, stderr, _ = execute(t, "farm", "k8s", "--image", "x", "--", "explore", "alltoall", "--", "./prog")
	assert.Contains(t, stderr, "alltoall before -- and a C++ program after it: give one")
}

// hunt's shards merge into hunt's table, text and JSON.
func TestMergeHuntShards(t *testing.T) {
	dir := t.TempDir()
	sweep := []string{"hunt", "alltoall-early-reuse", "--seeds", "5", "--strategies", "ties,pct"}
	files := runShards(t, dir, "h", sweep, 3)
	assertMergeIsSingle(t, sweep, files)
	_, stderr, status := execute(t, "merge", files[0], files[2])
	assert.NotZero(t, status)
	assert.Contains(t, stderr, "missing shard(s) 1/3 of 3")
}
