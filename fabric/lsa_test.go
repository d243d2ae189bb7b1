package fabric

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// TestLsaSpan books spans of LSA peer accesses on fresh ports (portsModel:
// 1 ns a byte, 100 ns latency) and checks each against the arithmetic
// worked by hand.
func TestLsaSpan(t *testing.T) {
	type span struct {
		now           sim.Time
		gpu           int
		loads, stores uint64
		end           sim.Time
	}
	for _, c := range []struct {
		name  string
		spans []span
	}{
		{"nothing to a peer", []span{{5 * ns, 0, 0, 0, 5 * ns}}},
		{"loads pay the latency once, then their bytes", []span{{0, 0, 64, 0, 164 * ns}}},
		{"stores pay their bytes alone (posted)", []span{{0, 0, 0, 64, 64 * ns}}},
		{"stores leave after the loads", []span{{0, 0, 64, 32, 196 * ns}}},
		{"two waves' loads share the ingress", []span{
			{0, 1, 64, 0, 164 * ns},
			{0, 1, 64, 0, 228 * ns},
		}},
		{"two waves' stores share the egress", []span{
			{0, 1, 0, 64, 64 * ns},
			{0, 1, 0, 64, 128 * ns},
		}},
		{"GPUs do not share ports", []span{
			{0, 0, 64, 64, 228 * ns},
			{0, 1, 64, 64, 228 * ns},
		}},
		{"a later span waits for nothing", []span{
			{0, 2, 64, 0, 164 * ns},
			{1000 * ns, 2, 64, 0, 1164 * ns},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPorts(portsModel, 3)
			require.NoError(t, err)
			for i, s := range c.spans {
				assert.Equal(t, s.end, p.LsaSpan(s.now, s.gpu, s.loads, s.stores), "span %d", i)
			}
		})
	}
}

// TestLsaSpanSharesPortsWithPuts: an LSA span's stores queue behind a CFT
// put on the same egress port (one fabric, one schedule).
func TestLsaSpanSharesPortsWithPuts(t *testing.T) {
	p, err := NewPorts(portsModel, 2)
	require.NoError(t, err)
	arrs := make([]sim.Time, 1)
	_, read, _ := p.Put(0, 0, []int{1}, false, 100, arrs)
	require.Equal(t, 110*ns, read) // issue 10 ns, then 100 bytes
	assert.Equal(t, 126*ns, p.LsaSpan(0, 0, 0, 16))
}

// TestLsaSignal: a barrier's signal is visible a latency and its 4 bytes
// after issue, whatever was booked before (it books nothing).
func TestLsaSignal(t *testing.T) {
	p, err := NewPorts(portsModel, 2)
	require.NoError(t, err)
	assert.Equal(t, 104*ns, p.LsaSignal(0, 0, 1))
	p.LsaSpan(0, 0, 0, 1000)
	assert.Equal(t, 154*ns, p.LsaSignal(50*ns, 0, 1))
	assert.Equal(t, 104*ns, p.LsaSignal(0, 1, 0))
}

// TestLaneCode runs one wave of 4 lanes (a block of 4 in a warp of 32) whose code is counted through a
// LaneCode before a group call, and checks when the call starts: the
// CU's time for the busiest lane's local stores (16 B at 4 cycles per 16
// B at 1 GHz: 4 ns), then the wave's peer loads and stores together
// (4 × 8 B loaded: 100 ns + 32 ns; 4 × 4 B stored: 16 ns).
func TestLaneCode(t *testing.T) {
	for _, c := range []struct {
		name                string
		cycles              float64
		ports               bool
		local, loads, store uint64
		want                sim.Time
	}{
		{"nothing", 4, true, 0, 0, 0, 0},
		{"local stores: the busiest lane", 4, true, 16, 0, 0, 4 * ns},
		{"local stores with the CU cost off", 0, true, 16, 0, 0, 0},
		{"peer accesses: the wave's bytes", 4, true, 0, 8, 4, 148 * ns},
		{"both: the CU first, then the fabric", 4, true, 16, 8, 4, 152 * ns},
		{"peer accesses without ports are free", 4, false, 0, 8, 4, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := sim.New(sim.Config{Seed: 1})
			var ports *Ports
			if c.ports {
				var err error
				ports, err = NewPorts(portsModel, 1)
				require.NoError(t, err)
			}
			lc := NewLaneCode(s, c.cycles, 1, ports)
			var at sim.Time
			sync := &kernel.Call[kernel.None]{Name: "sync", Run: func(g *kernel.Active, _ []kernel.None) error {
				at = g.Actor().Now()
				return nil
			}}
			_, err := kernel.Launch(s, kernel.Config{Name: "k", Grid: 1, Block: 4, WaveSize: 32, Between: lc.Pay}, func(th *kernel.Thread) {
				local := c.local
				if th.ThreadIdx() != 0 {
					local /= 2 // the wave pays for its busiest lane's local stores
				}
				lc.Add(th, local, c.loads, c.store)
				assert.Equal(t, c.want != 0, lc.Owes(th))
				kernel.Converge(th, sync, kernel.None{})
				assert.False(t, lc.Owes(th), "paid")
			})
			require.NoError(t, err)
			require.NoError(t, s.Run())
			assert.Equal(t, c.want, at)
		})
	}
}
