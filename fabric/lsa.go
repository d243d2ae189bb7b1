package fabric

import (
	"math"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// LsaSpan books what a wave's lanes did to peers' LSA windows between two
// of its device calls, starting at now on GPU gpu: loads bytes read from
// peers, stores bytes written to them. It returns when the wave may go on.
//
// The loads stall the wave: their values come back one Latency after
// issue (the peers' reads are not booked: a span's loads are spread over
// the peers), through gpu's ingress port after the traffic booked before
// them, all the span's loads in one flight: lanes overlap their loads
// until a value is used, and emud cannot see which loads depend on which,
// so a span pays the latency once, not per load (a lower bound for a
// chain of dependent loads). The stores are posted: they leave through
// gpu's egress port after the loads (a store's value comes from the
// span's loads, as in an all-reduce) and after the traffic booked before
// them, and the wave goes on once they have left; they reach the peer a
// Latency later, which the LSA barrier's signals (LsaSignal) charge,
// released after them. Ports are booked in bytes, so an LSA span shares
// a GPU's ports with its CFT operations.
func (p *Ports) LsaSpan(now sim.Time, gpu int, loads, stores uint64) sim.Time {
	m := p.m
	end := now
	if loads > 0 {
		ser := m.serialize(loads)
		end = max(now+m.Latency+ser, p.rx[gpu]+ser)
		p.rx[gpu] = end
	}
	if stores > 0 {
		ser := m.serialize(stores)
		end = max(end, p.tx[gpu]) + ser
		p.tx[gpu] = end
	}
	return end
}

// LsaSignal is when an LSA barrier's arrival signal, a 4-byte store by
// GPU src issued at now into peer dst's inbox, is visible at dst: its
// bytes through the port and one Latency. The arrive is issued once the
// wave has paid for its stores (LsaSpan), so the signal lands after them,
// as the arrive's release orders it. Unlike a span's bytes the signal
// books no port: its ~4 ps there are below the model's precision, and
// booking them would make a peer's arrival depend on the order in which
// ranks that arrive at the same instant run, which the seed picks (so a
// C++ program and its Go twin, whose actors draw the seed differently,
// would end a few picoseconds apart).
func (p *Ports) LsaSignal(now sim.Time, src, dst int) sim.Time {
	return now + p.m.serialize(4) + p.m.Latency
}

// DefaultLaneCycles is the CU cycles a lane's 16 stored bytes cost by
// default (capi/lanecost.go says why: a wave64 dwordx4 store issues over
// four passes of a 16-lane SIMD).
const DefaultLaneCycles = 4

// LaneCode is the virtual time lanes' own code takes between their device
// calls, paid by the wave before its group's next call
// (kernel.Config.Between is Pay): the CU's time for the device-memory
// bytes each lane stored to its own GPU (cycles per 16 bytes at the CU
// clock: the wave pays for its busiest lane, as its lanes run in
// lock-step), then, with ports, the fabric's time for the wave's loads
// from and stores to peers' LSA windows (LsaSpan, the wave's lanes
// together: their bytes share the GPU's ports). Package fabric's Go
// kernels and emud's C++ lanes (capi/lanecost.go) charge through it, so
// an LSA kernel written in either ends at the same emulated time.
type LaneCode struct {
	s      *sim.Sim
	cycles float64 // CU cycles per 16 bytes stored; 0: local stores are free
	ghz    float64 // CU clock
	ports  *Ports  // nil: peer accesses are free (MORI's lanes: their model has no fabric)
	debt   map[*kernel.Thread]laneSpan
}

// laneSpan is one lane's bytes since it last paid.
type laneSpan struct{ local, loads, stores uint64 }

// NewLaneCode is lanes' code cost on s: cycles CU cycles per 16 bytes a
// lane stores to its own GPU at ghz GHz, and peer LSA accesses timed by
// ports (nil: free).
func NewLaneCode(s *sim.Sim, cycles, ghz float64, ports *Ports) *LaneCode {
	if ghz <= 0 {
		ghz = 2.4
	}
	return &LaneCode{s: s, cycles: cycles, ghz: ghz, ports: ports, debt: map[*kernel.Thread]laneSpan{}}
}

// SetPorts makes ports time the peer accesses counted from now on (nil:
// free).
func (c *LaneCode) SetPorts(p *Ports) { c.ports = p }

// On says whether lanes' code costs anything: Pay is needed.
func (c *LaneCode) On() bool { return c.cycles != 0 || c.ports != nil }

// Owes says whether lane t has code not yet paid for.
func (c *LaneCode) Owes(t *kernel.Thread) bool {
	d := c.debt[t]
	return (c.cycles != 0 && d.local != 0) || (c.ports != nil && d.loads+d.stores != 0)
}

// Add counts lane t's code since its last call: local bytes stored to its
// own GPU's memory, loads and stores bytes read from and written to
// peers' LSA windows.
func (c *LaneCode) Add(t *kernel.Thread, local, loads, stores uint64) {
	if local|loads|stores == 0 {
		return
	}
	d := c.debt[t]
	d.local += local
	d.loads += loads
	d.stores += stores
	c.debt[t] = d
}

// Pay makes the wave (actor a) sleep for the code its lanes ran since
// their last call. It is a kernel.Config.Between.
func (c *LaneCode) Pay(a *sim.Actor, lanes []*kernel.Thread) {
	var most, loads, stores uint64
	gpu := -1
	for _, t := range lanes {
		if d, ok := c.debt[t]; ok {
			most = max(most, d.local)
			loads += d.loads
			stores += d.stores
			gpu = t.GPU()
			delete(c.debt, t)
		}
	}
	var d sim.Time
	sleep := false
	if most != 0 && c.cycles != 0 {
		d = sim.Time(math.Round(float64(most) / 16 * c.cycles / c.ghz * float64(sim.Nanosecond)))
		if d > 0 {
			d, sleep = c.s.Perturb().Duration(sim.Key{Kind: sim.KeyLane, A: uint32(gpu)}, d), true
		}
	}
	if c.ports != nil && loads+stores != 0 {
		now := a.Now()
		d, sleep = c.ports.LsaSpan(now+max(d, 0), gpu, loads, stores)-now, true
	}
	if sleep {
		a.Sleep(d)
	}
}
