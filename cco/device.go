package cco

import (
	"fmt"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// Queue is one SDMA queue as cco drives it: the issuer side of MORI's ring
// protocol (docs/sdma-hardware.md §3), written once in package issuer for every
// backend. The emulator's queues and the hardware backend's embed one; a
// Device hands it out.
type Queue = issuer.Queue

// Memory is the device seam for GPU memory: what kernels and the host setup
// read, write, allocate and wait on.
type Memory interface {
	Alloc(gpu int, size uint64, name string) (uint64, error)
	// AllocPhantom is Alloc without backing bytes (timing-only runs); a
	// device that cannot (real hardware) says so in the error.
	AllocPhantom(gpu int, size uint64, name string) (uint64, error)
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
// queues. Emulated wraps an engine.Node; package hw/rocm implements it over
// KFD.
type Device interface {
	Sim() *sim.Sim
	GPUs() int
	// QueuesPerPeer is how many queue ids the device has per (GPU, peer).
	QueuesPerPeer() int
	// Stride is the bytes between two GPUs' slices of the flat LSA space.
	Stride() uint64
	Queue(gpu, peer, q int) (*Queue, error)
	// LookupQueue returns the queue if it exists, else nil (nothing was
	// ever reserved on it), without creating it.
	LookupQueue(gpu, peer, q int) *Queue
	Memory() Memory
	// Model is the timing model of CU-side costs (issue, submit, rptr
	// reads, signal visibility), or nil where time passes by itself (real
	// hardware).
	Model() model.Model
	// SetObserver makes o the observer of the device's queues; nil
	// detaches it.
	SetObserver(o issuer.Observer)
}

// Emulated returns the Device of an emulated node.
func Emulated(n *engine.Node) Device { return emulated{n} }

type emulated struct{ n *engine.Node }

func (e emulated) Sim() *sim.Sim      { return e.n.Sim() }
func (e emulated) GPUs() int          { return e.n.GPUs() }
func (e emulated) QueuesPerPeer() int { return e.n.Config().QueuesPerPeer }
func (e emulated) Stride() uint64     { return e.n.Config().Stride }
func (e emulated) Memory() Memory     { return e.n.Memory() }

// InjectedDrops is how many signal ATOMICs toward addr the node's fault
// plan dropped (engine.Node.InjectedDrops).
func (e emulated) InjectedDrops(addr uint64) int { return e.n.InjectedDrops(addr) }
func (e emulated) Model() model.Model            { return e.n.Model() }
func (e emulated) SetObserver(o issuer.Observer) { e.n.SetObserver(o) }
func (e emulated) LookupQueue(gpu, peer, q int) *Queue {
	if qu := e.n.LookupQueue(gpu, peer, q); qu != nil {
		return qu.Queue
	}
	return nil
}

func (e emulated) CommQueue(gpu, peer, q, gen int) (*Queue, error) {
	qu, err := e.n.CommQueue(gpu, peer, q, gen)
	if err != nil {
		return nil, err
	}
	return qu.Queue, nil
}

func (e emulated) DestroyQueue(q *Queue) error {
	id := q.ID()
	qu := e.n.LookupQueue(id.GPU, id.Peer, id.Q)
	if qu == nil || qu.Queue != q {
		return fmt.Errorf("engine: DestroyQueue %v: no such queue", id)
	}
	return e.n.DestroyQueue(qu)
}

func (e emulated) Queue(gpu, peer, q int) (*Queue, error) {
	qu, err := e.n.Queue(gpu, peer, q)
	if err != nil {
		return nil, err
	}
	return qu.Queue, nil
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
