package calibrate

import (
	"errors"
	"fmt"
	"math"
	"slices"

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
	// shift, if set, is added to each parameter before its logarithm is
	// taken (0 for most): a parameter that starts at 0 (a latency or a
	// share the start model does not have) is searched as log(v + shift),
	// so it can leave 0 and come back to it; a value the search takes
	// below 0 is 0 (the parameter is flat there, which a search notices).
	shift []float64
	// follow makes every parameter outside params that Follows one of
	// params take its value in each candidate (the documented table's
	// fit: link_read_gbps is link_gbps there, bw.get.8m says so).
	follow bool
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
	// startCost is the start's sum of squared residuals (no ridge).
	startCost float64
}

// errInvalid marks a candidate outside the model's physical range.
var errInvalid = errors.New("invalid candidate")

// lsqRun is one fit in progress: the current point x (the parameters'
// logarithms), its residuals r and cost c, and what the Jacobian probes
// learned about which rows each parameter moves.
type lsqRun struct {
	q      *lsq
	start  *model.Params
	res    *lsqResult
	all    []int     // every row
	x0     []float64 // the start, for the ridge
	x, r   []float64
	c      float64
	deps   [][]int // deps[j]: the rows parameter j moved at the last full probe
	J      *mat.Dense
	lambda float64
}

// run fits from start: Levenberg–Marquardt steps from a forward-difference
// Jacobian until a step barely moves the parameters and barely lowers the
// error, no step lowers it, or maxIter iterations.
func (q *lsq) run(start *model.Params) (*lsqResult, error) {
	f, err := q.begin(start)
	if err != nil {
		return nil, err
	}
	if err := f.descend(); err != nil {
		return nil, err
	}
	// A count moves the rows in steps, which a gradient does not follow:
	// search each count's values outright, and descend again from a
	// better one (the other parameters follow it).
	for round := 0; round < 4; round++ {
		moved, err := f.countSearch()
		if err != nil {
			return nil, err
		}
		if !moved {
			break
		}
		f.res.iters = 0
		if err := f.descend(); err != nil {
			return nil, err
		}
	}
	if err := f.unflatten(); err != nil {
		return nil, err
	}
	p, _ := f.candidate(f.x)
	f.res.p, f.res.cost, f.res.r = p, f.c, f.r
	return f.res, nil
}

// maxCountSearch bounds the values countSearch tries for a count: engines
// per link and queues per engine on every architecture emud models are
// at most 8.
const maxCountSearch = 8

// countSearch tries every value 1..maxCountSearch of each count parameter
// with the others where they are, and keeps the one with the lowest
// error if it is lower than the current; it reports whether any moved.
func (f *lsqRun) countSearch() (bool, error) {
	moved := false
	for j, pa := range f.q.params {
		if !pa.Int {
			continue
		}
		cur := math.Round(math.Exp(f.x[j]))
		bestX, bestR, bestC := f.x, f.r, f.c
		for v := 1.0; v <= maxCountSearch; v++ {
			if v == cur {
				continue
			}
			xn := append([]float64(nil), f.x...)
			xn[j] = math.Log(v)
			rn := make([]float64, f.q.n)
			if err := f.eval(xn, f.all, rn); errors.Is(err, errInvalid) {
				continue
			} else if err != nil {
				return false, err
			}
			if cn := f.cost(rn, xn); cn < bestC*(1-1e-9) {
				bestX, bestR, bestC = xn, rn, cn
			}
		}
		if bestC < f.c {
			f.x, f.r, f.c = bestX, bestR, bestC
			moved = true
		}
	}
	return moved, nil
}

// descend takes Levenberg–Marquardt steps until they converge, none
// lowers the error, or maxIter iterations.
func (f *lsqRun) descend() error {
	q := f.q
	for converged := false; !converged && f.res.iters < q.maxIter; f.res.iters++ {
		probed, err := f.jacobian()
		if err != nil {
			return err
		}
		if probed {
			f.res.iters = f.res.iters/4*4 + 3 // next iteration re-probes every row
			continue
		}
		improved, done, err := f.step()
		if err != nil {
			return err
		}
		if !improved {
			break // no step lowers the error: a (local) minimum
		}
		converged = done
	}
	return nil
}

// begin checks the problem and evaluates the start.
func (q *lsq) begin(start *model.Params) (*lsqRun, error) {
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
	f := &lsqRun{q: q, start: start, x: make([]float64, np), all: make([]int, q.n), lambda: 1e-3}
	for j, pa := range q.params {
		v := pa.Get(start) + q.shiftOf(j)
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("fit: parameter %s starts at %v; a fit needs a positive start", pa.Name, pa.Get(start))
		}
		f.x[j] = math.Log(v)
	}
	f.res = &lsqResult{budget: q.n * (np + 2) * q.maxIter}
	for i := range f.all {
		f.all[i] = i
	}
	f.x0 = append([]float64(nil), f.x...)
	f.r = make([]float64, q.n)
	if err := f.eval(f.x, f.all, f.r); err != nil {
		if errors.Is(err, errInvalid) {
			return nil, fmt.Errorf("fit: the start model is invalid: %w", start.Validate())
		}
		return nil, err
	}
	f.c = f.cost(f.r, f.x)
	f.res.startCost = f.c // the ridge is 0 at the start
	if math.IsInf(f.c, 0) || math.IsNaN(f.c) {
		return nil, errors.New("fit: no candidate gave a finite error (the start model's is infinite: a row's measured time is far below anything the emulator can produce); check the rows and the start model")
	}
	f.deps = make([][]int, np)
	for j := range f.deps {
		f.deps[j] = f.all
	}
	f.J = mat.NewDense(q.n, np, nil)
	return f, nil
}

// candidate is the model at point x, or errInvalid outside the model's
// physical range.
func (f *lsqRun) candidate(x []float64) (*model.Params, error) {
	p := f.start.Clone()
	for j, pa := range f.q.params {
		v := math.Exp(x[j])
		if sh := f.q.shiftOf(j); sh > 0 {
			if v -= sh; v < 1e-9*sh {
				v = 0 // exp(log(sh)) − sh is rounding, not a value
			}
		}
		if pa.Int {
			v = math.Max(1, v) // a count stays a count: 0 engines per link would mean another layout
		}
		pa.Set(p, v)
	}
	if f.q.follow {
		f.q.setFollowers(p)
	}
	if err := p.Validate(); err != nil {
		return nil, errInvalid
	}
	return p, nil
}

// setFollowers gives each parameter that Follows a fitted one, and is not
// fitted itself, the fitted one's value in p.
func (q *lsq) setFollowers(p *model.Params) {
	for _, r := range model.Parameters() {
		if r.Follows == "" || slices.ContainsFunc(q.params, func(x model.Parameter) bool { return x.Name == r.Name }) {
			continue
		}
		for _, lead := range q.params {
			if lead.Name == r.Follows {
				r.Set(p, lead.Get(p))
			}
		}
	}
}

// shiftOf is parameter j's shift (0 when none is set).
func (q *lsq) shiftOf(j int) float64 {
	if j < len(q.shift) {
		return q.shift[j]
	}
	return 0
}

// eval sets out[i] for i in rows to the residuals at x.
func (f *lsqRun) eval(x []float64, rows []int, out []float64) error {
	p, err := f.candidate(x)
	if err != nil {
		return err
	}
	if err := f.q.resid(p, rows, out); err != nil {
		return err
	}
	f.res.evals += len(rows)
	if f.q.progress != nil {
		f.q.progress(f.res.evals, f.res.budget)
	}
	return nil
}

// cost is the sum of squared residuals r plus the ridge at x.
func (f *lsqRun) cost(r, x []float64) float64 {
	var c float64
	for _, v := range r {
		c += v * v
	}
	for j := range x {
		d := f.q.ridge * (x[j] - f.x0[j])
		c += d * d
	}
	return c
}

// jacobian fills J at x, row by row only where the row depends on the
// parameter (every few iterations every row is probed: a row hidden by
// one regime may depend on the parameter in another). A parameter flat
// here is probed far (probe); it reports whether such a probe moved x.
func (f *lsqRun) jacobian() (bool, error) {
	f.J.Zero()
	probed := false
	full := f.res.iters%4 == 0
	rp := make([]float64, f.q.n)
	for j, pa := range f.q.params {
		if full {
			f.deps[j] = f.all
		}
		dep, err := f.column(j, pa, rp)
		if err != nil {
			return false, err
		}
		if full {
			f.deps[j] = dep
		}
		if len(dep) == 0 && !pa.Int {
			// Flat here: the parameter may be hidden by a regime (a
			// per-packet gap under an issue-bound stream). Probe far
			// steps, and take one that lowers the error.
			moved, err := f.q.probe(f.eval, f.cost, f.x, f.r, &f.c, j)
			if err != nil {
				return false, err
			}
			probed = probed || moved
		}
	}
	return probed, nil
}

// column probes parameter j (a forward difference, backward where the
// step leaves the valid range; a count by ±1) on its rows, sets J's
// column j, and returns the rows it moved. rp is scratch.
func (f *lsqRun) column(j int, pa model.Parameter, rp []float64) ([]int, error) {
	x, rows := f.x, f.deps[j]
	h := 0.05 // wide enough to see through the poll phase's steps
	if pa.Int {
		v := math.Round(math.Exp(x[j]))
		h = math.Log((v + 1) / v)
	}
	xh := append([]float64(nil), x...)
	xh[j] += h
	copy(rp, f.r)
	if err := f.eval(xh, rows, rp); err != nil && !errors.Is(err, errInvalid) {
		return nil, err
	} else if err != nil {
		h = -h // the step left the valid range: probe the other way
		xh[j] = x[j] + h
		if err := f.eval(xh, rows, rp); err != nil && !errors.Is(err, errInvalid) {
			return nil, err
		}
	}
	if pa.Int && h > 0 && math.Round(math.Exp(x[j])) > 1 && same(rp, f.r, rows) {
		// One more of a count may change nothing (a third engine
		// no queue lands on): probe one fewer.
		v := math.Round(math.Exp(x[j]))
		h = math.Log((v - 1) / v)
		xh[j] = x[j] + h
		if err := f.eval(xh, rows, rp); err != nil && !errors.Is(err, errInvalid) {
			return nil, err
		}
	}
	var dep []int
	for _, i := range rows {
		if d := (rp[i] - f.r[i]) / h; d != 0 && !math.IsNaN(d) && !math.IsInf(d, 0) {
			f.J.Set(i, j, d)
			dep = append(dep, i)
		}
	}
	return dep, nil
}

// step solves the damped normal equations for a step from x and takes it
// if it lowers the error, damping harder (up to 12 tries) until one does.
// It reports whether it moved, and whether the fit has converged: the
// step barely moved the parameters and barely lowered the error (a tiny
// gain under heavy damping is not convergence: the damping relaxes next).
func (f *lsqRun) step() (improved, done bool, err error) {
	q, np := f.q, len(f.q.params)
	var jtj mat.SymDense
	jtj.SymOuterK(1, f.J.T())
	var g mat.VecDense
	g.MulVec(f.J.T(), mat.NewVecDense(q.n, f.r))
	for j := 0; j < np; j++ {
		g.SetVec(j, g.AtVec(j)+q.ridge*q.ridge*(f.x[j]-f.x0[j]))
	}
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
			A.Set(a, a, A.At(a, a)+f.lambda*d)
		}
		var delta mat.VecDense
		if err := delta.SolveVec(A, &g); err != nil {
			f.lambda *= 10
			continue
		}
		xn := make([]float64, np)
		var biggest float64
		for j := range xn {
			step := -delta.AtVec(j)
			step = math.Max(-1.5, math.Min(1.5, step)) // at most ×4.5 per step
			xn[j] = f.x[j] + step
			biggest = math.Max(biggest, math.Abs(step))
		}
		rn := make([]float64, q.n)
		err := f.eval(xn, f.all, rn)
		if err != nil && !errors.Is(err, errInvalid) {
			return false, false, err
		}
		if cn := f.cost(rn, xn); err == nil && cn < f.c {
			done := (f.c-cn)/f.c < 1e-6 && biggest < 1e-3
			f.x, f.r, f.c = xn, rn, cn
			f.lambda = math.Max(f.lambda/3, 1e-9)
			return true, done, nil
		}
		f.lambda *= 4
	}
	return false, false, nil
}

// unflatten sends every parameter no row depends on at the end back to
// its start (the search's wandering is not a fit) and lists it in flat.
func (f *lsqRun) unflatten() error {
	var flat []int
	for j, pa := range f.q.params {
		if len(f.deps[j]) == 0 {
			f.res.flat = append(f.res.flat, pa.Name)
			flat = append(flat, j)
		}
	}
	if len(flat) == 0 {
		return nil
	}
	xs := append([]float64(nil), f.x...)
	for _, j := range flat {
		xs[j] = f.x0[j]
	}
	rs := make([]float64, f.q.n)
	if err := f.eval(xs, f.all, rs); err == nil {
		f.x, f.r, f.c = xs, rs, f.cost(rs, xs)
	} else if !errors.Is(err, errInvalid) {
		return err
	}
	return nil
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
