package calibrate

import (
	"fmt"
	"io"
	"strings"

	"github.com/emud-dev/emud/model"
)

// ParameterRow is one parameter of the calibration's parameter table:
// its value and sensitivity, unit and source, and (with a fit) the value
// the fit from the priors found.
type ParameterRow struct {
	Sensitivity
	Unit   string   `json:"unit"`
	Source string   `json:"source"`
	Refit  *float64 `json:"refit,omitempty"`
}

// ParameterReport is what "emud calibrate" prints about a parameter
// model: every row of the parameter table with the documented row a ±10%
// change moves most, and optionally the fit of the fitted parameters from
// their priors.
type ParameterReport struct {
	Model  *model.Params
	Rows   []ParameterRow
	Fitted int // fitted parameters
	Sens   []Sensitivity
	Refit  *TableFit // nil without a fit
}

// Parameters measures every parameter of p but the run setting jitter
// (Sensitivities) over rows and, if fit, fits the fitted parameters to the
// counted rows from model.Prior (FitTable, with o.Progress).
func Parameters(p *model.Params, rows []Row, seed uint64, fit bool, o Options) (*ParameterReport, error) {
	var names []string
	for _, pa := range model.Parameters() {
		if pa.Name != "jitter" {
			names = append(names, pa.Name)
		}
	}
	sens, err := Sensitivities(p, rows, names, seed, o)
	if err != nil {
		return nil, err
	}
	r := &ParameterReport{Model: p, Sens: sens}
	if fit {
		if r.Refit, err = FitTable(model.Prior(), rows, model.FittedParameters(), seed, o); err != nil {
			return nil, err
		}
	}
	byName := map[string]Sensitivity{}
	for _, s := range sens {
		byName[s.Param] = s
	}
	for _, pa := range model.Parameters() {
		pr := ParameterRow{Sensitivity: byName[pa.Name], Unit: pa.Unit, Source: pa.Source}
		pr.Param, pr.Value, pr.Fitted = pa.Name, pa.Get(p), pa.Fitted
		if r.Refit != nil && pa.Fitted {
			v := pa.Get(r.Refit.Model)
			pr.Refit = &v
		}
		r.Rows = append(r.Rows, pr)
		if pa.Fitted {
			r.Fitted++
		}
	}
	return r, nil
}

// WriteText prints a blank line, the parameter table (WriteParameters),
// and with a fit the line "fit from the priors over N rows (R row runs):
// name=value ..." and the parameters the rows leave at the prior.
func (r *ParameterReport) WriteText(w io.Writer) error {
	fmt.Fprintln(w)
	if err := WriteParameters(w, r.Model, r.Sens); err != nil {
		return err
	}
	if f := r.Refit; f != nil {
		fmt.Fprintf(w, "fit from the priors over %d rows (%d row runs):", f.Rows, f.Evals)
		for _, n := range f.Params {
			pa, _ := model.LookupParameter(n)
			fmt.Fprintf(w, " %s=%.4g", n, pa.Get(f.Model))
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		if len(f.Flat) > 0 {
			if _, err := fmt.Fprintf(w, "the rows do not identify %s: left at the prior\n", strings.Join(f.Flat, ", ")); err != nil {
				return err
			}
		}
	}
	return nil
}
