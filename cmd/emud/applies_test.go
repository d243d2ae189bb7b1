package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/emud-dev/emud/scenario"
)

// A flag that does not apply to the command as given is an error naming
// it; before, each of these was ignored and the command exited 0 (or
// --max-error -1 made every fit pass).
func TestFlagsThatDoNotApplyAreErrors(t *testing.T) {
	const csv = "../../calibrate/testdata/mi355x-measurements.csv"
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"explore", "alltoall", "--seeds", "1", "--shard-out", "x.json"}, "invalid --shard-out: only with --shard"},
		{[]string{"hunt", "--seeds", "1", "--shard-out", "x.json"}, "invalid --shard-out: only with --shard"},
		{[]string{"perf", "alltoall", "-b", "1K", "-e", "1K", "--shard-out", "x.json"}, "invalid --shard-out: only with --shard"},
		{[]string{"perf", "alltoall", "-b", "1K", "-e", "1K", "--shard", "0/2", "--plot", "x.svg"}, "invalid --plot with --shard"},
		{[]string{"fit", "--predict", "mi355x", "--params", "all", csv}, "invalid --params with --predict: --predict fits nothing"},
		{[]string{"fit", "--predict", "mi355x", "--holdout", "--out", "m.json", csv}, "invalid --out, --holdout with --predict"},
		{[]string{"fit", "--max-error", "-1", csv}, "invalid --max-error -1: need a percentage over 0"},
		{[]string{"fit", "--max-error", "NaN", csv}, "invalid --max-error NaN"},
		{[]string{"calibrate", "--truth", "mi355x"}, "invalid --truth: only with --measure"},
		{[]string{"calibrate", "--rows", csv}, "invalid --rows: only with --measure"},
		{[]string{"calibrate", "--reps", "3"}, "invalid --reps: only with --measure"},
		{[]string{"calibrate", "--measure", "--backend", "emu", "--plot", "x.svg"}, "invalid --plot with --measure"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, status := execute(t, tc.args...)
			assert.Equal(t, scenario.ExitFailed, status, errOut)
			assert.Contains(t, errOut, tc.msg)
		})
	}
}
