package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var digestLine = regexp.MustCompile(`^digest: [0-9a-f]{64}$`)

// seedAndDigest checks the last two lines and returns the digest.
func seedAndDigest(t *testing.T, out string, seed uint64) string {
	t.Helper()
	ls := lines(out)
	require.GreaterOrEqual(t, len(ls), 2, out)
	assert.Equal(t, "seed: "+strconv.FormatUint(seed, 10), ls[len(ls)-2])
	last := ls[len(ls)-1]
	require.Regexp(t, digestLine, last)
	return strings.TrimPrefix(last, "digest: ")
}

// rankRows returns the fields of the table's rank rows.
func rankRows(out string) [][]string {
	var rows [][]string
	for _, l := range lines(out) {
		f := strings.Fields(l)
		if len(f) == 5 {
			if _, err := strconv.Atoi(f[0]); err == nil {
				rows = append(rows, f)
			}
		}
	}
	return rows
}

func TestRunDefault(t *testing.T) {
	out, errOut, status := execute(t, "run")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Empty(t, errOut)
	rows := rankRows(out)
	require.Len(t, rows, 8, out)
	for i, f := range rows {
		assert.Equal(t, strconv.Itoa(i), f[0])
		us, err := strconv.ParseFloat(f[1], 64)
		require.NoError(t, err)
		assert.Positive(t, us, "rank %d finishes after time 0", i)
		assert.Equal(t, strconv.Itoa(8<<20), f[2], "8 blocks of 1 MiB sent")
		assert.Equal(t, strconv.Itoa(8<<20), f[3], "8 blocks of 1 MiB received")
		gbps, err := strconv.ParseFloat(f[4], 64)
		require.NoError(t, err)
		assert.InDelta(t, float64(8<<20)/(us*1000), gbps, 0.01, "bandwidth is bytes received / time")
	}
	seedAndDigest(t, out, 1)
}

func TestRunSameSeedSameOutput(t *testing.T) {
	args := []string{"run", "--bytes", "64K", "--seed", "42"}
	a, _, sa := execute(t, args...)
	b, _, sb := execute(t, args...)
	require.Equal(t, scenario.ExitOK, sa)
	require.Equal(t, scenario.ExitOK, sb)
	assert.Equal(t, seedAndDigest(t, a, 42), seedAndDigest(t, b, 42))
	assert.Equal(t, a, b, "the whole output repeats, not just the digest")
}

// All ranks start at time 0, so the seed's tie-breaks decide the order and
// the digest (which folds in every scheduling decision) changes with it.
func TestRunOtherSeed(t *testing.T) {
	one, _, s1 := execute(t, "run", "--bytes", "64K")
	seven, _, s7 := execute(t, "run", "--bytes", "64K", "--seed", "7")
	require.Equal(t, scenario.ExitOK, s1)
	require.Equal(t, scenario.ExitOK, s7)
	assert.NotEqual(t, seedAndDigest(t, one, 1), seedAndDigest(t, seven, 7))
	assert.Len(t, rankRows(seven), 8)
}

// Shapes off the default path: odd sizes (not a unit or word multiple),
// one queue id, more queue ids than peers, the largest rank count.
func TestRunShapes(t *testing.T) {
	for _, args := range [][]string{
		{"--ranks", "2", "--queues", "1", "--bytes", "1"},
		{"--ranks", "3", "--queues", "8", "--bytes", "100"},
		{"--ranks", "5", "--queues", "3", "--bytes", "4KiB"},
		{"--ranks", "64", "--bytes", "1K"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errOut, status := execute(t, append([]string{"run"}, args...)...)
			require.Equal(t, scenario.ExitOK, status, errOut)
			ranks, _ := strconv.Atoi(args[1])
			assert.Len(t, rankRows(out), ranks)
			seedAndDigest(t, out, 1)
		})
	}
}

func TestRunJSON(t *testing.T) {
	args := []string{"run", "--ranks", "4", "--bytes", "64K", "--seed", "3"}
	out, errOut, status := execute(t, append(args, "--json")...)
	require.Equal(t, scenario.ExitOK, status, errOut)
	var s scenario.Summary
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	assert.Equal(t, "alltoall", s.Scenario)
	assert.Equal(t, uint64(3), s.Seed)
	assert.Regexp(t, `^[0-9a-f]{64}$`, s.Digest)
	assert.Equal(t, 4, s.Ranks)
	assert.Equal(t, uint64(64<<10), s.BytesPerPair)
	require.Len(t, s.Results, 4)
	for i, r := range s.Results {
		assert.Equal(t, i, r.Rank)
		assert.Equal(t, uint64(4*64<<10), r.BytesReceived)
		assert.Positive(t, r.TimeMicros)
		assert.LessOrEqual(t, r.TimeMicros, s.EndMicros)
	}
	table, _, _ := execute(t, args...)
	assert.Equal(t, seedAndDigest(t, table, 3), s.Digest, "--json reports the same run")
}

func TestRunBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--bytes", "bogus"}, "--bytes"},
		{[]string{"--bytes", "1.5M"}, "--bytes"},
		{[]string{"--bytes", "-4K"}, "--bytes"},
		{[]string{"--bytes", "64X"}, "--bytes"},
		{[]string{"--bytes", "99999999999999999999"}, "--bytes"},
		{[]string{"--bytes", "0"}, "--bytes"},
		{[]string{"--bytes", "1G"}, "--bytes"},
		{[]string{"--bytes", "64M", "--ranks", "64"}, "--bytes"},
		{[]string{"--ranks", "1"}, "--ranks"},
		{[]string{"--ranks", "65"}, "--ranks"},
		{[]string{"--ranks", "eight"}, "--ranks"},
		{[]string{"--queues", "0"}, "--queues"},
		{[]string{"--queues", "9"}, "--queues"},
		{[]string{"--seed", "-1"}, "--seed"},
		{[]string{"--scenario", "nope"}, "--scenario"},
		{[]string{"--nope"}, "--nope"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, status := execute(t, append([]string{"run"}, tc.args...)...)
			assert.Equal(t, scenario.ExitFailed, status)
			assert.Empty(t, out, "nothing runs")
			assert.True(t, strings.HasPrefix(errOut, "emud: "), errOut)
			assert.Contains(t, errOut, tc.flag)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line, no usage dump: %s", errOut)
		})
	}
}

func TestRunScenarioAsArgument(t *testing.T) {
	out, _, status := execute(t, "run", "alltoall", "--bytes", "4K", "--ranks", "2")
	require.Equal(t, 0, status, out)
	assert.Len(t, rankRows(out), 2)
	_, errOut, status := execute(t, "run", "nosuch")
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, `invalid --scenario "nosuch"`)
	_, errOut, status = execute(t, "run", "alltoall", "--scenario", "other")
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, "scenario given twice")
	_, errOut, status = execute(t, "run", "a", "b")
	assert.Equal(t, 1, status)
	assert.Contains(t, errOut, "accepts at most 1 arg")
}

// Model files the CLI takes: a slow but valid one runs (a packet gap of
// 1000 s is work, not a hang); one whose times would overflow, or with
// junk after its JSON, is refused naming the parameter.
func TestRunModelFiles(t *testing.T) {
	slow := writeFile(t, "slow.json", `{"packet_us": 1e9}`)
	out, errOut, status := execute(t, "run", "--model", slow, "--ranks", "2", "--bytes", "64")
	require.Equal(t, scenario.ExitOK, status, "%s%s", out, errOut)
	for _, row := range rankRows(out) {
		us, err := strconv.ParseFloat(row[1], 64)
		require.NoError(t, err)
		assert.Greater(t, us, 1e9, "each rank waits over 1000 s for its packets")
	}
	for _, tc := range []struct{ body, want string }{
		{`{"link_gbps": 1e-12}`, "link_gbps 1e-12 is too small"},
		{`{"packet_us": 1e10}`, "packet_us must be a number from 0 to 1e+09"},
		{`{"link_gbps": 50} junk`, "data after the JSON object"},
	} {
		bad := writeFile(t, "bad.json", tc.body)
		out, errOut, status := execute(t, "run", "--model", bad, "--ranks", "2", "--bytes", "64")
		assert.Equal(t, scenario.ExitFailed, status, tc.body)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "invalid --model")
		assert.Contains(t, errOut, tc.want)
	}
}
