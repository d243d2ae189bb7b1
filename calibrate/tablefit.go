package calibrate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/emud-dev/emud/model"
)

// Options tune the calibration's fits. The zero value is the full
// procedure "emud calibrate" runs.
type Options struct {
	// Runs is how many seeded runs a median-of-N row (postwait.*) takes;
	// 0 = the report's 41. Tests use fewer: the fit is the same mechanism
	// over a coarser sample of the poll phase.
	Runs int
	// Progress, if set, is called after each batch of row evaluations with
	// the number done and the budget.
	Progress func(done, budget int)
}

func (o Options) runs() int {
	if o.Runs > 0 {
		return o.Runs
	}
	return postWaitRuns
}

// counted returns the rows a fit and the gate count: every row but the
// conflicts.
func counted(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if _, ok := conflicts[r.ID]; !ok {
			out = append(out, r)
		}
	}
	return out
}

// rowError is row's residual in the fits: its relative error for an
// emulated value v (over ref when the documented value is 0). A
// difference row is weighed by the difference it documents, the tightest
// reading of it, which is what lets the fit read visible_us from
// wait.vs.quiet.8; the report and the cross-validation judge it against
// its terms instead (judgedError).
func rowError(row Row, v, ref float64) float64 {
	if row.Value != 0 {
		return (v - row.Value) / row.Value
	}
	return v / ref
}

// tableProblem is the least-squares problem of fitting names to rows.
func tableProblem(rows []Row, names []string, seed uint64, o Options) (*lsq, error) {
	ps, err := lookupParams(names)
	if err != nil {
		return nil, err
	}
	runs := o.runs()
	// A parameter that follows a fitted one (link_read_gbps, from
	// bw.get.8m) takes its value in every candidate, as in the preset.
	return &lsq{params: ps, n: len(rows), progress: o.Progress, follow: true,
		resid: func(p *model.Params, idx []int, out []float64) error {
			for _, i := range idx {
				v, ref, err := measure(p, rows[i], seed, runs)
				if err != nil {
					return fmt.Errorf("row %s: %w", rows[i].ID, err)
				}
				out[i] = rowError(rows[i], v, ref)
			}
			return nil
		}}, nil
}

func lookupParams(names []string) ([]model.Parameter, error) {
	var ps []model.Parameter
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, fmt.Errorf("fit: parameter %q named twice", n)
		}
		pa, err := model.LookupParameter(n)
		if err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		ps = append(ps, pa)
	}
	return ps, nil
}

// TableFit is a fit of model parameters to documented rows.
type TableFit struct {
	Model  *model.Params
	Params []string // fitted, by model-file name
	Rows   int      // rows fitted
	Evals  int      // row evaluations
	// Flat lists fitted parameters no fitted row depends on: they stay at
	// the start value.
	Flat []string
}

// FitTable fits the named parameters of start (a copy) to the counted rows
// of rows, minimising the sum of squared relative errors (the report's
// errors), every candidate judged by running the rows' scenarios. A
// parameter that, at the fit, moves no fitted row by MinSensitivity under
// ±10% is not identified by these rows: it goes back to its start value
// and the others are refitted without it (it is listed in Flat).
func FitTable(start *model.Params, rows []Row, names []string, seed uint64, o Options) (*TableFit, error) {
	rows = counted(rows)
	res, err := fitRows(start, rows, names, seed, o)
	if err != nil {
		return nil, err
	}
	sens, err := Sensitivities(res.Model, rows, names, seed, o)
	if err != nil {
		return nil, err
	}
	var keep, drop []string
	for _, s := range sens {
		if s.Shift < MinSensitivity {
			drop = append(drop, s.Param)
		} else {
			keep = append(keep, s.Param)
		}
	}
	if len(drop) == 0 {
		return res, nil
	}
	evals := res.Evals
	if len(keep) == 0 {
		res = &TableFit{Model: start.Clone(), Rows: len(rows)}
		res.Model.Label = start.Name() + "+fit"
	} else if res, err = fitRows(start, rows, keep, seed, o); err != nil {
		return nil, err
	}
	res.Params, res.Evals, res.Flat = names, res.Evals+evals, drop
	return res, nil
}

// fitRows is one least-squares fit of names to rows.
func fitRows(start *model.Params, rows []Row, names []string, seed uint64, o Options) (*TableFit, error) {
	q, err := tableProblem(rows, names, seed, o)
	if err != nil {
		return nil, err
	}
	q.ridge = fitRidge
	res, err := q.run(start)
	if err != nil {
		return nil, err
	}
	res.p.Label = start.Name() + "+fit"
	return &TableFit{Model: res.p, Params: names, Rows: len(rows), Evals: res.evals, Flat: res.flat}, nil
}

// fitRidge is the weight of a fitted parameter's log-distance from its
// prior (lsq.ridge): a factor of 2 away costs what a 0.2% row error does.
const fitRidge = 0.003

// Group is the family a documented row belongs to for cross-validation:
// the id up to its first dot (bw, issue, signal, postwait, bcast, ...).
func Group(id string) string {
	g, _, _ := strings.Cut(id, ".")
	return g
}

// CVRow is one held-out row's prediction.
type CVRow struct {
	ID         string  `json:"id"`
	Group      string  `json:"group"`
	Documented float64 `json:"documented"`
	Predicted  float64 `json:"predicted"`
	// Error is judged as the report judges it: for a difference row
	// against Ref, the larger of its predicted terms.
	Error float64 `json:"error"`
	Ref   float64 `json:"ref,omitempty"`
}

// CrossValidation is a leave-one-group-out cross-validation: for each
// group, the parameters are refitted from the start model on every other
// group's rows, and the group's rows are predicted by that fit.
type CrossValidation struct {
	Rows   []CVRow  `json:"rows"`
	Max    float64  `json:"max_abs_error"`
	Median float64  `json:"median_abs_error"`
	Worst  string   `json:"worst"`
	Evals  int      `json:"evals"`
	Groups []string `json:"groups"`
	// Flat maps a group to the fitted parameters that no other group's
	// rows identify: held out, its rows are predicted with those at the
	// start (prior) value.
	Flat map[string][]string `json:"unidentified,omitempty"`
}

// CrossValidate runs the leave-one-group-out cross-validation of names
// over the counted rows of rows, each refit starting from start.
func CrossValidate(start *model.Params, rows []Row, names []string, seed uint64, o Options) (*CrossValidation, error) {
	rows = counted(rows)
	var groups []string
	for _, r := range rows {
		if g := Group(r.ID); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	cv := &CrossValidation{Groups: groups, Flat: map[string][]string{}}
	done := 0
	for _, g := range groups {
		var train, test []Row
		for _, r := range rows {
			if Group(r.ID) == g {
				test = append(test, r)
			} else {
				train = append(train, r)
			}
		}
		if len(train) == 0 {
			continue // nothing else to fit on: one group alone is not cross-validated
		}
		oo := o
		if o.Progress != nil {
			base := done
			oo.Progress = func(d, b int) { o.Progress(base+d, base+b*len(groups)) }
		}
		fit, err := FitTable(start, train, names, seed, oo)
		if err != nil {
			return nil, fmt.Errorf("cross-validation without %s.*: %w", g, err)
		}
		done += fit.Evals
		cv.Evals += fit.Evals
		if len(fit.Flat) > 0 {
			cv.Flat[g] = fit.Flat
		}
		for _, r := range test {
			v, ref, err := measure(fit.Model, r, seed, o.runs())
			if err != nil {
				return nil, fmt.Errorf("cross-validation: row %s: %w", r.ID, err)
			}
			e := judgedError(r, v, ref)
			row := CVRow{ID: r.ID, Group: g, Documented: r.Value, Predicted: v, Error: e}
			if IsDifference(r) {
				row.Ref = ref
			}
			cv.Rows = append(cv.Rows, row)
			if math.Abs(e) > cv.Max || cv.Worst == "" {
				cv.Max, cv.Worst = math.Abs(e), r.ID
			}
		}
	}
	var abs []float64
	for _, r := range cv.Rows {
		abs = append(abs, math.Abs(r.Error))
	}
	cv.Median = median(abs)
	return cv, nil
}

// WriteText prints one line per held-out row, the parameters only their
// own group identifies, then "cross-validation (identified groups): max
// |error| X% (median Y%) over N rows" over the groups whose parameters
// other groups identify, and the same figure for all rows: the last line,
// "cross-validation (all rows): ...".
func (cv *CrossValidation) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "held out\tid\tdocumented\tpredicted\terror\t\n")
	var diff []string
	for _, r := range cv.Rows {
		errs := fmt.Sprintf("%+.1f%%", 100*r.Error)
		if r.Ref != 0 {
			errs += fmt.Sprintf(" of %.3g", r.Ref)
			diff = append(diff, r.ID)
		}
		fmt.Fprintf(tw, "%s.*\t%s\t%s\t%s\t%s\t\n", r.Group, r.ID, num(r.Documented), num(r.Predicted), errs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(diff) > 0 {
		fmt.Fprintf(w, "%s\n", differenceNote(diff))
	}
	var own []string
	for _, g := range cv.Groups {
		if f := cv.Flat[g]; len(f) > 0 {
			fmt.Fprintf(w, "without %s.*, no other row identifies %s: predicted at the prior\n", g, strings.Join(f, ", "))
			own = append(own, fmt.Sprintf("%s (%s.*)", strings.Join(f, ", "), g))
		}
	}
	if len(own) > 0 {
		fmt.Fprintf(w, "parameters only their own group identifies: %s\n", strings.Join(own, "; "))
	}
	var ident []float64
	for _, r := range cv.Rows {
		if len(cv.Flat[r.Group]) == 0 {
			ident = append(ident, math.Abs(r.Error))
		}
	}
	m := 0.0
	for _, e := range ident {
		m = max(m, e)
	}
	fmt.Fprintf(w, "cross-validation (identified groups): max |error| %.1f%% (median %.1f%%) over %d rows\n", 100*m, 100*median(ident), len(ident))
	_, err := fmt.Fprintf(w, "cross-validation (all rows): max |error| %.1f%% (median %.1f%%) over %d rows\n", 100*cv.Max, 100*cv.Median, len(cv.Rows))
	return err
}
