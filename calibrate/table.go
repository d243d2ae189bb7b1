package calibrate

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// documentedCSV is calibrate/testdata/mi355x-documented.csv: every number
// the seed document measured on MI355X.
//
//go:embed testdata/mi355x-documented.csv
var documentedCSV string

// Row is one documented measurement.
type Row struct {
	ID       string
	Scenario string
	Params   map[string]uint64 // "bytes=65536;ops=2" parsed
	Metric   string
	Value    float64
	Unit     string
	Note     string
}

// Documented returns the rows of the embedded MI355X table.
func Documented() []Row {
	rows, err := ParseTable(strings.NewReader(documentedCSV))
	if err != nil {
		panic("calibrate: embedded table: " + err.Error()) // a build-time file: tested
	}
	return rows
}

// ParseTable reads a table in the documented CSV's shape (header
// id,scenario,params,metric,value,unit,note). Errors name the line and
// field.
func ParseTable(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 7
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("calibration table: %w", err)
	}
	want := []string{"id", "scenario", "params", "metric", "value", "unit", "note"}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(want, ",") {
		return nil, fmt.Errorf("calibration table: header must be %s", strings.Join(want, ","))
	}
	var rows []Row
	seen := map[string]bool{}
	for i, rec := range recs[1:] {
		line := i + 2
		row := Row{ID: rec[0], Scenario: rec[1], Metric: rec[3], Unit: rec[5], Note: rec[6], Params: map[string]uint64{}}
		if row.ID == "" || seen[row.ID] {
			return nil, fmt.Errorf("calibration table line %d: id %q is empty or repeated", line, row.ID)
		}
		seen[row.ID] = true
		if row.Value, err = strconv.ParseFloat(rec[4], 64); err != nil {
			return nil, fmt.Errorf("calibration table line %d (%s): value %q is not a number", line, row.ID, rec[4])
		}
		if rec[2] != "" {
			for _, kv := range strings.Split(rec[2], ";") {
				k, v, ok := strings.Cut(kv, "=")
				n, err := strconv.ParseUint(v, 10, 64)
				if !ok || err != nil {
					return nil, fmt.Errorf("calibration table line %d (%s): params entry %q is not name=integer", line, row.ID, kv)
				}
				row.Params[k] = n
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (r Row) param(name string, def uint64) uint64 {
	if v, ok := r.Params[name]; ok {
		return v
	}
	return def
}
