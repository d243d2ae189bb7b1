package shard

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// RecordFile is shard k's record in dir.
func RecordFile(dir string, k int) string { return fmt.Sprintf("%s/shard-%d.json", dir, k) }

// RecordFiles lists the records in dir of a sweep of n shards, and the
// shards that left none.
func RecordFiles(dir string, n int) (files []string, missing []int) {
	for k := range n {
		if _, err := os.Stat(RecordFile(dir, k)); err == nil {
			files = append(files, RecordFile(dir, k))
		} else {
			missing = append(missing, k)
		}
	}
	return files, missing
}

// oneJob is the flag that keeps a task to its one CPU: explore and hunt
// run seeds in parallel (--jobs); perf runs one size at a time anyway.
func oneJob(args []string) string {
	if args[0] == "perf" {
		return ""
	}
	return " --jobs 1"
}

// withShard is args with the task's flags (shard, a quoted shell word,
// and rest) added: before a "--" that ends emud's flags (a C++ program's
// sweep, whose own arguments follow), else at the end.
func withShard(args []string, shard, rest string) string {
	flags := oneJob(args) + " --shard " + shard + rest
	for i, a := range args {
		if a == "--" {
			return shellJoin(args[:i]) + flags + " " + shellJoin(args[i:])
		}
	}
	return shellJoin(args) + flags
}

// SlurmScript is an sbatch job array of n tasks: task K runs
// emud ARGS --shard K/n --shard-out DIR/shard-K.json, its log in
// DIR/task-K.log. extra lines are #SBATCH options (without the prefix).
func SlurmScript(emud string, args []string, n int, dir string, extra []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n# Written by emud farm slurm: one array task per shard.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=emud-%s\n", args[0])
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", n-1)
	fmt.Fprintf(&b, "#SBATCH --output=%s/task-%%a.log\n", dir)
	b.WriteString("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n")
	for _, e := range extra {
		fmt.Fprintf(&b, "#SBATCH %s\n", e)
	}
	b.WriteString("set -eu\n")
	fmt.Fprintf(&b, "exec %s %s\n", shellQuote(emud),
		withShard(args, fmt.Sprintf("\"$SLURM_ARRAY_TASK_ID/%d\"", n), " --shard-out "+shellQuote(dir)+"/shard-\"$SLURM_ARRAY_TASK_ID\".json"))
	return b.String()
}

// K8sJob is a batch/v1 Job in Indexed completion mode: pod K runs
// emud ARGS --shard K/n with JOB_COMPLETION_INDEX and prints its record on
// stdout, for collection with kubectl logs (MergeSteps). It is JSON, which
// kubectl apply -f takes as it takes YAML.
func K8sJob(name, image string, args []string, n, parallelism int) ([]byte, error) {
	cmd := "exec emud " + withShard(args, fmt.Sprintf("\"$JOB_COMPLETION_INDEX/%d\"", n), " --shard-out -")
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{"app.kubernetes.io/name": "emud"}},
		"spec": map[string]any{
			"completionMode": "Indexed",
			"completions":    n,
			"parallelism":    parallelism,
			"backoffLimit":   n,
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "emud"}},
				"spec": map[string]any{
					"restartPolicy": "Never",
					"containers": []any{map[string]any{
						"name":    "emud",
						"image":   image,
						"command": []string{"/bin/sh", "-c", cmd},
					}},
				},
			},
		},
	}
	b, err := json.MarshalIndent(job, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// MergeSteps is the shell to collect an Indexed Job's records and merge
// them: each pod's stdout is its record.
func MergeSteps(name string, n int) string {
	return fmt.Sprintf(`kubectl wait --for=condition=complete --timeout=24h %[1]s
for k in $(seq 0 %[2]d); do
  kubectl logs -l %[3]s,batch.kubernetes.io/job-completion-index=$k --tail=-1 > shard-$k.json
done
emud merge shard-*.json
`, shellQuote("job/"+name), n-1, shellQuote("job-name="+name))
}
