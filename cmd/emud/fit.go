package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/model"
)

func newFitCmd() *cobra.Command {
	var (
		base, out string
		params    []string
		seed      uint64
		holdout   bool
		progress  bool
	)
	cmd := &cobra.Command{
		Use:   "fit FILE",
		Short: "Fit the timing model's parameters to measurements and write a model file",
		Long: `Fit timing-model parameters to measurements in FILE, a CSV with header
ops,bytes,queues,time_us: ops copies of bytes each to one peer, issued back to
back by one thread round-robin over queues queues, time_us from the first issue
until all are complete. Lines starting with # are comments. At most 256 rows;
time_us from 1e-6 (1 ps) to 1e9. A progress bar goes to stderr when it is a
terminal, or with --progress.

Every candidate parameter set is judged by running each row's scenario on the
emulator; gonum's Nelder–Mead minimises the sum of squared relative errors.
The fitted parameters and the residual of every row are printed, and the model
is written to --out, which "emud run --model" and "emud calibrate --model" load.

--holdout fits on every other row and reports the prediction of the others.
calibrate/testdata/mi355x-measurements.csv holds the documented rows of this
shape.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := model.Load(base)
			if err != nil {
				return fmt.Errorf("invalid --model: %w", err)
			}
			p, ok := m.(*model.Params)
			if !ok {
				return fmt.Errorf("invalid --model %q: a fit needs a parameter model (mi355x or a model file), not %s", base, m.Name())
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			ms, err := calibrate.ParseMeasurements(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			train, test := ms, []calibrate.Measurement(nil)
			if holdout {
				if len(ms) < 2 {
					return fmt.Errorf("--holdout needs at least 2 rows, %s has %d", args[0], len(ms))
				}
				train, test = nil, nil
				for i, x := range ms {
					if i%2 == 0 {
						train = append(train, x)
					} else {
						test = append(test, x)
					}
				}
			}
			if len(params) == 0 {
				return fmt.Errorf("invalid --params %q: name at least one parameter (default %s)", strings.Join(params, ","), strings.Join(calibrate.DefaultFitParams, ","))
			}
			errOut := cmd.ErrOrStderr()
			prog := newProgress(errOut, progress || isTerminal(errOut), "fit "+args[0], 400*len(params))
			if prog != nil {
				prog.unit = "candidates (at most)"
			}
			res, err := calibrate.Fit(p, params, train, seed, calibrate.WithProgress(func(int, int) { prog.step(false) }))
			prog.finish()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "fitted %d parameters on %d rows (%d emulator evaluations):\n", len(params), len(train), res.Evals)
			was, now := paramValues(p), paramValues(res.Model)
			for _, n := range params {
				fmt.Fprintf(w, "  %-22s %12.6g  (was %.6g)\n", n, now[n], was[n])
			}
			for _, n := range res.Unidentified {
				fmt.Fprintf(w, "  warning: %s is not identified by these rows (±10%% moves no prediction); its value is the start value's neighbourhood, not a fit\n", n)
			}
			fmt.Fprintln(w, "residuals (fitted rows):")
			if err := calibrate.WriteResiduals(w, res.Residuals); err != nil {
				return err
			}
			if holdout {
				pred, err := calibrate.Residuals(res.Model, test, seed)
				if err != nil {
					return err
				}
				fmt.Fprintln(w, "predictions (held-out rows):")
				if err := calibrate.WriteResiduals(w, pred); err != nil {
					return err
				}
			}
			if out != "" {
				if err := res.Model.WriteFile(out); err != nil {
					return fmt.Errorf("writing --out: %w", err)
				}
				fmt.Fprintf(w, "model: %s\n", out)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&base, "model", model.DefaultPreset, "model to start from: a preset or a model file; its other parameters are kept")
	fl.StringSliceVar(&params, "params", calibrate.DefaultFitParams, "parameters to fit, by model-file name")
	fl.StringVar(&out, "out", "emud-model.json", `model file to write ("" for none)`)
	fl.Uint64Var(&seed, "seed", 1, "seed of every scenario run")
	fl.BoolVar(&holdout, "holdout", false, "fit on every other row, predict the rest")
	fl.BoolVar(&progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	return cmd
}

// paramValues maps p's tunable parameters by model-file name.
func paramValues(p *model.Params) map[string]float64 {
	m := map[string]float64{}
	for _, f := range p.Fields() {
		m[f.Name] = *f.Ptr
	}
	return m
}
