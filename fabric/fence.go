package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// ProxyType is ncclMemProxyType: who accesses memory.
type ProxyType int

const (
	ProxyGeneric ProxyType = 1 // the SM's load/store unit
	ProxyFabric  ProxyType = 2 // the fabric proxy
)

func (p ProxyType) String() string {
	switch p {
	case ProxyGeneric:
		return "Generic"
	case ProxyFabric:
		return "Fabric"
	}
	return fmt.Sprintf("ncclMemProxyType(%d)", int(p))
}

// FenceScope is ncclMemFenceScope.
type FenceScope int

const (
	FenceScopeCta FenceScope = 1 // point of consistency: SM shared memory
	FenceScopeSys FenceScope = 2 // point of consistency: L2
)

func (s FenceScope) String() string {
	switch s {
	case FenceScopeCta:
		return "Cta"
	case FenceScopeSys:
		return "Sys"
	}
	return fmt.Sprintf("ncclMemFenceScope(%d)", int(s))
}

// MemoryOrder is cuda::memory_order.
type MemoryOrder int

const (
	Relaxed MemoryOrder = iota
	Consume
	Acquire
	Release
	AcqRel
	SeqCst
)

var orderNames = [...]string{"relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst"}

func (o MemoryOrder) String() string {
	if o >= 0 && int(o) < len(orderNames) {
		return "memory_order_" + orderNames[o]
	}
	return fmt.Sprintf("memory_order(%d)", int(o))
}

// ReleaseOrderOf is releaseOrderOf (utility.h): acquire → relaxed,
// acq_rel → release, others unchanged.
func ReleaseOrderOf(o MemoryOrder) MemoryOrder {
	switch o {
	case Acquire:
		return Relaxed
	case AcqRel:
		return Release
	}
	return o
}

// AcquireOrderOf is acquireOrderOf: release → relaxed, acq_rel → acquire.
func AcquireOrderOf(o MemoryOrder) MemoryOrder {
	switch o {
	case Release:
		return Relaxed
	case AcqRel:
		return Acquire
	}
	return o
}

func hasRelease(o MemoryOrder) bool { return o == Release || o == AcqRel || o == SeqCst }
func hasAcquire(o MemoryOrder) bool { return o == Acquire || o == AcqRel || o == SeqCst }

func checkFenceArgs(o MemoryOrder, p, c ProxyType, s FenceScope) error {
	switch {
	case o < Relaxed || o > SeqCst:
		return fmt.Errorf("order %v is not a cuda::memory_order", o)
	case p != ProxyGeneric && p != ProxyFabric:
		return fmt.Errorf("producer %v is not Generic or Fabric", p)
	case c != ProxyGeneric && c != ProxyFabric:
		return fmt.Errorf("consumer %v is not Generic or Fabric", c)
	case s != FenceScopeCta && s != FenceScopeSys:
		return fmt.Errorf("scope %v is not Cta or Sys", s)
	}
	return nil
}

// MemFence is ncclMemFence(coop, order, producer, consumer, scope) (spec
// §9): relaxed does nothing; a release part syncs coop first, an acquire
// part after; the elected thread issues the proxy fence. Memory in the
// emulator is sequentially consistent, so the fence moves no data; with
// Config.Debug it feeds the fence checker. Cta-scope fences order shared
// memory only and do not count for window memory.
func MemFence(coop kernel.Group, dc DevComm, order MemoryOrder, producer, consumer ProxyType, scope FenceScope) {
	t := coop.Thread()
	if err := checkFenceArgs(order, producer, consumer, scope); err != nil {
		t.Fail("ncclMemFence", err)
	}
	if order == Relaxed {
		return
	}
	rel := ReleaseOrderOf(order)
	if rel == Release || rel == SeqCst {
		coop.Sync()
	}
	if coop.ThreadRank() == 0 && dc.st != nil {
		dc.st.sys.fence(dc.Rank, order, producer, consumer, scope)
	}
	if dc.st != nil {
		dc.st.sys.raceFence(t, dc.Rank, order, producer, consumer, scope) // each wave of coop
	}
	acq := AcquireOrderOf(order)
	if acq == Acquire || acq == SeqCst {
		coop.Sync()
	}
}

// fence records a fence issued on rank for the checker.
func (sys *System) fence(rank int, order MemoryOrder, producer, consumer ProxyType, scope FenceScope) {
	if sys.chk == nil || scope != FenceScopeSys {
		return
	}
	if hasRelease(order) {
		sys.chk.release(rank, producer, consumer)
	}
	if hasAcquire(order) {
		sys.chk.acquire(rank, producer, consumer)
	}
}

// ---- generic (SM load/store) access to the local window ----

func (dc DevComm) local(t *kernel.Thread, call string, w Window, off, n uint64) []byte {
	if dc.st == nil {
		t.Fail(call, fmt.Errorf("the dev comm was not made by DevCommCreate"))
	}
	if w.sys != dc.st.sys || w.WorldRank != dc.Rank {
		t.Fail(call, fmt.Errorf("window of rank %d used through rank %d's dev comm: generic loads and stores reach the local window only", w.WorldRank, dc.Rank))
	}
	if off+n < off || off+n > w.Bytes {
		t.Fail(call, fmt.Errorf("[%d, %d) outside the window's %d B", off, off+n, w.Bytes))
	}
	b := w.bigOffset() + off
	return dc.st.sys.ranks[dc.Rank].bytes(b, n) // nil in a phantom window
}

// Load is a generic (SM) load of len(dst) bytes of the local window at off,
// through ncclGetLocalPointer. With Config.Debug the fence checker verifies
// that every byte's last write is ordered before this read for the Generic
// proxy, and fails the kernel naming the missing fence if not.
func (dc DevComm) Load(t *kernel.Thread, w Window, off uint64, dst []byte) {
	src := dc.local(t, "load", w, off, uint64(len(dst)))
	if chk := dc.st.sys.chk; chk != nil {
		if err := chk.read(dc.Rank, dc.Rank, w.bigOffset()+off, uint64(len(dst)), ProxyGeneric, "generic load"); err != nil {
			t.Fail("load", err)
		}
	}
	if src == nil {
		clear(dst) // a phantom window reads as zeros
	}
	copy(dst, src)
	dc.st.sys.raceGeneric(t, dc.Rank, "generic load", w.bigOffset()+off, uint64(len(dst)), false, false)
}

// LoadRelaxed is a relaxed generic load the checker does not check: the
// polling of a flag, which a fence after it orders (spec §9 pattern 1).
func (dc DevComm) LoadRelaxed(t *kernel.Thread, w Window, off uint64, dst []byte) {
	src := dc.local(t, "loadRelaxed", w, off, uint64(len(dst)))
	if src == nil {
		clear(dst)
	}
	copy(dst, src)
	dc.st.sys.raceGeneric(t, dc.Rank, "relaxed load", w.bigOffset()+off, uint64(len(dst)), false, true)
}

// Store is a generic (SM) store into the local window.
func (dc DevComm) Store(t *kernel.Thread, w Window, off uint64, src []byte) {
	dst := dc.local(t, "store", w, off, uint64(len(src)))
	copy(dst, src)
	sys := dc.st.sys
	b := w.bigOffset() + off
	if sys.chk != nil {
		sys.chk.genericWrite(dc.Rank, b, uint64(len(src)))
	}
	sys.raceGeneric(t, dc.Rank, "generic store", b, uint64(len(src)), true, false)
	sys.ranks[dc.Rank].wl.Notify(b, b+uint64(len(src)))
}

// ---- the fence checker (Config.Debug) ----

// FenceError is the fence checker's report: a read of bytes whose last
// write, by another proxy or rank, is not ordered before it.
type FenceError struct {
	Reader  int       // rank that reads
	Owner   int       // rank whose memory is read
	Offset  uint64    // first offending byte (big-VA offset)
	Call    string    // the reading call
	Writer  int       // rank that issued the write
	Proxy   ProxyType // proxy that wrote
	Reads   ProxyType // proxy that reads
	WroteAt sim.Time
	Missing string // the fence or barrier that would order it
}

func (e *FenceError) Error() string {
	return fmt.Sprintf("fence checker: %s by rank %d of rank %d's byte %#x, written by rank %d through the %v proxy at %v, is not ordered after that write: missing %s",
		e.Call, e.Reader, e.Owner, e.Offset, e.Writer, e.Proxy, e.WroteAt, e.Missing)
}

type writeRec struct {
	proxy  ProxyType
	issuer int
	seq    uint64    // when it landed
	rel    [3]uint64 // released for consumer proxy (index ProxyType)
	at     sim.Time
}

type checker struct {
	sys    *System
	seq    uint64
	shadow [][]*writeRec  // per rank, per byte: last write (nil: host or none)
	acq    [][3][3]uint64 // per rank: last acquire for [producer][consumer]
	unrel  [][]*writeRec  // per issuer: writes not yet released for both consumers
}

func newChecker(sys *System) *checker {
	n := len(sys.ranks)
	return &checker{sys: sys, shadow: make([][]*writeRec, n), acq: make([][3][3]uint64, n), unrel: make([][]*writeRec, n)}
}

func (c *checker) sh(rank int, end uint64) []*writeRec {
	if uint64(len(c.shadow[rank])) < end {
		// Size it to the rank's memory at once: windows are made before
		// kernels run, so this happens once per rank.
		n := max(end, c.sys.ranks[rank].used)
		c.shadow[rank] = append(c.shadow[rank], make([]*writeRec, n-uint64(len(c.shadow[rank])))...)
	}
	return c.shadow[rank]
}

func (c *checker) hostWrite(rank int, off, n uint64) {
	clear(c.sh(rank, off+n)[off : off+n])
}

func (c *checker) record(proxy ProxyType, issuer int) *writeRec {
	c.seq++
	w := &writeRec{proxy: proxy, issuer: issuer, seq: c.seq, at: c.sys.s.Now()}
	c.unrel[issuer] = append(c.unrel[issuer], w)
	return w
}

func (c *checker) genericWrite(rank int, off, n uint64) {
	w := c.record(ProxyGeneric, rank)
	s := c.sh(rank, off+n)
	for i := off; i < off+n; i++ {
		s[i] = w
	}
}

func (c *checker) fabricWrite(o *fop, d int, lo, hi uint64) {
	var w *writeRec
	if o.counted {
		// A counted write's counter grows by the bytes it delivered, a
		// system-scope atomic after the data (spec §13): the waitCounted
		// that acquires the counter sees the data with no fence of the
		// producer's, so the write lands released for both consumers (as
		// the race detector has it). Before, a correct counted all-gather
		// failed under --debug asking the producer for a release fence.
		c.seq++
		w = &writeRec{proxy: ProxyFabric, issuer: o.rank, seq: c.seq, at: c.sys.s.Now()}
		w.rel[ProxyGeneric], w.rel[ProxyFabric] = c.seq, c.seq
	} else {
		w = c.record(ProxyFabric, o.rank)
	}
	s := c.sh(d, o.leOff+hi)
	for i := lo; i < hi; i++ {
		if o.mask&(1<<uint(i%16)) != 0 {
			s[o.leOff+i] = w
		}
	}
}

func (c *checker) release(rank int, p, cons ProxyType) {
	c.seq++
	kept := c.unrel[rank][:0]
	for _, w := range c.unrel[rank] {
		if w.proxy == p && w.rel[cons] == 0 {
			w.rel[cons] = c.seq
		}
		if w.rel[ProxyGeneric] == 0 || w.rel[ProxyFabric] == 0 {
			kept = append(kept, w)
		}
	}
	clear(c.unrel[rank][len(kept):])
	c.unrel[rank] = kept
}

func (c *checker) acquire(rank int, p, cons ProxyType) {
	c.seq++
	c.acq[rank][p][cons] = c.seq
}

// read checks a read of [off, off+n) of owner's memory by reader through
// proxy cons. A write is ordered before it when the reader issued it
// through the same proxy, or the reader acquired (producer → cons) after
// it landed (own writes) or after the writer released it for cons.
func (c *checker) read(reader, owner int, off, n uint64, cons ProxyType, call string) error {
	s := c.sh(owner, off+n)
	var last *writeRec
	for i := off; i < off+n; i++ {
		w := s[i]
		if w == nil || w == last {
			continue
		}
		last = w
		acq := c.acq[reader][w.proxy][cons]
		fix := fmt.Sprintf("ncclMemFence(acquire, %v, %v, Sys) on rank %d (or a barrier wait with acquire order, producer %v, consumer %v) after the write",
			w.proxy, cons, reader, w.proxy, cons)
		if w.issuer == reader {
			if w.proxy == cons || acq > w.seq {
				continue
			}
		} else {
			rel := w.rel[cons]
			if rel != 0 && acq > rel {
				continue
			}
			if rel == 0 {
				fix = fmt.Sprintf("ncclMemFence(release, %v, %v, Sys) on rank %d after its flush (or a barrier arrive with release order, producer %v, consumer %v), then an acquire on rank %d",
					w.proxy, cons, w.issuer, w.proxy, cons, reader)
			}
		}
		return &FenceError{Reader: reader, Owner: owner, Offset: i, Call: call, Writer: w.issuer, Proxy: w.proxy, Reads: cons, WroteAt: w.at, Missing: fix}
	}
	return nil
}
