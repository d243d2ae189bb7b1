package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/scenario/shard"
)

func newMergeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "merge FILE...",
		Short: "Put the records of explore, hunt or perf --shard K/N back together into the single run's report",
		Long: `Read the JSON records that "emud explore --shard K/N --shard-out FILE" (or hunt
or perf --shard) wrote, one per shard, and print the report (text, or JSON with --json;
for perf: its table, as one perf over every size prints it),
exit status, first failing seed and reproduce command that one explore over the
whole range prints (for hunt: the table). The failing seed, if any, runs again
here for its report (for hunt: each first detection, for its example).

Refused, with an error naming the difference: records of another emud build,
command, scenario, flag, seed range or shard count; a missing shard (and which);
a shard given twice.

` + exitStatusHelp + ` (of the seed found; 0 when all passed)`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			m, err := shard.ReadFiles(files)
			if err != nil {
				return err
			}
			return runMerged(cmd, m, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the merged report as JSON (as explore --json)")
	return cmd
}

// runMerged runs explore in merge mode with the shards' flags.
func runMerged(cmd *cobra.Command, m *shard.Merged, asJSON bool) error {
	ex, args := newExploreCmdFor(m), []string{m.Scenario}
	if m.Command == "hunt" {
		ex, args = newHuntCmdFor(m), nil
		if m.Scenario != "" {
			args = strings.Split(m.Scenario, ",")
		}
	}
	set := map[string]string{"seeds": fmt.Sprint(m.Seeds), "first-seed": fmt.Sprint(m.First)}
	if m.Command == "perf" {
		if asJSON {
			return fmt.Errorf("merge --json: perf prints nccl-tests' table, not JSON")
		}
		// A perf shard's range is of sizes: the flags give them.
		ex, args, set = newPerfCmdFor(m), []string{m.Scenario}, map[string]string{}
	}
	ex.SetOut(cmd.OutOrStdout())
	ex.SetErr(cmd.ErrOrStderr())
	for k, v := range m.Flags {
		set[k] = v
	}
	if asJSON {
		set["json"] = "true"
	}
	for k, v := range set {
		if err := ex.Flags().Set(k, v); err != nil {
			return fmt.Errorf("merge: the shards' flag --%s=%s: %w", k, v, err)
		}
	}
	return ex.RunE(ex, args)
}
