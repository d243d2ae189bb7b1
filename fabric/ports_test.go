package fabric

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/sim"
)

// portsModel is a model with round figures: 1 GB/s (1 ns a byte), 100 ns
// latency, 10 ns issue, 1 ns fan-out per member.
var portsModel = Model{Name: "ports-test", InjectionGBps: 1, Latency: 100 * sim.Nanosecond, IssueCost: 10 * sim.Nanosecond, McFanout: sim.Nanosecond, ClockGHz: 1}

const ns = sim.Nanosecond

// TestPorts books operations one after another on fresh ports and checks
// each schedule against the model's arithmetic worked by hand.
func TestPorts(t *testing.T) {
	type put struct {
		now       sim.Time
		src       int
		dsts      []int
		mc        bool
		bytes     uint64
		read, end sim.Time
		arrs      []sim.Time
	}
	for _, c := range []struct {
		name string
		puts []put
	}{
		{"one unicast put", []put{{0, 0, []int{1}, false, 16, 26 * ns, 226 * ns, []sim.Time{126 * ns}}}},
		{"two puts share the egress", []put{
			{0, 0, []int{1}, false, 16, 26 * ns, 226 * ns, []sim.Time{126 * ns}},
			{0, 0, []int{2}, false, 16, 42 * ns, 242 * ns, []sim.Time{142 * ns}},
		}},
		{"two puts share the ingress", []put{
			{0, 0, []int{2}, false, 64, 74 * ns, 274 * ns, []sim.Time{174 * ns}},
			{0, 1, []int{2}, false, 64, 74 * ns, 338 * ns, []sim.Time{238 * ns}}, // behind the first's 64 ns there
		}},
		{"multimem fans out per member", []put{
			{0, 1, []int{0, 1, 2}, true, 16, 26 * ns, 229 * ns, []sim.Time{127 * ns, 128 * ns, 129 * ns}},
		}},
		{"a later issue waits for nothing", []put{
			{0, 0, []int{1}, false, 16, 26 * ns, 226 * ns, []sim.Time{126 * ns}},
			{1000 * ns, 0, []int{1}, false, 16, 1026 * ns, 1226 * ns, []sim.Time{1126 * ns}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPorts(portsModel, 3)
			require.NoError(t, err)
			for i, o := range c.puts {
				arrs := make([]sim.Time, len(o.dsts))
				ser, read, end := p.Put(o.now, o.src, o.dsts, o.mc, o.bytes, arrs)
				assert.Equal(t, sim.Time(o.bytes)*ns, ser, "put %d: serialisation", i)
				assert.Equal(t, o.read, read, "put %d: source read", i)
				assert.Equal(t, o.arrs, arrs, "put %d: arrivals", i)
				assert.Equal(t, o.end, end, "put %d: completion", i)
			}
		})
	}
}

// TestPortsFetch: a get's request crosses the fabric before the peer's
// egress sends its data back; a pullRed gathers from every member, one
// fan-out step apart, and a member's busy egress delays the sum.
func TestPortsFetch(t *testing.T) {
	p, err := NewPorts(portsModel, 3)
	require.NoError(t, err)
	ser, sent, arr := p.Get(0, 0, 1, 32)
	assert.Equal(t, []sim.Time{32 * ns, 142 * ns, 242 * ns}, []sim.Time{ser, sent, arr}, "get: issue 10 + latency 100 + 32 out, + latency 100 back")

	p, err = NewPorts(portsModel, 3)
	require.NoError(t, err)
	ser, ready, arr := p.PullRed(0, 0, []int{0, 1, 2}, 16)
	assert.Equal(t, []sim.Time{16 * ns, 129 * ns, 229 * ns}, []sim.Time{ser, ready, arr}, "pullRed: the last member starts at 10 + 100 + 3")

	p, err = NewPorts(portsModel, 3)
	require.NoError(t, err)
	arrs := make([]sim.Time, 1)
	p.Put(0, 2, []int{0}, false, 500, arrs) // member 2's egress busy until 510 ns
	_, ready, arr = p.PullRed(0, 0, []int{0, 1, 2}, 16)
	assert.Equal(t, []sim.Time{526 * ns, 626 * ns}, []sim.Time{ready, arr}, "pullRed behind member 2's put")
}

// TestNewPortsBadInput: a bad model or no GPUs is an error naming it.
func TestNewPortsBadInput(t *testing.T) {
	bad := portsModel
	bad.InjectionGBps = 0
	for _, c := range []struct {
		name string
		m    Model
		n    int
		want string
	}{
		{"no bandwidth", bad, 2, "InjectionGBps 0 must be positive"},
		{"no GPUs", portsModel, 0, "0 GPUs: need at least one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPorts(c.m, c.n)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
