package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Shards of a sweep merge into exactly what one explore prints (text and
// JSON, exit status), with a planted bug found in the third shard; merge
// names a missing shard, a duplicate one and a mismatched flag.
func TestMergeShardsIsTheSingleRun(t *testing.T) {
	dir := t.TempDir()
	sweep := []string{"explore", "alltoall-early-reuse", "--seeds", "12", "--first-seed", "3", "--ranks", "2", "--bytes", "4K"}
	var files []string
	for k := range 4 {
		f := filepath.Join(dir, fmt.Sprintf("s%d.json", k))
		_, stderr, status := execute(t, append(sweep, "--shard", fmt.Sprintf("%d/4", k), "--shard-out", f)...)
		require.Zero(t, status, stderr)
		files = append(files, f)
	}
	for _, js := range [][]string{nil, {"--json"}} {
		wantOut, wantErr, wantStatus := execute(t, append(sweep, js...)...)
		gotOut, gotErr, gotStatus := execute(t, append(append([]string{"merge"}, js...), files...)...)
		assert.Equal(t, wantOut, gotOut)
		assert.Equal(t, wantErr, gotErr)
		assert.Equal(t, wantStatus, gotStatus)
		assert.NotZero(t, gotStatus, "the planted bug is found")
	}

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

	_, stderr, status = execute(t, "farm", "k8s", "--image", "x", "--", "perf")
	assert.NotZero(t, status)
	assert.Contains(t, stderr, "only explore and hunt are sharded")
	_, stderr, _ = execute(t, "farm", "slurm", "--dir", t.TempDir(), "--", "explore", "alltoall", "--shard", "1/2")
	assert.Contains(t, stderr, "--shard is farm's to set")
}

// hunt's shards merge into hunt's table, text and JSON.
func TestMergeHuntShards(t *testing.T) {
	dir := t.TempDir()
	sweep := []string{"hunt", "alltoall-early-reuse", "--seeds", "5", "--strategies", "ties,pct"}
	var files []string
	for k := range 3 {
		f := filepath.Join(dir, fmt.Sprintf("h%d.json", k))
		_, stderr, status := execute(t, append(sweep, "--shard", fmt.Sprintf("%d/3", k), "--shard-out", f)...)
		require.Zero(t, status, stderr)
		files = append(files, f)
	}
	for _, js := range [][]string{nil, {"--json"}} {
		wantOut, wantErr, wantStatus := execute(t, append(sweep, js...)...)
		gotOut, gotErr, gotStatus := execute(t, append(append([]string{"merge"}, js...), files...)...)
		assert.Equal(t, wantOut, gotOut)
		assert.Equal(t, wantErr, gotErr)
		assert.Equal(t, wantStatus, gotStatus)
	}
	_, stderr, status := execute(t, "merge", files[0], files[2])
	assert.NotZero(t, status)
	assert.Contains(t, stderr, "missing shard(s) 1/3 of 3")
}
