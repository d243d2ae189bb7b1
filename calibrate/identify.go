package calibrate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/emud-dev/emud/model"
)

// Identification is what "--params all" finds a table of measurements
// can fit from a start model (Identify).
type Identification struct {
	// Fit lists the parameters the rows identify, in table order: each
	// moves some row, and none moves the rows only as others together do.
	Fit []string
	// Rest lists the parameters no row moves under any probe.
	Rest []string
	// Together maps a parameter that moves rows only as a combination of
	// Fit's parameters does (the rows see their sum: visible_us beside
	// every path's copy latency on kernel-clock rows, a path's copy
	// latency beside its gap on engine-clock rows) to those parameters:
	// it keeps the start model's value.
	Together map[string][]string
	// Moves holds, for every parameter some row moves, each row's
	// relative change under its last probe: the scale step (ScaleStep)
	// for a time or a fraction, −10% for a rate or clock, ±1 for a count.
	Moves map[string][]float64
}

// Scale steps: how far Identify moves a parameter to see whether a row
// depends on it, at least. A ±10% change of a latency that is 0 (a
// mechanism the start model does not have) or near it is no change at
// all; these are changes that matter at the scale of one copy.
const (
	scaleStepUs     = 1.0  // a time in µs: one µs
	scaleStepCycles = 1000 // CU cycles: about 0.4 µs at 2.4 GHz
	scaleStepFrac   = 0.1  // a fraction (link_share)
)

// ScaleStep is the additive step Identify tries for a parameter whose
// value may be 0 (a time or a fraction), and the shift Fit searches such a
// parameter with when it starts at 0; 0 for a rate, clock or count, which
// are never 0 and move by ±10% (a count by ±1), and for the jitter.
func ScaleStep(pa model.Parameter) float64 {
	switch {
	case pa.Int, pa.Name == model.JitterFrac.Name: // jitter is a run setting, never fitted
		return 0
	case pa.Range == model.RangeFraction:
		return scaleStepFrac
	case pa.Range == model.RangeStep && pa.Unit == "cycles":
		return scaleStepCycles
	case pa.Range == model.RangeStep:
		return scaleStepUs
	}
	return 0
}

// aProbe is a copy of a model with one parameter moved, and how.
type aProbe struct {
	p    *model.Params
	step string // "+10%", "-1", "+1 µs"
}

// identifyProbes returns the valid copies of base with pa moved: ±10%
// (a count ±1) as Sensitivities moves it, and by its scale step; the last
// is the one whose effect Identify's Moves records.
func identifyProbes(base *model.Params, pa model.Parameter) []aProbe {
	var out []aProbe
	v := pa.Get(base)
	for _, p := range probes(base, pa) {
		st := fmt.Sprintf("%+.0f%%", 100*(pa.Get(p)/v-1))
		if pa.Int {
			st = fmt.Sprintf("%+d", int(pa.Get(p)-v))
		}
		out = append(out, aProbe{p, st})
	}
	if st := ScaleStep(pa); st > 0 {
		p := base.Clone()
		pa.Set(p, v+st)
		if p.Validate() == nil {
			out = append(out, aProbe{p, strings.TrimSpace(fmt.Sprintf("%+g %s", st, pa.Unit))})
		}
	}
	return out
}

// idCand is one parameter some row moves: its table position, how many
// rows it moves, and its scale step's effect on each.
type idCand struct {
	pa    model.Parameter
	order int
	n     int
	col   []float64
}

// collinearTol is how little of a parameter's effect on the rows may lie
// outside what the parameters already kept do, relative to the effect,
// for the rows to be said to see it only together with them.
const collinearTol = 0.03

// Identify finds what "--params all" fits from base on ms. Every
// candidate (all parameters but the jitter run setting) is probed by ±10%
// and, for a time or a fraction, by a step that matters at its scale
// (ScaleStep), so a mechanism the start model has at 0 is found when the
// rows need it. A parameter that moves no row is left out (Rest). Of the
// others, one whose effect on the rows is (within collinearTol) a
// combination of others' is kept at base's value (Together): the rows
// cannot tell it from them. Parameters are taken most specific first
// (fewest rows moved; on the same rows, the larger effect, then table
// order), so a per-path latency is fitted and visible_us, which every row
// has once, is the one held when the rows see only their sums; and where
// a path's latency and the gap after its copies move the same rows by the
// same amount (engine-clock rows, where the closing TIMESTAMP waits for
// the gap), the gap, older in the table, is fitted.
func Identify(base *model.Params, ms []Measurement, seed uint64) (*Identification, error) {
	ref, err := Residuals(base, ms, seed)
	if err != nil {
		return nil, err
	}
	id := &Identification{Together: map[string][]string{}, Moves: map[string][]float64{}}
	var cands []idCand
	for i, pa := range model.Parameters() {
		if pa.Name == model.JitterFrac.Name {
			continue
		}
		ps := identifyProbes(base, pa)
		var col []float64
		moved := map[int]bool{}
		for _, pr := range ps {
			rs, err := Residuals(pr.p, ms, seed)
			if err != nil {
				return nil, err
			}
			col = make([]float64, len(rs))
			for r := range rs {
				col[r] = (rs[r].PredictedUs - ref[r].PredictedUs) / ref[r].PredictedUs
				if col[r] != 0 {
					moved[r] = true
				}
			}
		}
		if len(moved) == 0 {
			id.Rest = append(id.Rest, pa.Name)
			continue
		}
		id.Moves[pa.Name] = col
		cands = append(cands, idCand{pa: pa, order: i, n: len(moved), col: col})
	}
	sort.SliceStable(cands, func(a, b int) bool {
		ca, cb := cands[a], cands[b]
		if ca.n != cb.n {
			return ca.n < cb.n
		}
		// On the same rows, the one that moves them most: of a local
		// row's rate, latency and gap, the one its time depends on.
		if na, nb := dot(ca.col, ca.col), dot(cb.col, cb.col); na != nb && math.Abs(na-nb) > 1e-6*max(na, nb) {
			return na > nb
		}
		return ca.order < cb.order
	})
	// Gram–Schmidt over the scale-step effects: a candidate whose effect
	// the kept ones' span already holds adds nothing the rows can see.
	var basis [][]float64
	var kept []idCand
	for _, c := range cands {
		res := append([]float64(nil), c.col...)
		for _, b := range basis {
			d := dot(res, b)
			for r := range res {
				res[r] -= d * b[r]
			}
		}
		norm, rn := math.Sqrt(dot(c.col, c.col)), math.Sqrt(dot(res, res))
		if norm == 0 || rn <= collinearTol*norm {
			id.Together[c.pa.Name] = partners(c.col, kept)
			continue
		}
		for r := range res {
			res[r] /= rn
		}
		basis = append(basis, res)
		kept = append(kept, c)
	}
	slices.SortFunc(kept, func(a, b idCand) int { return a.order - b.order })
	for _, c := range kept {
		id.Fit = append(id.Fit, c.pa.Name)
	}
	return id, nil
}

// partners names the kept candidates the rows see col together with:
// those whose part in col's least-squares expression by the kept ones is
// at least a tenth of col.
func partners(col []float64, kept []idCand) []string {
	if len(kept) == 0 {
		return nil
	}
	k := mat.NewDense(len(col), len(kept), nil)
	for j, c := range kept {
		k.SetCol(j, c.col)
	}
	var a mat.VecDense
	if err := a.SolveVec(k, mat.NewVecDense(len(col), append([]float64(nil), col...))); err != nil {
		return nil // a singular kept set cannot happen (Gram–Schmidt kept it independent)
	}
	norm := math.Sqrt(dot(col, col))
	var out []string
	for j, c := range kept {
		if math.Abs(a.AtVec(j))*math.Sqrt(dot(c.col, c.col)) >= 0.1*norm {
			out = append(out, c.pa.Name)
		}
	}
	return out
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Identified returns, of the candidate parameters, those the rows
// identify (Identify's Fit): what "--params all" fits.
func Identified(base *model.Params, ms []Measurement, seed uint64) ([]string, error) {
	id, err := Identify(base, ms, seed)
	if err != nil {
		return nil, err
	}
	return id.Fit, nil
}

// WriteText prints what --params all fits and what it leaves, with why.
func (id *Identification) WriteText(w io.Writer, start string) error {
	fmt.Fprintf(w, "--params all: these rows identify %s\n", strings.Join(id.Fit, ", "))
	if len(id.Together) > 0 {
		var ns []string
		for n := range id.Together {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		var parts []string
		for _, n := range ns {
			parts = append(parts, fmt.Sprintf("%s (with %s)", n, strings.Join(id.Together[n], " + ")))
		}
		fmt.Fprintf(w, "left at %s's values (the rows see them only together with fitted ones): %s\n", start, strings.Join(parts, "; "))
	}
	_, err := fmt.Fprintf(w, "left at %s's values (no row moves under ±10%% or a step at its scale): %s\n", start, strings.Join(id.Rest, ", "))
	return err
}

// Mover is one parameter's effect on one row: the row's relative change
// when the parameter takes Step.
type Mover struct {
	Param string
	Step  string // "+1 µs", "+10%", "+1"
	Move  float64
}

// RowMovers is a row a fit left beyond its bound and what could move it.
type RowMovers struct {
	Row    string
	Error  float64
	Movers []Mover // largest |Move| first; none: no parameter moves it
}

// ExplainRows probes, for each row of rs beyond bound, every parameter of
// m (but the jitter run setting) by ±10% and its scale step, and lists the
// parameters that move the row, by how much, largest first. A row no
// parameter moves needs a mechanism the model lacks, not other data.
func ExplainRows(m *model.Params, rs []Residual, bound float64, seed uint64) ([]RowMovers, error) {
	var out []RowMovers
	for _, r := range rs {
		if math.Abs(r.Error) <= bound {
			continue
		}
		rm := RowMovers{Row: r.Name, Error: r.Error}
		for _, pa := range model.Parameters() {
			if pa.Name == model.JitterFrac.Name {
				continue
			}
			best := Mover{Param: pa.Name}
			for _, pr := range identifyProbes(m, pa) {
				t, err := Predict(pr.p, r.Measurement, seed)
				if err != nil {
					return nil, fmt.Errorf("row %s: %w", PrintName(r.Name), err)
				}
				if mv := (t - r.PredictedUs) / r.PredictedUs; math.Abs(mv) > math.Abs(best.Move) {
					best.Move, best.Step = mv, pr.step
				}
			}
			if best.Move != 0 {
				rm.Movers = append(rm.Movers, best)
			}
		}
		sort.SliceStable(rm.Movers, func(a, b int) bool { return math.Abs(rm.Movers[a].Move) > math.Abs(rm.Movers[b].Move) })
		out = append(out, rm)
	}
	return out, nil
}

// maxMovers is how many parameters WriteRowMovers names per row.
const maxMovers = 4

// WriteRowMovers prints, for each row a fit left beyond its bound, the
// parameters that move it most, or that none does.
func WriteRowMovers(w io.Writer, rows []RowMovers) error {
	for _, r := range rows {
		if len(r.Movers) == 0 {
			if _, err := fmt.Fprintf(w, "row %s (%+.1f%%): no parameter of the model moves this row (a mechanism the model lacks, not the data)\n", PrintName(r.Row), 100*r.Error); err != nil {
				return err
			}
			continue
		}
		var parts []string
		for _, m := range r.Movers[:min(maxMovers, len(r.Movers))] {
			parts = append(parts, fmt.Sprintf("%s %s moves it %+.1f%%", m.Param, m.Step, 100*m.Move))
		}
		if _, err := fmt.Fprintf(w, "row %s (%+.1f%%): %s\n", PrintName(r.Row), 100*r.Error, strings.Join(parts, "; ")); err != nil {
			return err
		}
	}
	return nil
}
