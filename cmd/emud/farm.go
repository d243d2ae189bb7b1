package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/scenario/shard"
)

func newFarmCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "farm",
		Short: "Run an explore, hunt or perf sweep as shards on a cluster scheduler (Slurm, Kubernetes) and merge it",
		Long: `Split "emud explore ...", "emud hunt ..." or "emud perf ..." into --shards shards (--shard K/N) on a
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
	case len(args) == 0 || (args[0] != "explore" && args[0] != "hunt" && args[0] != "perf"):
		return fmt.Errorf("farm: give the sweep after --, as: -- explore SCENARIO [flags], -- hunt [BUG...] [flags] or -- perf SCENARIO [flags] (only explore, hunt and perf are sharded)")
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
