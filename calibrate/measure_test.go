package calibrate_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/model"
)

// Format v3 carries each row's clock; WriteMeasurements writes it and
// ParseMeasurements reads it back, and a bad clock names itself.
func TestMeasurementsV3RoundTrip(t *testing.T) {
	rows := []calibrate.Measurement{
		{Name: "peer.64", Src: 0, Dst: 1, Ops: 1, Bytes: 64, Queues: 1, TimeUs: 4.01, Clock: calibrate.ClockEngine},
		{Name: "local.burst8", Src: 2, Dst: 2, Ops: 8, Bytes: 4096, Queues: 2, TimeUs: 18.53, Clock: calibrate.ClockKernel},
	}
	var b strings.Builder
	require.NoError(t, calibrate.WriteMeasurements(&b, rows))
	assert.True(t, strings.HasPrefix(b.String(), "name,src,dst,ops,bytes,queues,time_us,clock\n"), b.String())
	got, err := calibrate.ParseMeasurements(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Equal(t, rows, got)

	for _, tc := range []struct{ in, want string }{
		{"name,src,dst,ops,bytes,queues,time_us,clock\na,0,1,1,64,1,4,wall\n", `clock "wall": need kernel or engine`},
		{"name,src,dst,ops,bytes,queues,time_us,clock\na,0,1,1,64,1,4\n", "wrong number of fields: 7, the header has 8"},
	} {
		_, err := calibrate.ParseMeasurements(strings.NewReader(tc.in))
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// An engine-clock row is predicted by the stream MeasureRows posts, run on
// the emulator: the TIMESTAMP span of the copies, which leaves out the
// kernel's issue and quiet costs the kernel-clock row includes.
func TestEngineClockRows(t *testing.T) {
	m := model.MI355X()
	b := calibrate.EmulatorBackend(m)
	x := calibrate.Measurement{Name: "peer.1M", Src: 0, Dst: 1, Ops: 1, Bytes: 1 << 20, Queues: 1}
	rows, host, err := calibrate.MeasureRows(b, []calibrate.Measurement{x}, 3, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, calibrate.ClockEngine, rows[0].Clock)
	pred, err := calibrate.Predict(m, rows[0], 1)
	require.NoError(t, err)
	assert.InDelta(t, rows[0].TimeUs, pred, 0.011, "the prediction is the measurement's own stream")
	kernel, err := calibrate.Predict(m, x, 1)
	require.NoError(t, err)
	assert.NotEqual(t, kernel, pred, "the two clocks time different spans")
	assert.Greater(t, host[0], 0.0)
	// One more copy costs the packet's fixed cost plus its bytes on the link.
	two := x
	two.Ops, two.Clock = 2, calibrate.ClockEngine
	p2, err := calibrate.Predict(m, two, 1)
	require.NoError(t, err)
	assert.Greater(t, p2, pred+float64(1<<20)/(1e3*model.LinkGBps.Of(m)))

	for _, bad := range []calibrate.Measurement{
		{Name: "q", Src: 0, Dst: 1, Ops: 1, Bytes: 64, Queues: 9},
		{Name: "o", Src: 0, Dst: 1, Ops: 0, Bytes: 64, Queues: 1},
		{Name: "g", Src: 0, Dst: 9, Ops: 1, Bytes: 64, Queues: 1},
	} {
		_, err := calibrate.MeasureOnce(b, bad, 1)
		require.Error(t, err, bad.Name)
		assert.Contains(t, err.Error(), "measure "+bad.Name)
	}
	_, _, err = calibrate.MeasureRows(b, []calibrate.Measurement{x}, 0, 1)
	assert.ErrorContains(t, err, "0 repetitions")
}
