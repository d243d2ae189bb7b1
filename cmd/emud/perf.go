package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/emud-dev/emud/sim"
)

// perfShape is how nccl-tests' columns map onto a scenario: the element
// type and reduction it reports, how many --bytes messages make one
// nccl-tests "size" (per-rank buffer), the granule --bytes must be a
// multiple of, and the bus-bandwidth factor of the collective (nccl-tests
// doc/PERFORMANCE.md: all-reduce 2(n−1)/n, all-gather and all-to-all
// (n−1)/n, broadcast 1).
type perfShape struct {
	typ   string
	elem  uint64
	redop string
	per   func(n int) uint64 // messages of --bytes per size
	gran  uint64
	bus   func(n float64) float64
}

var (
	byRanks  = func(n int) uint64 { return uint64(n) }
	one      = func(int) uint64 { return 1 }
	ringBus  = func(n float64) float64 { return (n - 1) / n }
	flatBus  = func(float64) float64 { return 1 }
	perfDflt = perfShape{typ: "uint8", elem: 1, redop: "none", per: one, gran: 1, bus: flatBus}
)

// perfShapes maps each scenario to its nccl-tests shape; a scenario not
// listed is reported as a transfer of size bytes (bus factor 1).
var perfShapes = map[string]perfShape{
	"alltoall":                 {typ: "uint8", elem: 1, redop: "none", per: byRanks, gran: 8, bus: ringBus},
	"alltoall-split":           {typ: "uint8", elem: 1, redop: "none", per: byRanks, gran: 16, bus: ringBus},
	"alltoall-shared-expected": {typ: "uint8", elem: 1, redop: "none", per: byRanks, gran: 16, bus: ringBus},
	"alltoall-mq":              {typ: "uint8", elem: 1, redop: "none", per: func(n int) uint64 { return uint64(n-1) * a2aMsgs }, gran: 1, bus: flatBus},
	"allgather-ring":           {typ: "uint8", elem: 1, redop: "none", per: byRanks, gran: 8, bus: ringBus},
	"broadcast-tree":           {typ: "uint8", elem: 1, redop: "none", per: one, gran: 1, bus: flatBus},
	"relay":                    {typ: "uint8", elem: 1, redop: "none", per: one, gran: 32, bus: flatBus},
	"cft-allreduce":            {typ: "uint32", elem: 4, redop: "sum", per: one, gran: 16, bus: func(n float64) float64 { return 2 * (n - 1) / n }},
	"cft-alltoall":             {typ: "uint8", elem: 1, redop: "none", per: byRanks, gran: 16, bus: ringBus},
}

func shapeOf(name string) perfShape {
	if s, ok := perfShapes[name]; ok {
		return s
	}
	return perfDflt
}

// perfRow is one size of a sweep.
type perfRow struct {
	Size   uint64  `json:"size"`
	Count  uint64  `json:"count"`
	TimeUs float64 `json:"time_us"`
	AlgBW  float64 `json:"algbw"`
	BusBW  float64 `json:"busbw"`
	Wrong  int     `json:"wrong"`
	Err    string  `json:"error,omitempty"`
}

func newPerfCmd() *cobra.Command {
	f := newScenarioFlags()
	var (
		minB, maxB, stepB byteSize
		factor            float64
		iters, warmup     int
		plotPath          string
	)
	minB, maxB = 1<<10, 64<<20
	cmd := &cobra.Command{
		Use:   "perf [SCENARIO]",
		Short: "Sweep a scenario over message sizes and print nccl-tests' columns (size, count, type, redop, time, algbw, busbw, #wrong)",
		Long: `Run a scenario at every size from -b to -e (multiplying by -f, or adding -i)
and print one line per size in nccl-tests' format: size (B), count (elements),
type, redop, time (µs), algbw and busbw (GB/s), #wrong. Sizes are nccl-tests'
per-rank buffers: for an all-to-all or all-gather, ranks × the bytes per pair
or chunk; for an all-reduce, the buffer every rank reduces; for a broadcast or
relay, the payload. Each size is rounded down to what the scenario can move,
and the size printed is the one run.

time is the emulated time from launch until the last rank is done, under the
calibrated model (mi355x, or the CFT fabric's own model for cft-*) at timing
perturbation level 0: the numbers are the model's, exactly, on every run.
algbw = size / time; busbw = algbw × the collective's factor (nccl-tests
doc/PERFORMANCE.md: all-reduce 2(n−1)/n, all-gather and all-to-all (n−1)/n,
broadcast 1). #wrong counts the blocks and signals the data check found
wrong (every byte is checked unless --phantom). -n averages over that many
seeds (from --seed); -w is accepted for nccl-tests' command lines and ignored
(an emulated run has nothing to warm up). A size that hangs or fails is
reported on its line and the sweep goes on; the exit status is then that of
the worst failure.

--plot FILE writes the busbw curve (.svg or .png).

` + exitStatusHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := f.resolve(cmd, args)
			if err != nil {
				return err
			}
			switch {
			case minB < 1 || maxB < minB:
				return fmt.Errorf("invalid -b %s / -e %s: need 1 ≤ -b ≤ -e", formatBytes(uint64(minB)), formatBytes(uint64(maxB)))
			case stepB == 0 && !(factor > 1):
				return fmt.Errorf("invalid -f %v: the step factor must be above 1 (or give -i)", factor)
			case iters < 1 || iters > 1000:
				return fmt.Errorf("invalid -n %d: need 1..1000", iters)
			case warmup < 0:
				return fmt.Errorf("invalid -w %d: need ≥ 0", warmup)
			}
			var format string
			if plotPath != "" {
				format = strings.TrimPrefix(strings.ToLower(filepath.Ext(plotPath)), ".")
				if format != "svg" && format != "png" {
					return fmt.Errorf("invalid --plot %q: the file must end in .svg or .png", plotPath)
				}
			}
			var sizes []uint64
			for s := uint64(minB); s <= uint64(maxB) && len(sizes) < 4096; {
				sizes = append(sizes, s)
				next := s + uint64(stepB)
				if stepB == 0 {
					next = uint64(math.Round(float64(s) * factor))
				}
				if next <= s {
					break
				}
				s = next
			}
			defer withMemLimit(uint64(f.budget))()
			rows, status := perfSweep(cmd.OutOrStdout(), sc, f.o, shapeOf(sc.name), sizes, iters, uint64(f.budget))
			if plotPath != "" {
				var buf bytes.Buffer
				if err := writePerfPlot(&buf, format, sc.name, f.o, rows); err != nil {
					return err
				}
				if err := os.WriteFile(plotPath, buf.Bytes(), 0o644); err != nil {
					return fmt.Errorf("writing --plot: %w", err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "plot: %s\n", plotPath)
			}
			if status != nil {
				failed := 0
				for _, r := range rows {
					if r.Err != "" {
						failed++
					}
				}
				code := exitError
				var h *sim.HangError
				var mm *mismatchError
				switch {
				case errors.As(status, &h):
					code = exitHang
				case errors.As(status, &mm):
					code = exitMismatch
				}
				return &codedError{code, fmt.Errorf("perf %s: %d of %d sizes failed; the worst: %w", sc.name, failed, len(rows), status)}
			}
			return nil
		},
	}
	f.bind(cmd, true, sim.LevelExact, sim.StrategyRandom)
	fs := cmd.Flags()
	fs.VarP(&minB, "minbytes", "b", "smallest size (nccl-tests -b); K, M, G suffixes")
	fs.VarP(&maxB, "maxbytes", "e", "largest size (nccl-tests -e)")
	fs.Float64VarP(&factor, "stepfactor", "f", 2, "multiply the size by this much per step (nccl-tests -f)")
	fs.VarP(&stepB, "stepbytes", "i", "add this many bytes per step instead of multiplying (nccl-tests -i)")
	fs.IntVarP(&iters, "iters", "n", 1, "runs per size, on seeds --seed, --seed+1, ...; time is their mean (nccl-tests -n)")
	fs.IntVarP(&warmup, "warmup_iters", "w", 0, "accepted for nccl-tests command lines; an emulated run needs no warm-up")
	fs.StringVar(&plotPath, "plot", "", "write the busbw curve to this file (.svg or .png)")
	return cmd
}

// perfSweep runs sc at every size and prints the table; it returns the
// rows and the error (exit status) of the worst failure, nil if none.
func perfSweep(w io.Writer, sc *scenario, o options, sh perfShape, sizes []uint64, iters int, budget uint64) ([]perfRow, error) {
	modelName := "the CFT fabric's model"
	if !sc.noSDMA {
		modelName = o.Model
		if modelName == "" {
			modelName = "mi355x"
		}
	}
	fmt.Fprintf(w, "# emud perf %s: %d ranks, %d queues per peer, model %s, timing perturbation level %d, seed %d, %d iteration(s)\n",
		sc.name, o.Ranks, o.Queues, modelName, o.Perturb, o.Seed, iters)
	if o.Phantom {
		fmt.Fprintln(w, "# --phantom: no bytes stored, data not checked (#wrong counts signals only)")
	}
	fmt.Fprintf(w, "#\n# %10s %12s %8s %6s %10s %8s %8s %7s\n", "size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong")
	fmt.Fprintf(w, "# %10s %12s %8s %6s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "")
	var rows []perfRow
	var worst error
	var busSum float64
	n := 0
	per := sh.per(o.Ranks)
	for _, size := range sizes {
		msg := size / per / sh.gran * sh.gran
		if msg == 0 {
			fmt.Fprintf(w, "# %d B: too small for %d messages of a multiple of %d B; skipped\n", size, per, sh.gran)
			continue
		}
		oo := o
		oo.Bytes = msg
		r := perfRow{Size: msg * per, Count: msg * per / sh.elem}
		err := oo.validate(sc)
		if err == nil && sc.check != nil {
			err = sc.check(oo)
		}
		if err == nil {
			err = checkBudget(sc, oo, budget)
		}
		if err != nil {
			fmt.Fprintf(w, "# %d B: %v; skipped\n", r.Size, err)
			continue
		}
		var sum float64
		for i := 0; i < iters && r.Err == ""; i++ {
			oo.Seed = o.Seed + uint64(i)
			res, err := sc.run(oo)
			var mm *mismatchError
			switch {
			case errors.As(err, &mm):
				r.Wrong += mm.Wrong
				r.Err = "wrong data"
				worst = moreSevere(worst, err)
			case err != nil:
				r.Err = firstLine(err.Error())
				worst = moreSevere(worst, err)
			default:
				var end sim.Time
				for _, rk := range res.Ranks {
					end = max(end, rk.Finish)
				}
				sum += end.Micros()
			}
		}
		if r.Err != "" && r.Wrong == 0 {
			fmt.Fprintf(w, "  %10d %12d %8s %6s %10s %8s %8s %7s  # %s\n", r.Size, r.Count, sh.typ, sh.redop, "-", "-", "-", "N/A", r.Err)
			rows = append(rows, r)
			continue
		}
		r.TimeUs = sum / float64(iters)
		if r.TimeUs > 0 {
			r.AlgBW = float64(r.Size) / r.TimeUs / 1e3
			r.BusBW = r.AlgBW * sh.bus(float64(o.Ranks))
		}
		busSum += r.BusBW
		n++
		fmt.Fprintf(w, "  %10d %12d %8s %6s %10.2f %8.2f %8.2f %7d\n", r.Size, r.Count, sh.typ, sh.redop, r.TimeUs, r.AlgBW, r.BusBW, r.Wrong)
		rows = append(rows, r)
	}
	if n > 0 {
		fmt.Fprintf(w, "# Out of bounds values : %d\n# Avg bus bandwidth    : %.4g\n", len(rows)-n, busSum/float64(n))
	}
	return rows, worst
}

// moreSevere keeps the error whose exit status is worse (a hang or wrong
// data before a plain failure).
func moreSevere(a, b error) error {
	rank := func(e error) int {
		var h *sim.HangError
		var m *mismatchError
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

// writePerfPlot draws busbw over size on a log axis.
func writePerfPlot(w io.Writer, format, name string, o options, rows []perfRow) error {
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
