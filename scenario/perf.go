package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/emud-dev/emud/internal/fileio"
	"github.com/emud-dev/emud/sim"
)

// PerfShape is how nccl-tests' columns map onto a scenario: the element
// type and reduction it reports, how many --bytes messages make one
// nccl-tests "size" (per-rank buffer), the granule --bytes must be a
// multiple of, and the bus-bandwidth factor of the collective
// (NVIDIA/nccl-tests doc/PERFORMANCE.md: all-reduce 2(n−1)/n, all-gather
// and all-to-all (n−1)/n, broadcast 1).
type PerfShape struct {
	Type  string
	Elem  uint64
	Redop string
	Per   func(n int) uint64 // messages of --bytes per size
	Gran  uint64
	Bus   func(n float64) float64
}

// The usual shapes: an all-to-all or all-gather of ranks blocks per size,
// a transfer of one payload.
var (
	PerfAllToAll = &PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: ByRanks, Gran: 8, Bus: RingBus}
	perfDefault  = &PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: One, Gran: 1, Bus: FlatBus}
)

// Message counts per size and bus factors of the usual collectives.
var (
	ByRanks = func(n int) uint64 { return uint64(n) }
	One     = func(int) uint64 { return 1 }
	RingBus = func(n float64) float64 { return (n - 1) / n }
	FlatBus = func(float64) float64 { return 1 }
)

// PerfOf is sc's perf shape: its own, else a transfer of size bytes (bus
// factor 1).
func PerfOf(sc *Scenario) *PerfShape {
	if sc.Perf != nil {
		return sc.Perf
	}
	return perfDefault
}

// PerfRow is one size of a sweep.
type PerfRow struct {
	Size   uint64  `json:"size"`
	Count  uint64  `json:"count"`
	TimeUs float64 `json:"time_us"`
	AlgBW  float64 `json:"algbw"`
	BusBW  float64 `json:"busbw"`
	Wrong  int     `json:"wrong"`
	Err    string  `json:"error,omitempty"`
}

// PerfLine is one size of a sweep: its row, or, for a size that did not
// run, the comment line that says why (Skip).
type PerfLine struct {
	Skip string   `json:"skip,omitempty"`
	Row  *PerfRow `json:"row,omitempty"`
}

// PerfSweep runs sc at every size and prints the table as it goes; it
// returns the rows and the error (exit status) of the worst failure, nil if
// none.
func PerfSweep(w io.Writer, sc *Scenario, o Options, sizes []uint64, iters int, budget uint64) ([]PerfRow, error) {
	WritePerfHeader(w, sc, o, iters)
	var lines []PerfLine
	var worst error
	for _, size := range sizes {
		l, err := PerfSize(sc, o, size, iters, budget)
		worst = MoreSevere(worst, err)
		WritePerfLine(w, sc, l)
		lines = append(lines, l)
	}
	return WritePerfFooter(w, lines), worst
}

// WritePerfHeader prints the sweep's comment lines and column heads.
func WritePerfHeader(w io.Writer, sc *Scenario, o Options, iters int) {
	modelName := "the CFT fabric's model"
	if sc.PerfModel != nil {
		modelName = sc.PerfModel(o)
	} else if !sc.Fabric {
		modelName = o.Model
		if modelName == "" {
			modelName = "mi355x"
		}
	}
	fmt.Fprintf(w, "# emud perf %s: %d ranks, %d queues per peer, model %s, timing perturbation level %d, seed %d, %d iteration(s)\n",
		sc.Name, o.Ranks, o.Queues, modelName, o.Perturb, o.Seed, iters)
	if o.Phantom {
		fmt.Fprintln(w, "# --phantom: no bytes stored, data not checked (#wrong counts signals only)")
	}
	fmt.Fprintf(w, "#\n# %10s %12s %8s %6s %10s %8s %8s %7s\n", "size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong")
	fmt.Fprintf(w, "# %10s %12s %8s %6s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "")
}

// PerfSize runs sc at one size, iters seeds from o.Seed; it returns the
// line and the worst error of its runs (nil: all passed).
func PerfSize(sc *Scenario, o Options, size uint64, iters int, budget uint64) (PerfLine, error) {
	sh := PerfOf(sc)
	per := sh.Per(o.Ranks)
	msg := size / per / sh.Gran * sh.Gran
	if msg == 0 {
		return PerfLine{Skip: fmt.Sprintf("%d B: too small for %d messages of a multiple of %d B", size, per, sh.Gran)}, nil
	}
	oo := o
	oo.Bytes = msg
	r := PerfRow{Size: msg * per, Count: msg * per / sh.Elem}
	if err := Admit(sc, oo, budget); err != nil {
		return PerfLine{Skip: fmt.Sprintf("%d B: %v", r.Size, err)}, nil
	}
	var worst error
	var sum float64
	for i := 0; i < iters && r.Err == ""; i++ {
		oo.Seed = o.Seed + uint64(i)
		res, err := sc.Run(oo)
		var mm *MismatchError
		switch {
		case errors.As(err, &mm):
			r.Wrong += mm.Wrong
			r.Err = "wrong data"
			worst = MoreSevere(worst, err)
		case err != nil:
			r.Err = firstLine(err.Error())
			worst = MoreSevere(worst, err)
		default:
			var end sim.Time
			for _, rk := range res.Ranks {
				end = max(end, rk.Finish)
			}
			sum += end.Micros()
		}
	}
	if r.Err == "" || r.Wrong != 0 {
		r.TimeUs = sum / float64(iters)
		if r.TimeUs > 0 {
			r.AlgBW = float64(r.Size) / r.TimeUs / 1e3
			r.BusBW = r.AlgBW * sh.Bus(float64(o.Ranks))
		}
	}
	return PerfLine{Row: &r}, worst
}

// WritePerfLine prints one size's line.
func WritePerfLine(w io.Writer, sc *Scenario, l PerfLine) {
	sh := PerfOf(sc)
	r := l.Row
	switch {
	case r == nil:
		fmt.Fprintf(w, "# %s; skipped\n", l.Skip)
	case r.Err != "" && r.Wrong == 0:
		fmt.Fprintf(w, "  %10d %12d %8s %6s %10s %8s %8s %7s  # %s\n", r.Size, r.Count, sh.Type, sh.Redop, "-", "-", "-", "N/A", r.Err)
	default:
		fmt.Fprintf(w, "  %10d %12d %8s %6s %10.2f %8.2f %8.2f %7d\n", r.Size, r.Count, sh.Type, sh.Redop, r.TimeUs, r.AlgBW, r.BusBW, r.Wrong)
	}
}

// WritePerfFooter prints nccl-tests' closing lines and returns the rows
// of the sizes that ran.
func WritePerfFooter(w io.Writer, lines []PerfLine) []PerfRow {
	var rows []PerfRow
	var busSum float64
	n := 0
	for _, l := range lines {
		if l.Row == nil {
			continue
		}
		rows = append(rows, *l.Row)
		if l.Row.Err == "" || l.Row.Wrong != 0 {
			busSum += l.Row.BusBW
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "# Out of bounds values : %d\n# Avg bus bandwidth    : %.4g\n", len(rows)-n, busSum/float64(n))
	}
	return rows
}

// MoreSevere keeps the error whose exit status is worse (a hang or wrong
// data before a plain failure).
func MoreSevere(a, b error) error {
	rank := func(e error) int {
		var h *sim.HangError
		var m *MismatchError
		switch {
		case e == nil:
			return 0
		case errors.As(e, &h):
			return 3
		case errors.As(e, &m):
			return 2
		}
		return 1
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// PerfPlotFormat is the picture format --plot's file extension names
// ("svg" or "png"); any other is an error naming --plot.
func PerfPlotFormat(path string) (string, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "svg" && format != "png" {
		return "", fmt.Errorf("invalid --plot %q: the file must end in .svg or .png", path)
	}
	return format, nil
}

// WritePerfPlotFile draws rows' busbw curve (WritePerfPlot) into the file
// path, in the format its extension names; nothing is written when the
// picture fails.
func WritePerfPlotFile(path, name string, o Options, rows []PerfRow) error {
	format, err := PerfPlotFormat(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := WritePerfPlot(&buf, format, name, o, rows); err != nil {
		return err
	}
	if err := fileio.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing --plot: %w", err)
	}
	return nil
}

// WritePerfPlot draws busbw over size on a log axis.
func WritePerfPlot(w io.Writer, format, name string, o Options, rows []PerfRow) error {
	var pts plotter.XYs
	for _, r := range rows {
		if r.Err == "" && r.BusBW > 0 {
			pts = append(pts, plotter.XY{X: float64(r.Size), Y: r.BusBW})
		}
	}
	if len(pts) == 0 {
		return errors.New("plot: no size ran, nothing to draw")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("emud perf %s: %d ranks, %d queues per peer", name, o.Ranks, o.Queues)
	p.X.Label.Text = "size (B)"
	p.Y.Label.Text = "busbw (GB/s)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	if err := plotutil.AddLinePoints(p, "busbw", pts); err != nil {
		return err
	}
	wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// PerfSizes are the sizes from lo to hi, multiplying by factor or adding
// step (when not 0), at most 4096 of them.
func PerfSizes(lo, hi, step uint64, factor float64) []uint64 {
	var sizes []uint64
	for s := lo; s <= hi && len(sizes) < 4096; {
		sizes = append(sizes, s)
		next := s + step
		if step == 0 {
			next = uint64(math.Round(float64(s) * factor))
		}
		if next <= s {
			break
		}
		s = next
	}
	return sizes
}

// PerfExitErr is the exit error of a sweep whose worst failure was worst
// (nil: none failed).
func PerfExitErr(sc *Scenario, rows []PerfRow, worst error) error {
	if worst == nil {
		return nil
	}
	return &ExitError{PerfExitCode(worst), fmt.Errorf("perf %s: %d of %d sizes failed; the worst: %w", sc.Name, perfFailed(rows), len(rows), worst)}
}

// PerfExitCode is the exit status a sweep whose worst failure is worst
// ends with: a hang before wrong data before any other failure.
func PerfExitCode(worst error) int {
	var h *sim.HangError
	var mm *MismatchError
	switch {
	case errors.As(worst, &h):
		return ExitHang
	case errors.As(worst, &mm):
		return ExitMismatch
	}
	return ExitFailed
}

// PerfExitFrom is PerfExitErr from a worst failure known by its exit
// status and text (a merge of shards' records): the same status and
// message.
func PerfExitFrom(sc *Scenario, rows []PerfRow, code int, text string) error {
	return &ExitError{code, fmt.Errorf("perf %s: %d of %d sizes failed; the worst: %s", sc.Name, perfFailed(rows), len(rows), text)}
}

func perfFailed(rows []PerfRow) int {
	failed := 0
	for _, r := range rows {
		if r.Err != "" {
			failed++
		}
	}
	return failed
}
