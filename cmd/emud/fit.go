package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/scenario"
)

// fitFlags are the command's flags.
type fitFlags struct {
	base        string
	out         string
	predict     string
	params      []string
	seed        uint64
	holdout     bool
	progress    bool
	writeAnyway bool
	maxError    float64
}

func newFitCmd() *cobra.Command {
	var cf fitFlags
	cmd := &cobra.Command{
		Use:   "fit FILE",
		Short: "Fit the timing model's parameters to measurements and write a model file",
		Long: `Fit timing-model parameters to measurements in FILE, a CSV with header
name,src,dst,ops,bytes,queues,time_us: ops copies of bytes each from GPU src to
GPU dst (src == dst is a local copy; GPUs 0..7, or host at one end: host
memory, a copy over the GPU's PCIe link), issued back to back by one thread
of the GPU end round-robin over queues queues (its loopback queues for a host
copy), time_us from the first issue until everything has drained. Format v3
adds a clock column (kernel, or engine: the span of TIMESTAMPs around the
copies, what emud calibrate --measure writes), format v4 an exec column
after it: the GPU whose engine runs the copies, a peer copy's destination
for a pull (its engine reading across the link). The first format's header ops,bytes,queues,time_us
(GPU 0 to GPU 1) is still read. Lines starting with # are comments. At most 256
rows; time_us from 1e-6 (1 ps) to 1e9. A progress bar goes to stderr when it
is a terminal, or with --progress.

FILE may also be TransferBench's results (its text tables or OUTPUT_TO_CSV=1,
recognised by their "Executor:" lines): each test of DMA transfers of one
shape is one engine-clock row (k transfers of s streams: k·s copies on k·s
queues, timed by the executor; G1 -> D0 -> G0 is a pull, GPU 0's engine
reading GPU 1). docs/transferbench-sweep.cfg is a TransferBench config of the
rows that identify the copy engine's parameters:
  OUTPUT_TO_CSV=1 NUM_ITERATIONS=100 ./TransferBench transferbench-sweep.cfg > rows.csv
  emud fit rows.csv --params all --out mine.json

Every candidate parameter set is judged by running each row's scenario on the
emulator; a Levenberg–Marquardt search over the parameters' logarithms
minimises the sum of squared relative errors. Any parameter can be fitted by
its model-file name (the engine count engines_per_link included); --params all
fits every parameter the rows identify: one that moves some row's prediction
under ±10% or a step at its scale (1 µs, 1000 cycles, 0.1: a latency the start
model has at 0 is found), unless the rows see it only together with others
(visible_us beside each path's copy latency), which keeps the start model's
value, as does one no row moves; it says which are which. The fitted
parameters and the residual of every row are printed, and the model is
written to --out, which "emud run --model" and "emud calibrate --model" load.

--predict MODEL predicts every row under MODEL without fitting and prints CSV:
the input columns (v2) plus predicted_us,error_pct; the summary line
"predicted N rows: K within 15% (max X%, median Y%)" goes to stderr.

A fit that does not lower the rows' error, or leaves some fitted row more
than --max-error (25%) off, has failed: it says why, writes no model and
exits 4, unless --write-anyway; it lists, for each row beyond --max-error,
the parameters that move it and by how much, or "no parameter of the model
moves this row" (a mechanism the model lacks). The residual table names each row's path
(local: an engine writing its own GPU's memory; xgmi: to a peer; host: to or
from host memory over PCIe).

Rows may be of any size: the benches are phantom (timing only), so a row
of 64 copies of 1 GiB costs the memory of one of 64 B. Limits: ops 1..4096,
bytes 1..16 GiB per copy (cco cuts a copy into COPY packets of at most
1 GiB − 32 B, the 30-bit COPY limit), ops × bytes ≤ 1 TiB; lines of at most
4 KiB, names of at most 64 bytes, files of at most 16 MiB.

--holdout fits on every other row and reports the prediction of the others.
calibrate/testdata/mi355x-measurements.csv holds the documented rows of this
shape.

Exit status: 0 fitted (or predicted), 4 the fit failed (see above), 1 bad
flags or input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return cf.run(cmd, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&cf.base, "model", model.DefaultPreset, "model to start from: a preset or a model file; its other parameters are kept")
	fl.StringSliceVar(&cf.params, "params", calibrate.DefaultFitParams, `parameters to fit, by model-file name, or "all" (every parameter the rows identify)`)
	fl.StringVar(&cf.out, "out", "emud-model.json", `model file to write ("" for none)`)
	fl.StringVar(&cf.predict, "predict", "", "predict every row under this model (a preset or a model file) without fitting, as CSV with predicted_us,error_pct")
	fl.Uint64Var(&cf.seed, "seed", 1, "seed of every scenario run")
	fl.BoolVar(&cf.holdout, "holdout", false, "fit on every other row, predict the rest")
	fl.BoolVar(&cf.progress, "progress", false, "draw a progress bar on stderr even when it is not a terminal")
	fl.Float64Var(&cf.maxError, "max-error", 100*calibrate.FitBound, "a fit leaving some fitted row more than this many percent off fails (exit 4, no model written)")
	fl.BoolVar(&cf.writeAnyway, "write-anyway", false, "write the model even when the fit failed (did not lower the error, or left a row beyond --max-error)")
	return cmd
}

// run is the command's RunE.
func (cf *fitFlags) run(cmd *cobra.Command, args []string) error {
	if err := notWith(cmd, "predict", "--predict fits nothing, it predicts every row under its model", "model", "params", "out", "holdout", "max-error", "write-anyway", "progress"); err != nil {
		return err
	}
	if err := checkMaxError(cf.maxError); err != nil {
		return err
	}
	base, predict, params, seed, holdout, progress := cf.base, cf.predict, cf.params, cf.seed, cf.holdout, cf.progress
	spec, flag := base, "--model"
	if predict != "" {
		spec, flag = predict, "--predict"
	}
	m, err := model.Load(spec)
	if err != nil {
		return fmt.Errorf("invalid %s: %w", flag, err)
	}
	ms, err := calibrate.ReadMeasurements(args[0])
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if predict != "" {
		rs, err := calibrate.Residuals(m, ms, seed)
		if err != nil {
			return err
		}
		if err := calibrate.WritePredictions(w, rs); err != nil {
			return err
		}
		return calibrate.WritePredictionSummary(cmd.ErrOrStderr(), rs)
	}
	p := m
	train, test := ms, []calibrate.Measurement(nil)
	if holdout {
		if train, test, err = calibrate.Holdout(ms); err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
	}
	if len(params) == 0 {
		return fmt.Errorf("invalid --params %q: name at least one parameter (default %s), or all", strings.Join(params, ","), strings.Join(calibrate.DefaultFitParams, ","))
	}
	if len(params) == 1 && params[0] == calibrate.AllParams {
		id, err := calibrate.ParamsAll(p, train, seed)
		if err != nil {
			return err
		}
		if err := id.WriteText(w, p.Name()); err != nil {
			return err
		}
		if params = id.Fit; len(params) == 0 {
			return fmt.Errorf("--params all: no parameter moves any row of %s", args[0])
		}
	}
	errOut := cmd.ErrOrStderr()
	prog := newProgress(errOut, progress || isTerminal(errOut), "fit "+args[0], 1)
	res, err := calibrate.Fit(p, params, train, seed, calibrate.WithProgress(prog.set))
	prog.finish()
	if err != nil {
		return err
	}
	return cf.report(w, p, train, test, res)
}

// report prints the fitted values, the residuals and the held-out
// predictions, judges the fit and writes --out.
func (cf *fitFlags) report(w io.Writer, p *model.Params, train, test []calibrate.Measurement, res *calibrate.FitResult) error {
	out, writeAnyway, maxError := cf.out, cf.writeAnyway, cf.maxError
	if err := res.WriteReport(w, p, train, test, cf.seed); err != nil {
		return err
	}
	failed := res.Check(maxError / 100)
	if failed != nil {
		// Say what could move each row left beyond the bound, or that
		// nothing in the model can: a missing mechanism, not bad data.
		why, err := calibrate.ExplainRows(res.Model, res.Residuals, maxError/100, cf.seed)
		if err != nil {
			return err
		}
		if len(why) > 0 {
			fmt.Fprintf(w, "rows beyond ±%g%% and the parameters that move them (from the fitted model):\n", maxError)
			if err := calibrate.WriteRowMovers(w, why); err != nil {
				return err
			}
		}
	}
	if failed != nil && !writeAnyway {
		return &scenario.ExitError{Code: scenario.ExitCalibration, Err: fmt.Errorf("fit failed: %w; no model written (--write-anyway writes it)", failed)}
	}
	if failed != nil {
		fmt.Fprintf(w, "warning: fit failed: %v; writing the model anyway (--write-anyway)\n", failed)
	}
	if out != "" {
		if err := res.Model.WriteFile(out); err != nil {
			return fmt.Errorf("writing --out: %w", err)
		}
		fmt.Fprintf(w, "model: %s\n", out)
	}
	return nil
}
