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

	"github.com/emud-dev/emud/internal/fileio"
	"github.com/emud-dev/emud/scenario/shard"
)

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
--array K,... resubmits just those (then run the merge again).

A new sweep (no --array) removes the shard-*.json records an earlier one
left in DIR, and says so. The sweep is checked here first (its flags parse,
its scenario or bugs exist), and each --sbatch must be one line.`,
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
	for _, e := range extra {
		// Each --sbatch is one "#SBATCH" line: a newline would start a
		// line of its own in the job script, a shell command.
		if strings.ContainsAny(e, "\n\r\x00") {
			return fmt.Errorf("invalid --sbatch %q: one #SBATCH option per flag, without newlines (give --sbatch again for another)", e)
		}
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
		// A new sweep: records of an earlier one in --dir would be merged
		// with its own, or stand in for tasks that failed.
		stale, err := filepath.Glob(filepath.Join(abs, "shard-*.json"))
		if err != nil {
			return err
		}
		for _, f := range stale {
			if err := os.Remove(f); err != nil {
				return fmt.Errorf("farm slurm: removing an earlier sweep's record: %w", err)
			}
		}
		if len(stale) > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "farm slurm: removed %d shard record(s) of an earlier sweep from %s\n", len(stale), abs)
		}
		if err := fileio.WriteFile(script, []byte(shard.SlurmScript(emud, args, shards, abs, extra)), 0o755); err != nil {
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
	files, missing := shard.RecordFiles(abs, shards)
	if len(missing) > 0 {
		var failed, logs []string
		for _, k := range missing {
			failed = append(failed, strconv.Itoa(k))
			logs = append(logs, filepath.Join(abs, fmt.Sprintf("task-%d.log", k)))
		}
		return fmt.Errorf("farm slurm: job %s: task(s) %s left no record (logs: %s); rerun them with: emud farm slurm --dir %s --shards %d --wait --array %s -- %s; then: %s",
			id, strings.Join(failed, ","), strings.Join(logs, " "), abs, shards, strings.Join(failed, ","), strings.Join(args, " "), merge)
	}
	m, err := shard.ReadFiles(files)
	if err != nil {
		return err
	}
	return runMerged(cmd, m, false)
}
