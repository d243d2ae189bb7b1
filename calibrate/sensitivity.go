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

// Sensitivity is how much a ±10% change of one parameter moves the rows:
// the largest change of a counted row's relative error (the report's
// error), and which row.
type Sensitivity struct {
	Param  string  `json:"param"`
	Value  float64 `json:"value"`
	Fitted bool    `json:"fitted"`
	Row    string  `json:"row"`
	Shift  float64 `json:"shift"` // |Δ error| of Row, as a fraction
	// Groups are the row groups (Group) with a row the change moves by
	// MinSensitivity or more: the groups that identify the parameter.
	Groups []string `json:"groups,omitempty"`
}

// MinSensitivity is the least a fitted parameter must move some row by
// under ±10%; one that moves none that much is not identified by the
// table and must be removed or fixed from a cited fact.
const MinSensitivity = 0.02

// Sensitivities changes each named parameter of p by ±10% (a count by ±1
// when 10% rounds back to it) and reports the row it moves most.
func Sensitivities(p *model.Params, rows []Row, names []string, seed uint64, o Options) ([]Sensitivity, error) {
	rows = counted(rows)
	ps, err := lookupParams(names)
	if err != nil {
		return nil, err
	}
	errs := func(m *model.Params) ([]float64, error) {
		out := make([]float64, len(rows))
		for i, r := range rows {
			v, ref, err := measure(m, r, seed, o.runs())
			if err != nil {
				return nil, fmt.Errorf("row %s: %w", r.ID, err)
			}
			out[i] = rowError(r, v, ref)
		}
		return out, nil
	}
	base, err := errs(p)
	if err != nil {
		return nil, err
	}
	var out []Sensitivity
	for _, pa := range ps {
		v := pa.Get(p)
		s := Sensitivity{Param: pa.Name, Value: v, Fitted: pa.Fitted}
		for _, q := range probes(p, pa) {
			// A parameter that follows this one and is not judged itself
			// moves with it, as in the table's fit (tableProblem).
			for _, r := range model.Parameters() {
				if r.Follows == pa.Name && !slices.Contains(names, r.Name) {
					r.Set(q, pa.Get(q))
				}
			}
			e, err := errs(q)
			if err != nil {
				return nil, err
			}
			for i := range e {
				d := math.Abs(e[i] - base[i])
				if d > s.Shift {
					s.Shift, s.Row = d, rows[i].ID
				}
				if g := Group(rows[i].ID); d >= MinSensitivity && !slices.Contains(s.Groups, g) {
					s.Groups = append(s.Groups, g)
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// WriteParameters prints each parameter of p: value, unit, fitted or
// fixed, its sensitivity if measured, the row groups that identify it
// (a row of the group moves by MinSensitivity under ±10%), and its
// source; then the line "fitted parameters: N".
func WriteParameters(w io.Writer, p *model.Params, sens []Sensitivity) error {
	by := map[string]Sensitivity{}
	for _, s := range sens {
		by[s.Param] = s
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "parameter\tvalue\tunit\t\t±10%% moves\tidentified by\tsource\n")
	n := 0
	for _, pa := range model.Parameters() {
		kind := "fixed"
		if pa.Fitted {
			kind = "fitted"
			n++
		}
		moves, groups := "", ""
		if s, ok := by[pa.Name]; ok {
			moves = fmt.Sprintf("%s by %.1f%%", s.Row, 100*s.Shift)
			if s.Row == "" {
				moves = "no row"
			}
			groups = "-"
			if len(s.Groups) > 0 {
				groups = strings.Join(s.Groups, ",")
			}
		}
		fmt.Fprintf(tw, "%s\t%.6g\t%s\t%s\t%s\t%s\t%s\n", pa.Name, pa.Get(p), pa.Unit, kind, moves, groups, pa.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "fitted parameters: %d\n", n)
	return err
}
