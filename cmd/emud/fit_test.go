package main

import (
	"encoding/csv"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const v2Rows = "name,src,dst,ops,bytes,queues,time_us\n" +
	"# remote copies from GPU 0 to GPU 1, a local copy on GPU 2, a copy from GPU 3 to GPU 2\n" +
	"small,0,1,8,4096,1,18.0\n" +
	"bw.64k,0,1,1,65536,1,3.855\n" +
	"bw.256k,0,1,1,262144,1,7.282\n" +
	"local,2,2,4,1048576,2,40\n" +
	"back,3,2,1,131072,1,5.041\n"

func TestFitPredict(t *testing.T) {
	in := writeFile(t, "v2.csv", v2Rows)
	out, errOut, status := execute(t, "fit", "--predict", "mi355x", in)
	require.Equal(t, scenario.ExitOK, status, errOut)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err, out)
	require.Len(t, recs, 6)
	assert.Equal(t, []string{"name", "src", "dst", "ops", "bytes", "queues", "time_us", "predicted_us", "error_pct"}, recs[0])
	assert.Equal(t, []string{"local", "2", "2", "4", "1048576", "2", "40"}, recs[4][:7], "the input columns come back")
	for _, r := range recs[1:] {
		assert.NotEqual(t, "0.000", r[7], "every row is predicted: %v", r)
	}
	// The first format is read too, GPU 0 to GPU 1.
	old := writeFile(t, "v1.csv", "ops,bytes,queues,time_us\n1,65536,1,3.855\n")
	out, _, status = execute(t, "fit", "--predict", "mi355x", old)
	require.Equal(t, scenario.ExitOK, status)
	assert.Contains(t, out, "line2,0,1,1,65536,1,3.855,")

	_, errOut, status = execute(t, "fit", "--predict", "tpu", in)
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, `invalid --predict: unknown model "tpu"`)
}

func TestFitAllParams(t *testing.T) {
	in := writeFile(t, "v2.csv", v2Rows)
	out, errOut, status := execute(t, "fit", in, "--out", "", "--params", "all")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "--params all: these rows identify ")
	ident := strings.SplitN(strings.SplitN(out, "these rows identify ", 2)[1], "\n", 2)[0]
	for _, p := range []string{"link_gbps", "packet_us", "local_gbps", "peer_copy_us"} {
		assert.Contains(t, ident, p, "a copy stream identifies %s", p)
	}
	for _, p := range []string{"bcast_link_gbps", "host_store_us", "issue_queue_cycles", "visible_us"} {
		assert.NotContains(t, ident, p, "no copy stream moves %s apart from the others", p)
	}
	// Every row has one doorbell and one quiet: they move the rows only
	// as the peer copy's latency does, so they keep the preset's values,
	// and the one local row cannot tell its rate from its latency.
	assert.Regexp(t, `left at mi355x's values \(the rows see them only together with fitted ones\): .*visible_us \(with [a-z_ +]*peer_copy_us`, out)
	assert.Regexp(t, `local_copy_us \(with local_gbps\)`, out)
	assert.Contains(t, out, "left at mi355x's values (no row moves under ±10% or a step at its scale): ")
	assert.Contains(t, out, "residuals (fitted rows):")

	// The engine count can be fitted like any parameter: two queues toward
	// one peer run on one engine or two.
	eng := writeFile(t, "eng.csv", "name,src,dst,ops,bytes,queues,time_us\nsplit,0,1,16,4096,2,35\nsolo,0,1,16,4096,1,34\n")
	out, errOut, status = execute(t, "fit", eng, "--out", "", "--params", "engines_per_link")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "engines_per_link")
	assert.NotContains(t, out, "warning: engines_per_link")
}

// A fit that fails (a row at 1e9 µs, or at 1e-6 µs) exits 4 with the
// reason and writes no model; --write-anyway writes it; --predict ends
// with the summary line on stderr.
func TestFitFailsLoudly(t *testing.T) {
	for _, row := range []string{"far,0,1,1,131072,1,1e9\n", "near,0,1,1,131072,1,1e-6\n"} {
		in := writeFile(t, "bad.csv", "name,src,dst,ops,bytes,queues,time_us\na,0,1,1,65536,1,3.855\nb,0,1,1,262144,1,7.282\n"+row)
		modelOut := filepath.Join(t.TempDir(), "m.json")
		out, errOut, status := execute(t, "fit", in, "--out", modelOut)
		assert.Equal(t, scenario.ExitCalibration, status, out)
		assert.Contains(t, errOut, "fit failed: row "+strings.SplitN(row, ",", 2)[0]+" is still")
		assert.Contains(t, errOut, "no model written (--write-anyway writes it)")
		assert.Contains(t, out, "rows beyond ±25% and the parameters that move them (from the fitted model):\nrow ")
		assert.Regexp(t, `(?m)^row `+strings.SplitN(row, ",", 2)[0]+` \([+-]\d+\.\d%\): [a-z_]+ [+-]`, out, "it says what could move the row")
		assert.NoFileExists(t, modelOut)
		out, _, status = execute(t, "fit", in, "--out", modelOut, "--write-anyway")
		assert.Equal(t, scenario.ExitOK, status)
		assert.Contains(t, out, "warning: fit failed: ")
		assert.FileExists(t, modelOut)
	}
	in := writeFile(t, "v2.csv", v2Rows)
	out, errOut, status := execute(t, "fit", "--predict", "mi355x", in)
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Regexp(t, `^predicted 5 rows: \d within 15% \(max \d+\.\d%, median \d+\.\d%\)\n$`, errOut)
	assert.NotContains(t, out, "predicted 5 rows", "stdout stays CSV")
	out, errOut, status = execute(t, "fit", in, "--out", "", "--params", "link_gbps,packet_us,visible_us,local_gbps")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Regexp(t, `(?m)^local +local +2 +2 `, out, "the residual table names the path")
	assert.Regexp(t, `(?m)^back +xgmi +3 +2 `, out)
}

// Host rows (host as src or dst) take the host path: --params all fits
// its fixed cost and rate, the residual table names it, --predict writes
// host back.
func TestFitHostRows(t *testing.T) {
	in := writeFile(t, "host.csv", "name,src,dst,ops,bytes,queues,time_us\n"+
		"d2h.64,0,host,1,64,1,4.1\nd2h.burst,0,host,16,64,1,40\nd2h.8m,0,host,1,8388608,1,190\nh2d.1m,host,0,4,1048576,1,100\n"+
		"peer.64,0,1,1,64,1,3.2\npeer.8m,0,1,1,8388608,1,140\n")
	out, errOut, status := execute(t, "fit", in, "--out", "", "--params", "all")
	require.Equal(t, scenario.ExitOK, status, errOut)
	ident := strings.SplitN(strings.SplitN(out, "these rows identify ", 2)[1], "\n", 2)[0]
	assert.Contains(t, ident, "host_packet_us")
	assert.Contains(t, ident, "host_gbps")
	assert.Regexp(t, `(?m)^d2h\.8m +host +0 +host `, out, "the residual table names the host path")
	assert.Regexp(t, `(?m)^h2d\.1m +host +host +0 `, out)
	out, errOut, status = execute(t, "fit", "--predict", "mi355x", in)
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "\nh2d.1m,host,0,4,1048576,1,100,")
}

// emud fit --params all on kernel-clock rows of every path (timed here by
// --predict under a truth with distinct local, peer and host copy
// latencies, which the preset has at 0) fits each latency, and prints
// them within 5% of the truth.
func TestFitAllFindsPathLatencies(t *testing.T) {
	truth := writeFile(t, "truth.json", `{"name": "truth", "local_copy_us": 1.9, "peer_copy_us": 0.7, "host_copy_us": 3.4}`)
	shapes := writeFile(t, "shapes.csv", "name,src,dst,ops,bytes,queues,time_us\n"+
		"l.64,0,0,1,64,1,1\nl.64k,0,0,1,65536,1,1\nl.b8,0,0,8,4096,1,1\nl.4m,0,0,1,4194304,1,1\n"+
		"p.64,0,1,1,64,1,1\np.64k,0,1,1,65536,1,1\np.b8,0,1,8,4096,1,1\np.4m,0,1,1,4194304,1,1\n"+
		"h.64,0,host,1,64,1,1\nh.b8,0,host,8,4096,1,1\nh.4m,host,0,1,4194304,1,1\nh.64k,0,host,1,65536,1,1\n")
	pred, errOut, status := execute(t, "fit", "--predict", truth, shapes)
	require.Equal(t, scenario.ExitOK, status, errOut)
	recs, err := csv.NewReader(strings.NewReader(pred)).ReadAll()
	require.NoError(t, err)
	var rows strings.Builder
	rows.WriteString("name,src,dst,ops,bytes,queues,time_us\n")
	for _, r := range recs[1:] {
		rows.WriteString(strings.Join(append(r[:6], r[7]), ",") + "\n") // time_us: the truth's prediction
	}
	in := writeFile(t, "rows.csv", rows.String())
	out, errOut, status := execute(t, "fit", in, "--params", "all", "--out", "")
	require.Equal(t, scenario.ExitOK, status, errOut)
	ident := strings.SplitN(strings.SplitN(out, "these rows identify ", 2)[1], "\n", 2)[0]
	for _, tc := range []struct {
		name string
		want float64
	}{{"local_copy_us", 1.9}, {"peer_copy_us", 0.7}, {"host_copy_us", 3.4}} {
		assert.Contains(t, ident, tc.name)
		m := regexp.MustCompile(`(?m)^  ` + tc.name + ` +([0-9.e+-]+)  \(was 0\)$`).FindStringSubmatch(out)
		require.NotNil(t, m, "%s is fitted from 0:\n%s", tc.name, out)
		got, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		assert.InEpsilon(t, tc.want, got, 0.05, tc.name)
	}
}
