package engine

import (
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// Engine timing (model.Model, docs/sdma-hardware.md §8):
//
//   - A packet's effect happens when it starts (ATOMIC, POLL that holds,
//     ...) or when its data has moved (COPY); the read pointer moves right
//     then. The engine then spends the model's packet gap
//     (model.PacketGap) before it starts the next packet of the burst:
//     completion handshake plus the fetch of the successor. An idle
//     queue's first packet is fetched the model's model.Doorbell cost
//     after the doorbell.
//   - A COPY's bytes cross the directed path src → dst (one xGMI direction,
//     or the GPU's own memory) in chunks of model.LinkChunkBytes. Each chunk takes the
//     path for chunk/bandwidth, after whatever chunk holds it, so copies
//     sharing a path interleave and share its bandwidth; copies on
//     different paths run in parallel. The first chunk waits the path's
//     fixed latency (model.CopyLatency) after the packet starts; a peer
//     chunk's bandwidth is the model's StreamRate for who runs the copy
//     (a pull when the engine is the destination's) and how many queues'
//     chunks hold the path then.
//   - A broadcast COPY reads once and writes its two destinations one after
//     the other, chunk by chunk, each stream at the model's broadcast
//     Rate: one engine does not overlap its two writes (seed document).
//   - Bytes move as they cross (data.go): the granule of data movement is
//     the burst (Burst, 256 B), much finer than the link-sharing chunk.
//     Burst k of a chunk lands when k+1 bursts' share of the chunk's time
//     on its path has passed: its source bytes are read and its
//     destination bytes written then, in address order, so a load during a
//     copy sees the bursts landed so far and a store to a source burst not
//     yet read is what gets sent.

// link is the arbitration state of one directed path: when it is next
// free, and the queues whose chunks hold it (each until its chunk's end),
// which is how many streams share it (model.Stream.Sharing).
type link struct {
	free     sim.Time
	users    []linkUser
	usersBuf [2]linkUser // users' first two: most paths carry a queue or two
}

// linkUser is one queue's latest chunk on a link.
type linkUser struct {
	q   *Queue
	end sim.Time
}

// sharing returns how many queues' chunks hold l after now, q's next
// one included, forgetting those whose last chunk has ended (they have
// left the path).
func (l *link) sharing(q *Queue, now sim.Time) int {
	k := 1
	out := l.users[:0]
	for _, u := range l.users {
		if u.end <= now && u.q != q {
			continue
		}
		if u.q != q {
			k++
		}
		out = append(out, u)
	}
	l.users = out
	return k
}

// hold records that q's chunk holds l until end.
func (l *link) hold(q *Queue, end sim.Time) {
	for i := range l.users {
		if l.users[i].q == q {
			l.users[i].end = end
			return
		}
	}
	if l.users == nil {
		l.users = l.usersBuf[:0]
	}
	l.users = append(l.users, linkUser{q: q, end: end})
}

// xfer is a COPY's data movement in progress.
type xfer struct {
	active bool
	src    int
	dst    []int // destination GPUs, one per stream (in dstBuf unless more)
	dstBuf [2]int
	nd     int
	left   uint64   // bytes still to move (per destination)
	cur    int      // destination index of the next chunk
	chunk  uint64   // size of the chunk in flight
	data   xferData // addresses and bytes moved so far (data.go)
	// first marks the copy's first chunk, which waits the path's fixed
	// latency (model.CopyLatency) before it takes the path.
	first bool
}

func (n *Node) linkOf(src, dst int) *link {
	k := [2]int{src, dst}
	if n.lastLink != nil && n.lastLinkKey == k {
		// Links are never removed: the last one looked up is still the
		// path's (a map lookup per chunk was a tenth of a small copy's CPU).
		return n.lastLink
	}
	l := n.links[k]
	if l == nil {
		if n.links == nil {
			n.links = map[[2]int]*link{}
		}
		l = n.slabs.links.New()
		n.links[k] = l
	}
	n.lastLink, n.lastLinkKey = l, k
	return l
}

// jitter spreads d, one use of the engine-side cost keyed k (an engine's
// packet gap, a queue's doorbell latency), by the run's timing
// perturbation (sim.Perturber) and the model's relative jitter, both from
// the run's seed.
func (q *Queue) jitter(k sim.Key, d sim.Time) sim.Time {
	n := q.n
	d = n.s.Perturb().Duration(k, d)
	j := n.model.Jitter()
	if j <= 0 || d <= 0 {
		return d
	}
	if n.jit == nil {
		n.jit = n.s.Rand(0x6a177e72)
	}
	return sim.Time(float64(d) * (1 + j*(2*n.jit.Float64()-1)))
}

// startXfer begins moving bytes from GPU src to dsts (one or two).
func (q *Queue) startXfer(bytes uint64, src int, dsts []int) {
	x := &q.x
	x.active, x.src, x.nd, x.left, x.cur, x.first = true, src, len(dsts), bytes, 0, true
	if x.dst == nil {
		x.dst = x.dstBuf[:0] // a copy or a broadcast: no allocation per queue
	}
	x.dst = append(x.dst[:0], dsts...)
	q.xferNext()
}

// xferNext puts the next chunk on its path. The copy's first chunk takes
// the path no earlier than the path's fixed latency after the packet
// started (the first read and write in flight; another copy may use the
// path meanwhile). A peer stream that the destination's engine runs is a
// pull (model.Stream.Pull), and one that shares its directed path with
// other queues' chunks is timed at the model's rate for that many
// streams.
func (q *Queue) xferNext() {
	x := &q.x
	m := q.n.model
	now := q.n.s.Now()
	x.chunk = min(x.left, model.LinkChunkBytes)
	d := x.dst[x.cur]
	ready := now
	if x.first {
		x.first = false
		if lat := m.Cost(model.CopyLatency(x.src, d)); lat > 0 {
			// Jittered only when there is a latency: a zero one draws no
			// random number, so models without it time runs as before.
			ready += q.jitter(sim.Key{Kind: sim.KeyEngine, A: uint32(q.eng.gpu), B: uint32(q.eng.id + 1)}, lat)
		}
	}
	s := model.Stream{Src: x.src, Dst: d, Broadcast: x.nd > 1}
	peer := x.src != d && x.src != model.Host && d != model.Host
	s.Pull = peer && x.src != q.eng.gpu
	l := q.n.linkOf(x.src, d)
	if peer {
		s.Sharing = l.sharing(q, now)
	}
	// One rate per chunk: a perturbed model draws a factor per call.
	bw := m.StreamRate(s)
	start := max(ready, l.free)
	l.free = start + sim.Time(float64(x.chunk)/bw*float64(sim.Nanosecond))
	if peer {
		l.hold(q, l.free)
	}
	q.startBursts(start, l.free)
	q.n.s.AtWorkStep(l.free, (*xferStep)(q), 0)
}

// xferStep is a queue's xferChunk as a sim Handler (see gapStep).
type xferStep Queue

func (s *xferStep) Step(uint64) { (*Queue)(s).xferChunk() }

// xferChunk runs when a chunk has crossed its path.
func (q *Queue) xferChunk() {
	x := &q.x
	if !x.active || q.state != qBusy {
		if d := &x.data; d.pend > 0 {
			_ = q.landPending(d.off + d.landed) // cannot fail: real bytes
		}
		q.n.unlag(q)
		return
	}
	if !q.landChunk() {
		q.eng.resume() // halted mid-copy: the engine goes on with its other queues
		return
	}
	if x.cur++; x.cur == x.nd {
		x.cur = 0
		x.left -= x.chunk
		x.data.off += x.chunk
	}
	if x.left > 0 {
		q.xferNext()
		return
	}
	x.active = false
	q.complete()
}
