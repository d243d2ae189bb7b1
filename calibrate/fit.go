package calibrate

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/emud-dev/emud/model"
)

// Measurement is one row of a fit input: Ops copies of Bytes each from
// GPU Src to GPU Dst (Src == Dst is a local copy; model.Host, "host" in a
// file, is host memory: a copy over the GPU's PCIe link), issued back to
// back by one thread of the GPU (Src, or Dst when Src is the host),
// round-robin over Queues queues (toward Dst, or the GPU's own loopback
// queues for a host copy); TimeUs from the first issue until everything
// has drained (quiet on each queue returned).
type Measurement struct {
	Name        string
	Src, Dst    int
	Ops, Queues int
	Bytes       uint64
	TimeUs      float64
	// Clock is the clock TimeUs was read on: the kernel's (default) or
	// the engine's TIMESTAMPs (what MeasureRows writes).
	Clock Clock
	// Pull marks a peer copy that an engine of Dst runs, reading Src's
	// memory across the link (a get; TransferBench's G1 -> D0 -> G0),
	// instead of one of Src's engines writing (format v4's exec column).
	Pull bool
}

// Limits on a measurement row. The benches are phantom (timing only: no
// byte is stored), so a row's memory does not depend on its size: a copy
// may be any size a put takes (cco chunks it into COPY packets of at most
// ring.MaxCopyBytes, the 30-bit COPY limit), and ops × bytes is bounded
// only so that the emulated address space and the chunk count of one row
// (its run time: one event per 256 KiB chunk) stay reasonable.
const (
	maxFitOps   = 4096
	maxFitBytes = 16 << 30 // one copy: 16 GiB (the send and receive windows fit a rank's 64 GiB VMM)
	maxFitTotal = 1 << 40  // ops × bytes of one row: 1 TiB, 4 M chunks
	maxFitGPUs  = 8
	// MaxFitRows caps a fit's input: every candidate runs every row, and a
	// fit tries dozens of candidates per parameter.
	MaxFitRows = 256
	// Measured times must lie within the virtual clock's reach: from one
	// picosecond (its resolution) to model.MaxStepUs. Below it a relative
	// error is infinite for every candidate.
	minFitTimeUs = 1e-6
)

// Measurement file headers: format v2, and the first format (ops to peer
// 1 of GPU 0), still read.
const (
	headerV4 = "name,src,dst,ops,bytes,queues,time_us,clock,exec"
	headerV3 = "name,src,dst,ops,bytes,queues,time_us,clock"
	headerV2 = "name,src,dst,ops,bytes,queues,time_us"
	headerV1 = "ops,bytes,queues,time_us"
)

// ParseMeasurements reads a measurement file: TransferBench's results
// (ParseTransferBench; recognised by its "Executor:" lines), or a
// measurement CSV: header
// name,src,dst,ops,bytes,queues,time_us,clock,exec (format v4: exec is the
// GPU whose engine runs the copies, the destination's for a pull), header
// name,src,dst,ops,bytes,queues,time_us,clock (format v3: clock is kernel
// or engine, see Clock), name,src,dst,ops,bytes,queues,time_us (format v2,
// every row on the kernel's clock), or the first format's
// ops,bytes,queues,time_us (GPU 0 to GPU 1; rows are named by line). Lines
// starting with # are comments. Errors name the line and the column.
//
// The input is bounded before it is parsed: a line longer than
// MaxLineBytes or a file longer than MaxFileBytes is refused as soon as
// the limit is passed (an endless line, /dev/zero, a sparse file), and a
// name longer than maxNameBytes too, each error naming its limit.
func ParseMeasurements(r io.Reader) ([]Measurement, error) {
	lr := &boundedReader{r: r, line: 1}
	b, err := io.ReadAll(lr)
	if lr.err != nil { // the bound
		return nil, lr.err
	}
	if err != nil {
		return nil, fmt.Errorf("measurements: %w", err)
	}
	if IsTransferBench(b) {
		return ParseTransferBench(bytes.NewReader(b))
	}
	return parseMeasurements(bytes.NewReader(b))
}

// Bounds on a measurement file (ParseMeasurements): generous for 256 rows
// with comments, and small enough that reading one costs no memory worth
// mentioning whatever is given.
const (
	MaxLineBytes = 4 << 10
	MaxFileBytes = 16 << 20
	maxNameBytes = 64
)

// boundedReader passes r through until a line passes MaxLineBytes or the
// whole MaxFileBytes; then it fails with an error naming the limit.
type boundedReader struct {
	r      io.Reader
	n, cur int64 // bytes so far; bytes since the last newline
	line   int
	err    error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	k, err := b.r.Read(p)
	for i, c := range p[:k] {
		b.n++
		if c == '\n' {
			b.line++
			b.cur = 0
			continue
		}
		b.cur++
		switch {
		case b.cur > MaxLineBytes:
			b.err = fmt.Errorf("measurements line %d: longer than %d bytes, the most one line may have (is this a measurement CSV?)", b.line, MaxLineBytes)
		case b.n > MaxFileBytes:
			b.err = fmt.Errorf("measurements: longer than %d bytes (16 MiB), the most a measurement file may have (at most %d rows)", MaxFileBytes, MaxFitRows)
		}
		if b.err != nil {
			return i, b.err
		}
	}
	return k, err
}

func parseMeasurements(r io.Reader) ([]Measurement, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	hdr, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("measurements: header must be %s, %s, %s or the first format's %s", headerV4, headerV3, headerV2, headerV1)
	}
	if err != nil {
		return nil, fmt.Errorf("measurements: %w", err)
	}
	var format int
	switch strings.Join(hdr, ",") {
	case headerV4:
		format = 4
	case headerV3:
		format = 3
	case headerV2:
		format = 2
	case headerV1:
		format = 1
	default:
		return nil, fmt.Errorf("measurements: header must be %s, %s, %s or the first format's %s", headerV4, headerV3, headerV2, headerV1)
	}
	var ms []Measurement
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("measurements: %w", err)
		}
		line, _ := cr.FieldPos(0)
		m, err := parseMeasurement(rec, format, line)
		if err != nil {
			return nil, err
		}
		if len(ms) == MaxFitRows {
			return nil, fmt.Errorf("measurements line %d: more than %d rows: a fit runs every row for each of its candidates; fit a representative subset", line, MaxFitRows)
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, errors.New("measurements: no rows")
	}
	return ms, nil
}

func parseMeasurement(rec []string, format int, line int) (Measurement, error) {
	m := Measurement{Name: fmt.Sprintf("line%d", line), Src: 0, Dst: 1}
	want := map[int]int{1: 4, 2: 7, 3: 8, 4: 9}[format]
	if len(rec) != want {
		return m, fmt.Errorf("measurements line %d: wrong number of fields: %d, the header has %d", line, len(rec), want)
	}
	exec := -1
	if format == 4 {
		g, err := strconv.Atoi(rec[8])
		if err != nil || g < 0 || g >= maxFitGPUs {
			return m, fmt.Errorf("measurements line %d: exec %q: need the GPU 0..%d whose engine runs the copies", line, rec[8], maxFitGPUs-1)
		}
		exec = g
		rec = rec[:8]
	}
	if format >= 3 {
		c, ok := parseClock(rec[7])
		if !ok {
			return m, fmt.Errorf("measurements line %d: clock %q: need kernel or engine", line, rec[7])
		}
		m.Clock = c
		rec = rec[:7]
	}
	if format >= 2 {
		m.Name = rec[0]
		switch {
		case m.Name == "":
			return m, fmt.Errorf("measurements line %d: name is empty", line)
		case len(m.Name) > maxNameBytes:
			return m, fmt.Errorf("measurements line %d: name %s is %d bytes: at most %d", line, PrintName(m.Name[:maxNameBytes]+"…"), len(m.Name), maxNameBytes)
		}
		src, ok1 := parseEnd(rec[1])
		dst, ok2 := parseEnd(rec[2])
		switch {
		case !ok1:
			return m, fmt.Errorf("measurements line %d (%s): src %q: need a GPU 0..%d or host", line, PrintName(m.Name), rec[1], maxFitGPUs-1)
		case !ok2:
			return m, fmt.Errorf("measurements line %d (%s): dst %q: need a GPU 0..%d or host", line, PrintName(m.Name), rec[2], maxFitGPUs-1)
		case src == model.Host && dst == model.Host:
			return m, fmt.Errorf("measurements line %d (%s): src and dst are both host: a row needs a GPU whose engine copies", line, PrintName(m.Name))
		}
		m.Src, m.Dst = src, dst
		rec = rec[3:]
	}
	ops, err1 := strconv.Atoi(rec[0])
	bytes, err2 := strconv.ParseUint(rec[1], 10, 64)
	queues, err3 := strconv.Atoi(rec[2])
	t, err4 := strconv.ParseFloat(rec[3], 64)
	switch {
	case err1 != nil || ops < 1 || ops > maxFitOps:
		return m, fmt.Errorf("measurements line %d: ops %q: need an integer 1..%d", line, rec[0], maxFitOps)
	case err2 != nil || bytes < 1 || bytes > maxFitBytes:
		return m, fmt.Errorf("measurements line %d: bytes %q: need an integer 1..%d (16 GiB)", line, rec[1], uint64(maxFitBytes))
	case err3 != nil || queues < 1 || queues > benchQueues:
		return m, fmt.Errorf("measurements line %d: queues %q: need an integer 1..%d", line, rec[2], benchQueues)
	case err4 != nil || !(t >= minFitTimeUs) || t > model.MaxStepUs:
		return m, fmt.Errorf("measurements line %d: time_us %q: need a number from %g (1 ps, the emulator's clock resolution) to %g", line, rec[3], minFitTimeUs, float64(model.MaxStepUs))
	case uint64(ops)*bytes > maxFitTotal:
		return m, fmt.Errorf("measurements line %d: ops × bytes = %d exceeds the %d (1 TiB) one row may move", line, uint64(ops)*bytes, uint64(maxFitTotal))
	}
	m.Ops, m.Bytes, m.Queues, m.TimeUs = ops, bytes, queues, t
	if exec >= 0 && exec != m.GPU() {
		// The only other engine that can run a copy is a peer copy's
		// destination: a pull.
		if m.Path() != "xgmi" || exec != m.Dst {
			return m, fmt.Errorf("measurements line %d (%s): exec %d: the engine runs on the source GPU (a push), the GPU end of a host copy, or a peer copy's destination (a pull), here %s", line, PrintName(m.Name), exec, execChoices(m))
		}
		m.Pull = true
	}
	return m, nil
}

// execChoices names the exec values a row may have.
func execChoices(m Measurement) string {
	if m.Path() == "xgmi" {
		return fmt.Sprintf("%d or %d", m.Src, m.Dst)
	}
	return strconv.Itoa(m.GPU())
}

// Predict runs one measurement's scenario under m and returns its time
// (µs): the kernel-clock bench (copies) or, for an engine-clock row, the
// very stream Measure posts, on an emulated node.
func Predict(m model.Model, x Measurement, seed uint64) (float64, error) {
	if x.Clock == ClockEngine {
		t, err := MeasureOnce(EmulatorBackend(m), x, seed)
		return t.EngineUs, err
	}
	if x.Pull && x.Path() != "xgmi" {
		return 0, fmt.Errorf("%s: a pull (the destination's engine reading) needs two GPUs, got src %s → dst %s", PrintName(x.Name), EndName(x.Src), EndName(x.Dst))
	}
	return copies(m, seed, x.Src, x.Dst, x.Bytes, x.Ops, x.Queues, x.Pull)
}

// DefaultFitParams are the parameters a fit varies unless told otherwise:
// the ones a copy stream's shape identifies (slope, per-op gap, fixed
// latency).
var DefaultFitParams = []string{"link_gbps", "packet_us", "visible_us"}

// AllParams is the --params value that fits every parameter the rows
// identify.
const AllParams = "all"

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
	Evals     int // row evaluations
	// Unidentified lists named parameters the rows do not constrain: no
	// row depends on them, so they keep the start value.
	Unidentified []string
	// StartCost is the start model's sum of squared relative errors over
	// the rows (Check compares the fit's with it).
	StartCost float64
}

// FitOption tunes Fit.
type FitOption func(*fitOptions)

type fitOptions struct {
	progress func(evals, budget int)
}

// WithProgress has Fit call f after every batch of rows it evaluates, with
// the number of row evaluations so far and the budget (the fit may stop
// earlier, when it converges).
func WithProgress(f func(evals, budget int)) FitOption {
	return func(o *fitOptions) { o.progress = f }
}

// probes returns the valid copies of base with pa changed by ±10% (a
// count by ±1 when 10% rounds back to it): the candidates that Identified
// and Sensitivities compare against base.
func probes(base *model.Params, pa model.Parameter) []*model.Params {
	v := pa.Get(base)
	var out []*model.Params
	for _, f := range []float64{1.1, 0.9} {
		p := base.Clone()
		pa.Set(p, v*f)
		if pa.Int && pa.Get(p) == v {
			pa.Set(p, v+math.Copysign(1, f-1))
		}
		if p.Validate() == nil {
			out = append(out, p)
		}
	}
	return out
}

// Fit varies the named parameters of base (a copy; base is not changed) to
// minimise the sum of squared relative errors of ms, running every
// measurement's scenario on the emulator for each candidate
// (Levenberg–Marquardt over the parameters' logarithms, see lsq).
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
	ps, err := lookupParams(names)
	if err != nil {
		return nil, err
	}
	// A time or fraction that starts at 0 (a mechanism base does not have)
	// is searched from 0 on the scale of its step.
	shift := make([]float64, len(ps))
	for j, pa := range ps {
		if pa.Get(base) <= 0 {
			shift[j] = ScaleStep(pa)
		}
	}
	q := &lsq{params: ps, n: len(ms), progress: fo.progress, shift: shift,
		resid: func(p *model.Params, idx []int, out []float64) error {
			for _, i := range idx {
				t, err := Predict(p, ms[i], seed)
				if err != nil {
					return fmt.Errorf("row %s: %w", ms[i].Name, err)
				}
				out[i] = (t - ms[i].TimeUs) / ms[i].TimeUs
			}
			return nil
		}}
	res, err := q.run(base)
	if err != nil {
		return nil, err
	}
	res.p.Label = base.Name() + "+fit"
	out := &FitResult{Model: res.p, Params: names, Evals: res.evals, Unidentified: res.flat, StartCost: res.startCost}
	if out.Residuals, err = Residuals(res.p, ms, seed); err != nil {
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
			return nil, fmt.Errorf("row %s: %w", x.Name, err)
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
			ms = append(ms, Measurement{Name: r.ID, Src: 0, Dst: 1, Ops: int(ops), Bytes: b, Queues: int(r.param("queues", 1)),
				TimeUs: float64(ops*b) / r.Value / 1e3})
		case strings.HasPrefix(r.ID, "scatter."):
			ms = append(ms, Measurement{Name: r.ID, Src: 0, Dst: 1, Ops: int(r.param("packets", 1)), Bytes: r.param("bytes", 0), Queues: 1, TimeUs: r.Value})
		}
	}
	return ms
}

// PrintName is a measurement's name as a table or message shows it: as
// given when it is printable text without spaces, else quoted with Go's
// escapes (a name with a newline or a control character cannot break a
// table or forge a line).
func PrintName(n string) string {
	for _, c := range n {
		if c == ' ' || !unicode.IsGraphic(c) || c == '"' {
			return strconv.Quote(n)
		}
	}
	return n
}

// Path names the path a measurement's copies take: "host" (to or from
// host memory over the GPU's PCIe link), "local" (an engine writing its
// own GPU's memory) or "xgmi" (to a peer GPU over xGMI).
func (x Measurement) Path() string {
	switch {
	case x.Src == model.Host || x.Dst == model.Host:
		return "host"
	case x.Src == x.Dst:
		return "local"
	}
	return "xgmi"
}

// GPU is the GPU whose engine runs the row's copies: Src, or Dst for a
// copy from host memory.
func (x Measurement) GPU() int {
	if x.Src == model.Host || x.Pull {
		return x.Dst
	}
	return x.Src
}

// parseEnd reads a src or dst column: a GPU 0..maxFitGPUs-1, or "host".
func parseEnd(s string) (int, bool) {
	if s == "host" {
		return model.Host, true
	}
	g, err := strconv.Atoi(s)
	return g, err == nil && g >= 0 && g < maxFitGPUs
}

// EndName is a src or dst as a measurement file writes it: the GPU's
// number, or host.
func EndName(g int) string {
	if g == model.Host {
		return "host"
	}
	return strconv.Itoa(g)
}

// WriteResiduals prints one line per measurement, with its path.
func WriteResiduals(w io.Writer, rs []Residual) error {
	if _, err := fmt.Fprintf(w, "%-18s %-5s %4s %4s %6s %11s %6s %12s %12s %8s\n", "name", "path", "src", "dst", "ops", "bytes", "queues", "measured_us", "emulated_us", "error"); err != nil {
		return err
	}
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "%-18s %-5s %4s %4s %6d %11d %6d %12.3f %12.3f %+7.1f%%\n", PrintName(r.Name), r.Path(), EndName(r.Src), EndName(r.Dst), r.Ops, r.Bytes, r.Queues, r.TimeUs, r.PredictedUs, 100*r.Error); err != nil {
			return err
		}
	}
	return nil
}

// PredictWithin is the error a prediction summary counts as close.
const PredictWithin = 0.15

// WritePredictionSummary prints "predicted N rows: K within 15% (max X%,
// median Y%)".
func WritePredictionSummary(w io.Writer, rs []Residual) error {
	var abs []float64
	k := 0
	for _, r := range rs {
		e := math.Abs(r.Error)
		abs = append(abs, e)
		if e <= PredictWithin {
			k++
		}
	}
	mx := 0.0
	for _, e := range abs {
		mx = math.Max(mx, e)
	}
	_, err := fmt.Fprintf(w, "predicted %d rows: %d within %.0f%% (max %.1f%%, median %.1f%%)\n", len(rs), k, 100*PredictWithin, 100*mx, 100*median(abs))
	return err
}

// FitBound is the largest |relative error| a fitted row may keep for the
// fit to count as one (Check): far outside any measurement's noise.
const FitBound = 0.25

// Check reports a fit that failed: one that did not lower the sum of
// squared relative errors from the start model's, or left some row's
// error beyond bound (FitBound unless set). A model from such a fit is
// not a fit of the rows; "emud fit" exits non-zero and writes it only
// when asked to.
func (r *FitResult) Check(bound float64) error {
	if bound <= 0 {
		bound = FitBound
	}
	var cost float64
	worst := -1
	for i, x := range r.Residuals {
		cost += x.Error * x.Error
		if worst < 0 || math.Abs(x.Error) > math.Abs(r.Residuals[worst].Error) {
			worst = i
		}
	}
	if !(cost < r.StartCost) && r.StartCost > 0 {
		return fmt.Errorf("the fit did not lower the error: sum of squared relative errors %.4g at the start, %.4g after (a row far from anything the model can produce? %s is at %+.1f%%)",
			r.StartCost, cost, PrintName(r.Residuals[worst].Name), 100*r.Residuals[worst].Error)
	}
	if worst >= 0 && !(math.Abs(r.Residuals[worst].Error) <= bound) {
		x := r.Residuals[worst]
		return fmt.Errorf("row %s is still %+.1f%% off after the fit, beyond the ±%.0f%% bound: the fitted parameters cannot explain it (a wrong row, or a parameter the fit did not vary)",
			PrintName(x.Name), 100*x.Error, 100*bound)
	}
	return nil
}

// WritePredictions prints rs as CSV: the v2 input columns plus
// predicted_us,error_pct (and exec, the GPU whose engine ran the row, when
// some row is a pull).
func WritePredictions(w io.Writer, rs []Residual) error {
	pull := false
	for _, r := range rs {
		pull = pull || r.Pull
	}
	cw := csv.NewWriter(w)
	hdr := headerV2 + ",predicted_us,error_pct"
	if pull { // a pull row needs who ran it: the exec column, as in format v4
		hdr += ",exec"
	}
	_ = cw.Write(strings.Split(hdr, ","))
	for _, r := range rs {
		rec := []string{r.Name, EndName(r.Src), EndName(r.Dst), strconv.Itoa(r.Ops),
			strconv.FormatUint(r.Bytes, 10), strconv.Itoa(r.Queues), strconv.FormatFloat(r.TimeUs, 'g', -1, 64),
			strconv.FormatFloat(r.PredictedUs, 'f', 3, 64), strconv.FormatFloat(100*r.Error, 'f', 2, 64)}
		if pull {
			rec = append(rec, strconv.Itoa(r.GPU()))
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}
