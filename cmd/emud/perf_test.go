package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// perfLines returns the data lines of a perf table, split in fields.
func perfLines(out string) [][]string {
	var rows [][]string
	for _, l := range lines(out) {
		if f := strings.Fields(l); len(f) >= 8 && !strings.HasPrefix(l, "#") {
			rows = append(rows, f)
		}
	}
	return rows
}

func num64(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err, s)
	return v
}

func TestPerfColumns(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "busbw.svg")
	out, errOut, status := execute(t, "perf", "alltoall", "--ranks", "4", "-b", "64K", "-e", "1M", "-f", "4", "--plot", plot)
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "# emud perf alltoall: 4 ranks, 2 queues per peer, model mi355x, timing perturbation level 0")
	assert.Regexp(t, `#\s+size\s+count\s+type\s+redop\s+time\s+algbw\s+busbw\s+#wrong`, out)
	rows := perfLines(out)
	require.Len(t, rows, 3, out)
	for i, r := range rows {
		size := num64(t, r[0])
		assert.Equal(t, float64(int(64<<10)<<(2*i)), size)
		assert.Equal(t, r[0], r[1], "count: uint8 elements")
		assert.Equal(t, []string{"uint8", "none"}, r[2:4])
		us, alg, bus := num64(t, r[4]), num64(t, r[5]), num64(t, r[6])
		assert.InEpsilon(t, size/us/1e3, alg, 0.01, "algbw = size / time")
		assert.InEpsilon(t, alg*3/4, bus, 0.02, "busbw = algbw × (n−1)/n for an all-to-all")
		assert.Equal(t, "0", r[7], "#wrong")
	}
	assert.Contains(t, out, "# Avg bus bandwidth")
	svg, err := os.ReadFile(plot)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")

	// The same sweep twice: level 0 is the model's exact timing.
	again, _, _ := execute(t, "perf", "alltoall", "--ranks", "4", "-b", "64K", "-e", "1M", "-f", "4")
	assert.Equal(t, rows, perfLines(again))
}

func TestPerfScenarios(t *testing.T) {
	out, errOut, status := execute(t, "perf", "cft-allreduce", "--ranks", "4", "-b", "4K", "-e", "8K")
	require.Equal(t, scenario.ExitOK, status, errOut)
	rows := perfLines(out)
	require.Len(t, rows, 2, out)
	assert.Equal(t, []string{"4096", "1024", "uint32", "sum"}, rows[0][:4])
	assert.InEpsilon(t, num64(t, rows[0][5])*2*3/4, num64(t, rows[0][6]), 0.02, "all-reduce: busbw = algbw × 2(n−1)/n")
	assert.Contains(t, out, "model the CFT fabric's model")

	out, errOut, status = execute(t, "perf", "alltoall-mq", "--ranks", "4", "--queues", "2", "-b", "1K", "-e", "1K")
	require.Equal(t, scenario.ExitOK, status, errOut)
	require.Len(t, perfLines(out), 1, out)
	assert.Equal(t, "1008", perfLines(out)[0][0], "rounded down to 3 peers × 8 messages × 42 B")

	// A planted hang is reported on its line; the sweep ends with the hang status.
	out, errOut, status = execute(t, "perf", "alltoall-shared-expected", "-b", "1K", "-e", "1K")
	assert.Equal(t, scenario.ExitHang, status)
	assert.Contains(t, out, "# hang (deadlock)")
	assert.Contains(t, errOut, "perf alltoall-shared-expected: 1 of 1 sizes failed")

	assertFlagErrors(t, []string{"perf", "alltoall"}, []flagError{
		{[]string{"-f", "1"}, "invalid -f 1"},
		{[]string{"-b", "8K", "-e", "4K"}, "need 1 ≤ -b ≤ -e"},
		{[]string{"-n", "0"}, "invalid -n 0"},
		{[]string{"--plot", "x.gif"}, `invalid --plot "x.gif"`},
		{[]string{"--ranks", "1"}, "invalid --ranks 1"},
	})
}

// The all-to-all of many small messages: with 2 engines per peer link, 2
// queues per peer double the packet rate of 1 and 8 add little more (only
// the CU side posts in parallel); with an engine per queue (the old model)
// 8 queues would be several times faster.
func TestAlltoallMQEngines(t *testing.T) {
	finish := func(q int, extra ...string) float64 {
		args := append([]string{"run", "alltoall-mq", "--ranks", "8", "--bytes", "64", "--queues", strconv.Itoa(q)}, extra...)
		out, errOut, status := execute(t, args...)
		require.Equal(t, scenario.ExitOK, status, errOut)
		var end float64
		for _, r := range rankRows(out) {
			end = max(end, num64(t, r[1]))
		}
		return end
	}
	one, two, eight := finish(1), finish(2), finish(8)
	t.Logf("64 B × 8 messages per peer, 8 ranks: 1 queue %.2f µs, 2 queues %.2f µs, 8 queues %.2f µs", one, two, eight)
	assert.Greater(t, one, 1.5*two, "two queues on two engines")
	assert.Greater(t, eight, 0.85*two, "eight queues on the same two engines")

	ded := writeFile(t, "dedicated.json", `{"name": "dedicated", "engines_per_link": 0}`)
	assert.Less(t, finish(8, "--model", ded), 0.5*eight, "an engine per queue would not share the packet rate")
}
