package scenario_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// A rank that finished at time 0 under a model that charges nothing has
// no bandwidth: its GB/s reads "instant" and a line says why, not a 0.00
// that reads as a rank that moved nothing. A size under 1 KiB in the
// header has its unit.
func TestWriteTableZeroTime(t *testing.T) {
	sc, err := scenario.Lookup("alltoall")
	require.NoError(t, err)
	o := scenario.Options{Ranks: 2, Bytes: 512, Queues: 2, Seed: 1}
	res := &scenario.Outcome{Model: "placeholder", Seed: 1, Digest: "d", Ranks: []scenario.RankResult{
		{Rank: 0, Finish: 0, BytesSent: 512, BytesReceived: 512},
		{Rank: 1, Finish: 2 * sim.Microsecond, BytesSent: 512, BytesReceived: 512},
	}}
	var b strings.Builder
	require.NoError(t, scenario.WriteTable(&b, sc, o, res))
	out := b.String()
	assert.Contains(t, out, "alltoall: 2 ranks, 512B per pair")
	assert.NotContains(t, out, "0.00\n", out)
	assert.Regexp(t, `(?m)^\s+0\s+0\.000\s+512\s+512\s+instant$`, out)
	assert.Regexp(t, `(?m)^\s+1\s+2\.000\s+512\s+512\s+0\.26$`, out)
	assert.Contains(t, out, "1 of 2 ranks finished at time 0: the timing model charged nothing for their work, so they have no bandwidth")
	assert.True(t, strings.HasSuffix(out, "seed: 1\ndigest: d\n"), "seed and digest stay the last two lines")
}
