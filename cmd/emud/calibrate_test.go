package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/scenario"
)

const tableHeader = "id,scenario,params,metric,value,unit,note\n"

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestCalibrateCommand(t *testing.T) {
	good := writeFile(t, "t.csv", tableHeader+
		"bw.64k,one put,bytes=65536,bandwidth,17,GB/s,\n"+
		"chain.8warps,8 warps,warps=8,time_ratio,3.2,ratio,\n")
	plot := filepath.Join(t.TempDir(), "bw.svg")
	out, _, status := execute(t, "calibrate", "--table", good, "--plot", plot)
	require.Equal(t, scenario.ExitOK, status, out)
	ls := lines(out)
	assert.Regexp(t, `(?m)^max \|error\| \d+\.\d% over 2 rows \(median \d+\.\d%\)$`, out)
	assert.Regexp(t, `^cross-validation \(all rows\): max \|error\| \d+\.\d% \(median \d+\.\d%\) over 2 rows$`, ls[len(ls)-1])
	assert.Regexp(t, `^cross-validation \(identified groups\): max \|error\| \d+\.\d% \(median \d+\.\d%\) over \d+ rows$`, ls[len(ls)-2])
	assert.Contains(t, out, "fitted parameters: 10\n")
	assert.Contains(t, out, "bw.64k")
	svg, err := os.ReadFile(plot)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")

	// A documented value the model cannot meet: exit 4, the row named.
	bad := writeFile(t, "bad.csv", tableHeader+"bw.64k,one put,bytes=65536,bandwidth,30,GB/s,\n")
	out, errOut, status := execute(t, "calibrate", "--table", bad, "--plot", "")
	assert.Equal(t, scenario.ExitCalibration, status)
	assert.Contains(t, out, "FAIL")
	assert.Contains(t, errOut, "rows outside tolerance: bw.64k")

	out, _, status = execute(t, "calibrate", "--table", good, "--plot", "", "--json")
	require.Equal(t, scenario.ExitOK, status)
	assert.Contains(t, out, `"model": "mi355x"`)
	assert.Contains(t, out, `"cross_validation"`)
	assert.Contains(t, out, `"fitted_parameters": 10`)

	// Without --plot, no file appears in the working directory.
	t.Chdir(t.TempDir())
	_, _, status = execute(t, "calibrate", "--table", good)
	require.Equal(t, scenario.ExitOK, status)
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	assert.Empty(t, entries, "calibrate wrote into the working directory")

	assertFlagErrors(t, []string{"calibrate"}, []flagError{
		{[]string{"--model", "tpu"}, `invalid --model: unknown model "tpu"`},
		{[]string{"--plot", "x.gif"}, `invalid --plot "x.gif"`},
		{[]string{"--table", "/nonexistent.csv"}, "invalid --table"},
		{[]string{"--table", writeFile(t, "h.csv", "a,b\n")}, "invalid --table"},
	})
}

func TestFitCommand(t *testing.T) {
	in := writeFile(t, "m.csv", "ops,bytes,queues,time_us\n8,4096,1,18.0\n1,65536,1,3.855\n1,262144,1,7.282\n1,131072,1,5.041\n")
	modelOut := filepath.Join(t.TempDir(), "fitted.json")
	out, errOut, status := execute(t, "fit", in, "--out", modelOut, "--holdout")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "fitted 3 parameters on 2 rows")
	assert.Contains(t, out, "predictions (held-out rows):")
	m, err := model.Load(modelOut)
	require.NoError(t, err, "the written model file loads")
	assert.Equal(t, "mi355x+fit", m.Name())

	// A parameter no row constrains is reported as such.
	out, _, status = execute(t, "fit", in, "--out", "", "--params", "link_gbps,local_gbps")
	require.Equal(t, scenario.ExitOK, status)
	assert.Contains(t, out, "warning: local_gbps is not identified")
	assert.NotContains(t, out, "warning: link_gbps")

	// --progress draws the bar on stderr, candidates counted.
	_, errOut, status = execute(t, "fit", in, "--out", "", "--params", "link_gbps", "--progress")
	require.Equal(t, scenario.ExitOK, status)
	assert.Contains(t, errOut, "\rfit "+in)
	assert.Regexp(t, `\d+/\d+ row runs`, errOut)

	assertFlagErrors(t, nil, []flagError{
		{[]string{"fit", "/nonexistent.csv"}, "no such file"},
		{[]string{"fit", writeFile(t, "x.csv", "ops,bytes\n")}, "header must be name,src,dst,ops,bytes,queues,time_us"},
		{[]string{"fit", writeFile(t, "y.csv", "ops,bytes,queues,time_us\n1,2,3\n")}, "wrong number of fields"},
		{[]string{"fit", in, "--params", "warp_drive"}, `unknown parameter "warp_drive"`},
		{[]string{"fit", in, "--model", "tpu"}, `invalid --model: unknown model "tpu"`},
		{[]string{"fit"}, "accepts 1 arg"},
		{[]string{"fit", in, "--params", ""}, `invalid --params "": name at least one parameter`},
		{[]string{"fit", in, "--params", "link_gbps,link_gbps"}, "named twice"},
		{[]string{"fit", writeFile(t, "tiny.csv", "ops,bytes,queues,time_us\n1,4096,1,1e-300\n")}, `time_us "1e-300"`},
	})
}

func TestRunCftAllReduce(t *testing.T) {
	out, errOut, status := execute(t, "run", "cft-allreduce", "--ranks", "4", "--bytes", "256", "--seed", "3", "--debug")
	require.Equal(t, scenario.ExitOK, status, errOut)
	rows := rankRows(out)
	require.Len(t, rows, 4)
	for _, r := range rows {
		assert.Equal(t, "256", r[3], "each rank receives its whole reduced buffer")
	}
	d1 := seedAndDigest(t, out, 3)
	again, _, _ := execute(t, "run", "cft-allreduce", "--ranks", "4", "--bytes", "256", "--seed", "3", "--debug")
	assert.Equal(t, d1, seedAndDigest(t, again, 3), "same seed, same digest")
	rep, errOut, status := execute(t, "replay", "cft-allreduce", "--ranks", "4", "--bytes", "256", "--seed", "3", "--debug", "--expect-digest", d1)
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Equal(t, d1, seedAndDigest(t, rep, 3), "replay reproduces the digest")
	assert.Contains(t, errOut, "trace: none (cft-allreduce has no SDMA queues)")

	assertFlagErrors(t, []string{"run", "cft-allreduce"}, []flagError{
		{[]string{"--bytes", "24"}, "multiple of 16"},
		{[]string{"--bytes", "6G"}, "at most 4GiB per rank"},
		{[]string{"--bytes", "64M", "--ranks", "72", "--mem-budget", "4G"}, "cft-allreduce needs an estimated 9.44GiB (emulated memory 9.00GiB"},
		{[]string{"--ranks", "4097"}, "need 2..4096"},
		{[]string{"--ranks", "8", "--mc-size", "3"}, "invalid --lsa-size/--cft-size/--mc-size"},
		{[]string{"--phantom", "--debug"}, "fence checker"},
		{[]string{"--bytes", "64", "--model", "mi355x"}, "fabric's own timing model"},
		{[]string{"--bytes", "64", "--trace", filepath.Join(t.TempDir(), "t.json")}, "SDMA scenarios only"},
	})
}
