package calibrate

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/emud-dev/emud/model"
)

// lsq is a least-squares fit of some parameters of a model.Params to n
// residuals, each computed by running a scenario on the emulator:
// Levenberg–Marquardt over the parameters' logarithms (so they stay
// positive) with a forward-difference Jacobian. Each row is re-run only
// for the parameters it depends on: the emulator is deterministic, so a
// row that a parameter's probe did not move at all does not depend
// on it (all rows are probed again every few iterations, as the regime
// changes).
type lsq struct {
	params []model.Parameter
	n      int
	// resid sets out[i], for each i in rows, to row i's residual under p
	// (relative error); an error stops the fit.
	resid    func(p *model.Params, rows []int, out []float64) error
	progress func(done, budget int) // row evaluations so far, and the budget
	maxIter  int
	// ridge weighs each parameter's log-distance from its start as one
	// more residual: negligible next to any row a parameter moves, it
	// picks, along a direction no row sees (two parameters the rows only
	// constrain as a sum), the point nearest the start.
	ridge float64
}

// lsqResult is where a fit ended.
type lsqResult struct {
	p      *model.Params
	cost   float64 // sum of squared residuals
	r      []float64
	evals  int // row evaluations
	iters  int
	flat   []string // parameters no row depends on
	budget int
}

// errInvalid marks a candidate outside the model's physical range.
var errInvalid = errors.New("invalid candidate")

func (q *lsq) run(start *model.Params) (*lsqResult, error) {
	np := len(q.params)
	if np == 0 {
		return nil, errors.New("fit: no parameters to fit: name at least one")
	}
	if q.n == 0 {
		return nil, errors.New("fit: no rows to fit")
	}
	if q.maxIter == 0 {
		q.maxIter = 30
	}
	x := make([]float64, np)
	for j, pa := range q.params {
		v := pa.Get(start)
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("fit: parameter %s starts at %v; a fit needs a positive start", pa.Name, v)
		}
		x[j] = math.Log(v)
	}
	res := &lsqResult{budget: q.n * (np + 2) * q.maxIter}
	all := make([]int, q.n)
	for i := range all {
		all[i] = i
	}
	candidate := func(x []float64) (*model.Params, error) {
		p := start.Clone()
		for j, pa := range q.params {
			v := math.Exp(x[j])
			if pa.Int {
				v = math.Max(1, v) // a count stays a count: 0 engines per link would mean another layout
			}
			pa.Set(p, v)
		}
		if err := p.Validate(); err != nil {
			return nil, errInvalid
		}
		return p, nil
	}
	eval := func(x []float64, rows []int, out []float64) error {
		p, err := candidate(x)
		if err != nil {
			return err
		}
		if err := q.resid(p, rows, out); err != nil {
			return err
		}
		res.evals += len(rows)
		if q.progress != nil {
			q.progress(res.evals, res.budget)
		}
		return nil
	}
	x0 := append([]float64(nil), x...)
	cost := func(r, x []float64) float64 {
		var c float64
		for _, v := range r {
			c += v * v
		}
		for j := range x {
			d := q.ridge * (x[j] - x0[j])
			c += d * d
		}
		return c
	}
	r := make([]float64, q.n)
	if err := eval(x, all, r); err != nil {
		if errors.Is(err, errInvalid) {
			return nil, fmt.Errorf("fit: the start model is invalid: %w", start.Validate())
		}
		return nil, err
	}
	c := cost(r, x)
	if math.IsInf(c, 0) || math.IsNaN(c) {
		return nil, errors.New("fit: no candidate gave a finite error (the start model's is infinite: a row's measured time is far below anything the emulator can produce); check the rows and the start model")
	}
	deps := make([][]int, np)
	for j := range deps {
		deps[j] = all
	}
	J := mat.NewDense(q.n, np, nil)
	lambda := 1e-3
	rp := make([]float64, q.n)
	for converged := false; !converged && res.iters < q.maxIter; res.iters++ {
		// Jacobian, row by row only where the row depends on the parameter.
		J.Zero()
		probed := false
		full := res.iters%4 == 0 // every few iterations, probe every row: a row hidden by one regime may depend on the parameter in another
		for j, pa := range q.params {
			if full {
				deps[j] = all
			}
			h := 0.05 // wide enough to see through the poll phase's steps
			if pa.Int {
				v := math.Round(math.Exp(x[j]))
				h = math.Log((v + 1) / v)
			}
			xh := append([]float64(nil), x...)
			xh[j] += h
			copy(rp, r)
			if err := eval(xh, deps[j], rp); err != nil && !errors.Is(err, errInvalid) {
				return nil, err
			} else if err != nil {
				h = -h // the step left the valid range: probe the other way
				xh[j] = x[j] + h
				if err := eval(xh, deps[j], rp); err != nil && !errors.Is(err, errInvalid) {
					return nil, err
				}
			}
			if pa.Int && h > 0 && math.Round(math.Exp(x[j])) > 1 && same(rp, r, deps[j]) {
				// One more of a count may change nothing (a third engine
				// no queue lands on): probe one fewer.
				v := math.Round(math.Exp(x[j]))
				h = math.Log((v - 1) / v)
				xh[j] = x[j] + h
				if err := eval(xh, deps[j], rp); err != nil && !errors.Is(err, errInvalid) {
					return nil, err
				}
			}
			var dep []int
			for _, i := range deps[j] {
				if d := (rp[i] - r[i]) / h; d != 0 && !math.IsNaN(d) && !math.IsInf(d, 0) {
					J.Set(i, j, d)
					dep = append(dep, i)
				}
			}
			if full {
				deps[j] = dep
			}
			if len(dep) == 0 && !pa.Int {
				// Flat here: the parameter may be hidden by a regime (a
				// per-packet gap under an issue-bound stream). Probe far
				// steps, and take one that lowers the error.
				moved, err := q.probe(eval, cost, x, r, &c, j)
				if err != nil {
					return nil, err
				}
				if moved {
					probed = true
				}
			}
		}
		if probed {
			res.iters = res.iters/4*4 + 3 // next iteration re-probes every row
			continue
		}
		var jtj mat.SymDense
		jtj.SymOuterK(1, J.T())
		var g mat.VecDense
		g.MulVec(J.T(), mat.NewVecDense(q.n, r))
		for j := 0; j < np; j++ {
			g.SetVec(j, g.AtVec(j)+q.ridge*q.ridge*(x[j]-x0[j]))
		}
		improved := false
		for tries := 0; tries < 12; tries++ {
			A := mat.NewDense(np, np, nil)
			for a := 0; a < np; a++ {
				for b := 0; b < np; b++ {
					A.Set(a, b, jtj.At(a, b))
				}
				A.Set(a, a, A.At(a, a)+q.ridge*q.ridge)
				d := jtj.At(a, a)
				if d == 0 {
					d = 1 // unidentified: the damping pins it
				}
				A.Set(a, a, A.At(a, a)+lambda*d)
			}
			var delta mat.VecDense
			if err := delta.SolveVec(A, &g); err != nil {
				lambda *= 10
				continue
			}
			xn := make([]float64, np)
			var biggest float64
			for j := range xn {
				step := -delta.AtVec(j)
				step = math.Max(-1.5, math.Min(1.5, step)) // at most ×4.5 per step
				xn[j] = x[j] + step
				biggest = math.Max(biggest, math.Abs(step))
			}
			rn := make([]float64, q.n)
			err := eval(xn, all, rn)
			if err != nil && !errors.Is(err, errInvalid) {
				return nil, err
			}
			if cn := cost(rn, xn); err == nil && cn < c {
				// Converged when a step barely moves the parameters and
				// barely lowers the error (a tiny gain under heavy damping
				// is not convergence: the damping relaxes next).
				done := (c-cn)/c < 1e-6 && biggest < 1e-3
				x, r, c = xn, rn, cn
				lambda = math.Max(lambda/3, 1e-9)
				improved = true
				converged = done
				break
			}
			lambda *= 4
		}
		if !improved {
			break // no step lowers the error: a (local) minimum
		}
	}
	// A parameter no row depends on at the end goes back to its start: the
	// search's wandering is not a fit.
	var flat []int
	for j, pa := range q.params {
		if len(deps[j]) == 0 {
			res.flat = append(res.flat, pa.Name)
			flat = append(flat, j)
		}
	}
	if len(flat) > 0 {
		xs := append([]float64(nil), x...)
		for _, j := range flat {
			xs[j] = x0[j]
		}
		rs := make([]float64, q.n)
		if err := eval(xs, all, rs); err == nil {
			x, r, c = xs, rs, cost(rs, xs)
		} else if !errors.Is(err, errInvalid) {
			return nil, err
		}
	}
	p, _ := candidate(x)
	res.p, res.cost, res.r = p, c, r
	return res, nil
}

// same reports whether a and b agree on rows.
func same(a, b []float64, rows []int) bool {
	for _, i := range rows {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// probe tries x[j] at ×2, ×½, ×4 and ¼ and keeps the first that lowers the
// cost, updating x, r and c; it reports whether it moved.
func (q *lsq) probe(eval func(x []float64, rows []int, out []float64) error, cost func(r, x []float64) float64,
	x, r []float64, c *float64, j int) (bool, error) {
	all := make([]int, q.n)
	for i := range all {
		all[i] = i
	}
	for _, step := range []float64{math.Ln2, -math.Ln2, 2 * math.Ln2, -2 * math.Ln2} {
		xn := append([]float64(nil), x...)
		xn[j] += step
		rn := make([]float64, q.n)
		err := eval(xn, all, rn)
		if err != nil && !errors.Is(err, errInvalid) {
			return false, err
		}
		if cn := cost(rn, xn); err == nil && cn < *c {
			copy(x, xn)
			copy(r, rn)
			*c = cn
			return true, nil
		}
	}
	return false, nil
}
