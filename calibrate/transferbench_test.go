package calibrate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
)

var update = flag.Bool("update", false, "rewrite testdata/transferbench-*.csv and docs' sweep config")

// tbTruth is the model testdata/transferbench-synth.csv was timed under:
// MI355X with a local, peer and host copy latency, slower pulls and link
// sharing. Not a hardware measurement: no MI355X was measured for this
// repository.
func tbTruth() *model.Params {
	p := model.MI355X()
	p.Label = "tb-truth"
	model.LocalCopyUs.Set(p, 1.2)
	model.PeerCopyUs.Set(p, 0.4)
	model.HostCopyUs.Set(p, 2.5)
	model.LocalPacketUs.Set(p, 1.6)
	model.HostGBps.Set(p, 51)
	model.LinkReadGBps.Set(p, 52)
	model.LinkShare.Set(p, 0.08)
	return p
}

// The TransferBench file in testdata (TransferBench's OUTPUT_TO_CSV=1
// results of the sweep, timed under tbTruth by the emulator: `go test
// -run TestTransferBenchFile -update` rewrites it) parses into its rows,
// fits with --params all from the MI355X preset to within 1% on every row,
// and predicts every row within 2% under the fit.
func TestTransferBenchFile(t *testing.T) {
	const path = "testdata/transferbench-synth.csv"
	truth := tbTruth()
	if *update {
		var rows []Measurement
		for _, x := range TransferBenchSweep() {
			v, err := Predict(truth, x, 1)
			require.NoError(t, err)
			x.TimeUs = v
			rows = append(rows, x)
		}
		var buf bytes.Buffer
		buf.WriteString("TransferBench results as emud writes them (OUTPUT_TO_CSV=1 layout): synthesized by calibrate's\n")
		buf.WriteString("TestTransferBenchFile under its tbTruth model with the emulator, not measured on hardware\n")
		require.NoError(t, WriteTransferBench(&buf, rows))
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	ms, err := ParseMeasurements(f)
	require.NoError(t, err)
	require.Len(t, ms, len(TransferBenchSweep()))
	for i, want := range TransferBenchSweep() {
		got := ms[i]
		assert.Equal(t, []any{want.Src, want.Dst, want.Ops, want.Queues, want.Bytes, want.Pull, ClockEngine},
			[]any{got.Src, got.Dst, got.Ops, got.Queues, got.Bytes, got.Pull, got.Clock}, "row %d (%s as %s)", i, want.Name, got.Name)
	}
	assert.Equal(t, "tb1.G0-D0:1-G0", ms[0].Name, "named by test and transfer")

	id, err := Identify(model.MI355X(), ms, 1)
	require.NoError(t, err)
	for _, n := range []string{"local_packet_us", "peer_copy_us", "host_packet_us", "link_gbps", "link_read_gbps", "link_share", "local_gbps", "host_gbps"} {
		assert.Contains(t, id.Fit, n)
	}
	res, err := Fit(model.MI355X(), id.Fit, ms, 1)
	require.NoError(t, err)
	require.NoError(t, res.Check(0.01))
	for _, pa := range []model.Float{model.LinkReadGBps, model.LinkShare, model.HostGBps, model.PeerCopyUs} {
		assert.InEpsilon(t, pa.Of(truth), pa.Of(res.Model), 0.05, pa.Name)
	}
	// On the engine's clock a copy's latency and the gap after it are one
	// sum (the closing TIMESTAMP waits for both): the fit holds the
	// latency and puts the sum in the gap.
	assert.InEpsilon(t, model.LocalCopyUs.Of(truth)+model.LocalPacketUs.Of(truth), model.LocalCopyUs.Of(res.Model)+model.LocalPacketUs.Of(res.Model), 0.05)
	assert.Contains(t, id.Together, "local_copy_us")

	// Predict: the fitted model times rows it was not given (other sizes
	// and stream counts) as the truth does.
	var unseen []Measurement
	for _, x := range []Measurement{
		{Name: "local.256K", Src: 0, Dst: 0, Ops: 1, Queues: 1, Bytes: 256 << 10},
		{Name: "pull.1M", Src: 1, Dst: 0, Ops: 1, Queues: 1, Bytes: 1 << 20, Pull: true},
		{Name: "push3x.2M", Src: 0, Dst: 1, Ops: 3, Queues: 3, Bytes: 2 << 20},
		{Name: "d2h.1M", Src: 0, Dst: model.Host, Ops: 1, Queues: 1, Bytes: 1 << 20},
	} {
		x.Clock = ClockEngine
		x.TimeUs, err = Predict(truth, x, 1)
		require.NoError(t, err)
		unseen = append(unseen, x)
	}
	rs, err := Residuals(res.Model, unseen, 1)
	require.NoError(t, err)
	for _, r := range rs {
		assert.InDelta(t, 0, r.Error, 0.02, "%s: measured %.3f, predicted %.3f", r.Name, r.TimeUs, r.PredictedUs)
	}
}

// TransferBench's text tables (box-drawn, "Test N:" headers, a banner and
// environment listing around them) read as its CSV does; the executor's
// time gives a test of several transfers, the more precise of ms and GB/s
// a single one.
func TestParseTransferBenchText(t *testing.T) {
	in := "TransferBench v1.66.02 (with NIC support)\n" +
		"===============================================================\n" +
		"[Common]                              (Suppress by setting HIDE_ENV=1)\n" +
		"NUM_ITERATIONS      =           10 : Running 10 timed iteration(s)\n" +
		"Test 1:\n" +
		"│-------------------│-------------│-----------│\n" +
		"│ Executor: DMA 00  │  48.000 GB/s│   0.087 ms│      4194304 bytes │ 48.000 GB/s (sum)\n" +
		"│ Transfer 0        │  48.000 GB/s│   0.087 ms│      4194304 bytes │ G0 -> D0:1 -> G1\n" +
		"│ Aggregate (CPU)   │  47.000 GB/s│   0.089 ms│      4194304 bytes │ Overhead 0.002 ms\n" +
		"Test 7:\n" +
		"│ Executor: DMA 01  │  90.000 GB/s│   0.186 ms│     16777216 bytes │ 90.000 GB/s (sum)\n" +
		"│ Transfer 0        │  45.000 GB/s│   0.186 ms│      8388608 bytes │ G0 -> D1:1 -> G1\n" +
		"│ Transfer 1        │  45.000 GB/s│   0.186 ms│      8388608 bytes │ G0 -> D1:1 -> G1\n" +
		"│ Aggregate (CPU)   │  89.000 GB/s│   0.190 ms│     16777216 bytes │ Overhead 0.004 ms\n" +
		"Test 8:\n" +
		"│ Executor: DMA 00  │   0.021 GB/s│   0.003 ms│           64 bytes │ 0.021 GB/s (sum)\n" +
		"│ Transfer 0        │   0.021 GB/s│   0.003 ms│           64 bytes │ C0 -> D0.1:1 -> G0\n" +
		"│ Aggregate (CPU)   │   0.020 GB/s│   0.003 ms│           64 bytes │ Overhead 0.000 ms\n"
	ms, err := ParseMeasurements(strings.NewReader(in))
	require.NoError(t, err)
	require.Len(t, ms, 3)
	assert.Equal(t, Measurement{Name: "tb1.G0-D0:1-G1", Src: 0, Dst: 1, Ops: 1, Queues: 1, Bytes: 4 << 20, TimeUs: float64(4<<20) / 48e3, Clock: ClockEngine}, ms[0],
		"48.000 GB/s has more digits than 0.087 ms")
	assert.Equal(t, "tb7.G0-D1:1-G1", ms[1].Name)
	assert.True(t, ms[1].Pull, "GPU 1's engine reads GPU 0: a pull")
	assert.Equal(t, []int{2, 2}, []int{ms[1].Ops, ms[1].Queues}, "two transfers of one stream: two copies on two queues")
	assert.InEpsilon(t, float64(16<<20)/90e3, ms[1].TimeUs, 1e-9, "timed by the executor")
	assert.Equal(t, model.Host, ms[2].Src, "C0 is host memory")
	assert.InEpsilon(t, 64/0.021/1e3, ms[2].TimeUs, 1e-9, "0.021 GB/s (±2.4%) is finer than 0.003 ms (±17%)")
}

// Bad TransferBench input is refused with the line, the test and the rule.
func TestParseTransferBenchErrors(t *testing.T) {
	ex := " Executor: DMA 00 , 48.000 GB/s , 0.087 ms , 4194304 bytes , 48 GB/s (sum),\n"
	agg := " Aggregate (CPU) , 47.000 GB/s , 0.089 ms , 4194304 bytes , Overhead 0.002 ms,\n"
	tr := func(spec string) string {
		return "Transfer 0 , 48.000 GB/s , 0.087 ms , 4194304 bytes , " + spec + ",\n"
	}
	for _, tc := range []struct{ in, want string }{
		{" Executor: GPU 00 , 1.000 GB/s , 1.000 ms , 64 bytes , x,\n" + tr("G0 -> G0:4 -> G1") + agg, "line 1 (test 1): executor \"GPU 00\" is not a single-node DMA (copy-engine) executor"},
		{ex + tr("G0 -> G0:4 -> G1") + agg, "line 2 (test 1): transfer \"G0 -> G0:4 -> G1\": executor G0 is not a DMA (copy-engine) executor"},
		{ex + tr("G0G1 -> D0:1 -> G2") + agg, "want one memory (several make a reduction or broadcast"},
		{ex + tr("N0 -> D0:1 -> G2") + agg, "memory type N is not a GPU's"},
		{ex + tr("G1 -> D0:1 -> G2") + agg, "line 1 (test 1): transfer \"G1 -> D0:1 -> G2\": the executor D0 is neither end's GPU"},
		{ex + tr("C0 -> D0:1 -> C1") + agg, "copies host memory to host memory"},
		{ex + tr("G0 -> D0:1 -> G9") + agg, "\"G9\": GPUs 0..7"},
		{ex + tr("G0 -> D0:0 -> G1") + agg, "\"0\" streams: want 1..8"},
		{ex + tr("G0 -> D0:1 -> G1"), "the test's table has no Aggregate line: a cut-off file?"},
		{ex + "Transfer 0 , fast GB/s , 0.087 ms , 4194304 bytes , G0 -> D0:1 -> G1,\n" + agg, "bandwidth \"fast\": want a number of GB/s"},
		{ex + "Transfer 0 , 48.000 GB/s , 0.087 ms , 4194304 bytes , G0 -> D0:1 -> G1,\n" + "Transfer 1 , 48.000 GB/s , 0.087 ms , 65536 bytes , G0 -> D0:1 -> G1,\n" + agg, "differ: emud fits a test whose transfers copy one shape"},
		{ex + ex + tr("G0 -> D0:1 -> G1") + agg, "2 executors"},
		{ex + "Transfer 0 , 48.000 GB/s , 0.000 ms , 4194304 bytes , G0 -> D0:1 -> G1,\n" + agg, ""},
	} {
		_, err := ParseMeasurements(strings.NewReader(tc.in))
		if tc.want == "" {
			assert.NoError(t, err, "a time of 0.000 ms with a bandwidth is read from the bandwidth")
			continue
		}
		assert.ErrorContains(t, err, tc.want, tc.in)
	}
	_, err := ParseMeasurements(strings.NewReader(strings.Repeat(ex+tr("G0 -> D0:1 -> G1")+agg, MaxFitRows+1)))
	assert.ErrorContains(t, err, "more than 256 tests")
}

// The rows emud writes in TransferBench's format read back as they were;
// a burst on one queue, which TransferBench cannot state, is refused.
func TestTransferBenchRoundTrip(t *testing.T) {
	rows := TransferBenchSweep()
	for i := range rows {
		rows[i].TimeUs = 1.5 + float64(i)*7.25
	}
	var buf bytes.Buffer
	require.NoError(t, WriteTransferBench(&buf, rows))
	back, err := ParseMeasurements(&buf)
	require.NoError(t, err)
	require.Len(t, back, len(rows))
	for i := range rows {
		assert.InEpsilon(t, rows[i].TimeUs, back[i].TimeUs, 1e-5, rows[i].Name)
		assert.Equal(t, rows[i].Pull, back[i].Pull, rows[i].Name)
	}
	err = WriteTransferBench(&buf, []Measurement{{Name: "burst", Ops: 8, Queues: 1, Bytes: 64, Dst: 1}})
	assert.ErrorContains(t, err, "row burst: 8 copies on 1 queues is not a TransferBench test")
}

// docs/transferbench-sweep.cfg is the sweep as a TransferBench
// configuration (WriteTransferBenchConfig): what a user runs on an MI355X.
func TestTransferBenchConfigDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "transferbench-sweep.cfg")
	var buf bytes.Buffer
	require.NoError(t, WriteTransferBenchConfig(&buf, TransferBenchSweep()))
	if *update {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String(), "go test ./calibrate -run TestTransferBenchConfigDoc -update rewrites it")
	assert.Contains(t, buf.String(), "\n# pull.64\n-1 (G1->D0->G0 1 64)\n")
	assert.Contains(t, buf.String(), "\n# push2x.4M\n-2 (G0->D0->G1 1 4194304) (G0->D0->G1 1 4194304)\n")
}

func FuzzParseTransferBench(f *testing.F) {
	f.Add(" Executor: DMA 00 , 48.000 GB/s , 0.087 ms , 4194304 bytes , 48 GB/s (sum),\nTransfer 0 , 48.000 GB/s , 0.087 ms , 4194304 bytes , G0 -> D0:1 -> G1,\n Aggregate (CPU) , 47.000 GB/s , 0.089 ms , 4194304 bytes , Overhead 0.002 ms,\n")
	f.Add("Test 2:\n│ Executor: DMA 01 │ 1.0 GB/s │ 1.0 ms │ 64 bytes │ x\n│ Transfer 0 │ 1.0 GB/s │ 1.0 ms │ 64 bytes │ C0 -> D1.2:1 -> G1\n│ Aggregate (CPU) │ 1 GB/s │ 1 ms │ 64 bytes │ Overhead 0 ms\n")
	f.Add(" Executor: DMA 00 , 1 GB/s , 1 ms , 18446744073709551615 bytes , x,\nTransfer 0 , 1 GB/s , 1 ms , 18446744073709551615 bytes , G0 -> D0:1 -> G1,\n Aggregate,\n")
	f.Fuzz(func(t *testing.T, in string) {
		ms, err := ParseTransferBench(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.Ops < 1 || m.Queues != m.Ops || m.Queues > benchQueues || m.Bytes < 1 || m.Bytes > maxFitBytes || !(m.TimeUs >= minFitTimeUs) ||
				uint64(m.Ops)*m.Bytes > maxFitTotal || !validEnd(m.Src) || !validEnd(m.Dst) || m.Name == "" || len(m.Name) > maxNameBytes ||
				m.Clock != ClockEngine || checkMeasureRow(m) != nil {
				t.Fatalf("accepted an out-of-range row %+v", m)
			}
		}
	})
}
