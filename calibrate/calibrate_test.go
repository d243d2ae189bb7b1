package calibrate

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emud-dev/emud/internal/testmain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
)

func TestMain(m *testing.M) { testmain.Run(m) }

// The report under the MI355X preset is the calibration: every documented
// row but the two named conflicts within ±10%, median ≤ 5%. A model or
// engine change that breaks one row fails here, naming it.
func TestMI355XCalibration(t *testing.T) {
	rows := Documented()
	require.Len(t, rows, 45, "the embedded table is the seed's 45 rows")
	rep, err := Run(model.MI355X(), rows, 1)
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	t.Log("\n" + text.String())
	for _, r := range rep.Rows {
		if r.Conflict != "" {
			continue
		}
		assert.True(t, r.OK, "%s: documented %v, emulated %v (%+.1f%%)", r.ID, r.Documented, r.Emulated, 100*r.Error)
	}
	assert.Empty(t, rep.Failed)
	assert.Equal(t, 43, rep.Counted)
	assert.LessOrEqual(t, rep.Max, Tolerance)
	assert.LessOrEqual(t, rep.Median, 0.05)
	assert.Contains(t, text.String(), "max |error| ")
	assert.Regexp(t, `max \|error\| \d+\.\d% over 43 rows \(median \d+\.\d%\)\n$`, text.String())

	byID := map[string]Result{}
	for _, r := range rep.Rows {
		byID[r.ID] = r
	}
	// The conflicts are real: single.256k is the bw.256k operation, so the
	// emulator gives both the same time, which cannot be near both values.
	bw := byID["bw.256k"].Emulated
	assert.InDelta(t, 262144/bw/1e3, byID["single.256k"].Emulated, 1e-6, "single.256k and bw.256k run one scenario")
	assert.Greater(t, math.Abs(byID["single.256k"].Error), Tolerance)
	assert.InDelta(t, byID["wait.vs.quiet.8"].Emulated, byID["wait.vs.quiet.64k"].Emulated, 1e-9,
		"the wait-vs-quiet gap does not depend on the copy size in an in-order engine")
}

// A difference row (latency_delta) is judged against the larger of its
// two latencies, every one of them, and the report says so; another row
// against its documented value.
func TestDifferenceRows(t *testing.T) {
	var rows []Row
	for _, r := range Documented() {
		if IsDifference(r) || r.ID == "bw.64k" {
			rows = append(rows, r)
		}
	}
	rep, err := Run(model.MI355X(), rows, 1)
	require.NoError(t, err)
	var diff []string
	for _, r := range rep.Rows {
		if r.ID == "bw.64k" {
			assert.Zero(t, r.Ref)
			assert.InDelta(t, (r.Emulated-r.Documented)/r.Documented, r.Error, 1e-12)
			continue
		}
		diff = append(diff, r.ID)
		assert.GreaterOrEqual(t, r.Ref, math.Abs(r.Emulated), "%s: a term is at least the difference", r.ID)
		assert.InDelta(t, (r.Emulated-r.Documented)/r.Ref, r.Error, 1e-12, r.ID)
	}
	assert.Equal(t, []string{"wait.vs.quiet.8", "wait.vs.quiet.64k", "postwait.gap.16m", "postwaitputptr.holds"}, diff)
	byID := map[string]Result{}
	for _, r := range rep.Rows {
		byID[r.ID] = r
	}
	// quiet's completion: issue, doorbell, the COPY and its gap, the
	// ATOMIC, one rptr read; several µs, not the 0.24 µs between them.
	assert.Greater(t, byID["wait.vs.quiet.8"].Ref, 3.0)
	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "difference rows (latency_delta: wait.vs.quiet.8, wait.vs.quiet.64k, postwait.gap.16m, postwaitputptr.holds) are judged against the larger of their two latencies")
}

// The same seed gives the same report, bit for bit.
func TestReportDeterministic(t *testing.T) {
	rows := []Row{}
	for _, r := range Documented() {
		if strings.HasPrefix(r.ID, "postwait.engine") || strings.HasPrefix(r.ID, "chain") || r.ID == "bw.split.2x4m" {
			rows = append(rows, r)
		}
	}
	a, err := Run(model.MI355X(), rows, 3)
	require.NoError(t, err)
	b, err := Run(model.MI355X(), rows, 3)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// Mechanisms the rows rely on, each against its opposite.
func TestMechanisms(t *testing.T) {
	m := model.MI355X()
	t.Run("copies to one peer share its link", func(t *testing.T) {
		one, err := putQuiet(m, 1, false, 4<<20, 1, 1, false)
		require.NoError(t, err)
		two, err := putQuiet(m, 1, false, 4<<20, 2, 2, false)
		require.NoError(t, err)
		assert.InDelta(t, 2, two/one, 0.1, "two 4 MiB copies on two queues to one peer take twice one's time")
	})
	t.Run("copies to two peers run in parallel", func(t *testing.T) {
		one, err := bcastGBps(m, 1, bcTwoPuts1Q, 4<<20)
		require.NoError(t, err)
		two, err := bcastGBps(m, 1, bcTwoPuts2Q, 4<<20)
		require.NoError(t, err)
		assert.InDelta(t, 2, two/one, 0.1)
	})
	t.Run("broadcast does not overlap its writes", func(t *testing.T) {
		bc, err := bcastGBps(m, 1, bcRemote2, 4<<20)
		require.NoError(t, err)
		puts, err := bcastGBps(m, 1, bcTwoPuts1Q, 4<<20)
		require.NoError(t, err)
		assert.Less(t, bc, puts)
	})
	t.Run("the commit chain serialises issuers", func(t *testing.T) {
		for _, w := range []int{2, 4, 8} {
			one, err := chainIssue(m, 1, w, true)
			require.NoError(t, err)
			many, err := chainIssue(m, 1, w, false)
			require.NoError(t, err)
			assert.Greater(t, one/many, 1+0.2*float64(w-1), "%d warps", w)
		}
	})
	t.Run("per-copy signals cost a packet each", func(t *testing.T) {
		g, err := runGrouped64(m, 1, 16, 64, true, false)
		require.NoError(t, err)
		p, err := runGrouped64(m, 1, 16, 64, true, true)
		require.NoError(t, err)
		assert.InDelta(t, 15*model.PacketUs.Of(m), p.wait-g.wait, 0.5)
	})
	t.Run("the placeholder issues for free", func(t *testing.T) {
		c, err := issueCycles(model.NewPlaceholder(), 1, 8, false)
		require.NoError(t, err)
		assert.Zero(t, c)
	})
}

func TestJitterIsSeeded(t *testing.T) {
	m := model.MI355X()
	model.JitterFrac.Set(m, 0.2)
	a, err := putQuiet(m, 5, false, 4096, 16, 1, true)
	require.NoError(t, err)
	b, err := putQuiet(m, 5, false, 4096, 16, 1, true)
	require.NoError(t, err)
	c, err := putQuiet(m, 6, false, 4096, 16, 1, true)
	require.NoError(t, err)
	flat, err := putQuiet(model.MI355X(), 5, false, 4096, 16, 1, true)
	require.NoError(t, err)
	assert.Equal(t, a, b, "same seed, same times")
	assert.NotEqual(t, a, c, "another seed moves the gaps")
	assert.InDelta(t, flat, a, 0.2*flat, "jitter spreads around the model's value")
}

// A fit of the MI355X bw and scatter rows, read from the v2 measurement
// file, recovers the link bandwidth and the per-packet time within 5% from
// far-off starting points (the third parameter, the fixed latency, comes
// back with them).
func TestFitRecoversLinkAndPacket(t *testing.T) {
	f, err := os.Open("testdata/mi355x-measurements.csv")
	require.NoError(t, err)
	ms, err := ParseMeasurements(f)
	f.Close()
	require.NoError(t, err)
	require.Len(t, ms, 10)
	for i, d := range DocumentedMeasurements(Documented()) {
		assert.InEpsilon(t, d.TimeUs, ms[i].TimeUs, 1e-3, "the file holds the documented rows of the fit's shape: %s", d.Name)
		d.TimeUs = ms[i].TimeUs
		assert.Equal(t, d, ms[i])
	}
	want := model.MI355X()
	for _, start := range []struct{ link, packet, visible float64 }{
		{20, 0.2, 3}, {200, 8, 0.1},
	} {
		p := model.MI355X()
		model.LinkGBps.Set(p, start.link)
		model.PacketUs.Set(p, start.packet)
		model.VisibleUs.Set(p, start.visible)
		res, err := Fit(p, DefaultFitParams, ms, 1)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, WriteResiduals(&buf, res.Residuals))
		t.Logf("from %+v: link %.2f GB/s, packet %.3f µs, visible %.3f µs in %d row runs\n%s",
			start, model.LinkGBps.Of(res.Model), model.PacketUs.Of(res.Model), model.VisibleUs.Of(res.Model), res.Evals, buf.String())
		assert.InEpsilon(t, model.LinkGBps.Of(want), model.LinkGBps.Of(res.Model), 0.05, "link from %+v", start)
		assert.InEpsilon(t, model.PacketUs.Of(want), model.PacketUs.Of(res.Model), 0.05, "packet from %+v", start)
		for _, r := range res.Residuals {
			assert.Less(t, math.Abs(r.Error), 0.06, "%+v", r)
		}
		assert.Equal(t, start.link, model.LinkGBps.Of(p), "the base model is not changed")
	}
}

// Fit on half of the documented measurements, predict the other half.
// Every other single-put size trains, with the scatter row: the only row
// with several ops on one queue, so the only one that shows the per-packet
// gap. The other sizes and the two-queue split row are predicted.
func TestFitHalfPredictHalf(t *testing.T) {
	ms := DocumentedMeasurements(Documented())
	var train, test []Measurement
	for i, m := range ms {
		if i%2 == 0 && m.Ops == 1 || m.Ops == 64 {
			train = append(train, m)
		} else {
			test = append(test, m)
		}
	}
	require.Len(t, train, 5)
	start := model.MI355X()
	model.LinkGBps.Set(start, 30)
	model.PacketUs.Set(start, 0.5)
	model.VisibleUs.Set(start, 3)
	res, err := Fit(start, DefaultFitParams, train, 1)
	require.NoError(t, err)
	pred, err := Residuals(res.Model, test, 1)
	require.NoError(t, err)
	for _, r := range append(res.Residuals, pred...) {
		assert.Less(t, math.Abs(r.Error), 0.06, "%+v", r)
	}
}

func TestFitErrors(t *testing.T) {
	ms := []Measurement{{Name: "a", Dst: 1, Ops: 1, Bytes: 4096, Queues: 1, TimeUs: 3}}
	_, err := Fit(model.MI355X(), []string{"warp_drive"}, ms, 1)
	assert.ErrorContains(t, err, `unknown parameter "warp_drive"`)
	zero := model.MI355X()
	model.JitterFrac.Set(zero, 0)
	_, err = Fit(zero, []string{"jitter"}, ms, 1)
	assert.ErrorContains(t, err, "positive start")
	_, err = Fit(model.MI355X(), DefaultFitParams, nil, 1)
	assert.ErrorContains(t, err, "no measurements")
	_, err = Fit(model.MI355X(), nil, ms, 1)
	assert.ErrorContains(t, err, "no parameters to fit")
	_, err = Fit(model.MI355X(), []string{}, ms, 1)
	assert.ErrorContains(t, err, "no parameters to fit")
	_, err = Fit(model.MI355X(), []string{"link_gbps", "packet_us", "link_gbps"}, ms, 1)
	assert.ErrorContains(t, err, `parameter "link_gbps" named twice`)

	// A row no candidate can match (its relative error is infinite for
	// all) is an error, not a model at wherever the search stopped.
	tiny := []Measurement{{Name: "tiny", Dst: 1, Ops: 1, Bytes: 4096, Queues: 1, TimeUs: 1e-300}}
	_, err = Fit(model.MI355X(), []string{"link_gbps"}, tiny, 1)
	assert.ErrorContains(t, err, "gave a finite error")
}

func TestFitProgress(t *testing.T) {
	ms := []Measurement{{Name: "a", Dst: 1, Ops: 1, Bytes: 65536, Queues: 1, TimeUs: 3.85}}
	var calls, last, budget int
	res, err := Fit(model.MI355X(), []string{"link_gbps"}, ms, 1, WithProgress(func(evals, max int) {
		calls++
		assert.Greater(t, evals, last, "row runs only grow")
		last, budget = evals, max
	}))
	require.NoError(t, err)
	assert.Equal(t, res.Evals, last, "the last call counts every row run")
	assert.GreaterOrEqual(t, budget, last)
	assert.Greater(t, calls, 2)
}

func TestParseMeasurements(t *testing.T) {
	good := "ops,bytes,queues,time_us\n# a comment\n1,65536,1,3.85\n2,4194304,2,147.2\n"
	ms, err := ParseMeasurements(strings.NewReader(good))
	require.NoError(t, err)
	assert.Equal(t, []Measurement{{Name: "line3", Src: 0, Dst: 1, Ops: 1, Bytes: 65536, Queues: 1, TimeUs: 3.85},
		{Name: "line4", Src: 0, Dst: 1, Ops: 2, Bytes: 4194304, Queues: 2, TimeUs: 147.2}}, ms, "the first format: GPU 0 to GPU 1")
	v2 := headerV2 + "\nbw.64k,0,1,1,65536,1,3.85\nlocal,3,3,4,4096,2,9.5\n"
	ms, err = ParseMeasurements(strings.NewReader(v2))
	require.NoError(t, err)
	assert.Equal(t, []Measurement{{Name: "bw.64k", Src: 0, Dst: 1, Ops: 1, Bytes: 65536, Queues: 1, TimeUs: 3.85},
		{Name: "local", Src: 3, Dst: 3, Ops: 4, Bytes: 4096, Queues: 2, TimeUs: 9.5}}, ms)
	hostRows := headerV2 + "\nd2h,0,host,1,65536,1,4.2\nh2d,host,5,1,4096,1,3\n"
	ms, err = ParseMeasurements(strings.NewReader(hostRows))
	require.NoError(t, err)
	assert.Equal(t, []Measurement{{Name: "d2h", Src: 0, Dst: model.Host, Ops: 1, Bytes: 65536, Queues: 1, TimeUs: 4.2},
		{Name: "h2d", Src: model.Host, Dst: 5, Ops: 1, Bytes: 4096, Queues: 1, TimeUs: 3}}, ms, "host at one end: the host path")
	assert.Equal(t, []string{"host", "host"}, []string{ms[0].Path(), ms[1].Path()})
	assert.Equal(t, []int{0, 5}, []int{ms[0].GPU(), ms[1].GPU()}, "the GPU end runs the copies")
	var out strings.Builder
	require.NoError(t, WriteMeasurements(&out, ms))
	back, err := ParseMeasurements(strings.NewReader(out.String()))
	require.NoError(t, err)
	assert.Equal(t, ms, back, "host ends written back as host")
	h1 := "ops,bytes,queues,time_us\n"
	h2 := headerV2 + "\n"
	for _, tc := range []struct{ in, want string }{
		{"", "header"},
		{"ops,bytes,time_us,queues\n1,2,3,4\n", "header"},
		{h1, "no rows"},
		{h1 + "x,1,1,1\n", `line 2: ops "x"`},
		{h1 + "1,0,1,1\n", `line 2: bytes "0"`},
		{h1 + "1,1,9,1\n", `line 2: queues "9"`},
		{h1 + "1,1,1,-2\n", `line 2: time_us "-2"`},
		{h1 + "1,1,1,NaN\n", `time_us "NaN"`},
		{h1 + "1,1,1,1e-300\n", `time_us "1e-300": need a number from 1e-06 (1 ps`},
		{h1 + "1,1,1,1e12\n", `time_us "1e12"`},
		{h1 + strings.Repeat("1,64,1,3\n", MaxFitRows+1), "more than 256 rows"},
		{h1 + "4096,1073741824,1,1\n", "ops × bytes = 4398046511104 exceeds the 1099511627776 (1 TiB) one row may move"},
		{h1 + "1,17179869185,1,1\n", `bytes "17179869185": need an integer 1..17179869184 (16 GiB)`},
		{h2 + strings.Repeat("n", 65) + ",0,1,1,1,1,1\n", "is 65 bytes: at most 64"},
		{h2 + "\"a\nb\",9,1,1,1,1,1\n", `("a\nb"): src "9"`},
		{h1 + "1,1,1\n", "wrong number of fields"},
		{h2 + "a,0,1,1,1,1\n", "wrong number of fields"},
		{h2 + ",0,1,1,1,1,1\n", "name is empty"},
		{h2 + "a,8,1,1,1,1,1\n", `(a): src "8": need a GPU 0..7`},
		{h2 + "a,0,-1,1,1,1,1\n", `(a): dst "-1"`},
		{h2 + "a,host,host,1,1,1,1\n", "src and dst are both host"},
		{h2 + "a,Host,1,1,1,1,1\n", `src "Host": need a GPU 0..7 or host`},
		{h2 + "a,0,1,0,1,1,1\n", `ops "0"`},
	} {
		_, err := ParseMeasurements(strings.NewReader(tc.in))
		assert.ErrorContains(t, err, tc.want, "%q", tc.in)
	}
}

func TestParseTableErrors(t *testing.T) {
	hdr := "id,scenario,params,metric,value,unit,note\n"
	for _, tc := range []struct{ in, want string }{
		{"a,b,c,d,e,f,g\n", "header must be"},
		{hdr + "x,s,,m,abc,u,\n", `value "abc"`},
		{hdr + "x,s,bytes,m,1,u,\n", `params entry "bytes"`},
		{hdr + "x,s,,m,1,u,\nx,s,,m,1,u,\n", `id "x" is empty or repeated`},
	} {
		_, err := ParseTable(strings.NewReader(tc.in))
		assert.ErrorContains(t, err, tc.want, "%q", tc.in)
	}
	_, _, err := Measure(model.MI355X(), Row{ID: "nosuch.row"}, 1)
	assert.ErrorContains(t, err, "no scenario for row nosuch.row")
}

// The picture: documented points against the emulated curve. The test
// writes it where a developer can look at it with -args -plot DIR... here
// into the test's temp dir, and checks it is a real SVG/PNG with both
// series.
func TestPlot(t *testing.T) {
	c, err := BandwidthCurve(model.MI355X(), 1)
	require.NoError(t, err)
	require.Len(t, c.Bytes, 49)
	for i := 1; i < len(c.GBps); i++ {
		assert.Greater(t, c.GBps[i], c.GBps[i-1], "bandwidth grows with bytes per op")
	}
	assert.Less(t, c.GBps[len(c.GBps)-1], model.LinkGBps.Of(model.MI355X()), "and stays under the link rate")
	dir := t.TempDir()
	if d := os.Getenv("EMUD_PLOT_DIR"); d != "" {
		dir = d
	}
	for _, f := range []string{"svg", "png"} {
		var buf bytes.Buffer
		require.NoError(t, WritePlot(&buf, f, "mi355x", Documented(), c))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bandwidth."+f), buf.Bytes(), 0o644))
		if f == "svg" {
			s := buf.String()
			assert.Contains(t, s, "<svg")
			assert.Contains(t, s, "documented (seed, MI355X)")
			assert.Contains(t, s, "emud (emulated curve)")
		} else {
			assert.Equal(t, "\x89PNG", buf.String()[:4])
		}
	}
	assert.ErrorContains(t, WritePlot(&bytes.Buffer{}, "gif", "m", Documented(), c), `plot format "gif"`)
	assert.ErrorContains(t, WritePlot(&bytes.Buffer{}, "svg", "m", nil, c), "no single-op bw.* bandwidth rows")
}

func FuzzParseMeasurements(f *testing.F) {
	f.Add("ops,bytes,queues,time_us\n1,65536,1,3.85\n")
	f.Add("ops,bytes,queues,time_us\n64,4096,1,138\n2,4194304,2,147\n")
	f.Add(headerV2 + "\nbw.64k,0,1,1,65536,1,3.85\nlocal,3,3,4,4096,2,9.5\n")
	f.Fuzz(func(t *testing.T, in string) {
		ms, err := ParseMeasurements(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.Ops < 1 || m.Queues < 1 || m.Queues > benchQueues || m.Bytes < 1 || !(m.TimeUs > 0) || uint64(m.Ops)*m.Bytes > maxFitTotal ||
				m.Src < 0 || m.Src >= maxFitGPUs || m.Dst < 0 || m.Dst >= maxFitGPUs || m.Name == "" {
				t.Fatalf("accepted an out-of-range row %+v", m)
			}
		}
	})
}

func FuzzParseTable(f *testing.F) {
	f.Add(documentedCSV)
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ParseTable(strings.NewReader(in))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, r := range rows {
			if r.ID == "" || seen[r.ID] {
				t.Fatalf("bad row accepted: %+v", r)
			}
			seen[r.ID] = true
		}
	})
}
