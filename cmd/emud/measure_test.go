package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/scenario"
)

// calibrate --measure: the rows timed through hw/rocm over the timing
// stand-in come out as an engine-clock CSV that fit reads and fits
// exactly (the stand-in's truth is the start model here); bad flags name
// themselves; rocm without the tag says why.
func TestCalibrateMeasure(t *testing.T) {
	rows := writeFile(t, "rows.csv", "name,src,dst,ops,bytes,queues,time_us\n"+
		"peer.4K,0,1,1,4096,1,1\npeer.1M,0,1,1,1048576,1,1\nlocal.1M,0,0,1,1048576,1,1\nsplit,0,1,8,65536,4,1\n")
	csvPath := filepath.Join(t.TempDir(), "m.csv")
	_, errOut, status := execute(t, "calibrate", "--measure", "--backend", "stand-in", "--truth", "mi355x", "--rows", rows, "--reps", "2", "--out", csvPath)
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, errOut, "(median of 2 on stand-in)")
	assert.Contains(t, errOut, "fit them with: emud fit "+csvPath)
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	got, err := calibrate.ParseMeasurements(f)
	f.Close()
	require.NoError(t, err)
	require.Len(t, got, 4)
	for _, x := range got {
		assert.Equal(t, calibrate.ClockEngine, x.Clock, x.Name)
	}
	// The emulator under the same model measures the same rows alike.
	out, _, status := execute(t, "calibrate", "--measure", "--backend", "emu", "--rows", rows, "--reps", "1")
	require.Equal(t, scenario.ExitOK, status)
	emu, err := calibrate.ParseMeasurements(strings.NewReader(out))
	require.NoError(t, err)
	for i := range emu {
		assert.InDelta(t, got[i].TimeUs, emu[i].TimeUs, 0.011, got[i].Name)
	}
	out, _, status = execute(t, "fit", csvPath, "--out", filepath.Join(t.TempDir(), "fit.json"))
	require.Equal(t, scenario.ExitOK, status, out)
	assert.Regexp(t, `peer\.1M .* \+0\.0%`, out)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "stand-in"}, "--backend stand-in needs --truth"},
		{[]string{"--backend", "gpu"}, `invalid --backend "gpu"`},
		{[]string{"--backend", "emu", "--truth", "mi355x"}, "--truth is for --backend stand-in"},
		{[]string{"--backend", "stand-in", "--truth", "nope.json"}, "invalid --truth"},
		{[]string{"--backend", "emu", "--reps", "0"}, "invalid --reps 0"},
		{[]string{"--backend", "rocm"}, "--backend rocm: hw/rocm:"},
	} {
		_, errOut, status := execute(t, append([]string{"calibrate", "--measure", "--rows", rows}, tc.args...)...)
		assert.NotEqual(t, scenario.ExitOK, status, tc.args)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
}

// --format transferbench writes TransferBench's results, which fit reads
// back and fits; a burst on one queue, which TransferBench cannot state,
// is refused by name.
func TestCalibrateMeasureTransferBench(t *testing.T) {
	rows := writeFile(t, "rows.csv", "name,src,dst,ops,bytes,queues,time_us\n"+
		"peer.4K,0,1,1,4096,1,1\npeer.1M,0,1,1,1048576,1,1\nlocal.1M,0,0,1,1048576,1,1\npar,0,1,4,1048576,4,1\nd2h,0,host,1,65536,1,1\n")
	truth := writeFile(t, "truth.json", `{"name": "truth", "link_gbps": 50, "peer_copy_us": 0.5}`)
	tbPath := filepath.Join(t.TempDir(), "tb.csv")
	_, errOut, status := execute(t, "calibrate", "--measure", "--backend", "stand-in", "--truth", truth, "--rows", rows, "--reps", "1", "--format", "transferbench", "--out", tbPath)
	require.Equal(t, scenario.ExitOK, status, errOut)
	b, err := os.ReadFile(tbPath)
	require.NoError(t, err)
	assert.Contains(t, string(b), " -> D0:1 -> G1,\n", "TransferBench's transfer cells")
	assert.Equal(t, 5, strings.Count(string(b), " Executor: DMA "), "one test per row")
	got, err := calibrate.ParseMeasurements(strings.NewReader(string(b)))
	require.NoError(t, err)
	require.Len(t, got, 5)
	assert.Equal(t, []int{4, 4}, []int{got[3].Ops, got[3].Queues}, "four parallel transfers")
	out, errOut, status := execute(t, "fit", tbPath, "--params", "all", "--out", "")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Regexp(t, `(?m)^tb2\.G0-D0:1-G1 +xgmi +0 +1 +1 +1048576 +1 .* [+-]0\.\d%$`, out)

	burst := writeFile(t, "burst.csv", "name,src,dst,ops,bytes,queues,time_us\nburst,0,1,8,4096,1,1\n")
	_, errOut, status = execute(t, "calibrate", "--measure", "--backend", "emu", "--rows", burst, "--format", "transferbench")
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, "for --format transferbench: row burst: 8 copies on 1 queues is not a TransferBench test")
	_, errOut, status = execute(t, "calibrate", "--measure", "--backend", "emu", "--rows", burst, "--format", "json")
	assert.Equal(t, scenario.ExitFailed, status)
	assert.Contains(t, errOut, `invalid --format "json": need "emud" or "transferbench"`)
}
