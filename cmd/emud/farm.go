package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/scenario/shard"
)

func newFarmCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "farm",
		Short: "Run an explore or hunt sweep as shards on a cluster scheduler (Slurm, Kubernetes) and merge it",
		Long: `Split "emud explore ..." or "emud hunt ..." into --shards shards (--shard K/N) on a
cluster scheduler: "farm slurm" writes and submits an sbatch job array, "farm
k8s" prints a Kubernetes Indexed Job. Their records merge with "emud merge"
into the report one explore over the whole range prints.`,
	}
	cmd.AddCommand(newFarmSlurmCmd(), newFarmK8sCmd())
	return cmd
}

// farmArgs checks the command to farm out: explore and its arguments.
func farmArgs(args []string, shards int) error {
	switch {
	case len(args) == 0 || (args[0] != "explore" && args[0] != "hunt"):
		return fmt.Errorf("farm: give the sweep after --, as: -- explore SCENARIO [flags] or -- hunt [BUG...] [flags] (only explore and hunt are sharded)")
	case shards < 1 || shards > shard.MaxShards:
		return fmt.Errorf("invalid --shards %d: need 1..%d", shards, shard.MaxShards)
	}
	for _, a := range args {
		if a == "--shard" || strings.HasPrefix(a, "--shard=") || a == "--shard-out" || strings.HasPrefix(a, "--shard-out=") {
			return fmt.Errorf("farm: %s is farm's to set, one per task: leave it out", a)
		}
	}
	return nil
}

// farmSlurmFlags are the command's flags.
type farmSlurmFlags struct {
	shards int
	dir    string
	emud   string
	wait   bool
	extra  []string
	array  string
}

func newFarmSlurmCmd() *cobra.Command {
	var cf farmSlurmFlags
	cmd := &cobra.Command{
		Use:   "slurm --shards N --dir DIR [--wait] -- explore SCENARIO [flags] | hunt [BUG...] [flags]",
		Short: "Write and submit an sbatch job array, one task per shard; with --wait, merge",
		Long: `Write DIR/emud.sbatch, a job array of --shards tasks in which task K
(SLURM_ARRAY_TASK_ID) runs "emud explore ... --shard K/N" and writes
DIR/shard-K.json (its log: DIR/task-K.log), and submit it with sbatch. DIR must
be on a file system every node sees, and so must --emud (default: this binary).

Without --wait, print the job id and the merge command. With --wait, wait for
the array (sbatch --wait), then merge DIR's records and print the report, as
"emud merge" does. Tasks that left no record are named with their logs, and
--array K,... resubmits just those (then run the merge again).`,
		RunE: func(cmd *cobra.Command, args []string) error { return cf.run(cmd, args) },
	}
	fs := cmd.Flags()
	fs.IntVar(&cf.shards, "shards", 8, "array tasks, one shard each")
	fs.StringVar(&cf.dir, "dir", "", "where the job script, the records and the task logs go (shared by every node)")
	fs.StringVar(&cf.emud, "emud", "", "the emud binary the tasks run (default: this one)")
	fs.BoolVar(&cf.wait, "wait", false, "wait for the array, then merge and print the report")
	fs.StringArrayVar(&cf.extra, "sbatch", nil, "an extra #SBATCH line, e.g. --sbatch=--partition=gpu (repeatable)")
	fs.StringVar(&cf.array, "array", "", "resubmit only these task indices (K,K,... or a Slurm range) of the job already in --dir")
	return cmd
}

// run is the command's RunE.
func (cf *farmSlurmFlags) run(cmd *cobra.Command, args []string) error {
	shards, dir, emud, wait, extra, array := cf.shards, cf.dir, cf.emud, cf.wait, cf.extra, cf.array
	if err := farmArgs(args, shards); err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("farm slurm: --dir is required (a directory every node sees)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("farm slurm: %w", err)
	}
	if emud == "" {
		if emud, err = os.Executable(); err != nil {
			return err
		}
	}
	script := filepath.Join(abs, "emud.sbatch")
	if array == "" {
		if err := os.WriteFile(script, []byte(shard.SlurmScript(emud, args, shards, abs, extra)), 0o755); err != nil {
			return fmt.Errorf("farm slurm: %w", err)
		}
	} else if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("farm slurm --array: no job to resubmit: %w", err)
	}
	sb := []string{"--parsable"}
	if wait {
		sb = append(sb, "--wait")
	}
	if array != "" {
		sb = append(sb, "--array="+array)
	}
	c := exec.Command("sbatch", append(sb, script)...)
	c.Stderr = cmd.ErrOrStderr()
	out, err := c.Output()
	id := strings.TrimSpace(strings.Split(string(out), ";")[0])
	var ee *exec.ExitError
	if err != nil && !(wait && errors.As(err, &ee) && id != "") {
		return fmt.Errorf("farm slurm: sbatch %s: %w", script, err)
	}
	merge := "emud merge " + filepath.Join(abs, "shard-*.json")
	if !wait {
		fmt.Fprintf(cmd.OutOrStdout(), "submitted job %s: %d tasks, records in %s\nwhen it is done: %s\n", id, shards, abs, merge)
		return nil
	}
	var files []string
	for k := range shards {
		if _, err := os.Stat(shard.RecordFile(abs, k)); err == nil {
			files = append(files, shard.RecordFile(abs, k))
		}
	}
	if len(files) < shards {
		have := map[string]bool{}
		for _, f := range files {
			have[f] = true
		}
		var failed, logs []string
		for k := range shards {
			if !have[shard.RecordFile(abs, k)] {
				failed = append(failed, strconv.Itoa(k))
				logs = append(logs, filepath.Join(abs, fmt.Sprintf("task-%d.log", k)))
			}
		}
		return fmt.Errorf("farm slurm: job %s: task(s) %s left no record (logs: %s); rerun them with: emud farm slurm --dir %s --shards %d --wait --array %s -- %s; then: %s",
			id, strings.Join(failed, ","), strings.Join(logs, " "), abs, shards, strings.Join(failed, ","), strings.Join(args, " "), merge)
	}
	m, err := mergeFiles(files)
	if err != nil {
		return err
	}
	return runMerged(cmd, m, false)
}

func newFarmK8sCmd() *cobra.Command {
	var (
		shards, parallelism int
		name, image         string
	)
	cmd := &cobra.Command{
		Use:   "k8s --shards N --image IMAGE [--name NAME] -- explore SCENARIO [flags]",
		Short: "Print a Kubernetes Indexed Job (one pod per shard) and, on stderr, the merge step",
		Long: `Print on stdout a batch/v1 Job with completionMode Indexed and --shards
completions: pod K (JOB_COMPLETION_INDEX) runs "emud explore ... --shard K/N
--shard-out -" in --image (which must have emud on its PATH) and prints its
record on stdout. Apply it with kubectl apply -f -. The merge step (on stderr)
waits for the job, collects each pod's record with kubectl logs and runs
emud merge.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := farmArgs(args, shards); err != nil {
				return err
			}
			if image == "" {
				return fmt.Errorf("farm k8s: --image is required (an image with emud on its PATH)")
			}
			if parallelism < 1 {
				parallelism = shards
			}
			b, err := shard.K8sJob(name, image, args, shards, parallelism)
			if err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write(b); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "# apply: emud farm k8s ... | kubectl apply -f -\n# then merge:\n%s", shard.MergeSteps(name, shards))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&shards, "shards", 8, "completions, one shard each")
	fs.IntVar(&parallelism, "parallelism", 0, "pods at a time (0 = all)")
	fs.StringVar(&name, "name", "emud-explore", "the Job's name")
	fs.StringVar(&image, "image", "", "container image with emud on its PATH")
	return cmd
}
