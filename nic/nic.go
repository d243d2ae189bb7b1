package nic

import (
	"fmt"
	"math/rand/v2"

	"github.com/emud-dev/emud/sim"
)

// Ordering is the delivery order a transport gives within a QP.
type Ordering uint8

const (
	// InOrder: a QP's packets land in the order they were sent (RC).
	InOrder Ordering = iota
	// OutOfOrder: packets land as they arrive, each delayed by up to
	// Model.Jitter (direct data placement over sprayed paths).
	OutOfOrder
)

func (o Ordering) String() string {
	if o == OutOfOrder {
		return "out-of-order"
	}
	return "in-order"
}

// Model is the network's timing: a few named physical parameters.
type Model struct {
	Name string
	// LinkGBps is each NIC's bandwidth per direction in GB/s (bytes/ns).
	LinkGBps float64
	// Latency is the one-way latency from a packet leaving its NIC to its
	// arrival at the destination NIC.
	Latency sim.Time
	// MTU is the largest payload of one packet.
	MTU uint64
	// HeaderBytes is the wire overhead of every packet.
	HeaderBytes uint64
	// PostCost is the GPU time to post one work request (build the
	// descriptor, ring the NIC's doorbell).
	PostCost sim.Time
	// Ordering is the transport's delivery order within a QP.
	Ordering Ordering
	// Jitter bounds the extra per-packet delay of OutOfOrder delivery.
	Jitter sim.Time
}

// DefaultModel is a 400 Gb/s NIC per GPU on an in-order (RC) transport;
// see the package doc for the sources and which figures are round numbers.
func DefaultModel() Model {
	return Model{
		Name:        "400g-rc",
		LinkGBps:    50,
		Latency:     2 * sim.Microsecond,
		MTU:         4096,
		HeaderBytes: 64,
		PostCost:    100 * sim.Nanosecond,
		Ordering:    InOrder,
		Jitter:      1 * sim.Microsecond,
	}
}

// Check reports the first field out of range, naming it.
func (m Model) Check() error {
	switch {
	case !(m.LinkGBps > 0):
		return fmt.Errorf("nic model %q: LinkGBps %v must be positive", m.Name, m.LinkGBps)
	case m.Latency < 0 || m.PostCost < 0 || m.Jitter < 0:
		return fmt.Errorf("nic model %q: Latency, PostCost and Jitter must not be negative", m.Name)
	case m.MTU < 256 || m.MTU > 1<<20:
		return fmt.Errorf("nic model %q: MTU %d must be in [256, 1 MiB]", m.Name, m.MTU)
	case m.Ordering > OutOfOrder:
		return fmt.Errorf("nic model %q: unknown ordering %d", m.Name, m.Ordering)
	}
	return nil
}

// Serialize is the time n payload bytes of one packet take through a port.
func (m Model) Serialize(n uint64) sim.Time {
	return sim.Time(float64(n+m.HeaderBytes) / m.LinkGBps * float64(sim.Nanosecond))
}

// Network is every NIC of a job and the switch between them.
type Network struct {
	s     *sim.Sim
	m     Model
	chunk uint64
	nics  []*NIC
	rng   *rand.Rand
	// unreach, if set, says which NIC pairs have no path (SetUnreachable).
	unreach func(src, dst int) bool
	why     string
}

// SetUnreachable marks the NIC pairs f reports as having no path between
// them (a network fault or a topology without that path: NICs on disjoint
// rails, no hairpin), why saying which, for reports. A packet posted on
// such a QP leaves its source NIC and is lost: it never lands, so the
// message is never Done and nothing at the destination changes. No error
// completion is modelled (the RC retry timeout that would eventually
// raise one is seconds away): the sender sees local completion and a
// waiter at the destination waits for ever unless it has a timeout.
func (n *Network) SetUnreachable(f func(src, dst int) bool, why string) {
	n.unreach, n.why = f, why
}

// Unreachable reports whether NIC dst cannot be reached from NIC src, and
// why.
func (n *Network) Unreachable(src, dst int) (string, bool) {
	if n.unreach == nil || !n.unreach(src, dst) {
		return "", false
	}
	return n.why, true
}

// New builds a network of n NICs on s; name(i) names NIC i in reports.
// chunk, if above the MTU, is the packet size used for scheduling (phantom
// runs, whose packets copy nothing, use a coarse one to save events).
func New(s *sim.Sim, m Model, n int, chunk uint64, name func(i int) string) (*Network, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("nic: a network of %d NICs", n)
	}
	net := &Network{s: s, m: m, chunk: max(m.MTU, chunk), rng: s.Rand(0x6e6963)}
	for i := range n {
		net.nics = append(net.nics, &NIC{net: net, id: i, name: name(i)})
	}
	return net, nil
}

// Model returns the network's model.
func (n *Network) Model() Model { return n.m }

// NIC returns NIC i.
func (n *Network) NIC(i int) *NIC { return n.nics[i] }

// NIC is one GPU's network interface: a transmit port shared round-robin by
// its QPs and a receive port.
type NIC struct {
	net    *Network
	id     int
	name   string
	rxFree sim.Time // when the receive port can take the next packet
	ready  []*QP    // QPs with packets to send, in round-robin order
	busy   bool     // a packet is on the transmit port
	posts  []*QP    // posts waiting out PostCost, oldest first
	sent   uint64   // payload bytes sent, for reports
}

// Name is the NIC's name.
func (c *NIC) Name() string { return c.name }

// ID is the NIC's index in its network.
func (c *NIC) ID() int { return c.id }

// Sent is the payload bytes the NIC has sent.
func (c *NIC) Sent() uint64 { return c.sent }

// QP is a queue pair: messages from one NIC to another, posted in order.
type QP struct {
	net      *Network
	src, dst *NIC
	name     string
	queue    []*Message // posted, not yet fully sent
	lastArr  sim.Time   // InOrder: no packet may land before this
	inflight []*Message // posted, not yet Done
	queued   bool       // in src.ready
}

// NewQP makes a QP from NIC src to NIC dst named for reports.
func (n *Network) NewQP(src, dst int, name string) (*QP, error) {
	if src < 0 || src >= len(n.nics) || dst < 0 || dst >= len(n.nics) {
		return nil, fmt.Errorf("nic: QP %q from NIC %d to NIC %d: the network has NICs 0..%d", name, src, dst, len(n.nics)-1)
	}
	return &QP{net: n, src: n.nics[src], dst: n.nics[dst], name: name}, nil
}

// Name is the QP's name.
func (q *QP) Name() string { return q.name }

// Unreachable reports whether the QP's destination NIC cannot be reached
// from its source (Network.SetUnreachable), and why.
func (q *QP) Unreachable() (string, bool) { return q.net.Unreachable(q.src.id, q.dst.id) }

// Src and Dst are the QP's NICs.
func (q *QP) Src() *NIC { return q.src }
func (q *QP) Dst() *NIC { return q.dst }

// Inflight lists the QP's messages that have not landed yet, oldest first.
func (q *QP) Inflight() []*Message { return q.inflight }

// Message is one operation on the wire.
type Message struct {
	Op    string // what it is, for reports ("put 4096 B", "signal")
	Bytes uint64 // payload; 0 is a header-only packet (a signal)
	// Read is called as the packet covering [lo, hi) leaves the source.
	Read func(lo, hi uint64)
	// Land is called as the packet covering [lo, hi) lands.
	Land func(lo, hi uint64)
	// Sent is called once every packet has left (local completion).
	Sent func()
	// Done is called once every packet has landed.
	Done func()

	qp                  *QP
	next                uint64 // next byte to send
	landed, packets, np uint64
	posted, readyAt     sim.Time
}

// Landed reports how many of the message's packets have landed and of how
// many.
func (m *Message) Landed() (landed, of uint64) { return m.landed, m.np }

// Posted is when the message was posted.
func (m *Message) Posted() sim.Time { return m.posted }

// QP is the message's QP.
func (m *Message) QP() *QP { return m.qp }

// Post queues m on q after PostCost; its packets go out as the source NIC's
// transmit port serves q.
func (q *QP) Post(m *Message) {
	n := q.net
	m.qp, m.posted = q, n.s.Now()
	m.np = max(1, (m.Bytes+n.chunk-1)/n.chunk)
	m.readyAt = m.posted + n.m.PostCost
	q.inflight = append(q.inflight, m)
	// The queue keeps post order even though the posts become ready later.
	q.queue = append(q.queue, m)
	// Posts become ready in post order: each timer readies the oldest
	// waiting post (timers due together run in any order).
	c := q.src
	c.posts = append(c.posts, q)
	n.s.AfterWork(n.m.PostCost, func() {
		p := c.posts[0]
		c.posts = c.posts[1:]
		p.schedule()
		c.kick()
	})
}

// schedule puts q in its NIC's round-robin when its head is ready to send.
func (q *QP) schedule() {
	if !q.queued && len(q.queue) > 0 && q.queue[0].readyAt <= q.net.s.Now() {
		q.queued = true
		q.src.ready = append(q.src.ready, q)
	}
}

// kick starts the next packet if the transmit port is idle.
func (c *NIC) kick() {
	if c.busy || len(c.ready) == 0 {
		return
	}
	n := c.net
	q := c.ready[0]
	c.ready = c.ready[1:]
	m := q.queue[0]
	lo := m.next
	hi := min(m.Bytes, lo+n.chunk)
	m.next = hi
	m.packets++
	last := m.packets == m.np
	if last {
		q.queue = q.queue[1:]
	}
	q.queued = false
	q.schedule() // back of the round-robin if its next message is ready
	c.busy = true
	ser := n.m.Serialize(hi - lo)
	n.s.AfterWork(ser, func() {
		c.busy = false
		c.sent += hi - lo
		if m.Read != nil {
			m.Read(lo, hi)
		}
		if last && m.Sent != nil {
			m.Sent()
		}
		if _, lost := q.Unreachable(); lost {
			c.kick()
			return // no path: the packet is lost in the network
		}
		wire := n.s.Now() + n.m.Latency
		if n.m.Ordering == OutOfOrder && n.m.Jitter > 0 {
			wire += sim.Time(n.rng.Int64N(int64(n.m.Jitter)))
		}
		// The receive port takes packets as they reach it, one at a time.
		n.s.AtWork(wire, func() {
			arr := max(n.s.Now(), q.dst.rxFree+ser)
			q.dst.rxFree = arr
			if n.m.Ordering == InOrder {
				arr = max(arr, q.lastArr)
				q.lastArr = arr
			}
			n.s.AtWork(arr, func() { q.land(m, lo, hi) })
		})
		c.kick()
	})
}

func (q *QP) land(m *Message, lo, hi uint64) {
	if m.Land != nil {
		m.Land(lo, hi)
	}
	m.landed++
	q.net.s.Progress()
	if m.landed < m.np {
		return
	}
	for i, x := range q.inflight {
		if x == m {
			q.inflight = append(q.inflight[:i], q.inflight[i+1:]...)
			break
		}
	}
	if m.Done != nil {
		m.Done()
	}
}
