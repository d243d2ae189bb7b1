package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"
)

// onlyWith refuses any of flags given without the flag need (or, when
// needValue is set, without need set to that value): a flag that does not
// apply to the command as given is an error, not silently ignored.
func onlyWith(cmd *cobra.Command, need, why string, flags ...string) error {
	if cmd.Flags().Changed(need) {
		return nil
	}
	for _, f := range flags {
		if cmd.Flags().Changed(f) {
			return fmt.Errorf("invalid --%s: only with --%s (%s)", f, need, why)
		}
	}
	return nil
}

// notWith refuses any of flags given together with the flag with.
func notWith(cmd *cobra.Command, with, why string, flags ...string) error {
	if !cmd.Flags().Changed(with) {
		return nil
	}
	var given []string
	for _, f := range flags {
		if cmd.Flags().Changed(f) {
			given = append(given, "--"+f)
		}
	}
	if len(given) == 0 {
		return nil
	}
	return fmt.Errorf("invalid %s with --%s: %s", strings.Join(given, ", "), with, why)
}

// checkMaxError is fit's --max-error: a percentage over 0.
func checkMaxError(pct float64) error {
	if !(pct > 0) || math.IsInf(pct, 0) {
		return fmt.Errorf("invalid --max-error %v: need a percentage over 0 (a fitted row further off than it fails the fit)", pct)
	}
	return nil
}
