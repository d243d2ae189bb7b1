package calibrate

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
)

// A local copy has a fixed cost of its own (local_packet_us): rows of
// each path identify their path's cost and rate, and a fit of rows timed
// under a truth whose local and peer copies differ recovers both.
func TestPerPathFixedCost(t *testing.T) {
	truth := model.MI355X()
	model.LocalPacketUs.Set(truth, 3.6) // a local copy costs more than a peer one
	model.PacketUs.Set(truth, 1.7)
	model.LocalGBps.Set(truth, 90)
	var ms []Measurement
	for _, sh := range []struct {
		src, dst, ops int
		bytes         uint64
	}{
		{0, 0, 1, 64}, {0, 0, 16, 64}, {0, 0, 4, 1 << 20}, {0, 0, 1, 8 << 20},
		{0, 1, 1, 64}, {0, 1, 16, 64}, {0, 1, 4, 1 << 20}, {0, 1, 1, 8 << 20},
	} {
		x := Measurement{Name: fmt.Sprintf("%d-%d-%dx%d", sh.src, sh.dst, sh.ops, sh.bytes), Src: sh.src, Dst: sh.dst, Ops: sh.ops, Bytes: sh.bytes, Queues: 1}
		var err error
		x.TimeUs, err = Predict(truth, x, 1)
		require.NoError(t, err)
		ms = append(ms, x)
	}
	names, err := Identified(model.MI355X(), ms, 1)
	require.NoError(t, err)
	assert.Contains(t, names, "local_packet_us", "local rows identify the local fixed cost")
	assert.Contains(t, names, "packet_us")
	fitRecovers(t, truth, ms, "packet_us", "local_packet_us", "link_gbps", "local_gbps", "visible_us")
}

// fitRecovers fits params to rows ms from the preset and requires each
// within 5% of truth's; it returns the fit.
func fitRecovers(t *testing.T, truth *model.Params, ms []Measurement, params ...string) *FitResult {
	t.Helper()
	res, err := Fit(model.MI355X(), params, ms, 1)
	require.NoError(t, err)
	require.NoError(t, res.Check(0))
	for _, n := range params {
		pa, _ := model.LookupParameter(n)
		assert.InEpsilon(t, pa.Get(truth), pa.Get(res.Model), 0.05, n)
	}
	return res
}

// A copy to or from host memory takes the host path (the GPU's PCIe
// link): its own fixed cost and rate, identified by host rows, which a fit
// of rows timed under a truth with both moved away from the preset
// recovers; the other paths' parameters do not move a host row's rate.
func TestHostPath(t *testing.T) {
	truth := model.MI355X()
	model.HostPacketUs.Set(truth, 3.1)
	model.HostGBps.Set(truth, 41)
	var ms []Measurement
	for _, sh := range []struct {
		src, dst, ops int
		bytes         uint64
	}{
		{0, model.Host, 1, 64}, {0, model.Host, 16, 64}, {0, model.Host, 1, 8 << 20}, {model.Host, 0, 4, 1 << 20},
		{model.Host, 0, 1, 64}, {2, model.Host, 1, 1 << 20}, {0, 1, 1, 64}, {0, 1, 1, 8 << 20},
	} {
		x := Measurement{Name: fmt.Sprintf("%s-%s-%dx%d", EndName(sh.src), EndName(sh.dst), sh.ops, sh.bytes), Src: sh.src, Dst: sh.dst, Ops: sh.ops, Bytes: sh.bytes, Queues: 1}
		var err error
		x.TimeUs, err = Predict(truth, x, 1)
		require.NoError(t, err)
		ms = append(ms, x)
		if sh.src == model.Host || sh.dst == model.Host {
			assert.Equal(t, "host", x.Path(), x.Name)
		}
	}
	// 8 MiB to the host at 41 GB/s: the rate is the host path's.
	assert.InEpsilon(t, float64(8<<20)/41e3, ms[2].TimeUs, 0.1)
	names, err := Identified(model.MI355X(), ms, 1)
	require.NoError(t, err)
	assert.Contains(t, names, "host_packet_us", "host rows identify the host fixed cost")
	assert.Contains(t, names, "host_gbps", "and the host rate")
	res := fitRecovers(t, truth, ms, "packet_us", "host_packet_us", "link_gbps", "host_gbps", "visible_us")
	var buf bytes.Buffer
	require.NoError(t, WriteResiduals(&buf, res.Residuals))
	assert.Regexp(t, `\n0-host-1x64 +host +0 +host `, buf.String(), "the residual table names the host path and end")
}
