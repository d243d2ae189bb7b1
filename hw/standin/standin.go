package standin

import (
	"fmt"
	"sync/atomic"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Driver is the timing stand-in: a rocm.Driver over an emulated node.
type Driver struct {
	n      *engine.Node
	closed bool
}

var _ rocm.Driver = (*Driver)(nil)

// New returns a stand-in with gpus GPUs (0 = 8) whose engine runs under m,
// on simulator s: the simulator the rocm.Device over it must use too.
func New(s *sim.Sim, m model.Model, gpus int) (*Driver, error) {
	if m == nil {
		return nil, fmt.Errorf("hw/standin: New with a nil model")
	}
	cfg := cco.MI355X(gpus)
	cfg.Model = m
	n, err := engine.NewNode(s, cfg)
	if err != nil {
		return nil, fmt.Errorf("hw/standin: %w", err)
	}
	return &Driver{n: n}, nil
}

// Node is the emulated node that executes the queues.
func (d *Driver) Node() *engine.Node { return d.n }

// Name says "timing stand-in".
func (d *Driver) Name() string { return "timing stand-in" }

// GPUs is the node's GPU count.
func (d *Driver) GPUs() int { return d.n.GPUs() }

// CreateQueue creates the engine queue gpu → peer, channel q, with a ring
// of ringBytes, and returns it as a queue resource.
func (d *Driver) CreateQueue(gpu, peer, q, ringBytes int) (rocm.Resource, error) {
	if d.closed {
		return nil, fmt.Errorf("hw/standin: closed")
	}
	eq, err := d.n.NewQueue(gpu, peer, q, ring.Options{Size: ringBytes})
	if err != nil {
		return nil, fmt.Errorf("hw/standin: %w", err)
	}
	r := &resource{q: eq}
	eq.OnRptr(func(v uint64) { atomic.StoreUint64(&r.words[1], v) })
	return r, nil
}

// Back allocates [addr, addr+size) in the node's memory, at that address,
// and returns its bytes: the engine's copies read and write them.
func (d *Driver) Back(gpu int, addr, size uint64) ([]byte, error) {
	if d.closed {
		return nil, fmt.Errorf("hw/standin: closed")
	}
	mem := d.n.Memory()
	if g := mem.HomeOf(addr); g != gpu {
		return nil, fmt.Errorf("hw/standin: back %#x for GPU %d: the address is in GPU %d's slice", addr, gpu, g)
	}
	name := fmt.Sprintf("gpu%d stand-in", gpu)
	if gpu == lsa.Host {
		name = "host stand-in"
	}
	if _, err := mem.AllocAt(addr, size, name); err != nil {
		return nil, fmt.Errorf("hw/standin: %w", err)
	}
	b, err := mem.Bytes("stand-in backing", addr, size)
	if err != nil {
		return nil, fmt.Errorf("hw/standin: %w", err)
	}
	return b, nil
}

// Close marks the driver closed; the node stays readable.
func (d *Driver) Close() error { d.closed = true; return nil }

// resource is an engine queue seen as a KFD queue resource.
type resource struct {
	q *engine.Queue
	// words: wptr, rptr (written back by the engine through OnRptr).
	words [2]uint64
}

func (r *resource) RingMemory() []byte { return r.q.Ring().Bytes() }
func (r *resource) Wptr() *uint64      { return &r.words[0] }
func (r *resource) Rptr() *uint64      { return &r.words[1] }

// StoreDoorbell hands the engine the write pointer the issuer stored, then
// the doorbell: the order hardware relies on.
func (r *resource) StoreDoorbell(v uint64) {
	r.q.StoreWptr(atomic.LoadUint64(&r.words[0]))
	r.q.RingDoorbell(v)
}
