package calibrate

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
)

// allocated runs f and returns the bytes it allocated (every allocation,
// freed or not: a bound on its peak heap).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// endless is a line that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// Input of any length costs bounded memory: an endless line, a 10 GB
// sparse file (zeros, no newline) and a file of endless short comment
// lines are refused once the limit is passed, the error naming it.
func TestParseMeasurementsBounded(t *testing.T) {
	const budget = 100 << 20
	var err error
	n := allocated(func() { _, err = ParseMeasurements(io.MultiReader(strings.NewReader(headerV2+"\n"), endless{})) })
	assert.ErrorContains(t, err, "measurements line 2: longer than 4096 bytes, the most one line may have")
	assert.Less(t, n, uint64(budget), "an endless line")

	sparse := filepath.Join(t.TempDir(), "sparse.csv")
	f, err := os.Create(sparse)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(10<<30))
	n = allocated(func() { _, err = ParseMeasurements(f) })
	require.NoError(t, f.Close())
	assert.ErrorContains(t, err, "measurements line 1: longer than 4096 bytes")
	assert.Less(t, n, uint64(budget), "a 10 GB sparse file")

	comments := io.MultiReader(strings.NewReader(headerV2+"\n"), io.LimitReader(repeat("# c\n"), 1<<30))
	n = allocated(func() { _, err = ParseMeasurements(comments) })
	assert.ErrorContains(t, err, "measurements: longer than 16777216 bytes (16 MiB), the most a measurement file may have")
	assert.Less(t, n, uint64(budget), "endless comments")
}

type repeatReader struct {
	s string
	i int
}

func repeat(s string) io.Reader { return &repeatReader{s: s} }

func (r *repeatReader) Read(p []byte) (int, error) {
	for k := range p {
		p[k] = r.s[r.i%len(r.s)]
		r.i++
	}
	return len(p), nil
}

// Rows of any size predict with memory independent of the size: 64 B to
// 1 GiB, 64 copies per row, local and peer (the benches are phantom).
func TestBigRowsPredict(t *testing.T) {
	in := headerV2 + "\n" +
		"p64,0,1,1,64,1,5.4\n" +
		"p1g,0,1,1,1073741824,1,17700\n" +
		"p256mx64,0,1,64,268435456,4,290000\n" +
		"l1gx64,0,0,64,1073741824,8,1000000\n"
	ms, err := ParseMeasurements(strings.NewReader(in))
	require.NoError(t, err)
	var rs []Residual
	n := allocated(func() { rs, err = Residuals(model.MI355X(), ms, 1) })
	require.NoError(t, err)
	assert.Less(t, n, uint64(100<<20), "64 × 1 GiB costs what 64 B does")
	require.Len(t, rs, 4)
	one := rs[1].PredictedUs
	assert.InEpsilon(t, float64(1<<30)/model.LinkGBps.Of(model.MI355X())/1e3, one, 0.01, "a 1 GiB peer copy streams at the link rate")
	for _, r := range rs {
		assert.Positive(t, r.PredictedUs, r.Name)
	}
	var buf bytes.Buffer
	require.NoError(t, WriteResiduals(&buf, rs))
	assert.Regexp(t, `(?m)^l1gx64 +local +0 +0 +64 +1073741824 `, buf.String(), "the path column")
	assert.Regexp(t, `(?m)^p1g +xgmi `, buf.String())
	buf.Reset()
	require.NoError(t, WritePredictionSummary(&buf, rs))
	assert.Regexp(t, `^predicted 4 rows: \d within 15% \(max \d+\.\d%, median \d+\.\d%\)\n$`, buf.String())
}

// A fit that cannot explain its rows says so (Check), whether the rows
// are far above or far below anything the model produces.
func TestFitCheck(t *testing.T) {
	rows := func(last string) []Measurement {
		ms, err := ParseMeasurements(strings.NewReader(headerV2 + "\na,0,1,1,65536,1,3.855\nb,0,1,1,262144,1,7.282\n" + last))
		require.NoError(t, err)
		return ms
	}
	res, err := Fit(model.MI355X(), DefaultFitParams, rows(""), 1)
	require.NoError(t, err)
	assert.NoError(t, res.Check(0), "a good fit")
	for _, tc := range []struct{ row, want string }{
		{"c,0,1,1,131072,1,1e9\n", "row c is still -100.0% off after the fit, beyond the ±25% bound"},
		{"\"c\nx\",0,1,1,131072,1,1e-6\n", `row "c\nx" is still +`},
	} {
		res, err := Fit(model.MI355X(), DefaultFitParams, rows(tc.row), 1)
		require.NoError(t, err)
		assert.ErrorContains(t, res.Check(0), tc.want)
	}
	assert.Equal(t, `"a b"`, PrintName("a b"))
	assert.Equal(t, `"\x1b[2J"`, PrintName("\x1b[2J"))
	assert.Equal(t, "bw.64k", PrintName("bw.64k"))
}
