package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/emud-dev/emud/internal/fileio"
	"github.com/emud-dev/emud/model"
)

// MaxTableBytes bounds a --table file: the documented table is a few KiB,
// and /dev/zero must not be read until the process dies.
const MaxTableBytes = 16 << 20

// LoadTable is the documented table at path ("": the embedded MI355X
// table); errors name the flag (--table) and the file.
func LoadTable(path string) ([]Row, error) {
	if path == "" {
		return Documented(), nil
	}
	f, err := fileio.Open(path, MaxTableBytes, "--table")
	if err != nil {
		return nil, fmt.Errorf("invalid %w", err)
	}
	defer f.Close()
	rows, err := ParseTable(f)
	if tl := (*fileio.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("invalid %w", tl)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid --table %s: %w", path, err)
	}
	return rows, nil
}

// PlotFormat is the picture format path's extension names ("svg" or
// "png"); any other is an error naming --plot.
func PlotFormat(path string) (string, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "svg" && format != "png" {
		return "", fmt.Errorf("invalid --plot %q: the file must end in .svg or .png", path)
	}
	return format, nil
}

// WritePlotFile draws the bandwidth picture of m against rows (WritePlot)
// into the file path, in the format its extension names; nothing is
// written when the curve or the picture fails.
func WritePlotFile(path string, m model.Model, rows []Row, seed uint64) error {
	format, err := PlotFormat(path)
	if err != nil {
		return err
	}
	c, err := BandwidthCurve(m, seed)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := WritePlot(&buf, format, m.Name(), rows, c); err != nil {
		return err
	}
	if err := fileio.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing --plot: %w", err)
	}
	return nil
}

// ReadMeasurements reads the measurement file path (ParseMeasurements),
// errors naming the file.
func ReadMeasurements(path string) ([]Measurement, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ms, err := ParseMeasurements(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ms, nil
}

// Holdout splits ms for --holdout: the even rows to fit, the odd ones to
// predict. It needs two rows at least.
func Holdout(ms []Measurement) (train, test []Measurement, err error) {
	if len(ms) < 2 {
		return nil, nil, fmt.Errorf("--holdout needs at least 2 rows, there are %d", len(ms))
	}
	for i, x := range ms {
		if i%2 == 0 {
			train = append(train, x)
		} else {
			test = append(test, x)
		}
	}
	return train, test, nil
}

// ParamsAll is what "--params all" fits from base on ms (Identify).
func ParamsAll(base *model.Params, ms []Measurement, seed uint64) (*Identification, error) {
	return Identify(base, ms, seed)
}

// WriteReport prints the fit from base on train: each fitted parameter's
// value and start value, a warning for each the rows do not identify, the
// residual of every fitted row and, when test has rows (--holdout), the
// prediction of each held-out row.
func (r *FitResult) WriteReport(w io.Writer, base *model.Params, train, test []Measurement, seed uint64) error {
	fmt.Fprintf(w, "fitted %d parameters on %d rows (%d row runs):\n", len(r.Params), len(train), r.Evals)
	for _, n := range r.Params {
		pa, _ := model.LookupParameter(n) // a fitted parameter: it exists
		fmt.Fprintf(w, "  %-22s %12.6g  (was %.6g)\n", n, pa.Get(r.Model), pa.Get(base))
	}
	for _, n := range r.Unidentified {
		fmt.Fprintf(w, "  warning: %s is not identified by these rows (no row depends on it); it keeps its start value, not a fit\n", n)
	}
	fmt.Fprintln(w, "residuals (fitted rows):")
	if err := WriteResiduals(w, r.Residuals); err != nil {
		return err
	}
	if len(test) == 0 {
		return nil
	}
	pred, err := Residuals(r.Model, test, seed)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "predictions (held-out rows):")
	return WriteResiduals(w, pred)
}
