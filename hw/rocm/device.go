package rocm

import (
	"fmt"
	"time"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Pace says how a wait on memory the engine writes (read pointer, signals,
// flags) moves virtual time between two polls. Such memory changes outside
// the simulator, so nothing can wake the waiter: it re-reads the word, and
// between reads it sleeps in virtual time so other actors run.
type Pace uint8

const (
	// PaceDefault is PaceFixed under New and PaceWallClock under Open.
	PaceDefault Pace = iota
	// PaceFixed sleeps Config.Poll of virtual time per poll: a run over the
	// stand-in is deterministic, like the emulator.
	PaceFixed
	// PaceWallClock sleeps the real time since the previous poll (at least
	// Config.Poll), so virtual time follows the wall clock while a wave
	// waits on hardware and the simulator's progress watchdog means real
	// time. Default of Open.
	PaceWallClock
)

// DefaultPoll is the virtual time between two polls when Config.Poll is 0:
// about the 2600-cycle uncached rptr read of MI355X (docs/sdma-hardware.md §8).
const DefaultPoll = sim.Microsecond

// Config describes the device the backend presents to cco.
type Config struct {
	// GPUs to use, the first GPUs of the driver; 0 = all.
	GPUs int
	// QueuesPerPeer is the queue ids per (GPU, peer); 0 = cco.MaxSdmaQueues.
	QueuesPerPeer int
	// Base and Stride lay out the flat LSA space exactly as the emulator's
	// engine.Config does, both through lsa.Layout (GPU g's slice starts at
	// Base + g·Stride; Stride is rounded up to 4 GiB); 0 = lsa.DefaultBase,
	// lsa.DefaultStride. The same layout
	// gives the same addresses, so the same packet bytes, as the emulator.
	Base, Stride uint64
	// Ring options of every queue. Size 0 = 256 KiB. Start is ignored: the
	// pointers start where KFD put them.
	Ring ring.Options
	// Poll is the virtual time between polls; 0 = DefaultPoll.
	Poll sim.Time
	Pace Pace
}

// Device is the hardware backend's cco.Device: cco's kernels run as
// simulator actors as with the emulator, but their packets go into the
// driver's queues and their memory is the driver's.
type Device struct {
	s      *sim.Sim
	drv    Driver
	cfg    Config
	layout lsa.Layout
	mem    *Memory
	queues issuer.Set[*Queue]
	closed bool
	tkDB   sim.TraceKind
	hook   issuer.Hook
}

var _ cco.Device = (*Device)(nil)

// New builds the device over drv on simulator s. Open calls it with the
// KFD driver; tests call it with a StandIn.
func New(s *sim.Sim, drv Driver, cfg Config) (*Device, error) {
	if s == nil {
		return nil, fmt.Errorf("hw/rocm: New with a nil simulator")
	}
	if drv == nil {
		return nil, fmt.Errorf("hw/rocm: New with a nil driver")
	}
	have := drv.GPUs()
	switch {
	case cfg.GPUs == 0:
		cfg.GPUs = have
	case cfg.GPUs < 0 || cfg.GPUs > have:
		return nil, fmt.Errorf("hw/rocm: Config.GPUs = %d: driver %s has %d GPUs", cfg.GPUs, drv.Name(), have)
	}
	if cfg.GPUs < 1 {
		return nil, fmt.Errorf("hw/rocm: driver %s found no GPU node", drv.Name())
	}
	if cfg.QueuesPerPeer == 0 {
		cfg.QueuesPerPeer = cco.MaxSdmaQueues
	}
	cfg.Ring.Start = 0
	l, err := lsa.Layout{GPUs: cfg.GPUs, QueuesPerPeer: cfg.QueuesPerPeer, Base: cfg.Base, Stride: cfg.Stride, Ring: cfg.Ring}.Resolve()
	if err != nil {
		return nil, fmt.Errorf("hw/rocm: Config: %w", err)
	}
	cfg.QueuesPerPeer, cfg.Base, cfg.Stride = l.QueuesPerPeer, l.Base, l.Stride
	l.Ring.Size = cfg.Ring.Size
	if cfg.Ring.Size == 0 {
		cfg.Ring.Size = ring.DefaultSize
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	switch cfg.Pace {
	case PaceDefault:
		cfg.Pace = PaceFixed
	case PaceFixed, PaceWallClock:
	default:
		return nil, fmt.Errorf("hw/rocm: Config.Pace = %d: unknown", cfg.Pace)
	}
	d := &Device{s: s, drv: drv, cfg: cfg, layout: l, tkDB: s.TraceKind("rocm.doorbell")}
	d.mem = newMemory(d)
	s.AddDiagnoser(sim.LayerEngine, "rocm", d.diagnose)
	return d, nil
}

// diagnose is the device's part of a hang report: every queue an issuer
// waits on, with its pointers, and what the issuer side can tell of why
// (issuer.Queue.Causes). The engine's own state is outside the simulator:
// the read pointer is all it shows.
func (d *Device) diagnose() sim.Diagnosis {
	var h sim.Diagnosis
	for _, q := range d.queues.All() {
		w := q.Waiters()
		if w.Space+w.Chain+w.Quiet == 0 {
			continue
		}
		p := q.Pointers()
		h.Waiters = append(h.Waiters, sim.Waiter{Kind: "queue", Name: q.ID().String(), State: "outside the simulator",
			WaitsFor: "the engine's read pointer to move",
			Lines: []string{fmt.Sprintf("rptr=%#x wptr=%#x doorbell=%#x cachedWptr=%#x committedWptr=%#x",
				p.Rptr, p.Wptr, p.Doorbell, p.CachedWptr, p.CommittedWptr)}, Detail: p})
		h.Causes = append(h.Causes, q.Causes()...)
	}
	return h
}

// SetObserver makes o the observer of the device's queues (their
// doorbells; a real engine reports no retired packets); nil detaches it.
func (d *Device) SetObserver(o issuer.Observer) { d.hook.O = o }

// Sim returns the simulator the device's kernels run on.
func (d *Device) Sim() *sim.Sim { return d.s }

// GPUs is the number of GPUs in use.
func (d *Device) GPUs() int { return d.cfg.GPUs }

// QueuesPerPeer is the queue ids per (GPU, peer).
func (d *Device) QueuesPerPeer() int { return d.cfg.QueuesPerPeer }

// Stride is the bytes between two GPUs' slices of the flat space.
func (d *Device) Stride() uint64 { return d.cfg.Stride }

// Config returns the configuration with defaults filled in.
func (d *Device) Config() Config { return d.cfg }

// Driver returns the driver underneath.
func (d *Device) Driver() Driver { return d.drv }

// Memory returns the device memory.
func (d *Device) Memory() cco.Memory { return d.mem }

// Mem is Memory with its concrete type.
func (d *Device) Mem() *Memory { return d.mem }

// QueueID names a queue: GPU gpu toward peer, channel q. It is the type
// the emulator uses too (lsa.QueueID), so reports and cco's diagnosis name
// a hardware queue as they name an emulated one.
type QueueID = lsa.QueueID

// Queue returns queue (gpu → peer, q), creating the driver's queue on first
// use, as MORI's anvil connects a pair on first need.
func (d *Device) Queue(gpu, peer, q int) (*cco.Queue, error) {
	qu, err := d.HWQueue(gpu, peer, q)
	if err != nil {
		return nil, err
	}
	return qu.Queue, nil
}

// HWQueue is Queue with the concrete type.
func (d *Device) HWQueue(gpu, peer, q int) (*Queue, error) {
	id := QueueID{GPU: gpu, Peer: peer, Q: q}
	return d.queues.Make(id, func() (*Queue, error) {
		if d.closed {
			return nil, fmt.Errorf("hw/rocm: %v: device closed", id)
		}
		if err := d.layout.CheckQueue(id); err != nil {
			return nil, fmt.Errorf("hw/rocm: %w", err)
		}
		res, err := d.drv.CreateQueue(gpu, peer, q, d.cfg.Ring.Size)
		if err != nil {
			return nil, fmt.Errorf("hw/rocm: %v: %w", id, err)
		}
		return newQueue(d, id, res)
	})
}

// LookupQueue returns the queue if it was created, else nil.
func (d *Device) LookupQueue(gpu, peer, q int) *cco.Queue {
	if qu, ok := d.queues.Get(QueueID{GPU: gpu, Peer: peer, Q: q}); ok {
		return qu.Queue
	}
	return nil
}

// Model is nil: on hardware CU-side time passes by itself.
func (d *Device) Model() model.Model { return nil }

// Queues returns the created queues in creation order.
func (d *Device) Queues() []*Queue { return d.queues.All() }

// Close closes the driver: queues are destroyed and memory freed. The
// device refuses new queues afterwards.
func (d *Device) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	return d.drv.Close()
}

// poll blocks a until w.Pred holds, re-evaluating it every poll interval
// (see Pace). Writers inside the simulator may also wake it through
// w.List; the engine, outside it, cannot.
func (d *Device) poll(a *sim.Actor, w sim.Wait) {
	last := time.Time{}
	if d.cfg.Pace == PaceWallClock {
		last = time.Now()
	}
	for {
		step := d.cfg.Poll
		if d.cfg.Pace == PaceWallClock {
			now := time.Now()
			if el := sim.Time(now.Sub(last).Nanoseconds()) * sim.Nanosecond; el > step {
				step = el
			}
			last = now
		}
		if a.AwaitTimeout(w, step) {
			return
		}
	}
}
