package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// Ports is the fabric's timing of operations: each GPU's egress and
// ingress port, booked in turn by the operations that pass them, and the
// model's arithmetic for when an operation's bytes pass them. Package
// fabric's engine times its operations with it, and so does emud's C++
// NCCL layer (capi/nccl_cft.go), so that a collective written against
// either ends at the same emulated time on the same model (cxx
// TestCftAllReduceMatchesGo). Its methods book the ports and return the
// schedule; moving the bytes is the caller's.
type Ports struct {
	m      Model
	tx, rx []sim.Time // when each GPU's egress and ingress port is free
}

// NewPorts is n GPUs' idle ports on model m.
func NewPorts(m Model, n int) (*Ports, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("fabric ports: %d GPUs: need at least one", n)
	}
	return &Ports{m: m, tx: make([]sim.Time, n), rx: make([]sim.Time, n)}, nil
}

// Model is the model the ports time with.
func (p *Ports) Model() Model { return p.m }

// Serialize is the time bytes take through one port.
func (p *Ports) Serialize(bytes uint64) sim.Time { return p.m.serialize(bytes) }

// Put books a put or red of bytes from GPU src to dsts issued at now
// (multimem when multicast: the switch adds McFanout per member, in
// order). The source leaves src's egress after the ops before it, taking
// ser; read is when its last byte has left (the source is all read);
// arrs[i] (len(dsts) of them, filled) is when its last byte has reached
// dsts[i]'s ingress, after Latency and the arrivals before it there; end
// is when the last destination's ack is back, Latency later.
func (p *Ports) Put(now sim.Time, src int, dsts []int, multicast bool, bytes uint64, arrs []sim.Time) (ser, read, end sim.Time) {
	m := p.m
	ser = m.serialize(bytes)
	st := max(now+m.IssueCost, p.tx[src])
	p.tx[src] = st + ser
	read = st + ser
	last := read
	for i, d := range dsts {
		extra := sim.Time(0)
		if multicast {
			extra = m.McFanout * sim.Time(i+1)
		}
		arr := max(read+m.Latency+extra, p.rx[d]+ser)
		p.rx[d] = arr
		arrs[i] = arr
		last = max(last, arr)
	}
	return ser, read, last + m.Latency
}

// Get books a get of bytes by GPU src from GPU from issued at now: the
// request reaches from after Latency, its data leaves from's egress
// (sent: its last byte has left, all of it read) and reaches src's
// ingress at arr, when the get is complete.
func (p *Ports) Get(now sim.Time, src, from int, bytes uint64) (ser, sent, arr sim.Time) {
	m := p.m
	ser = m.serialize(bytes)
	st := max(now+m.IssueCost+m.Latency, p.tx[from])
	p.tx[from] = st + ser
	sent = st + ser
	arr = max(sent+m.Latency, p.rx[src]+ser)
	p.rx[src] = arr
	return ser, sent, arr
}

// PullRed books a pullRed of bytes by GPU src over members issued at
// now: the switch gathers from each member in order (McFanout each) as
// its egress allows; ready is when the last member's bytes are in, to be
// folded; arr is when the sum has reached src's ingress, when the
// pullRed is complete.
func (p *Ports) PullRed(now sim.Time, src int, members []int, bytes uint64) (ser, ready, arr sim.Time) {
	m := p.m
	ser = m.serialize(bytes)
	issue := now + m.IssueCost
	ready = issue + m.Latency
	for i, d := range members {
		st := max(issue+m.Latency+m.McFanout*sim.Time(i+1), p.tx[d])
		p.tx[d] = st + ser
		ready = max(ready, st+ser)
	}
	arr = max(ready+m.Latency, p.rx[src]+ser)
	p.rx[src] = arr
	return ser, ready, arr
}

// Granules is how many Granule pieces an operation of n bytes moves in
// (at least one).
func Granules(n uint64) uint64 { return granules(n) }

// GranuleAt is when granule j of k has passed a port that the whole
// transfer passes over [end − ser, end]: a put's granule j is read at
// GranuleAt(read, ser, j, k) and lands at destination i at
// GranuleAt(arrs[i], ser, j, k).
func GranuleAt(end, ser sim.Time, j, k uint64) sim.Time { return granuleAt(end, ser, j, k) }

// GranuleSpan is granule j's byte range [lo, hi) of an n-byte operation.
func GranuleSpan(j, n uint64) (lo, hi uint64) { return granuleSpan(j, n) }
