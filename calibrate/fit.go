package calibrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"github.com/emud-dev/emud/model"
)

// Measurement is one row of a fit input: Ops copies of Bytes each to one
// peer, issued back to back by one thread, round-robin over Queues queues;
// TimeUs from the first issue until all are complete (quiet on each queue
// returned).
type Measurement struct {
	Ops, Queues int
	Bytes       uint64
	TimeUs      float64
}

// Limits on a measurement row: enough for every documented shape, small
// enough that one emulated row stays a fraction of a second.
const (
	maxFitOps   = 4096
	maxFitBytes = 256 << 20
	// MaxFitRows caps a fit's input: every candidate runs every row, and a
	// fit tries up to 400 candidates per parameter.
	MaxFitRows = 256
	// Measured times must lie within the virtual clock's reach: from one
	// picosecond (its resolution) to model.MaxStepUs. Below it a relative
	// error is infinite for every candidate.
	minFitTimeUs = 1e-6
)

// ParseMeasurements reads a CSV with header ops,bytes,queues,time_us.
// Errors name the line and the column.
func ParseMeasurements(r io.Reader) ([]Measurement, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 4
	cr.Comment = '#'
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("measurements: %w", err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != "ops,bytes,queues,time_us" {
		return nil, errors.New("measurements: header must be ops,bytes,queues,time_us")
	}
	var ms []Measurement
	for i, rec := range recs[1:] {
		line := i + 2
		var m Measurement
		ops, err1 := strconv.Atoi(rec[0])
		bytes, err2 := strconv.ParseUint(rec[1], 10, 64)
		queues, err3 := strconv.Atoi(rec[2])
		t, err4 := strconv.ParseFloat(rec[3], 64)
		switch {
		case err1 != nil || ops < 1 || ops > maxFitOps:
			return nil, fmt.Errorf("measurements line %d: ops %q: need an integer 1..%d", line, rec[0], maxFitOps)
		case err2 != nil || bytes < 1 || bytes > maxFitBytes:
			return nil, fmt.Errorf("measurements line %d: bytes %q: need an integer 1..%d", line, rec[1], maxFitBytes)
		case err3 != nil || queues < 1 || queues > benchQueues:
			return nil, fmt.Errorf("measurements line %d: queues %q: need an integer 1..%d", line, rec[2], benchQueues)
		case err4 != nil || !(t >= minFitTimeUs) || t > model.MaxStepUs:
			return nil, fmt.Errorf("measurements line %d: time_us %q: need a number from %g (1 ps, the emulator's clock resolution) to %g", line, rec[3], minFitTimeUs, float64(model.MaxStepUs))
		case uint64(ops)*bytes > maxFitBytes:
			return nil, fmt.Errorf("measurements line %d: ops × bytes = %d exceeds %d", line, uint64(ops)*bytes, maxFitBytes)
		}
		m.Ops, m.Bytes, m.Queues, m.TimeUs = ops, bytes, queues, t
		if len(ms) == MaxFitRows {
			return nil, fmt.Errorf("measurements line %d: more than %d rows: a fit runs every row for each of its hundreds of candidates; fit a representative subset", line, MaxFitRows)
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, errors.New("measurements: no rows")
	}
	return ms, nil
}

// Predict runs one measurement's scenario under m and returns its time (µs).
func Predict(m model.Model, x Measurement, seed uint64) (float64, error) {
	return putQuiet(m, seed, false, x.Bytes, x.Ops, x.Queues, true)
}

// DefaultFitParams are the parameters a fit varies unless told otherwise:
// the ones the ops/bytes/queues shape identifies (slope, per-op gap, fixed
// latency).
var DefaultFitParams = []string{"link_gbps", "packet_us", "doorbell_us"}

// Residual is one measurement against the fitted model.
type Residual struct {
	Measurement
	PredictedUs float64
	Error       float64 // (predicted − measured) / measured
}

// FitResult is the outcome of Fit.
type FitResult struct {
	Model     *model.Params
	Params    []string // the fitted parameters, by model-file name
	Residuals []Residual
	Evals     int
	// Unidentified lists fitted parameters the rows do not constrain: a
	// ±10% change moves no prediction.
	Unidentified []string
}

// FitOption tunes Fit.
type FitOption func(*fitOptions)

type fitOptions struct {
	progress func(evals, budget int)
}

// WithProgress has Fit call f after every candidate it evaluates, with the
// number evaluated so far and the evaluation budget (the fit may stop
// earlier, when it converges).
func WithProgress(f func(evals, budget int)) FitOption {
	return func(o *fitOptions) { o.progress = f }
}

// Fit varies the named parameters of base (a copy; base is not changed) to
// minimise the sum of squared relative errors of ms, running every
// measurement's scenario on the emulator for each candidate (Nelder–Mead
// from gonum/optimize, over the logarithms so parameters stay positive).
func Fit(base *model.Params, names []string, ms []Measurement, seed uint64, opts ...FitOption) (*FitResult, error) {
	var fo fitOptions
	for _, o := range opts {
		o(&fo)
	}
	if len(ms) == 0 {
		return nil, errors.New("fit: no measurements")
	}
	if len(names) == 0 {
		return nil, errors.New("fit: no parameters to fit: name at least one")
	}
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, fmt.Errorf("fit: parameter %q named twice", n)
		}
	}
	p := base.Clone()
	fields := map[string]*float64{}
	for _, f := range p.Fields() {
		fields[f.Name] = f.Ptr
	}
	var ptrs []*float64
	for _, n := range names {
		ptr, ok := fields[n]
		if !ok {
			known := make([]string, 0, len(fields))
			for _, f := range p.Fields() {
				known = append(known, f.Name)
			}
			return nil, fmt.Errorf("fit: unknown parameter %q; parameters: %s", n, strings.Join(known, ", "))
		}
		if !(*ptr > 0) {
			return nil, fmt.Errorf("fit: parameter %s starts at %v; a fit needs a positive start", n, *ptr)
		}
		ptrs = append(ptrs, ptr)
	}
	set := func(x []float64) {
		for i, ptr := range ptrs {
			*ptr = math.Exp(x[i])
		}
	}
	var evalErr error
	evals, budget := 0, 400*len(ptrs)
	obj := func(x []float64) float64 {
		set(x)
		evals++
		if fo.progress != nil {
			defer fo.progress(evals, budget)
		}
		if err := p.Validate(); err != nil {
			return math.Inf(1)
		}
		var sum float64
		for _, m := range ms {
			t, err := Predict(p, m, seed)
			if err != nil {
				evalErr = err
				return math.Inf(1)
			}
			e := (t - m.TimeUs) / m.TimeUs
			sum += e * e
		}
		return sum
	}
	x0 := make([]float64, len(ptrs))
	for i, ptr := range ptrs {
		x0[i] = math.Log(*ptr)
	}
	res, err := optimize.Minimize(optimize.Problem{Func: obj}, x0,
		&optimize.Settings{FuncEvaluations: budget, Concurrent: 1,
			Converger: &optimize.FunctionConverge{Absolute: 1e-9, Relative: 1e-9, Iterations: 60}},
		&optimize.NelderMead{SimplexSize: 0.7}) // wide first simplex (log space): regimes where a parameter is hidden, as the per-packet gap under an issue-bound stream, are flat
	if evalErr != nil {
		return nil, fmt.Errorf("fit: a candidate failed to run: %w", evalErr)
	}
	if err != nil && res == nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	if math.IsInf(res.F, 0) || math.IsNaN(res.F) {
		// No candidate could be scored: a model written now would be
		// wherever the search happened to stop, not a fit.
		return nil, fmt.Errorf("fit: no candidate of %d gave a finite error (every model was invalid or every row's error was infinite); check the measurements and the start model", evals)
	}
	// A parameter the rows do not constrain leaves the objective flat
	// around the optimum: say so rather than report its value as fitted.
	best := obj(res.X)
	var flat []string
	for i, n := range names {
		x := append([]float64(nil), res.X...)
		x[i] += 0.1 // ×1.105
		up := obj(x)
		x[i] -= 0.2
		if down := obj(x); math.Abs(up-best) < 1e-9 && math.Abs(down-best) < 1e-9 {
			flat = append(flat, n)
		}
	}
	set(res.X)
	p.Label = base.Name() + "+fit"
	out := &FitResult{Model: p, Params: names, Evals: evals, Unidentified: flat}
	if out.Residuals, err = Residuals(p, ms, seed); err != nil {
		return nil, err
	}
	return out, nil
}

// Residuals predicts every measurement under m.
func Residuals(m model.Model, ms []Measurement, seed uint64) ([]Residual, error) {
	var rs []Residual
	for _, x := range ms {
		t, err := Predict(m, x, seed)
		if err != nil {
			return nil, err
		}
		rs = append(rs, Residual{Measurement: x, PredictedUs: t, Error: (t - x.TimeUs) / x.TimeUs})
	}
	return rs, nil
}

// DocumentedMeasurements turns the documented rows that have the fit's
// shape into measurements: the single-put bandwidth rows (time = bytes /
// bandwidth), the split row and the scatter row. The conflicting
// single.256k row is left out.
func DocumentedMeasurements(rows []Row) []Measurement {
	var ms []Measurement
	for _, r := range rows {
		switch {
		case strings.HasPrefix(r.ID, "bw.") && r.Metric == "bandwidth":
			ops, b := r.param("ops", 1), r.param("bytes", 0)
			ms = append(ms, Measurement{Ops: int(ops), Bytes: b, Queues: int(r.param("queues", 1)),
				TimeUs: float64(ops*b) / r.Value / 1e3})
		case strings.HasPrefix(r.ID, "scatter."):
			ms = append(ms, Measurement{Ops: int(r.param("packets", 1)), Bytes: r.param("bytes", 0), Queues: 1, TimeUs: r.Value})
		}
	}
	return ms
}

// WriteResiduals prints one line per measurement.
func WriteResiduals(w io.Writer, rs []Residual) error {
	if _, err := fmt.Fprintf(w, "%6s %10s %6s %12s %12s %8s\n", "ops", "bytes", "queues", "measured_us", "emulated_us", "error"); err != nil {
		return err
	}
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "%6d %10d %6d %12.3f %12.3f %+7.1f%%\n", r.Ops, r.Bytes, r.Queues, r.TimeUs, r.PredictedUs, 100*r.Error); err != nil {
			return err
		}
	}
	return nil
}
