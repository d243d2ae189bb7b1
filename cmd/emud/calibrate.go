package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/model"
)

func newCalibrateCmd() *cobra.Command {
	var (
		modelName, tablePath, plotPath string
		seed                           uint64
		asJSON                         bool
	)
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Run every documented MI355X measurement through the emulator and report the error of each",
		Long: `Run every row of the documented MI355X table (calibrate/testdata, from the
seed document) as a real scenario through the whole emulator (ccoSdma calls →
ring packets → engine → signals) under a timing model, and print one line per
row: id, documented value, emulated value, unit, relative error and tolerance.
Rows that contradict another documented row under any physical parameter set
are shown as conflicts, with the reason, and not counted. The last line is
"max |error| X% over N rows (median Y%)".

With --plot FILE it also writes a picture of bandwidth against bytes per op,
documented points against the emulated curve (.svg or .png). Without --plot
it writes no file.

Exit status: 0 all counted rows within tolerance, 4 some row outside it, 1 bad
flags or a failed scenario.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := model.Load(modelName)
			if err != nil {
				return fmt.Errorf("invalid --model: %w", err)
			}
			rows := calibrate.Documented()
			if tablePath != "" {
				f, err := os.Open(tablePath)
				if err != nil {
					return fmt.Errorf("invalid --table: %w", err)
				}
				rows, err = calibrate.ParseTable(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("invalid --table %s: %w", tablePath, err)
				}
			}
			var format string
			if plotPath != "" {
				format = strings.TrimPrefix(strings.ToLower(filepath.Ext(plotPath)), ".")
				if format != "svg" && format != "png" {
					return fmt.Errorf("invalid --plot %q: the file must end in .svg or .png", plotPath)
				}
			}
			rep, err := calibrate.Run(m, rows, seed)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				err = rep.WriteJSON(out)
			} else {
				err = rep.WriteText(out)
			}
			if err != nil {
				return err
			}
			if plotPath != "" {
				c, err := calibrate.BandwidthCurve(m, seed)
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := calibrate.WritePlot(&buf, format, m.Name(), rows, c); err != nil {
					return err
				}
				if err := os.WriteFile(plotPath, buf.Bytes(), 0o644); err != nil {
					return fmt.Errorf("writing --plot: %w", err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "plot: %s\n", plotPath)
			}
			if !rep.OK() {
				return &codedError{exitCalibration, errors.New("rows outside tolerance: " + strings.Join(rep.Failed, ", "))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&modelName, "model", model.DefaultPreset, "timing model: a preset ("+strings.Join(model.Presets(), ", ")+") or a model file (.json)")
	f.StringVar(&tablePath, "table", "", "documented table to judge against (CSV id,scenario,params,metric,value,unit,note); default the embedded MI355X table")
	f.StringVar(&plotPath, "plot", "", `write the bandwidth picture to this file (.svg or .png); none without it`)
	f.Uint64Var(&seed, "seed", 1, "seed of every scenario run")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
