package model_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/model"
)

// A new parameter is one table row (export_test.go's TestExtraUs) plus its
// use: with nothing else written for it, the presets carry it, model files
// read and write it, Validate checks it, and "emud calibrate"'s parameter
// table (calibrate.Parameters, what the command prints) lists it.
func TestNewParameterIsOneRow(t *testing.T) {
	pa, err := model.LookupParameter("test_extra_us")
	require.NoError(t, err)
	assert.Equal(t, 0.5, model.TestExtraUs.Of(model.MI355X()), "the MI355X preset has the row's value")
	assert.Equal(t, 0.5, model.TestExtraUs.Of(model.NewPlaceholder()), "and so does the placeholder, built from it")
	assert.Equal(t, 0.5, model.TestExtraUs.Of(model.Prior()), "a fixed row's prior is its value")

	p := model.MI355X()
	p.Label = "extra"
	pa.Set(p, 0.75)
	path := filepath.Join(t.TempDir(), "m.json")
	require.NoError(t, p.WriteFile(path))
	q, err := model.LoadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 0.75, model.TestExtraUs.Of(q), "model files carry it")
	pa.Set(q, -1)
	assert.ErrorContains(t, q.Validate(), "test_extra_us must be a number from 0 to 1e+09, got -1")

	var row []calibrate.Row
	for _, r := range calibrate.Documented() {
		if r.ID == "bw.64k" {
			row = append(row, r)
		}
	}
	require.Len(t, row, 1)
	rep, err := calibrate.Parameters(model.MI355X(), row, 1, false, calibrate.Options{Runs: 1})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, rep.WriteText(&buf))
	assert.Regexp(t, `(?m)^test_extra_us +0\.5 +µs +fixed +no row +- +a row only the test build has$`, buf.String())
	assert.Regexp(t, `(?m)^link_gbps +60\.84 +GB/s +fitted +bw\.64k by `, buf.String(), "beside the others")
}
