package calibrate

import (
	"fmt"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/emud-dev/emud/model"
)

// Curve is emulated bandwidth against bytes per op: one put to one peer,
// drained by quiet (the bw.* rows' scenario), at each size.
type Curve struct {
	Bytes []uint64
	GBps  []float64
}

// BandwidthCurve runs the bw scenario under m at sizes from 4 KiB to
// 16 MiB, four points per doubling.
func BandwidthCurve(m model.Model, seed uint64) (Curve, error) {
	var c Curve
	for e := 12.0; e <= 24.0001; e += 0.25 {
		b := uint64(math.Round(math.Pow(2, e)/64) * 64)
		t, err := putQuiet(m, seed, false, b, 1, 1, false)
		if err != nil {
			return c, err
		}
		c.Bytes = append(c.Bytes, b)
		c.GBps = append(c.GBps, gbps(b, t))
	}
	return c, nil
}

// WritePlot draws the documented bw.* points against the emulated curve,
// bandwidth (GB/s) over bytes per op on a log axis, as SVG or PNG (format
// "svg" or "png").
func WritePlot(w io.Writer, format string, modelName string, rows []Row, c Curve) error {
	format = strings.ToLower(format)
	if format != "svg" && format != "png" {
		return fmt.Errorf("plot format %q: want svg or png", format)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("SDMA put bandwidth vs bytes per op: MI355X documented vs emud (%s)", modelName)
	p.X.Label.Text = "bytes per op"
	p.Y.Label.Text = "GB/s"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())

	curve := make(plotter.XYs, len(c.Bytes))
	for i := range c.Bytes {
		curve[i] = plotter.XY{X: float64(c.Bytes[i]), Y: c.GBps[i]}
	}
	line, err := plotter.NewLine(curve)
	if err != nil {
		return err
	}
	line.Width = vg.Points(1.5)
	line.Color = plotter.DefaultLineStyle.Color

	var docs plotter.XYs
	for _, r := range rows {
		if strings.HasPrefix(r.ID, "bw.") && r.Metric == "bandwidth" && r.param("ops", 1) == 1 {
			docs = append(docs, plotter.XY{X: float64(r.param("bytes", 0)), Y: r.Value})
		}
	}
	if len(docs) == 0 {
		return fmt.Errorf("plot: the table has no single-op bw.* bandwidth rows")
	}
	pts, err := plotter.NewScatter(docs)
	if err != nil {
		return err
	}
	pts.GlyphStyle.Shape = draw.CircleGlyph{}
	pts.GlyphStyle.Radius = vg.Points(4)
	p.Add(line, pts)
	p.Legend.Add("emud (emulated curve)", line)
	p.Legend.Add("documented (seed, MI355X)", pts)
	p.Legend.Top, p.Legend.Left = false, false // bottom right: the curve is high there
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(10), vg.Points(10)
	p.Y.Max = 70
	wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// sizeTicks labels powers of two from 4 KiB to 16 MiB.
type sizeTicks struct{}

func (sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := 10; e <= 30; e++ {
		v := math.Pow(2, float64(e))
		if v < lo || v > hi {
			continue
		}
		label := ""
		if e%2 == 0 {
			label = sizeLabel(uint64(v))
		}
		ts = append(ts, plot.Tick{Value: v, Label: label})
	}
	return ts
}

func sizeLabel(b uint64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%dM", b>>20)
	case b >= 1<<10:
		return fmt.Sprintf("%dK", b>>10)
	}
	return fmt.Sprint(b)
}
