package cco

import (
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Queue is the device seam for one SDMA queue: the issuer side of MORI's ring
// protocol (sdma-hardware.md §3). The emulator implements it with
// engine.Queue; the hardware backend with a real KFD queue. Blocking methods
// take the actor of the issuing wave.
type Queue interface {
	// ID names the queue: GPU, peer and queue id.
	ID() engine.QueueID
	// Claim is the reservation fetch-add; it never waits.
	Claim(bytes uint64) (base uint64, err error)
	// AwaitSpace spins on the read pointer until [base, base+bytes) fits.
	AwaitSpace(a *sim.Actor, base, bytes uint64)
	// WriteUnit and WriteBroadcast store packet bytes into the ring.
	WriteUnit(ptr uint64, p *ring.Packet) error
	WriteBroadcast(base uint64, p *ring.Packet) (uint64, error)
	// AwaitChain spins until the commit frontier reaches base.
	AwaitChain(a *sim.Actor, base, end uint64)
	// Submit runs the commit chain for [base, end) and rings the doorbell.
	Submit(a *sim.Actor, base, end uint64) error
	// Commit rings everything reserved so far; it reports whether anything was.
	Commit() bool
	// QuietTarget is the commit frontier, what quiet drains to.
	QuietTarget() uint64
	// AwaitDrained spins until the read pointer reaches target.
	AwaitDrained(a *sim.Actor, target uint64)
	// Ring exposes the pointers the debug checks read.
	Ring() *ring.Ring
}

// Memory is the device seam for GPU memory: what kernels and the host setup
// read, write, allocate and wait on.
type Memory interface {
	Alloc(gpu int, size uint64, name string) (uint64, error)
	Read(addr uint64, dst []byte) error
	Write(addr uint64, src []byte) error
	Load32(addr uint64) (uint32, error)
	Load64(addr uint64) (uint64, error)
	Store32(addr uint64, v uint32) error
	Store64(addr uint64, v uint64) error
	Check(op string, addr, n uint64) error
	GPUOf(addr uint64) int
	SliceBase(gpu int) uint64
	// Await blocks a until pred holds, woken by writes to [addr, addr+n).
	Await(a *sim.Actor, addr, n uint64, pred func() bool, what func() string)
}

// Device is the seam cco drives: a node's GPUs, their memory and their SDMA
// queues. Emulated wraps an engine.Node.
type Device interface {
	Sim() *sim.Sim
	GPUs() int
	// QueuesPerPeer is how many queue ids the device has per (GPU, peer).
	QueuesPerPeer() int
	// Stride is the bytes between two GPUs' slices of the flat LSA space.
	Stride() uint64
	Queue(gpu, peer, q int) (Queue, error)
	// LookupQueue returns the queue if it exists, else nil (nothing was
	// ever reserved on it), without creating it.
	LookupQueue(gpu, peer, q int) Queue
	Memory() Memory
}

// Emulated returns the Device of an emulated node.
func Emulated(n *engine.Node) Device { return emulated{n} }

type emulated struct{ n *engine.Node }

func (e emulated) Sim() *sim.Sim      { return e.n.Sim() }
func (e emulated) GPUs() int          { return e.n.GPUs() }
func (e emulated) QueuesPerPeer() int { return e.n.Config().QueuesPerPeer }
func (e emulated) Stride() uint64     { return e.n.Config().Stride }
func (e emulated) Memory() Memory     { return e.n.Memory() }
func (e emulated) Node() *engine.Node { return e.n }
func (e emulated) LookupQueue(gpu, peer, q int) Queue {
	if qu := e.n.LookupQueue(gpu, peer, q); qu != nil {
		return qu
	}
	return nil // not a typed nil inside the interface
}

func (e emulated) Queue(gpu, peer, q int) (Queue, error) {
	qu, err := e.n.Queue(gpu, peer, q)
	if err != nil {
		return nil, err
	}
	return qu, nil
}

// MI355X is the node preset: gpus GPUs (0 = 8) of an MI355X platform, eight
// SDMA queue ids per peer (MORI's kMaxSdmaChannelsPerPair), 256 KiB rings
// with the seed's capacity rule, LSA slices 4 GiB apart, and the
// calibrated MI355X timing model.
func MI355X(gpus int) engine.Config {
	if gpus == 0 {
		gpus = 8
	}
	return engine.Config{GPUs: gpus, QueuesPerPeer: MaxSdmaQueues, Model: model.MI355X()}
}
