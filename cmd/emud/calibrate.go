package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/emud-dev/emud/scenario"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/model"
)

// calibrateFlags are the command's flags.
type calibrateFlags struct {
	modelName string
	tablePath string
	plotPath  string
	seed      uint64
	asJSON    bool
	fit       bool
	cv        bool
	progress  bool
	runs      int
	measure   measureFlags
}

func newCalibrateCmd() *cobra.Command {
	var cf calibrateFlags
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Run every documented MI355X measurement through the emulator and report the error of each",
		Long: `Run every row of the documented MI355X table (calibrate/testdata, from the
seed document) as a real scenario through the whole emulator (ccoSdma calls →
ring packets → engine → signals) under a timing model, and print one line per
row: id, documented value, emulated value, unit, relative error and tolerance.
Rows that contradict another documented row under any physical parameter set
are shown as conflicts, with the reason, and not counted. A difference row
(metric latency_delta: one measured latency minus another) is judged against
the larger of its two latencies, not against the difference itself, and the
report says which rows those are. The last line is "max |error| X% over N rows
(median Y%)".

Then, for the model (a preset or a model file), every parameter: its
value, whether the calibration fits it or fixes it from a cited fact, the row
a ±10% change moves most, the row groups that identify it (a row of the group
moves by 2% or more under ±10%), and its source; with --fit (default), also the value
a least-squares fit of the fitted parameters to the counted rows finds from
round, uninformed priors. The line after the table is "fitted parameters: N".

With --cross-validate (default) it then runs leave-one-group-out
cross-validation: for each group of rows (bw.*, issue.*, signal.*, postwait.*,
bcast.*, ...), the fitted parameters are refitted from the priors on every
other group and the group's rows are predicted. A parameter only the held-out
group identifies stays at its prior, and the report says so and lists those
parameters. Then "cross-validation (identified groups): max |error| X% (median
Y%) over N rows" covers the groups whose parameters other groups identify, and
the last line, "cross-validation (all rows): ...", all rows. The fits take a few
minutes; a progress bar goes to stderr when it is a terminal, or with
--progress.

With --plot FILE it also writes a picture of bandwidth against bytes per op,
documented points against the emulated curve (.svg or .png). Without --plot
it writes no file.

With --measure it judges nothing: it times the calibration sweep (or the rows
of --rows) on SDMA queues of --backend, each row --reps times, reading the
engine's clock with TIMESTAMP packets around each queue's copies and the host's
clock around the doorbell and the drain, and writes the medians as a
measurement CSV (clock column "engine") that emud fit reads. --backend rocm
is a real MI355X through hw/rocm (a binary built with -tags rocm, and
/dev/kfd); --backend stand-in --truth MODEL runs the same queue path over the
timing stand-in, whose engine follows MODEL (to check a fit recovers it);
--backend emu is the emulator under --model. --format transferbench writes
the rows as TransferBench's OUTPUT_TO_CSV=1 results instead (one test per row;
by default the TransferBench sweep of docs/transferbench-sweep.cfg: local,
pushed and pulled copies, parallel pushes to one peer, host copies), the
format emud fit reads from TransferBench itself.

Exit status: 0 all counted rows within tolerance, 4 some row outside it, 1 bad
flags or a failed scenario.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cf.run(cmd, args) },
	}
	f := cmd.Flags()
	f.StringVar(&cf.modelName, "model", model.DefaultPreset, "timing model: a preset ("+strings.Join(model.Presets(), ", ")+") or a model file (.json)")
	f.StringVar(&cf.tablePath, "table", "", "documented table to judge against (CSV id,scenario,params,metric,value,unit,note); default the embedded MI355X table")
	f.StringVar(&cf.plotPath, "plot", "", `write the bandwidth picture to this file (.svg or .png); none without it`)
	f.Uint64Var(&cf.seed, "seed", 1, "seed of every scenario run")
	f.BoolVar(&cf.asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&cf.fit, "fit", true, "also fit the fitted parameters to the counted rows from their priors and show the values found")
	f.BoolVar(&cf.cv, "cross-validate", true, "run leave-one-group-out cross-validation (its summary is the last line)")
	f.IntVar(&cf.runs, "runs", 41, "seeded runs of each median-of-N row (postwait.*) in the fits; fewer is faster and coarser")
	f.BoolVar(&cf.progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	cf.measure.register(f)
	return cmd
}

// run is the command's RunE.
func (cf *calibrateFlags) run(cmd *cobra.Command, args []string) error {
	_ = args
	if err := onlyWith(cmd, "measure", "they say how to time the sweep", "backend", "truth", "rows", "out", "reps"); err != nil {
		return err
	}
	if err := notWith(cmd, "measure", "--measure times the sweep and judges no model against the table", "table", "plot", "json", "fit", "cross-validate", "runs", "progress"); err != nil {
		return err
	}
	if cf.measure.on {
		return cf.measure.run(cf, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	modelName, tablePath, plotPath, seed, asJSON, fit, cv, progress, runs := cf.modelName, cf.tablePath, cf.plotPath, cf.seed, cf.asJSON, cf.fit, cf.cv, cf.progress, cf.runs
	m, err := model.Load(modelName)
	if err != nil {
		return fmt.Errorf("invalid --model: %w", err)
	}
	rows, err := calibrate.LoadTable(tablePath)
	if err != nil {
		return err
	}
	if plotPath != "" {
		if _, err := calibrate.PlotFormat(plotPath); err != nil {
			return err
		}
	}
	rep, err := calibrate.Run(m, rows, seed)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if runs < 1 || runs > 1001 {
		return fmt.Errorf("invalid --runs %d: need 1..1001", runs)
	}
	res := calibrationJSON{Report: rep}
	if !asJSON {
		if err := rep.WriteText(out); err != nil {
			return err
		}
	}
	if err := calibrateParams(cmd, m, rows, seed, runs, fit, cv, progress, asJSON, &res); err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	if plotPath != "" {
		if err := calibrate.WritePlotFile(plotPath, m, rows, seed); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "plot: %s\n", plotPath)
	}
	if !rep.OK() {
		return &scenario.ExitError{Code: scenario.ExitCalibration, Err: errors.New("rows outside tolerance: " + strings.Join(rep.Failed, ", "))}
	}
	return nil
}

// calibrationJSON is calibrate's --json output.
type calibrationJSON struct {
	Report          *calibrate.Report          `json:"report"`
	Parameters      []calibrate.ParameterRow   `json:"parameters,omitempty"`
	Fitted          int                        `json:"fitted_parameters,omitempty"`
	CrossValidation *calibrate.CrossValidation `json:"cross_validation,omitempty"`
}

// calibrateParams prints the parameter table (values, sensitivities,
// the fit from the priors) and the cross-validation of model p.
func calibrateParams(cmd *cobra.Command, p *model.Params, rows []calibrate.Row, seed uint64, runs int, fit, cv, progress, asJSON bool, res *calibrationJSON) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	o := calibrate.Options{Runs: runs}
	prog := newProgress(errOut, fit && (progress || isTerminal(errOut)), "fit", 1)
	o.Progress = prog.set
	pr, err := calibrate.Parameters(p, rows, seed, fit, o)
	if err != nil {
		return err
	}
	prog.finish()
	res.Parameters, res.Fitted = pr.Rows, pr.Fitted
	if !asJSON {
		if err := pr.WriteText(out); err != nil {
			return err
		}
	}
	if cv {
		prog := newProgress(errOut, progress || isTerminal(errOut), "cross-validation", 1)
		o.Progress = prog.set
		x, err := calibrate.CrossValidate(model.Prior(), rows, model.FittedParameters(), seed, o)
		if err != nil {
			return err
		}
		prog.finish()
		res.CrossValidation = x
		if !asJSON {
			fmt.Fprintln(out)
			if err := x.WriteText(out); err != nil {
				return err
			}
		}
	}
	return nil
}
