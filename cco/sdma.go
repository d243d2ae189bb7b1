package cco

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Unit is CCO_SDMA_UNIT, the ring slot of one packet.
const Unit = ring.Unit

// MaxCopyBytes is CCO_SDMA_MAX_COPY_BYTES: larger transfers are chunked.
const MaxCopyBytes = ring.MaxCopyBytes

// Sdma is ccoSdma: the device API of one dev comm, as one lane sees it.
// Construct it inside the kernel, per thread, like `ccoSdma sdma{devComm}`.
type Sdma struct {
	t  *kernel.Thread
	dc DevComm
	st *devState
	p  post     // this lane's arguments for the call in progress
	sa syncArgs // the same for a sync call (syncConverge)
}

// NewSdma is `ccoSdma sdma{devComm}` for thread t.
func NewSdma(t *kernel.Thread, dc DevComm) *Sdma {
	s := new(Sdma)
	s.Init(t, dc)
	return s
}

// Init is NewSdma into s, which the caller allocated (a launcher that
// makes its lanes' handles in one slice); s is overwritten.
func (s *Sdma) Init(t *kernel.Thread, dc DevComm) {
	*s = Sdma{t: t, dc: dc, st: dc.st}
	s.p.s = s
}

// Thread is the lane the object belongs to.
func (s *Sdma) Thread() *kernel.Thread { return s.t }

// DevComm is the dev comm the object was built from.
func (s *Sdma) DevComm() DevComm { return s.dc }

func (s *Sdma) n() int {
	if s.st == nil {
		return 0
	}
	if s.st.n == 0 && !s.st.warnedOff {
		// MORI: every call on such a comm silently does nothing. emud does
		// nothing too, but says so, once per dev comm.
		s.st.warnedOff = true
		s.st.c.h.warn("ccoSdma on rank %d: dev comm #%d has no SDMA queues (sdmaNumQueue == 0: MORI_ENABLE_SDMA is not set, or SDMA is off): every ccoSdma call on it does nothing, as on hardware",
			s.st.c.Rank, s.st.idx)
	}
	return s.st.n
}

func (s *Sdma) me() int { return s.dc.LsaRank }

// fail traps the lane at call: the kernel stops with a *kernel.LaneError.
func (s *Sdma) fail(call string, format string, args ...any) {
	s.t.Fail(call, fmt.Errorf(format, args...))
}

func (s *Sdma) parse(call string, k optKind, list []Option) opts {
	o, err := parse(call, k, list)
	if err != nil {
		s.t.Fail(call, err)
	}
	return o
}

// checkPeer: an out-of-range peer is not checked by MORI and faults on
// hardware; the emulator stops the kernel naming the call [inferred].
func (s *Sdma) checkPeer(call string, peer int) {
	if peer < 0 || peer >= s.dc.LsaSize {
		s.fail(call, "peer %d outside the LSA ranks [0, %d) (peers are LSA ranks; on hardware this reads a null queue handle and faults)", peer, s.dc.LsaSize)
	}
}

// leader reports whether this lane posts for its coop scope.
func (s *Sdma) leader(c Coop) bool {
	switch c {
	case CoopWarp:
		return s.t.Lane() == 0
	case CoopBlock:
		return s.t.ThreadIdx() == 0
	}
	return true
}

// post is one lane's request to a posting call.
type post struct {
	s      *Sdma
	call   string
	o      opts
	peer   int
	peer2  int // broadcast
	q      int
	dst    uint64
	dst2   uint64 // broadcast
	src    uint64
	bytes  uint64
	sigs   bool // this chunk carries the call's signals
	broad  bool
	wait   bool // a POLL unit first (postWaitMem*)
	flag   uint64
	value  uint32
	mask   uint32
	cmp    Cmp
	copy   bool // a COPY (or broadcast) unit follows
	serial bool // single issuer: post one lane at a time, no grouping
	idle   bool // a lane of the coop group that does not post (not the leader, or a no-op)
	custom bool // GIN: the signals are at[:nAt], not the pool's slots (gin.go)
	nAt    int
	at     [MaxSignalsAt]SignalAt

	// set while posting
	queue *Queue
	base  uint64
	size  uint64 // soloBytes, once the post is claimed
	key   int
	pk    ring.Packet // scratch: a packet passed through the Queue interface escapes
}

func (p *post) sigCount() int {
	if !p.sigs {
		return 0
	}
	if p.custom {
		return p.nAt
	}
	n := 0
	if p.o.local {
		n++
	}
	if p.o.remote {
		_, k := p.remotePeers()
		n += k
	}
	return n
}

// remotePeers are the pools a remote signal bumps: the peer, and for a
// broadcast the second peer, each once and never yourself. A fixed array:
// this runs for every signalling post.
func (p *post) remotePeers() (ps [2]int, n int) {
	me := p.s.me()
	if !p.broad {
		return [2]int{p.peer}, 1
	}
	if p.peer != me {
		ps[n], n = p.peer, n+1
	}
	if p.peer2 != me && p.peer2 != p.peer {
		ps[n], n = p.peer2, n+1
	}
	return ps, n
}

// signalSlots are the addresses of the chunk's signal ATOMICs, in ring
// order: the local slot, then each remote peer's slot, all in row me.
func (p *post) signalSlots() (addrs [3]uint64, n int, err error) {
	if !p.sigs {
		return addrs, 0, nil
	}
	if p.custom {
		for i := range p.nAt {
			addrs[i] = p.at[i].Addr
		}
		return addrs, p.nAt, nil
	}
	st, me := p.s.st, p.s.me()
	if p.o.local {
		if addrs[n], err = st.pool.Slot(me, p.q); err != nil {
			return addrs, 0, fmt.Errorf("local signal: %w", err)
		}
		n++
	}
	if p.o.remote {
		peers, k := p.remotePeers()
		for _, peer := range peers[:k] {
			pool, err := st.peerPool(peer)
			if err == nil {
				addrs[n], err = pool.Slot(me, p.q)
			}
			if err != nil {
				return addrs, 0, fmt.Errorf("remote signal: %w", err)
			}
			n++
		}
	}
	return addrs, n, nil
}

// fused reports whether the post lowers onto one COPY_LINEAR_WAIT_SIGNAL
// (model.Arch.LowerFused): a wait, a single copy and at least one signal,
// the flag 8-byte aligned (the packet's wait address has no bits 2:0). The
// packet carries the first signal; the others stay ATOMIC units.
func (p *post) fused() bool {
	return p.s.st.arch.LowerFused && p.wait && p.copy && !p.broad && p.flag%8 == 0 && p.sigCount() > 0
}

// fusedPacket is the post's COPY_LINEAR_WAIT_SIGNAL signalling sig: the
// 32-bit compare on the flag's low dword as a 64-bit compare with the high
// dword masked off.
func (p *post) fusedPacket(sig uint64) ring.Packet {
	return ring.CopyWaitSignal(p.s.st.arch.Dialect, p.dst, p.src, p.bytes,
		&ring.WaitBlock{Func: p.cmp, Addr: p.flag, Ref: uint64(p.value), Mask: uint64(p.mask)},
		&ring.SignalBlock{Op: ring.AtomicOpAdd64, Addr: sig, Data: 1})
}

// fusedUnits is how many units the fused packet takes.
func (p *post) fusedUnits() uint64 {
	pk := p.fusedPacket(0)
	return (uint64(pk.Size()) + Unit - 1) / Unit
}

// multicast reports whether a putBroadcast post lowers onto one
// COPY_LINEAR_MULTICAST to its two destinations carrying the first signal
// in its signal block (model.Arch.LowerMulticast, gfx1250). Like the
// broadcast it takes the three-unit placement (36..56 B).
func (p *post) multicast() bool {
	return p.s.st.arch.LowerMulticast && p.broad && p.copy && !p.wait
}

// soloBytes is the reservation of a post by one lane.
func (p *post) soloBytes() uint64 {
	if p.fused() {
		return (p.fusedUnits() + uint64(p.sigCount()-1)) * Unit
	}
	if p.multicast() {
		return (3 + uint64(max(p.sigCount()-1, 0))) * Unit
	}
	n := uint64(p.sigCount()) * Unit
	if p.wait {
		n += Unit
	}
	if p.copy {
		if p.broad {
			n += 3 * Unit
		} else {
			n += Unit
		}
	}
	return n
}

// ---- put / get / putPtr ----

var putCall = &kernel.Call[*post]{Name: "put", Run: runPosts}

// Put is ccoSdma::put: copy bytes from srcWin+srcOff here to dstWin+dstOff on
// LSA peer peer, through queue (peer, queueId). It does not wait: drain
// with Quiet/QuietQueue or wait for a signal.
func (s *Sdma) Put(peer int, dstWin Window, dstOff uint64, srcWin Window, srcOff uint64, bytes uint64, queueId int, o ...Option) {
	s.xfer("put", peer, func() (uint64, uint64) { return dstWin.LsaPtr(peer, dstOff), srcWin.LocalPtr(srcOff) }, bytes, queueId, o)
}

// Get is ccoSdma::get: copy bytes from LSA peer peer's srcWin+srcOff to
// dstWin+dstOff here, through this GPU's queue (peer, queueId).
func (s *Sdma) Get(peer int, dstWin Window, dstOff uint64, srcWin Window, srcOff uint64, bytes uint64, queueId int, o ...Option) {
	s.xfer("get", peer, func() (uint64, uint64) { return dstWin.LocalPtr(dstOff), srcWin.LsaPtr(peer, srcOff) }, bytes, queueId, o)
}

// PutPtr is put with raw pointers: dst is the peer's memory as mapped here
// (an LSA pointer), src is local.
func (s *Sdma) PutPtr(peer int, dst, src uint64, bytes uint64, queueId int, o ...Option) {
	s.xfer("putPtr", peer, func() (uint64, uint64) { return dst, src }, bytes, queueId, o)
}

func (s *Sdma) xfer(call string, peer int, addrs func() (uint64, uint64), bytes uint64, q int, list []Option) {
	o := s.parse(call, optsPut, list)
	n := s.n()
	if n == 0 {
		return
	}
	// A silent no-op (before any ballot, docs/cco-semantics.md §2.3) or a lane
	// that is not its group's leader: on hardware it waits, EXEC bit off,
	// until the call's lanes leave it together. Both paths park at the one
	// chunked call below, so they form one group.
	idle := q < 0 || q >= n || bytes == 0 || !s.leader(o.coop) || s.missing(call, peer, q)
	var dst, src uint64
	if !idle {
		s.checkPeer(call, peer)
		dst, src = addrs()
		if s.st.debug && dst < src+bytes && src < dst+bytes {
			s.fail(call, "source [%#x, %#x) and destination [%#x, %#x) overlap: the engine's COPY is undefined on overlap (emulator debug check, not MORI's)",
				src, src+bytes, dst, dst+bytes)
		}
	}
	s.p = post{call: call, o: o, peer: peer, q: q, dst: dst, src: src, bytes: bytes, copy: true, idle: idle}
	s.chunked(&s.p, putCall)
}

// chunked posts p in chunks of at most MaxCopyBytes, the signals on the last
// (ccoSdmaDispatchChunked). Each chunk is its own group post.
func (s *Sdma) chunked(p *post, c *kernel.Call[*post]) {
	if p.bytes <= MaxCopyBytes {
		p.sigs = true
		s.converge(p, c)
		return
	}
	full := (p.bytes - 1) / MaxCopyBytes
	orig := *p
	p = &orig
	for i := uint64(0); i < full; i++ {
		ch := *p
		ch.bytes, ch.sigs = MaxCopyBytes, false
		ch.dst, ch.dst2, ch.src = p.dst+i*MaxCopyBytes, p.dst2+i*MaxCopyBytes, p.src+i*MaxCopyBytes
		s.converge(&ch, c)
	}
	last := *p // p may be &s.p, which converge overwrites
	last.bytes, last.sigs = p.bytes-full*MaxCopyBytes, true
	last.dst, last.dst2, last.src = p.dst+full*MaxCopyBytes, p.dst2+full*MaxCopyBytes, p.src+full*MaxCopyBytes
	s.converge(&last, c)
}

func (s *Sdma) converge(p *post, c *kernel.Call[*post]) {
	p.s = s
	if p != &s.p {
		s.p = *p
	}
	kernel.ConvergeIf(s.t, c, &s.p, !s.p.idle)
}

// runPosts posts the group of lanes that reached a put-family call together
// (ccoSdmaPutThread): solo, SameQueue, or Independent grouping.
func runPosts(g *kernel.Active, ps []*post) error {
	lanes := g.Lanes()
	a := g.Actor()
	p0 := ps[0]
	if len(ps) == 1 || p0.o.coop != CoopThread || p0.serial {
		for i, p := range ps {
			if err := soloPosts(a, lanes[i:i+1], []*post{p}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range ps {
		p.key = p.peer*p.s.n() + p.q
	}
	switch p0.o.mode {
	case SdmaThreadSameQueue:
		if p0.s.st.debug {
			for i, p := range ps {
				if p.key != p0.key { // waveMatchAny(queueKey) != active
					return g.Errorf(lanes[i], "debug check 3 (SameQueue promise broken): lane %d targets peer %d queue %d but the wave's leader lane %d targets peer %d queue %d; with ccoSdmaThreadSameQueue every active lane must use one (peer, queueId)",
						lanes[i].Lane(), p.peer, p.q, lanes[0].Lane(), p0.peer, p0.q)
				}
			}
		}
		return groupPost(g, lanes, ps)
	case SdmaThreadLegacyPerLane:
		return soloPosts(a, lanes, ps)
	}
	// Independent: if no lane shares its key, all post solo in parallel.
	shared := false
	for i := 0; i < len(ps) && !shared; i++ {
		for j := i + 1; j < len(ps) && !shared; j++ {
			shared = ps[i].key == ps[j].key
		}
	}
	if !shared {
		return soloPosts(a, lanes, ps)
	}
	// Otherwise the whole wave posts group by group, lowest lane first.
	done := make([]bool, len(ps))
	for i := range ps {
		if done[i] {
			continue
		}
		var gl []*kernel.Thread
		var gp []*post
		for j := i; j < len(ps); j++ {
			if !done[j] && ps[j].key == ps[i].key {
				done[j] = true
				gl = append(gl, lanes[j])
				gp = append(gp, ps[j])
			}
		}
		if err := groupPost(g, gl, gp); err != nil {
			return err
		}
	}
	return nil
}

// soloPosts posts each lane on its own, in lock-step: all claim, all spin
// for space, all write, all spin on the commit chain, all ring. Lanes that
// share a queue therefore deadlock in the chain (the pre-grouping bug).
func soloPosts(a *sim.Actor, lanes []*kernel.Thread, ps []*post) error {
	h := ps[0].s.st.c.h
	h.cuSpend(a, model.Issue(issueShape(ps, false)), 1)
	for i, p := range ps {
		q, err := p.s.st.queue(p.peer, p.q)
		if err != nil {
			return lanes[i].Error(p.call, err)
		}
		p.queue, p.size = q, p.soloBytes()
		if p.base, err = claim(lanes[i], p, q, p.size); err != nil {
			return err
		}
	}
	for i, p := range ps {
		awaitSpace(a, lanes[i], p, p.queue, p.base, p.size)
	}
	for i, p := range ps {
		if err := writeSolo(lanes[i], p, p.queue, p.base); err != nil {
			return err
		}
		p.s.st.c.h.diag.lanesJoined(p)
	}
	if ps[0].o.aggregate() {
		for i, p := range ps {
			p.s.st.c.h.diag.aggregated(p.queue, lanes[i].Wave(), p.size, int(p.size/Unit))
		}
		return nil
	}
	for i, p := range ps {
		if err := awaitChain(a, lanes[i], p, p.queue, p.base, p.base+p.size); err != nil {
			return err
		}
	}
	h.cuSpend(a, model.Submit, 1)
	for i, p := range ps {
		if err := p.queue.Submit(a, p.base, p.base+p.size); err != nil {
			return lanes[i].Error(p.call, err)
		}
	}
	return nil
}

// groupPost is the grouped path: the leader (lowest lane) reserves for all,
// each lane writes its unit(s) into its own queue's ring at the leader's
// base, the last lane writes the group signals, and the leader rings once.
func groupPost(g *kernel.Active, lanes []*kernel.Thread, ps []*post) error {
	a := g.Actor()
	k := len(ps)
	lead := ps[0]
	perCopy := lead.o.signalPerCopy()
	sig := lead.sigCount()
	stride := uint64(Unit)
	total := uint64(k+sig) * Unit
	if perCopy {
		stride = uint64(1+sig) * Unit
		total = stride * uint64(k)
	}
	lq, err := lead.s.st.queue(lead.peer, lead.q)
	if err != nil {
		return g.Errorf(lanes[0], "%v", err)
	}
	h := lead.s.st.c.h
	h.cuSpend(a, model.Issue(issueShape(ps, true)), 1)
	base, err := claim(lanes[0], lead, lq, total)
	if err != nil {
		return err
	}
	awaitSpace(a, lanes[0], lead, lq, base, total)
	for i, p := range ps {
		// Each lane uses the handle of its own (peer, q): under a broken
		// SameQueue promise it writes into another queue's ring.
		q, err := p.s.st.queue(p.peer, p.q)
		if err != nil {
			return g.Errorf(lanes[i], "%v", err)
		}
		at := base + uint64(i)*stride
		if err := writeCopy(lanes[i], p, q, at); err != nil {
			return err
		}
		if perCopy {
			if err := writeSignals(lanes[i], p, q, at+Unit); err != nil {
				return err
			}
		} else if i == k-1 && sig > 0 {
			if err := writeSignals(lanes[i], p, q, base+uint64(k)*Unit); err != nil {
				return err
			}
		}
		p.s.st.c.h.diag.lanesJoined(p)
	}
	if lead.o.aggregate() {
		lead.s.st.c.h.diag.aggregated(lq, lanes[0].Wave(), total, int(total/Unit))
		return nil
	}
	if err := awaitChain(a, lanes[0], lead, lq, base, base+total); err != nil {
		return err
	}
	h.cuSpend(a, model.Submit, 1)
	if err := lq.Submit(a, base, base+total); err != nil {
		return g.Errorf(lanes[0], "%v", err)
	}
	return nil
}

// writeSolo writes one lane's whole post: [POLL]? [COPY or broadcast]?
// [signals].
func writeSolo(t *kernel.Thread, p *post, q *Queue, base uint64) error {
	at := base
	if p.fused() {
		return writeFused(t, p, q, base)
	}
	if p.wait {
		p.pk = ring.Poll(p.flag, p.value, p.mask, p.cmp, pollInterval, ring.RetryForever)
		if err := q.WriteUnit(at, &p.pk); err != nil {
			return t.Error(p.call, err)
		}
		q.Posted(at, t)
		at += Unit
	}
	if p.multicast() {
		return writeMulticast(t, p, q, at)
	}
	if p.copy {
		if p.broad {
			p.pk = ring.Broadcast(p.dst, p.dst2, p.src, p.bytes)
			pos, err := q.WriteBroadcast(at, &p.pk)
			if err != nil {
				return t.Error(p.call, err)
			}
			q.Posted(pos, t)
			at += 3 * Unit
		} else {
			if err := writeCopy(t, p, q, at); err != nil {
				return err
			}
			at += Unit
		}
	}
	return writeSignals(t, p, q, at)
}

func writeCopy(t *kernel.Thread, p *post, q *Queue, at uint64) error {
	p.pk = ring.Copy(p.dst, p.src, p.bytes)
	if err := q.WriteUnit(at, &p.pk); err != nil {
		return t.Error(p.call, err)
	}
	q.Posted(at, t)
	return nil
}

// writeFused writes the post lowered onto the architecture's fused packet:
// [COPY_LINEAR_WAIT_SIGNAL with the first signal][ATOMIC for each other].
func writeFused(t *kernel.Thread, p *post, q *Queue, base uint64) error {
	addrs, n, err := p.signalSlots()
	if err != nil {
		return t.Error(p.call, err)
	}
	p.pk = p.fusedPacket(addrs[0])
	units := p.fusedUnits()
	if err := q.WritePacket(base, int(units), &p.pk); err != nil {
		return t.Error(p.call, err)
	}
	q.Posted(base, t)
	p.s.st.c.h.diag.signalPosted(addrs[0], sigPost{rank: p.s.me(), call: p.call, peer: p.peer, qid: p.q, q: q, at: base, when: t.Now(), bytes: p.bytes})
	return writeSignalAddrs(t, p, q, base+units*Unit, addrs[1:n])
}

// writeMulticast writes a putBroadcast lowered onto gfx1250's multicast:
// [COPY_LINEAR_MULTICAST to dst and dst2, the first signal in its signal
// block][ATOMIC for each other signal].
func writeMulticast(t *kernel.Thread, p *post, q *Queue, base uint64) error {
	addrs, n, err := p.signalSlots()
	if err != nil {
		return t.Error(p.call, err)
	}
	var s *ring.SignalBlock
	if n > 0 {
		s = &ring.SignalBlock{Op: ring.AtomicOpAdd64, Addr: addrs[0], Data: 1}
	}
	p.pk, err = ring.Multicast([]uint64{p.dst, p.dst2}, p.src, p.bytes, nil, s)
	if err != nil {
		return t.Error(p.call, err)
	}
	pos, err := q.WriteBroadcast(base, &p.pk)
	if err != nil {
		return t.Error(p.call, err)
	}
	q.Posted(pos, t)
	if n == 0 {
		return nil
	}
	p.s.st.c.h.diag.signalPosted(addrs[0], sigPost{rank: p.s.me(), call: p.call, peer: p.peer, qid: p.q, q: q, at: base, when: t.Now(), bytes: p.bytes})
	return writeSignalAddrs(t, p, q, base+3*Unit, addrs[1:n])
}

// writeSignals writes the chunk's ATOMIC ADD64 +1 units at at: local first,
// then the remote peer(s).
func writeSignals(t *kernel.Thread, p *post, q *Queue, at uint64) error {
	addrs, n, err := p.signalSlots()
	if err != nil {
		return t.Error(p.call, err)
	}
	return writeSignalAddrs(t, p, q, at, addrs[:n])
}

func writeSignalAddrs(t *kernel.Thread, p *post, q *Queue, at uint64, addrs []uint64) error {
	for i, addr := range addrs {
		v := uint64(1)
		if p.custom { // never fused nor multicast: addrs are at[:nAt]
			v = p.at[i].Value
		}
		p.pk = ring.AtomicAdd64(addr, v)
		if err := q.WriteUnit(at, &p.pk); err != nil {
			return t.Error(p.call, err)
		}
		q.Posted(at, t)
		p.s.st.c.h.diag.signalPosted(addr, sigPost{rank: p.s.me(), call: p.call, peer: p.peer, qid: p.q, q: q, at: at, when: t.Now(), bytes: p.bytes})
		at += Unit
	}
	return nil
}

// pollInterval is the POLL_REGMEM interval ROCr uses.
const pollInterval = 4
