package engine

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/emud-dev/emud/internal/slab"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Defaults of a node: those of its layout (lsa.DefaultGPUs and the rest)
// and the TIMESTAMP counter's rate.
const (
	DefaultGPUs          = lsa.DefaultGPUs
	DefaultQueuesPerPeer = lsa.DefaultQueuesPerPeer
	DefaultStride        = lsa.DefaultStride
	DefaultBase          = lsa.DefaultBase
	DefaultTimestampHz   = 100_000_000
)

// RptrPolicy says when the engine writes the read pointer back.
type RptrPolicy uint8

const (
	// RptrPerPacket writes rptr back after every packet (default).
	RptrPerPacket RptrPolicy = iota
	// RptrOnDrain writes it back only when the queue has run everything
	// rung (gem5): a queue parked on a poll never shows progress.
	RptrOnDrain
	// RptrPerBurst writes it back every Config.RptrBurst packets and when
	// the queue drains.
	RptrPerBurst
)

// DefaultRptrBurst is the burst of RptrPerBurst when Config.RptrBurst is 0.
const DefaultRptrBurst = 16

// PollTimeoutPolicy says what a queue does after a POLL_TIMEOUT.
type PollTimeoutPolicy uint8

const (
	// PollTimeoutContinue raises the event and runs the next packet
	// (default; the spec's [inferred] rule).
	PollTimeoutContinue PollTimeoutPolicy = iota
	// PollTimeoutHalt raises the event and halts the queue on the packet.
	PollTimeoutHalt
)

// Config describes a node.
type Config struct {
	GPUs          int    // 0 = DefaultGPUs
	QueuesPerPeer int    // queue ids per (GPU, peer); 0 = DefaultQueuesPerPeer
	Base          uint64 // flat address of GPU 0's slice; 0 = DefaultBase
	Stride        uint64 // bytes per GPU slice, rounded up to 4 GiB; 0 = DefaultStride
	Ring          ring.Options
	Model         model.Model // nil = model.Default() (the calibrated MI355X)
	RptrWriteBack RptrPolicy
	RptrBurst     int // packets per write-back under RptrPerBurst; 0 = DefaultRptrBurst
	PollTimeout   PollTimeoutPolicy
	TimestampHz   uint64 // TIMESTAMP counter rate; 0 = DefaultTimestampHz
	// KeepGoingOnFault keeps the run going after a halting fault (the queue
	// still halts). By default the run stops with the fault as its error.
	KeepGoingOnFault bool
	// Registry receives the node's metrics; nil = a new registry per node,
	// made at the first Node.Registry call.
	Registry *Registry
	// Inject plants SDMA faults (inject.go); nil injects none.
	Inject *InjectPlan
	// Backing backs allocated regions; nil = Go bytes. MapAt maps each
	// region at its own flat address, for native (C++) lanes that
	// dereference device pointers.
	Backing Backing
	// Scratch, with the default backing, backs the small regions with
	// buffers kept across the nodes that share it, one node at a time
	// (scratch.go); nil makes them on the heap.
	Scratch *Scratch
}

// Node is one emulated machine: GPUs, their memory, their SDMA queues.
type Node struct {
	s      *sim.Sim
	cfg    Config
	layout Layout
	model  model.Model
	mem    *Memory
	// lagging are the queues whose COPY chunk in flight has bursts not
	// landed yet; catchUpFn lands them before a memory access (data.go).
	lagging     []*Queue
	catchUpFn   func()
	fine        bool // every crossed chunk lands at its end (tests compare deferChunk with it)
	queues      issuer.Set[*Queue]
	faults      []Fault
	onFault     []func(Fault)
	m           *metrics
	tk          traceKinds
	links       map[[2]int]*link // directed paths (timing.go)
	lastLink    *link            // linkOf's last answer, for lastLinkKey
	lastLinkKey [2]int
	engines     map[[2]int]*Engine
	engList     []*Engine    // creation order, for deterministic reports
	jit         *rand.Rand   // jitter stream, made on first use
	hook        issuer.Hook  // the observer, nil unless a recorder is attached (hooks.go)
	inj         *injector    // nil unless Config.Inject plans faults (inject.go)
	rings       []*ring.Ring // every queue's ring, destroyed ones too, for Close
	slabs       nodeSlabs
	closed      bool      // Close ran
	regOnce     sync.Once // Registry
	reg         *Registry
}

// nodeSlabs are where a node makes its per-queue objects, a few at a
// time: a 4 KiB all-to-all seed makes 16 queues, each with its ring,
// issuer side, counters, engine and link, which were an allocation each.
// With a Scratch the arenas are the Scratch's: Close hands them back and
// the next node takes them, zeroed object by object, so an explore
// worker's seeds make their queues once (24 KiB of a 4 KiB all-to-all
// seed). The counters stay the node's: a registry that took the node's
// collector reads them after Close.
type nodeSlabs struct {
	*nodeArenas
	counters slab.Slab[queueCounters]
}

// nodeArenas are the per-queue objects nothing reads once the node is
// closed, and the node's indexes of them (kept while the node lives in
// its own fields, handed back with the arenas at Close).
type nodeArenas struct {
	queues  slab.Arena[Queue]
	issuers slab.Arena[issuer.Queue]
	rings   slab.Arena[ring.Ring]
	engines slab.Arena[Engine]
	links   slab.Arena[link]

	queueSet  issuer.Set[*Queue]
	engineMap map[[2]int]*Engine
	engList   []*Engine
	linkMap   map[[2]int]*link
	ringList  []*ring.Ring
}

func (a *nodeArenas) reset() {
	a.queues.Reset()
	a.issuers.Reset()
	a.rings.Reset()
	a.engines.Reset()
	a.links.Reset()
	a.queueSet.Reset()
	clear(a.engineMap)
	clear(a.engList)
	a.engList = a.engList[:0]
	clear(a.linkMap)
	clear(a.ringList)
	a.ringList = a.ringList[:0]
}

type traceKinds struct {
	doorbell, start, done, fault, park sim.TraceKind
}

// Layout is the shape a backend presents to cco (lsa.Layout).
type Layout = lsa.Layout

// NewNode builds a node on s and registers its hang diagnoser.
func NewNode(s *sim.Sim, cfg Config) (*Node, error) {
	l, err := Layout{GPUs: cfg.GPUs, QueuesPerPeer: cfg.QueuesPerPeer, Base: cfg.Base, Stride: cfg.Stride, Ring: cfg.Ring}.Resolve()
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	cfg.GPUs, cfg.QueuesPerPeer, cfg.Base, cfg.Stride = l.GPUs, l.QueuesPerPeer, l.Base, l.Stride
	if cfg.RptrBurst == 0 {
		cfg.RptrBurst = DefaultRptrBurst
	}
	if cfg.TimestampHz == 0 {
		cfg.TimestampHz = DefaultTimestampHz
	}
	if cfg.Model == nil {
		cfg.Model = model.Default()
	}
	if cfg.Ring.Dialect == ring.GFX94x {
		// The zero value: the packets of the model's architecture
		// (gfx950 for MI355X, gfx1250 for its preset).
		cfg.Ring.Dialect = model.ArchOf(cfg.Model).Dialect
	}
	if err := cfg.Model.Engines().Validate(); err != nil {
		return nil, fmt.Errorf("engine: model %s: %w", cfg.Model.Name(), err)
	}
	switch {
	case cfg.RptrBurst < 1:
		return nil, fmt.Errorf("engine: RptrBurst = %d: need at least 1", cfg.RptrBurst)
	case cfg.RptrWriteBack > RptrPerBurst:
		return nil, fmt.Errorf("engine: RptrWriteBack = %d: unknown policy", cfg.RptrWriteBack)
	case cfg.PollTimeout > PollTimeoutHalt:
		return nil, fmt.Errorf("engine: PollTimeout = %d: unknown policy", cfg.PollTimeout)
	}
	// The run's timing perturbation applies to every cost the model gives
	// (a no-op at level 0).
	n := &Node{s: s, cfg: cfg, layout: l, model: model.Perturbed(cfg.Model, s.Perturb())}
	n.mem = newMemory(n)
	a := cfg.Scratch.takeArenas()
	n.slabs.nodeArenas = a
	n.queues, n.engines, n.engList, n.links, n.rings = a.queueSet, a.engineMap, a.engList, a.linkMap, a.ringList
	if n.engines == nil {
		n.engines = map[[2]int]*Engine{}
	}
	n.m = &metrics{}
	if cfg.Registry != nil {
		if err := n.m.register(cfg.Registry); err != nil {
			return nil, err
		}
	}
	n.tk = traceKinds{
		doorbell: s.TraceKind("sdma.doorbell"),
		start:    s.TraceKind("sdma.start"),
		done:     s.TraceKind("sdma.done"),
		fault:    s.TraceKind("sdma.fault"),
		park:     s.TraceKind("sdma.park"),
	}
	s.AddDiagnoser(sim.LayerEngine, "engine", n.diagnose)
	if cfg.Inject != nil {
		if err := cfg.Inject.Check(cfg.GPUs, cfg.QueuesPerPeer); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		n.inj = newInjector(n, cfg.Inject)
	}
	return n, nil
}

// Sim returns the simulator the node runs on.
func (n *Node) Sim() *sim.Sim { return n.s }

// Config returns the node's configuration with defaults filled in.
func (n *Node) Config() Config { return n.cfg }

// GPUs returns the number of GPUs.
func (n *Node) GPUs() int { return n.cfg.GPUs }

// Memory returns the node's flat memory.
func (n *Node) Memory() *Memory { return n.mem }

// Close gives back the node's memory at once (its regions of 1 MiB and
// more are mappings outside the Go heap, which the collector does not
// count, so waiting for a collection to release them could hold several
// runs' memory at once). Call it when the run and every read of its
// memory are over: every later access fails with an error saying the node
// was closed, and a []byte taken from Memory.Bytes must not be used after
// it. Closing twice is harmless. A node nobody closes releases its memory
// once it is unreachable.
func (n *Node) Close() {
	if n.closed {
		// Once: its rings and arenas may be the next node's by now.
		return
	}
	n.closed = true
	for _, r := range n.rings {
		r.Release() // their buffers are in the mappings released next
	}
	n.mem.release()
	if sc := n.cfg.Scratch; sc != nil {
		a := n.slabs.nodeArenas
		a.queueSet, a.engineMap, a.engList, a.linkMap, a.ringList = n.queues, n.engines, n.engList, n.links, n.rings
		sc.arenas = a
	}
}

// Model returns the timing model.
func (n *Node) Model() model.Model { return n.model }

// Arch is the architecture of the node's model (model.ArchOf): which
// packets its engines run, its queue limit, its issuers' wave size.
func (n *Node) Arch() model.Arch { return model.ArchOf(n.cfg.Model) }

// Registry returns the node's Prometheus registry.
// A node made without one (Config.Registry nil) makes its own at the first
// call.
func (n *Node) Registry() *Registry {
	n.regOnce.Do(func() {
		n.reg = n.cfg.Registry
		if n.reg == nil {
			n.reg = newRegistry()
			_ = n.m.register(n.reg) // a fresh registry takes the node's one collector
		}
	})
	return n.reg
}

// Faults returns every fault and event raised so far, in order.
func (n *Node) Faults() []Fault { return n.faults }

// OnFault registers f to be called for each fault or event as it is raised.
func (n *Node) OnFault(f func(Fault)) { n.onFault = append(n.onFault, f) }

// QueueID names an SDMA queue: GPU's queue toward Peer with id Q
// (lsa.QueueID).
type QueueID = lsa.QueueID

// Queue returns the queue (gpu → peer, q), creating it on first use. Queues
// are keyed like MORI's hardware queues, per (src GPU, dst GPU, channel), so
// every user of the pair shares one ring and one commit chain.
func (n *Node) Queue(gpu, peer, q int) (*Queue, error) {
	id := QueueID{GPU: gpu, Peer: peer, Q: q}
	return n.queues.Make(id, func() (*Queue, error) { return n.makeQueue(id, n.cfg.Ring) })
}

// NewQueue creates the queue (gpu → peer, q) with its own ring options (a
// size other than Config.Ring's, a KFD start offset): for a producer that
// sizes its rings itself, as ROCr does. A queue's ring is fixed when it is
// made, so asking for one that exists is an error.
func (n *Node) NewQueue(gpu, peer, q int, o ring.Options) (*Queue, error) {
	id := QueueID{GPU: gpu, Peer: peer, Q: q}
	if _, ok := n.queues.Get(id); ok {
		return nil, fmt.Errorf("engine: NewQueue %v: the queue exists already (its ring was fixed when it was made)", id)
	}
	return n.queues.Make(id, func() (*Queue, error) {
		if err := o.Check(); err != nil {
			return nil, fmt.Errorf("engine: NewQueue %v: %w", id, err)
		}
		return n.makeQueue(id, o)
	})
}

func (n *Node) makeQueue(id QueueID, o ring.Options) (*Queue, error) {
	if err := n.layout.CheckQueue(id); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e, err := n.place(id)
	if err != nil {
		return nil, err
	}
	return newQueue(n, id, e, o)
}

// CommQueue returns channel q toward peer of a communicator that owns its
// queues (MORI cco: each comm creates lsaSize × sdmaNumQueue queues in
// ccoDevCommCreate and frees them in ccoCommDestroy). Generation gen is the
// comm's slot among the live owning comms of its GPU: gen 0 is Queue's
// queue; a later comm created while an earlier one is alive gets queue id
// q + gen·QueuesPerPeer, a hardware queue of its own on the same engines
// (model.Engines.Place), so comms that are never destroyed fill their
// engines until KFD's per-engine limit refuses one more.
func (n *Node) CommQueue(gpu, peer, q, gen int) (*Queue, error) {
	if gen == 0 {
		return n.Queue(gpu, peer, q)
	}
	if err := n.layout.CheckQueue(QueueID{GPU: gpu, Peer: peer, Q: q}); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if gen < 0 || gen > 1<<16 {
		return nil, fmt.Errorf("engine: comm queue generation %d outside [0, 65536]", gen)
	}
	id := QueueID{GPU: gpu, Peer: peer, Q: q + gen*n.cfg.QueuesPerPeer}
	return n.queues.Make(id, func() (*Queue, error) {
		e, err := n.place(id)
		if err != nil {
			return nil, err
		}
		return newQueue(n, id, e, n.cfg.Ring)
	})
}

// DestroyQueue frees queue q (KFD's queue destruction): its engine slot is
// free again and the node forgets it. A queue with work reserved, rung or
// running is refused (inFlight): what counts is the queue's state, its
// read pointer against its write pointer and the packets not yet retired,
// never the engine's timing gap after the last one.
func (n *Node) DestroyQueue(q *Queue) error {
	if got, ok := n.queues.Get(q.id); !ok || got != q {
		return fmt.Errorf("engine: DestroyQueue %v: no such queue (destroyed already?)", q.id)
	}
	if why := q.inFlight(); why != "" {
		return &InFlightError{Queue: q.id, Why: why, Detail: fmt.Sprintf("reserved to %#x, rung to %#x, engine at %#x, read pointer %#x, %s",
			q.r.CachedWptr(), q.target, q.pos, q.r.Rptr(), q.state)}
	}
	e := q.eng
	// A queue whose last packet has retired may still hold its engine for
	// the gap after that packet: the gap is the engine's time, so the
	// engine keeps it and frees itself at its end (gapDone), and the
	// queue, gone from the node, is not run again.
	q.dead = true
	for i, o := range e.queues {
		if o == q {
			e.queues = append(e.queues[:i], e.queues[i+1:]...)
			switch {
			case e.last == i:
				e.last = i - 1
			case e.last > i:
				e.last--
			}
			break
		}
	}
	n.queues.Delete(q.id)
	return nil
}

// LookupQueue returns the queue (gpu → peer, q) if it has been created, else
// nil: a queue nobody has used holds nothing to drain or ring, so a quiet
// need not build its ring.
func (n *Node) LookupQueue(gpu, peer, q int) *Queue {
	qu, _ := n.queues.Get(QueueID{GPU: gpu, Peer: peer, Q: q})
	return qu
}

// Queues returns every queue created so far, in creation order.
func (n *Node) Queues() []*Queue { return n.queues.All() }

// place picks the engine queue id runs on (model.Engines.Place: MORI's
// rule over KFD's recommended engines), creating it on first use. An
// engine that already holds its KFD limit of queues refuses one more.
func (n *Node) place(id QueueID) (*Engine, error) {
	lay := n.model.Engines()
	if lay.Dedicated() {
		e := newEngine(n, id.GPU, -1)
		n.engList = append(n.engList, e)
		return e, nil
	}
	k := [2]int{id.GPU, lay.Place(id.GPU, id.Peer, id.Q)}
	if lay.IsFusedOff(k[1]) {
		why := "loopback channels use engine 0"
		if id.GPU != id.Peer {
			why = fmt.Sprintf("every engine KFD recommends for the link to GPU %d is fused off, so the static OAM map chose it", id.Peer)
		}
		return nil, fmt.Errorf("engine: queue %v: GPU %d's SDMA engine %d is fused off (absent from KFD's masks) and cannot take a queue: %s",
			id, id.GPU, k[1], why)
	}
	e := n.engines[k]
	if e == nil {
		e = newEngine(n, k[0], k[1])
		n.engines[k] = e
		n.engList = append(n.engList, e)
	}
	if held := lay.Held(k[1]); len(e.queues)+held >= lay.QueuesPerEngine {
		rt := ""
		if held > 0 {
			rt = fmt.Sprintf(" (%d of them the runtime's, ROCr's blit queues)", held)
		}
		return nil, fmt.Errorf("engine: queue %v: %v already holds %d queues%s, the most one engine holds (KFD NumSdmaQueuesPerEngine)",
			id, e, lay.QueuesPerEngine, rt)
	}
	return e, nil
}

// Engines returns every SDMA engine that holds a queue, in the order their
// first queue was created.
func (n *Node) Engines() []*Engine { return n.engList }
