package engine

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/emud-dev/emud/hostmem"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Region is one backed range of the flat address space (lsa.Region).
type Region = lsa.Region

// AddrError is an access outside backed memory (lsa.AddrError).
type AddrError = lsa.AddrError

// Memory is the node's flat LSA address space (a Space) backed by Go
// bytes. While the simulator runs, only the running actor or event may
// touch it; before Run (to set up buffers) and after Run returns (to check
// results) any code may.
type Memory struct {
	*lsa.Space
	back   Backing // real bytes for a region; realBytes unless Config.Backing
	guard  func(op string, addr, n uint64) error
	mapped *mappedSet // buffers mapped outside the Go heap: the default backing's regions, the rings
	rings  ringSlab   // ring buffers, outside the Go heap under the default backing
	// ringKeptMax is how many bytes of rings come from ringPool
	// (ringKeptBytes; tests set it lower)
	ringKeptMax int
	// overwrite: the caller writes every byte of what Alloc returns before
	// anything reads it (WillOverwrite)
	overwrite bool
	// lazy: the Alloc in progress may take a kept mapping uncleared
	// (realBytes), stale: it did, and marks its region stale
	lazy, stale bool
	// native: the regions are the node's Backing, which native code
	// writes without notifying (TrackSum refuses)
	native  bool
	prefill *prefill // Prefill: the next Alloc's content (&prefillBuf or nil)
	// prefillBuf holds the last Prefill's content: a seed prefills each
	// rank's send window, an allocation each before.
	prefillBuf prefill
	// scratch backs small regions (Config.Scratch, nil: the heap); small
	// are the buffers it gave, returned by release (Node.Close) only: the
	// cleanup of an unclosed node runs on another goroutine.
	scratch *Scratch
	small   [][]byte
	bits    [][]uint64 // stale regions' bitmaps from scratch (lsa.Space.MarkStale)
	// scratchRings are the kept ring buffers the scratch gave (from its
	// own list, or from ringPool on its first nodes), returned to it by
	// release, like small.
	scratchRings []keptRing
}

// firstListCap is the first capacity of a node's lists that grow a queue
// or a region at a time (rings, small regions, lagging copies, counters):
// a 4 KiB all-to-all seed's 32 queues grew each from nil, five
// allocations a list.
const firstListCap = 32

// prefill is the content Prefill gives the next Alloc.
type prefill struct {
	key  func() string
	fill func(b []byte)
	c    Content // PrefillContent's, instead of key and fill
	// block and blocks are c's Blocks when it has them all, in whole
	// granules: the region is referred to them (lsa.Space.Refer), not
	// filled, and not kept by its key.
	block  uint64
	blocks [][]byte
}

func (p *prefill) keyOf() string {
	if p.c != nil {
		return p.c.Key()
	}
	return p.key()
}

func (p *prefill) fillIn(b []byte) {
	if p.c != nil {
		p.c.Fill(b)
		return
	}
	p.fill(b)
}

// ringSlab hands out ring buffers: a node's first ringKeptBytes of them
// from buffers kept across nodes (ringPool), the rest carved from
// mappings of ringSlabBytes (a node of 64 GPUs has thousands of 256 KiB
// rings: on the Go heap they would raise the collector's goal by
// gigabytes, and under the race detector carry shadow memory; one mapping
// each would spend the process's map count). A small node's rings are
// kept buffers because a fresh mapping's pages each cost a page fault
// when first written, every job again (a job of 4096 puts spent more CPU
// in those faults than in its puts, BenchmarkWavePutSameQueue), and on
// the Go heap 4 MiB of rings a run made the collector run every few runs
// (explore's small runs allocated 4.5 MB each). A destroyed queue's
// buffer is not reused (a report may still read the old ring);
// Node.Close gives them all back.
type ringSlab struct {
	cur  []byte // the rest of the current mapping
	kept int    // bytes of rings taken from ringPool so far
}

const (
	ringSlabBytes = 16 << 20
	// 128 rings of the default 256 KiB: an 8-GPU node's, two queues a
	// pair (cco.DefaultSdmaQueues, a C++ program's default). At 16 MiB
	// half of them were carved from a fresh slab every node, and a C++
	// seed's writes to them faulted 34 pages in a seed (perf stat
	// page-faults, 40 seeds of alltoall_sum.cpp in a seed server).
	ringKeptBytes = 32 << 20
)

// ringPool is the ring buffers kept across nodes, by size, zeroed: carved
// from mappings it never gives back, at most ringPoolMax bytes in all
// (ringKeptBytes for each of 16 nodes alive at once), cleared when their
// node is closed.
var ringPool struct {
	sync.Mutex
	free hostmem.KeptList
	cur  []byte // the rest of the pool's current mapping
	made int
}

const ringPoolMax = 512 << 20 // the pool's buffers are sparse: only the pages rings wrote are resident

// takeRing returns a zeroed kept ring buffer of size bytes, or nil when
// the pool has none and no room to make one.
func takeRing(size int) ([]byte, error) {
	p := &ringPool
	p.Lock()
	defer p.Unlock()
	if b, _ := p.free.Take(uint64(size), ""); b != nil {
		return b, nil
	}
	if p.made+size > ringPoolMax {
		return nil, nil
	}
	if len(p.cur) < size {
		b, err := hostmem.MapSparse(uint64(max(size, ringSlabBytes)))
		if err != nil {
			return nil, err
		}
		p.cur = b
	}
	b := p.cur[:size:size]
	p.cur = p.cur[size:]
	p.made += size
	return b, nil
}

// keptRing is a buffer takeRing gave and the ring made over it (nil if
// none was): the ring says how much of it writes reached.
type keptRing struct {
	b []byte
	r *ring.Ring
}

// putRings clears what the rings wrote of the buffers takeRing gave (the
// whole buffer where no ring says: a 4 KiB all-to-all seed cleared 4 MiB
// of rings it wrote a few hundred bytes of, a tenth of its CPU time) and
// keeps them for the next nodes.
func putRings(kept []keptRing) {
	clearRings(kept)
	bufs := make([][]byte, len(kept))
	for i, k := range kept {
		bufs[i] = k.b
	}
	giveRings(bufs)
}

// giveRings keeps zeroed ring buffers in the pool for the next nodes.
func giveRings(bufs [][]byte) {
	p := &ringPool
	p.Lock()
	defer p.Unlock()
	for _, b := range bufs {
		p.free.Put(b, "")
	}
}

// clearRings zeroes what the rings wrote of their kept buffers.
func clearRings(kept []keptRing) {
	for _, k := range kept {
		n := uint64(len(k.b))
		if k.r != nil {
			n = min(n, k.r.Dirty())
		}
		clear(k.b[:n])
	}
}

// ringBuf returns a zeroed ring buffer of size bytes: a kept one, or one
// carved from the slab (whatever backs the regions: rings are the
// emulator's own buffers).
func (m *Memory) ringBuf(size int) ([]byte, error) {
	if !hostmem.OffHeap || size <= 0 {
		return make([]byte, max(size, 0)), nil
	}
	if m.rings.kept+size <= m.ringKeptMax {
		// A Scratch's node takes the rings its worker's last node gave
		// back: the pool's lock, taken for every ring of every seed by
		// 16 explore workers, was 6% of their CPU and left cores idle.
		b := m.scratch.takeRing(size)
		if b == nil {
			var err error
			if b, err = takeRing(size); err != nil {
				return nil, err
			}
		}
		if b != nil {
			m.rings.kept += size
			if m.scratch != nil {
				if m.scratchRings == nil {
					m.scratchRings = make([]keptRing, 0, firstListCap)
				}
				m.scratchRings = append(m.scratchRings, keptRing{b: b})
			} else {
				if m.mapped.rings == nil {
					m.mapped.rings = make([]keptRing, 0, firstListCap)
				}
				m.mapped.rings = append(m.mapped.rings, keptRing{b: b})
			}
			return b, nil
		}
	}
	if len(m.rings.cur) < size {
		b, err := hostmem.MapSparse(uint64(max(size, ringSlabBytes)))
		if err != nil {
			return nil, err
		}
		m.mapped.add(b, false)
		m.rings.cur = b
	}
	b := m.rings.cur[:size:size]
	m.rings.cur = m.rings.cur[size:]
	return b, nil
}

// ringMade tells the memory the ring r made over buf, the buffer ringBuf
// gave last: release then clears only what r's writes reached.
func (m *Memory) ringMade(buf []byte, r *ring.Ring) {
	for _, kept := range [][]keptRing{m.mapped.rings, m.scratchRings} {
		if l := len(kept); l > 0 && len(buf) > 0 && &kept[l-1].b[0] == &buf[0] {
			kept[l-1].r = r
		}
	}
}

// WillOverwrite says whether the caller writes every byte of the regions
// Alloc returns from now on before anything reads them (a host fill of a
// whole send window): the default backing then hands out a kept mapping
// without clearing it first (package hostmem), and Alloc clears only the
// region's tail past the size asked for. Turn it off again right after.
func (m *Memory) WillOverwrite(on bool) { m.overwrite = on }

// Prefill gives the next Alloc (not AllocPhantom) its content: fill
// writes every byte of the region's backing (its size rounded up to the
// page), the same bytes whenever it is called with key. The default
// backing keeps released mappings by their content (package hostmem): a
// region of key whose bytes no write reached (lsa.Space.WatchWrites) goes
// back under key when the node is closed, and the next Prefill of key and
// size gets it without calling fill (explore's seeds fill the same send
// windows run after run). key names the content in the whole process,
// built from everything fill's bytes depend on; it is called only for a
// region the default backing maps (the others are filled every time).
func (m *Memory) Prefill(key func() string, fill func(b []byte)) {
	m.prefillBuf = prefill{key: key, fill: fill}
	m.prefill = &m.prefillBuf
}

// Content is a region's content as Prefill takes it, as methods of one
// value: Key is Prefill's key and Fill its fill. Blocks, when it returns
// a block size (a multiple of lsa.StaleGranule) and every block, is the
// same content as immutable blocks laid end to end from the region's
// start, zeros past them (a scenario's pattern blocks, shared by every
// run of the process): the default backing then writes none of it. The
// region reads as the blocks, each granule copied in when an access
// first reaches it (lsa.Space.Refer), and copies from it land by
// reference (Move); a worker's first seed no longer writes its send
// windows, and its later ones need no kept mapping by key.
type Content interface {
	Key() string
	Fill(b []byte)
	Blocks() (block uint64, blocks [][]byte)
}

// PrefillContent is Prefill(c.Key, c.Fill) for a caller that keeps the
// content's state in a value of its own (a scenario's send windows, one
// value a rank): no function values to make.
func (m *Memory) PrefillContent(c Content) {
	m.prefillBuf = prefill{c: c}
	if block, blocks := c.Blocks(); block > 0 && block%lsa.StaleGranule == 0 && len(blocks) > 0 && !slices.ContainsFunc(blocks, func(b []byte) bool { return b == nil }) {
		m.prefillBuf.block, m.prefillBuf.blocks = block, blocks
	}
	m.prefill = &m.prefillBuf
}

// EndPrefill drops a Prefill that no Alloc took (an allocation made
// elsewhere than this memory) and reports whether there was one: its
// caller then writes the content itself.
func (m *Memory) EndPrefill() bool {
	p := m.prefill
	m.prefill = nil
	return p != nil
}

// Prefilled reports whether the region at addr came from Prefill with
// its content already in a kept mapping (fill was not called): for
// tests and measurements.
func (m *Memory) Prefilled(addr uint64) bool {
	for _, k := range m.mapped.keyed {
		if k.r != nil && addr >= k.r.Base && addr < k.r.End() {
			return k.hit
		}
	}
	return false
}

// offHeapMin is the region size from which the default backing maps the
// bytes outside the Go heap (package hostmem) instead of making them on
// it: large buffers then do not swell the collector's heap goal (a run's
// resident memory stays near its emulated bytes), and under the race
// detector they carry no shadow memory. Small regions cost no system call.
const offHeapMin = 1 << 20

// mappedSet is a Memory's mapped buffers, released by Node.Close or, for a
// node nobody closed, by a cleanup once its Space is unreachable (the set
// is its own object so that the cleanup does not keep the Space alive).
type mappedSet struct {
	bufs [][]byte
	// region[i]: bufs[i] backs a region (realBytes), not a slab of rings
	region []bool
	keyed  []keyedBuf // the Prefill'd regions among bufs
	rings  []keptRing // ring buffers from ringPool
}

// add records a mapped buffer: a region's (realBytes) or a ring slab.
func (ms *mappedSet) add(b []byte, region bool) {
	ms.bufs = append(ms.bufs, b)
	ms.region = append(ms.region, region)
}

// keyOf is the content b holds for UnmapAs: its Prefill key unless a write
// reached its region, else "".
func (ms *mappedSet) keyOf(b []byte) string {
	for _, k := range ms.keyed {
		if &k.b[0] == &b[0] && k.r != nil && !k.r.Written() {
			return k.key
		}
	}
	return ""
}

// giveRegions hands the regions' buffers to sc (with the content each
// still holds), leaving the ring slabs to release.
func (ms *mappedSet) giveRegions(sc *Scratch) {
	n := 0
	for i, b := range ms.bufs {
		if ms.region[i] {
			sc.keepMap(b, ms.keyOf(b))
			continue
		}
		ms.bufs[n], ms.region[n] = b, false
		n++
	}
	clear(ms.bufs[n:])
	ms.bufs, ms.region, ms.keyed = ms.bufs[:n], ms.region[:n], nil
}

// keyedBuf is a region Prefill filled: released under its key unless a
// write reached it (lsa.Space.WatchWrites).
type keyedBuf struct {
	b   []byte
	key string
	r   *Region // nil until the allocation succeeds
	hit bool    // the kept mapping held the content: fill was not called
}

func (ms *mappedSet) release() {
	for _, b := range ms.bufs {
		_ = hostmem.UnmapAs(b, ms.keyOf(b)) // a buffer Map returned, whole: cannot fail
	}
	putRings(ms.rings)
	ms.bufs, ms.region, ms.keyed, ms.rings = nil, nil, nil, nil
}

// SetGuard makes fn see every Read, Write, Load and Store made through
// the Memory (not the engine's own copies): a test harness's check that
// lane code reaches device memory only through cco.Mem. A non-nil error
// fails the access. Nil removes it.
func (m *Memory) SetGuard(fn func(op string, addr, n uint64) error) { m.guard = fn }

// Read is lsa.Space.Read, seen by the guard.
func (m *Memory) Read(addr uint64, dst []byte) error {
	if m.guard != nil {
		if err := m.guard("read", addr, uint64(len(dst))); err != nil {
			return err
		}
	}
	return m.Space.Read(addr, dst)
}

// Write is lsa.Space.Write, seen by the guard.
func (m *Memory) Write(addr uint64, src []byte) error {
	if m.guard != nil {
		if err := m.guard("write", addr, uint64(len(src))); err != nil {
			return err
		}
	}
	return m.Space.Write(addr, src)
}

// Load32 is lsa.Space.Load32, seen by the guard.
func (m *Memory) Load32(addr uint64) (uint32, error) {
	if m.guard != nil {
		if err := m.guard("load32", addr, 4); err != nil {
			return 0, err
		}
	}
	return m.Space.Load32(addr)
}

// Load64 is lsa.Space.Load64, seen by the guard.
func (m *Memory) Load64(addr uint64) (uint64, error) {
	if m.guard != nil {
		if err := m.guard("load64", addr, 8); err != nil {
			return 0, err
		}
	}
	return m.Space.Load64(addr)
}

// Store32 is lsa.Space.Store32, seen by the guard.
func (m *Memory) Store32(addr uint64, v uint32) error {
	if m.guard != nil {
		if err := m.guard("store32", addr, 4); err != nil {
			return err
		}
	}
	return m.Space.Store32(addr, v)
}

// Store64 is lsa.Space.Store64, seen by the guard.
func (m *Memory) Store64(addr uint64, v uint64) error {
	if m.guard != nil {
		if err := m.guard("store64", addr, 8); err != nil {
			return err
		}
	}
	return m.Space.Store64(addr, v)
}

// Backing returns the bytes that back a region of size bytes at flat
// address base. By default (Config.Backing nil) they are process memory:
// Go bytes below 1 MiB, an anonymous mapping outside the Go heap from
// 1 MiB (released by Node.Close, or once the node is unreachable); or
// memory mapped at base itself (MapAt), so that native code can
// dereference the region's device addresses. The bytes must be zeroed and
// stay valid for the life of the node.
type Backing func(base, size uint64) ([]byte, error)

func newMemory(n *Node) *Memory {
	m := &Memory{Space: lsa.NewSpace(n.cfg.GPUs, n.cfg.Base, n.cfg.Stride, n.s.NewWatchList("memory")), back: n.cfg.Backing,
		mapped: &mappedSet{}, ringKeptMax: ringKeptBytes, scratch: n.cfg.Scratch}
	runtime.AddCleanup(m.Space, (*mappedSet).release, m.mapped)
	m.native = m.back != nil
	if r := m.scratch.takeSums(); r != nil {
		m.Space.UseSums(r) // a seed's tracked ranges in its worker's storage
	}
	if m.back == nil {
		m.back = m.realBytes
	}
	m.Watch().EnableLog(m.loadWord)
	return m
}

// release gives back the mapped buffers (the default backing's regions,
// the rings); every later access fails (lsa.Space.Release). Memory that
// Config.Backing gave is the caller's.
func (m *Memory) release() {
	sums := m.scratch != nil && m.Space.UsesSums(&m.scratch.sums) // false once released
	m.Space.Release()
	m.rings = ringSlab{}
	if m.scratch != nil {
		// Kept by the worker for its next node, without the bound that
		// all of hostmem's kept buffers share (KeepMax): 16 workers'
		// 1 MiB all-to-alls hold 2 GiB of windows, and past that bound
		// each seed mapped, faulted in and filled its windows afresh.
		m.mapped.giveRegions(m.scratch)
	}
	m.mapped.release()
	if m.scratch != nil {
		m.scratch.put(m.small)
		m.scratch.putBits(m.bits)
		m.scratch.putRings(m.scratchRings)
		if sums {
			m.scratch.sumsHeld = false
		}
	}
	// a second Close must not give them back twice
	m.small, m.bits, m.scratchRings = nil, nil, nil
}

// loadWord reads a tracked word for the write log (sim.WriteLog).
func (m *Memory) loadWord(addr uint64, width int) uint64 {
	if width == 4 {
		v, _ := m.Load32(addr)
		return uint64(v)
	}
	v, _ := m.Load64(addr)
	return v
}

// Log is the write log of the node's memory: the last writes of the
// signal slots and flags that waits watch (sim.WriteLog), which hang
// reports quote. Engine-side POLLs track their word; cco tracks its
// signal slots and postWaitMem flags.
func (m *Memory) Log() *sim.WriteLog { return m.Watch().Log() }

// Alloc backs size bytes (rounded up to 4 KiB) of GPU g's slice, zeroed, and
// returns the address. Allocations are not freed one by one (a run is
// short); Node.Close frees them all.
func (m *Memory) Alloc(g int, size uint64, name string) (uint64, error) {
	return m.alloc(g, size, name, false)
}

// AllocPhantom maps size bytes of GPU g's slice with no backing: copies to
// and from it cost time but move nothing, loads read 0, stores are dropped.
// For timing-only scale runs; keep flags and signals in Alloc'd memory.
func (m *Memory) AllocPhantom(g int, size uint64, name string) (uint64, error) {
	return m.alloc(g, size, name, true)
}

// AllocAt allocates [addr, addr+size) at that fixed address (page-aligned,
// inside one GPU's slice, clear of other regions), zeroed: for a packet
// stream built elsewhere, whose addresses are mapped as they are. Later
// Allocs step over it.
func (m *Memory) AllocAt(addr, size uint64, name string) (uint64, error) {
	base, err := m.Space.AllocAt(addr, size, name, m.back)
	if err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	return base, nil
}

// realBytes backs a region with process memory: a mapping outside the Go
// heap from offHeapMin, Go bytes below.
func (m *Memory) realBytes(_, rounded uint64) ([]byte, error) {
	if rounded > 1<<40 {
		return nil, fmt.Errorf("too large to back with real bytes; use phantom mode")
	}
	if rounded < offHeapMin || !hostmem.OffHeap {
		if m.scratch == nil {
			return make([]byte, rounded), nil
		}
		b := m.scratch.take(rounded)
		if m.small == nil {
			m.small = make([][]byte, 0, firstListCap)
		}
		m.small = append(m.small, b)
		return b, nil
	}
	if p := m.prefill; p != nil && p.blocks == nil {
		key := p.keyOf()
		b, hit := m.scratch.takeMap(rounded, key)
		if b == nil {
			var err error
			if b, hit, err = hostmem.MapAs(rounded, key); err != nil {
				return nil, err
			}
		}
		if !hit {
			p.fillIn(b)
		}
		m.mapped.add(b, true)
		m.mapped.keyed = append(m.mapped.keyed, keyedBuf{b: b, key: key, hit: hit}) // its region: alloc
		return b, nil
	}
	// A kept buffer (the worker's, else hostmem's) holds its last user's
	// bytes: cleared here, or not (the caller overwrites it whole), or
	// marked stale, its granules zeroed as accesses reach them but not
	// those a copy overwrites whole (lsa.Space.MarkStale).
	b, _ := m.scratch.takeMap(rounded, "")
	kept := b != nil
	if !kept {
		var err error
		if b, kept, err = hostmem.MapStale(rounded); err != nil {
			return nil, err
		}
	}
	if kept {
		switch {
		case m.overwrite:
		case m.lazy:
			m.stale = true
		default:
			clear(b)
		}
	}
	m.mapped.add(b, true)
	return b, nil
}

func (m *Memory) alloc(g int, size uint64, name string, phantom bool) (uint64, error) {
	back := m.back
	if phantom {
		back = func(_, _ uint64) ([]byte, error) { return nil, nil }
	}
	keyed := len(m.mapped.keyed)
	m.lazy, m.stale = !phantom, false
	base, err := m.Space.Alloc(g, size, name, back)
	m.lazy = false
	if m.stale && err == nil {
		m.stale = false
		// The bitmap from the worker's Scratch: 4 KiB per 8 MiB window
		// that each seed would make again.
		var buf []uint64
		if m.scratch != nil {
			buf = m.scratch.takeBits(lsa.MarkStaleWords((size + lsa.PageSize - 1) / lsa.PageSize * lsa.PageSize))
			m.bits = append(m.bits, buf)
		}
		if err := m.Space.MarkStale(base, buf); err != nil {
			return 0, fmt.Errorf("engine: %w", err)
		}
	}
	p := m.prefill
	if !phantom {
		m.prefill = nil
	}
	if err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	if p != nil && !phantom {
		if err := m.fillRegion(base, size, p, keyed); err != nil {
			return 0, err
		}
		return base, nil
	}
	if m.overwrite && !phantom && size%lsa.PageSize != 0 {
		// The last page's tail past size is no one's to overwrite: zero it.
		r, err := m.Space.Region("alloc", base, size)
		if err != nil {
			return 0, fmt.Errorf("engine: %w", err)
		}
		tail, err := m.Space.Bytes("alloc", base+size, r.Size-size)
		if err != nil {
			return 0, fmt.Errorf("engine: %w", err)
		}
		clear(tail)
	}
	return base, nil
}

// fillRegion finishes a Prefill'd Alloc at base: a region the default
// backing mapped by its key (the mappings past keyed) is watched for
// writes; any other (Go bytes, Config.Backing) is filled here.
func (m *Memory) fillRegion(base, size uint64, p *prefill, keyed int) error {
	r, err := m.Space.Region("alloc", base, size)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if len(m.mapped.keyed) > keyed {
		m.mapped.keyed[keyed].r = r
		m.Space.WatchWrites(r)
		return nil
	}
	if p.blocks != nil && !m.native {
		var buf []uint64
		if m.scratch != nil && m.Space.Stale(base) == 0 {
			buf = m.scratch.takeBits(lsa.MarkStaleWords(r.Size))
			m.bits = append(m.bits, buf)
		}
		ok, err := m.Space.Refer(base, p.block, p.blocks, buf)
		if err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		if ok {
			return nil
		}
	}
	b, err := m.Space.Bytes("write", base, r.Size)
	if err != nil || b == nil {
		return err
	}
	p.fillIn(b)
	m.Notify(base, r.Size)
	return nil
}

// bytes returns the backing bytes of [addr, addr+n), or nil in phantom mode.
func (m *Memory) bytes(op string, addr, n uint64) ([]byte, error) { return m.Bytes(op, addr, n) }

// holds reports whether [addr, addr+n) is backed by bytes (not phantom),
// without landing copies in flight (lsa.Space.SetBeforeAccess).
func (m *Memory) holds(addr, n uint64) bool {
	r, err := m.Region("", addr, n)
	return err == nil && !r.Phantom()
}

// Fill sets [addr, addr+n) to v.
func (m *Memory) Fill(addr, n uint64, v byte) error {
	b, err := m.BytesOverwrite("write", addr, n)
	if err != nil {
		return err
	}
	for i := range b {
		b[i] = v
	}
	m.Notify(addr, n)
	return nil
}

// Atomic applies f to the naturally aligned word of width bytes (4 or 8) at
// addr in one read-modify-write, wakes waiters, and returns the old value.
// A 4-byte word is zero-extended into f and truncated back.
func (m *Memory) Atomic(addr uint64, width int, f func(old uint64) uint64) (uint64, error) {
	if width != 4 && width != 8 {
		return 0, &AddrError{Op: "atomic", Addr: addr, Len: uint64(width), Reason: "width must be 4 or 8 bytes"}
	}
	w := uint64(width)
	if addr%w != 0 {
		return 0, &AddrError{Op: "atomic", Addr: addr, Len: w, Reason: fmt.Sprintf("not %d-byte aligned", w)}
	}
	b, err := m.bytes("atomic", addr, w)
	if err != nil || b == nil {
		return 0, err
	}
	var old uint64
	if w == 4 {
		old = uint64(binary.LittleEndian.Uint32(b))
		binary.LittleEndian.PutUint32(b, uint32(f(old)))
	} else {
		old = binary.LittleEndian.Uint64(b)
		binary.LittleEndian.PutUint64(b, f(old))
	}
	m.Notify(addr, w)
	return old, nil
}

// AtomicAdd64 adds v to the 64-bit word at addr (8-byte aligned) in one
// read-modify-write and returns the old value.
func (m *Memory) AtomicAdd64(addr, v uint64) (uint64, error) {
	return m.Atomic(addr, 8, func(old uint64) uint64 { return old + v })
}

// Move copies n bytes from src to dst with memmove semantics (the engine's
// COPY). It returns whether the ranges overlap.
func (m *Memory) Move(dst, src, n uint64) (overlap bool, err error) {
	if n == 0 {
		return false, nil
	}
	// A source referred to its content (lsa.Space.Refer) is not read, so
	// it stays unmoved when the copy lands by reference; Pristine lands
	// what is due first, as an access would.
	overlap = src < dst+n && dst < src+n
	if m.landsRef(dst, src, n, overlap) {
		return false, nil
	}
	sb, err := m.bytes("copy source read", src, n)
	if err != nil {
		return false, err
	}
	// The copy writes every byte of the destination, so stale granules it
	// covers need no zeroing first (lsa.Space.MarkStale); from a phantom
	// source it writes none.
	dstBytes := m.BytesOverwrite
	if sb == nil {
		dstBytes = m.Bytes
	}
	db, err := dstBytes("copy destination write", dst, n)
	if err != nil {
		return false, err
	}
	if overlap || db == nil || sb == nil {
		// One memmove (Land's pieces would read bytes an earlier piece
		// wrote), or a phantom side: nothing lands, but the write is
		// announced over the whole range all the same.
		copy(db, sb)
		m.Notify(dst, n)
		return overlap, nil
	}
	m.Land(dst, db, sb) // copy and notify; a tracked range sums the bytes (lsa.Space.TrackSum)
	return false, nil
}

// landsRef lands a copy by reference (lsa.Space.LandRef) when its source
// is immutable content (lsa.Space.Pristine: a scenario's pattern blocks
// that nothing wrote since) and its destination whole granules of a
// region with bytes that only lsa.Space accesses reach: the bytes are
// copied in when an access first reaches them, so nothing can tell, and
// a check that only compares sums never moves them. It reports whether
// it did; if not, Move copies.
func (m *Memory) landsRef(dst, src, n uint64, overlap bool) bool {
	if overlap || m.native || dst%lsa.StaleGranule != 0 || n%lsa.StaleGranule != 0 {
		return false
	}
	c := m.Space.Pristine(src, n)
	if c == nil || !m.holds(dst, n) {
		return false
	}
	took, err := m.Space.LandRef(dst, c)
	return err == nil && took // an error: Move's own path reports it
}

// TrackSum is lsa.Space.TrackSum: [addr, addr+n) is summed as copies
// land in it, for a receive check (LandedSum). It is refused on memory
// that Config.Backing gives, which native code writes without notifying.
func (m *Memory) TrackSum(addr, n uint64) error {
	if m.native {
		return fmt.Errorf("engine: track sum [%#x, +%d): the node's memory is its Config.Backing, which native code writes unseen", addr, n)
	}
	return m.Space.TrackSum(addr, n)
}

// AwaitTimeout is Await that gives up after d: it reports whether pred
// held.
func (m *Memory) AwaitTimeout(a *sim.Actor, addr, n uint64, pred func() bool, what func() string, d sim.Time) bool {
	return a.AwaitTimeout(sim.Wait{List: m.Watch(), Lo: addr, Hi: addr + n, Pred: pred, Text: what}, d)
}

// Await blocks actor a until pred holds, woken by writes to [addr, addr+n).
// what describes the wait for hang reports; it is called at report time.
func (m *Memory) Await(a *sim.Actor, addr, n uint64, pred func() bool, what func() string) {
	a.Await(sim.Wait{List: m.Watch(), Lo: addr, Hi: addr + n, Pred: pred, Text: what})
}
