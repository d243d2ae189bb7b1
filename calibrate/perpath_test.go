package calibrate

import (
	"bytes"
	"fmt"
	"strings"
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

// pathRows are kernel-clock rows of every path: single copies (the fixed
// latency before a lone copy lands), bursts (latency plus the gap after
// each copy) and large copies (the rate).
func pathRows(t *testing.T, truth *model.Params) []Measurement {
	t.Helper()
	var ms []Measurement
	for _, sh := range []struct {
		src, dst, ops int
		bytes         uint64
	}{
		{0, 0, 1, 64}, {0, 0, 1, 64 << 10}, {0, 0, 8, 4 << 10}, {0, 0, 1, 4 << 20},
		{0, 1, 1, 64}, {0, 1, 1, 64 << 10}, {0, 1, 8, 4 << 10}, {0, 1, 1, 4 << 20},
		{0, model.Host, 1, 64}, {0, model.Host, 8, 4 << 10}, {model.Host, 0, 1, 4 << 20}, {0, model.Host, 1, 64 << 10},
	} {
		x := Measurement{Name: fmt.Sprintf("%s-%s-%dx%d", EndName(sh.src), EndName(sh.dst), sh.ops, sh.bytes), Src: sh.src, Dst: sh.dst, Ops: sh.ops, Bytes: sh.bytes, Queues: 1}
		var err error
		x.TimeUs, err = Predict(truth, x, 1)
		require.NoError(t, err)
		ms = append(ms, x)
	}
	return ms
}

// A truth with distinct local, peer and host copy latencies (which the
// preset has at 0): "--params all" finds each (a ±10% probe of 0 moves
// nothing; the scale step of 1 µs does), holds visible_us, which the rows
// see only summed with them, and the fit recovers each latency within 5%.
// Before the per-path latencies a one-copy local row could not move at
// all: local_packet_us is the gap after the copy.
func TestPerPathLatencyRecovered(t *testing.T) {
	truth := model.MI355X()
	model.LocalCopyUs.Set(truth, 1.9)
	model.PeerCopyUs.Set(truth, 0.7)
	model.HostCopyUs.Set(truth, 3.4)
	ms := pathRows(t, truth)

	lone := Measurement{Name: "lone", Src: 0, Dst: 0, Ops: 1, Bytes: 64, Queues: 1}
	t0, err := Predict(model.MI355X(), lone, 1)
	require.NoError(t, err)
	t1, err := Predict(truth, lone, 1)
	require.NoError(t, err)
	assert.InDelta(t, 1.9, t1-t0, 0.01, "the local latency delays a lone local copy's completion")
	gap := model.MI355X()
	model.LocalPacketUs.Set(gap, 5)
	t2, err := Predict(gap, lone, 1)
	require.NoError(t, err)
	assert.Equal(t, t0, t2, "the gap after a lone copy does not")

	id, err := Identify(model.MI355X(), ms, 1)
	require.NoError(t, err)
	for _, n := range []string{"local_copy_us", "peer_copy_us", "host_copy_us"} {
		assert.Contains(t, id.Fit, n)
	}
	assert.Contains(t, id.Together, "visible_us", "the rows see visible_us only with the three latencies")
	assert.NotContains(t, id.Fit, "hbm_gbps")
	assert.Contains(t, id.Rest, "hbm_gbps", "no copy row moves the CU's HBM rate")

	res, err := Fit(model.MI355X(), id.Fit, ms, 1)
	require.NoError(t, err)
	require.NoError(t, res.Check(0.02))
	for _, pa := range []model.Float{model.LocalCopyUs, model.PeerCopyUs, model.HostCopyUs} {
		assert.InEpsilon(t, pa.Of(truth), pa.Of(res.Model), 0.05, pa.Name)
	}
}

// A row a fit leaves beyond its bound is explained: the parameters that
// move it, largest first, with the step; a row nothing moves is named as
// a mechanism the model lacks.
func TestExplainRows(t *testing.T) {
	x := Measurement{Name: "local.1m", Src: 0, Dst: 0, Ops: 1, Bytes: 1 << 20, Queues: 1}
	v, err := Predict(model.MI355X(), x, 1)
	require.NoError(t, err)
	x.TimeUs = v / 1.4 // 40% slower in the model than "measured"
	rs, err := Residuals(model.MI355X(), []Measurement{x}, 1)
	require.NoError(t, err)
	why, err := ExplainRows(model.MI355X(), rs, 0.25, 1)
	require.NoError(t, err)
	require.Len(t, why, 1)
	require.NotEmpty(t, why[0].Movers)
	assert.Equal(t, "local_gbps", why[0].Movers[0].Param, "a 1 MiB local copy is its rate's")
	assert.Equal(t, "-10%", why[0].Movers[0].Step)
	var names []string
	for _, m := range why[0].Movers {
		names = append(names, m.Param)
	}
	assert.Contains(t, names, "local_copy_us", "its latency, 0 in the preset, is probed at its scale")
	assert.NotContains(t, names, "link_gbps", "a local row does not cross the link")
	within, err := ExplainRows(model.MI355X(), rs, 0.5, 1)
	require.NoError(t, err)
	assert.Empty(t, within, "rows within the bound need no explanation")

	var buf bytes.Buffer
	require.NoError(t, WriteRowMovers(&buf, append(why, RowMovers{Row: "odd row", Error: -0.3})))
	assert.Regexp(t, `^row local\.1m \(\+40\.0%\): local_gbps -10% moves it \+\d+\.\d%; `, buf.String())
	assert.Contains(t, buf.String(), "\nrow \"odd row\" (-30.0%): no parameter of the model moves this row (a mechanism the model lacks, not the data)\n")
}

// A link whose pulls are slower than its pushes and whose streams lose to
// sharing: one parameter each (link_read_gbps, link_share), found by
// --params all on engine-clock rows with pulls and several streams, and
// recovered within 5%; not one per row.
func TestDirectionAndSharing(t *testing.T) {
	truth := model.MI355X()
	model.LinkReadGBps.Set(truth, 44)
	model.LinkShare.Set(truth, 0.12)
	var ms []Measurement
	for _, sh := range []struct {
		ops, queues int
		bytes       uint64
		pull        bool
	}{
		{1, 1, 64 << 10, false}, {1, 1, 4 << 20, false}, {1, 1, 64 << 10, true}, {1, 1, 4 << 20, true},
		{2, 2, 4 << 20, false}, {4, 4, 4 << 20, false}, {8, 8, 4 << 20, false}, {4, 4, 4 << 20, true},
	} {
		x := Measurement{Name: fmt.Sprintf("%dx%d.q%d.pull%v", sh.ops, sh.bytes, sh.queues, sh.pull), Src: 0, Dst: 1,
			Ops: sh.ops, Bytes: sh.bytes, Queues: sh.queues, Pull: sh.pull, Clock: ClockEngine}
		var err error
		x.TimeUs, err = Predict(truth, x, 1)
		require.NoError(t, err)
		ms = append(ms, x)
	}
	// 8 queues of 4 MiB toward one peer: the link's 2 engines each run
	// one queue at a time, so 2 streams share the link direction at once,
	// 1 + 0.12 = 1.12 times what they would take at link_gbps.
	assert.InEpsilon(t, 8*float64(4<<20)/model.LinkGBps.Of(truth)/1e3*1.12, ms[6].TimeUs, 0.05)
	assert.InEpsilon(t, float64(4<<20)/44e3, ms[3].TimeUs, 0.1, "a 4 MiB pull at link_read_gbps")

	id, err := Identify(model.MI355X(), ms, 1)
	require.NoError(t, err)
	assert.Contains(t, id.Fit, "link_read_gbps")
	assert.Contains(t, id.Fit, "link_share")
	res, err := Fit(model.MI355X(), id.Fit, ms, 1)
	require.NoError(t, err)
	require.NoError(t, res.Check(0.02))
	assert.InEpsilon(t, 44, model.LinkReadGBps.Of(res.Model), 0.05)
	assert.InEpsilon(t, 0.12, model.LinkShare.Of(res.Model), 0.05)
	// On the kernel's clock too: GPU 1's thread gets 4 MiB from GPU 0.
	kp, err := Predict(truth, Measurement{Name: "k", Src: 0, Dst: 1, Ops: 1, Bytes: 4 << 20, Queues: 1, Pull: true}, 1)
	require.NoError(t, err)
	kq, err := Predict(truth, Measurement{Name: "k", Src: 0, Dst: 1, Ops: 1, Bytes: 4 << 20, Queues: 1}, 1)
	require.NoError(t, err)
	assert.InDelta(t, float64(4<<20)/44e3-float64(4<<20)/model.LinkGBps.Of(truth)/1e3, kp-kq, 1, "a kernel-clock pull moves at link_read_gbps")
	for _, clk := range []Clock{ClockKernel, ClockEngine} {
		_, err = Predict(truth, Measurement{Name: "lp", Src: 0, Dst: 0, Ops: 1, Bytes: 64, Queues: 1, Pull: true, Clock: clk}, 1)
		assert.ErrorContains(t, err, "a pull (the destination's engine reading) needs two GPUs")
	}

	// Format v4 says who runs each row (exec); v3 rows are pushes.
	var buf bytes.Buffer
	require.NoError(t, WriteMeasurements(&buf, ms[2:4]))
	assert.True(t, strings.HasPrefix(buf.String(), headerV4+"\n"), buf.String())
	assert.Contains(t, buf.String(), "\n1x65536.q1.pulltrue,0,1,1,65536,1,")
	back, err := ParseMeasurements(&buf)
	require.NoError(t, err)
	assert.True(t, back[0].Pull && back[1].Pull)
	_, err = ParseMeasurements(strings.NewReader(headerV4 + "\nx,0,1,1,64,1,3,kernel,2\n"))
	assert.ErrorContains(t, err, "line 2 (x): exec 2: the engine runs on the source GPU (a push), the GPU end of a host copy, or a peer copy's destination (a pull), here 0 or 1")
	_, err = ParseMeasurements(strings.NewReader(headerV4 + "\nx,0,host,1,64,1,3,kernel,1\n"))
	assert.ErrorContains(t, err, "here 0")
	_, err = ParseMeasurements(strings.NewReader(headerV4 + "\nx,0,1,1,64,1,3,kernel,gpu\n"))
	assert.ErrorContains(t, err, `exec "gpu": need the GPU 0..7`)
}
