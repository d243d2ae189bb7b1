package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/scenario"
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
		if a == "--" {
			break // a C++ program's own arguments follow
		}
		if a == "--shard" || strings.HasPrefix(a, "--shard=") || a == "--shard-out" || strings.HasPrefix(a, "--shard-out=") {
			return fmt.Errorf("farm: %s is farm's to set, one per task: leave it out", a)
		}
	}
	return checkFarmed(args)
}

// checkFarmed checks the sweep as its tasks will take it, here, before any
// is submitted: its flags parse and it names scenarios (or planted bugs)
// that exist. Before, "farm k8s -- explore nosuch" printed a job whose
// every pod would fail.
func checkFarmed(args []string) error {
	var cmd *cobra.Command
	switch args[0] {
	case "explore":
		cmd = newExploreCmdFor(nil)
	case "hunt":
		cmd = newHuntCmdFor(nil)
	default:
		cmd = newPerfCmdFor(nil)
	}
	if err := cmd.ParseFlags(args[1:]); err != nil {
		return fmt.Errorf("farm: the sweep %s: %w", args[0], err)
	}
	pos := cmd.Flags().Args()
	if at := cmd.Flags().ArgsLenAtDash(); at >= 0 && args[0] != "perf" {
		switch {
		case at > 0:
			return fmt.Errorf("farm: the sweep %s: %s before -- and a C++ program after it: give one", args[0], strings.Join(pos[:at], " "))
		case len(pos) == 0:
			return fmt.Errorf("farm: the sweep %s: no program after --", args[0])
		}
		if args[0] == "hunt" {
			for _, s := range pos {
				if _, err := parsePair(s); err != nil {
					return fmt.Errorf("farm: the sweep hunt: %w", err)
				}
			}
		}
		return nil // the program is looked for where the tasks run
	}
	if args[0] == "hunt" {
		if _, err := scenario.PlantedNamed(pos); err != nil {
			return fmt.Errorf("farm: the sweep hunt: %w", err)
		}
		return nil
	}
	if len(pos) > 1 {
		return fmt.Errorf("farm: the sweep %s takes one scenario, got %s", args[0], strings.Join(pos, " "))
	}
	name := cmd.Flags().Lookup("scenario").Value.String()
	if len(pos) == 1 {
		name = pos[0]
	}
	if _, err := scenario.Lookup(name); err != nil {
		return fmt.Errorf("farm: the sweep %s: %w", args[0], err)
	}
	return nil
}

// k8sName matches a Kubernetes Job name as farm k8s takes it: a DNS-1123
// label (lowercase letters, digits, '-', starting and ending with a
// letter or digit, at most 63), which is also safe in the merge step's
// shell lines.
var k8sName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

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
emud merge. --name must be a Job name (lowercase letters, digits, '-');
the sweep is checked here first (its flags parse, its scenario or bugs exist).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := farmArgs(args, shards); err != nil {
				return err
			}
			if image == "" {
				return fmt.Errorf("farm k8s: --image is required (an image with emud on its PATH)")
			}
			if !k8sName.MatchString(name) {
				return fmt.Errorf("invalid --name %q: a Job name is lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters", name)
			}
			if strings.ContainsFunc(image, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
				return fmt.Errorf("invalid --image %q: an image reference has no spaces or control characters", image)
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
