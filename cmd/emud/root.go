package main

import (
	"github.com/spf13/cobra"
)

// newRootCmd builds a fresh command tree. Tests build one per invocation so
// that no flag value leaks from one run into the next.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "emud",
		Short: "Emulate AMD MI355X SDMA copy engines for testing collectives without a GPU",
		Long: `emud emulates, in pure Go and deterministically, the SDMA copy engines of
an AMD MI355X node: real gfx9 packet bytes in real rings, executed in order per
queue, with signals, engine-side waits and hang reports that say who waits on
what. One seed fixes the whole run; the digest it prints identifies it.`,
		// main prints errors once, as "emud: ..."; cobra's usage dump would
		// bury the one line that names the bad flag.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		newRunCmd(),
		newExploreCmd(),
		newMergeCmd(),
		newFarmCmd(),
		newHuntCmd(),
		newReplayCmd(),
		newServeCmd(),
		newCalibrateCmd(),
		newFitCmd(),
		newPerfCmd(),
		newVersionCmd(),
		newBenchCmd(),
		newCxxCmd(),
	)
	return root
}
