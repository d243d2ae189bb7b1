package gin

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

// allToAllClosedForm is the NIC model's time for gin-alltoall on n ranks
// with b bytes per pair: each rank's n−1 puts are posted at once (one
// PostCost), their packets share its transmit port, one after another at
// (payload + header) / LinkGBps each, and the last lands one Latency after
// it left (the peers are staggered, so no receive port is busier than a
// transmit port).
func allToAllClosedForm(m nic.Model, n int, b uint64) sim.Time {
	full := b / m.MTU
	per := sim.Time(full) * m.Serialize(m.MTU)
	if rest := b - full*m.MTU; rest > 0 || b == 0 {
		per += m.Serialize(rest)
	}
	return m.PostCost + sim.Time(n-1)*per + m.Latency
}

// A 2-node × 8-GPU GIN all-to-all takes the NIC model's closed form, to
// the nanosecond per packet, as bytes, bandwidth and latency vary.
func TestGinAllToAllClosedForm(t *testing.T) {
	slow := nic.DefaultModel()
	slow.Name, slow.LinkGBps = "200g-rc", 25
	far := nic.DefaultModel()
	far.Name, far.Latency = "400g-rc-5us", 5*sim.Microsecond
	sc, err := scenario.Lookup("gin-alltoall")
	require.NoError(t, err)
	for _, m := range []nic.Model{nic.DefaultModel(), slow, far} {
		for _, b := range []uint64{1 << 10, 4 << 10, 16 << 10, 64 << 10} {
			t.Run(fmt.Sprintf("%s/%d", m.Name, b), func(t *testing.T) {
				o := scenario.Defaults(sc)
				o.Ranks, o.LsaSize, o.Bytes, o.Perturb = 16, 8, b, 0
				require.NoError(t, scenario.Admit(sc, o, 0))
				out, err := runOn("gin-alltoall", o, progAllToAll, &m)
				require.NoError(t, err)
				want := allToAllClosedForm(m, o.Ranks, b)
				packets := float64(uint64(o.Ranks-1) * max(1, (b+m.MTU-1)/m.MTU))
				t.Logf("%s, %d B per pair: emulated %v, closed form %v", m.Name, b, out.End, want)
				require.InDelta(t, float64(want), float64(out.End), packets+10, "emulated %v, closed form %v", out.End, want)
			})
		}
	}
}
