package lsa

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/emud-dev/emud/sim"
)

// Space is the bookkeeping of a flat LSA address space: GPU g's slice is
// [Base + g·Stride, Base + (g+1)·Stride), the slice after the last GPU's
// is host (system) memory (Host), allocations are page-aligned bumps
// within a slice, and an access resolves to its region or to an
// *AddrError naming the hole. The emulator's Memory backs regions with Go
// bytes; a hardware backend backs them with device memory at the same
// addresses, so one program gets the same addresses (and packet bytes) on
// both.
type Space struct {
	base, stride uint64
	gpus         int
	strideShift  uint       // log2(stride) when a power of two, else 0
	regions      []*Region  // sorted by Base
	next         []uint64   // per GPU, then the host slice: bump pointer
	last         [2]*Region // most recently used regions
	// near caches regions by a hash of an address they hold (Region):
	// a lane's fence evaluates every watched word's predicate (MORI's
	// doorbells, signal slots, flags) across hundreds of regions, which
	// the two-entry cache misses and a binary search over every region
	// paid each time. Regions never move or shrink while the space
	// lives, so an entry stays right; a hit is checked by bounds. Made
	// once the space holds nearFrom regions: a small seed's node (a
	// dozen regions) neither needs nor allocates it.
	near      *[nearSlots]*Region
	watch     *sim.WatchList
	before    func()                          // called before each data access (SetBeforeAccess)
	released  bool                            // Release dropped every region
	foreign   bool                            // SetOnNotify was called: another layer writes these bytes too
	onNotify  func(addr, n uint64)            // SetOnNotify
	watched   []*Region                       // WatchWrites: regions no notified write has reached yet
	pristine  []pristineRegion                // SetPristine: regions no write has reached yet
	sums      *SumRanges                      // TrackSum's ranges (sums.go); nil until the first, or UseSums
	sourceSum func(src []byte) (uint64, bool) // SetSourceSums
	// spare are regions made a chunk at a time and not yet placed: a
	// run's node places a dozen, an allocation each before.
	spare []Region
}

// firstRegions is the first chunk of regions a space makes (and its
// region list's first capacity); later chunks double.
const firstRegions = 16

// Region is one backed range of the flat address space.
type Region struct {
	Base, Size uint64
	GPU        int
	Name       string
	data       []byte // nil in phantom mode
	written    bool   // WatchWrites: a notified write reached it
	// stale is nil unless some of data holds a previous user's bytes
	// (MarkStale); a pointer, so that a Region stays in its allocation
	// size class (explore's small seeds make a dozen a seed).
	stale *staleBits
}

// staleBits has a bit per granule (StaleGranule) of a region's data that
// holds a previous user's bytes and reads as zero: Bytes zeroes a granule
// the first time it hands out any of it, unless the caller overwrites it
// whole (BytesOverwrite).
type staleBits struct {
	w []uint64
	n int // granules still stale
	// refs is nil unless LandRef made some stale granules read as a
	// source's bytes rather than zero (refs.go).
	refs []refRun
}

// End is one past the region's last byte.
func (r *Region) End() uint64 { return r.Base + r.Size }

// Phantom reports whether the region holds no bytes (phantom mode).
func (r *Region) Phantom() bool { return r.data == nil }

// AddrError is an access outside backed memory: what the hardware reports as
// a VM hole or page fault.
type AddrError struct {
	Op     string // "read", "write", "atomic", ...
	Addr   uint64
	Len    uint64
	Reason string
}

func (e *AddrError) Error() string {
	return fmt.Sprintf("%s of %d B at %#x: %s", e.Op, e.Len, e.Addr, e.Reason)
}

// NewSpace returns the empty space of gpus slices of stride bytes from base.
// Its writes wake the waiters on watch (nil: none).
func NewSpace(gpus int, base, stride uint64, watch *sim.WatchList) *Space {
	s := &Space{base: base, stride: stride, gpus: gpus, next: make([]uint64, gpus+1), watch: watch}
	if stride&(stride-1) == 0 {
		s.strideShift = uint(bits.TrailingZeros64(stride))
	}
	return s
}

// PageSize is the alignment and granule of an allocation: a page, like
// hipMalloc.
const PageSize = 4096

// Host is the home of host (system) memory in Alloc, AllocAt, HomeOf and
// Region.GPU: what hipHostMalloc returns and KFD allocates in GTT, reached
// by a GPU's SDMA engines over its PCIe link to the CPU, not over xGMI.
// Its slice follows the last GPU's, one stride long. GPUOf, which names
// GPUs only, returns −1 for it.
const Host = -2

// SliceBase returns the first address of GPU g's slice (g = Host: the
// host slice's).
func (s *Space) SliceBase(g int) uint64 { return s.base + uint64(s.slot(g))*s.stride }

// slot is g's index in the slices: a GPU's own, the host's after them.
func (s *Space) slot(g int) int {
	if g == Host {
		return s.gpus
	}
	return g
}

// HomeOf returns the GPU whose memory holds addr, Host for the host slice,
// or −1.
func (s *Space) HomeOf(addr uint64) int {
	if g := s.GPUOf(addr); g >= 0 {
		return g
	}
	if h := s.SliceBase(Host); addr >= h && addr-h < s.stride && h > s.base {
		return Host
	}
	return -1
}

// onName is where an allocation of g goes, in errors.
func onName(g int) string {
	if g == Host {
		return "in host memory"
	}
	return fmt.Sprintf("on GPU %d", g)
}

// sliceName names g's slice in errors.
func sliceName(g int) string {
	if g == Host {
		return "host memory's"
	}
	return fmt.Sprintf("GPU %d's", g)
}

// GPUOf returns the GPU whose slice holds addr, or −1.
func (s *Space) GPUOf(addr uint64) int {
	if addr < s.base {
		return -1
	}
	var g uint64
	if s.strideShift > 0 {
		g = (addr - s.base) >> s.strideShift // the default strides are powers of two: no division per packet
	} else {
		g = (addr - s.base) / s.stride
	}
	if g >= uint64(s.gpus) {
		return -1
	}
	return int(g)
}

// Alloc reserves size bytes (rounded up to a page) of GPU g's slice, backs
// them with what back returns for the region's base and rounded size (nil:
// phantom, no bytes), and returns the base. The bump pointer steps over
// regions placed with AllocAt. Nothing is reserved when back fails. Errors
// name the allocation.
func (s *Space) Alloc(g int, size uint64, name string, back func(base, size uint64) ([]byte, error)) (uint64, error) {
	if (g < 0 || g >= s.gpus) && g != Host {
		return 0, fmt.Errorf("alloc %q: GPU %d outside [0, %d) (host memory is lsa.Host)", name, g, s.gpus)
	}
	if size == 0 {
		return 0, fmt.Errorf("alloc %q %s: size 0", name, onName(g))
	}
	if g == Host && s.HomeOf(s.SliceBase(Host)) != Host {
		return 0, fmt.Errorf("alloc %q: no host slice: %d GPUs × stride %#x from base %#x leave no room after the last GPU's", name, s.gpus, s.stride, s.base)
	}
	rounded := (size + PageSize - 1) / PageSize * PageSize
	next := s.next[s.slot(g)]
	for {
		if rounded < size || next+rounded > s.stride || next+rounded < next {
			return 0, fmt.Errorf("alloc %q: %d B does not fit in %s %d B slice (%d B used)", name, size, sliceName(g), s.stride, next)
		}
		r := s.overlap(s.SliceBase(g)+next, rounded)
		if r == nil {
			break
		}
		next = r.End() - s.SliceBase(g) // a fixed region: bump past it
	}
	base := s.SliceBase(g) + next
	if err := s.place(g, base, rounded, name, back); err != nil {
		return 0, err
	}
	s.next[s.slot(g)] = next + rounded
	return base, nil
}

// AllocAt reserves [addr, addr+size) (size rounded up to a page) at that
// fixed address, which must be page-aligned, inside one GPU's slice (or
// the host slice) and clear of every other region: for a packet stream
// written elsewhere whose addresses must be mapped as they are. Backing is
// as for Alloc.
func (s *Space) AllocAt(addr, size uint64, name string, back func(base, size uint64) ([]byte, error)) (uint64, error) {
	g := s.HomeOf(addr)
	rounded := (size + PageSize - 1) / PageSize * PageSize
	switch {
	case size == 0:
		return 0, fmt.Errorf("alloc %q at %#x: size 0", name, addr)
	case addr%PageSize != 0:
		return 0, fmt.Errorf("alloc %q at %#x: not a multiple of the %d B page", name, addr, PageSize)
	case g == -1:
		return 0, fmt.Errorf("alloc %q at %#x: outside every GPU's slice and the host slice", name, addr)
	case rounded < size || addr-s.SliceBase(g)+rounded > s.stride:
		return 0, fmt.Errorf("alloc %q at %#x: %d B runs past the end of %s slice", name, addr, size, sliceName(g))
	}
	if r := s.overlap(addr, rounded); r != nil {
		return 0, fmt.Errorf("alloc %q at %#x (%d B): overlaps region %q [%#x, %#x)", name, addr, rounded, r.Name, r.Base, r.End())
	}
	if err := s.place(g, addr, rounded, name, back); err != nil {
		return 0, err
	}
	return addr, nil
}

// overlap returns a region that meets [base, base+n), or nil.
func (s *Space) overlap(base, n uint64) *Region {
	i := sort.Search(len(s.regions), func(i int) bool { return s.regions[i].End() > base })
	if i < len(s.regions) && s.regions[i].Base < base+n {
		return s.regions[i]
	}
	return nil
}

// place backs [base, base+rounded) and inserts it in address order.
func (s *Space) place(g int, base, rounded uint64, name string, back func(base, size uint64) ([]byte, error)) error {
	if s.released {
		return fmt.Errorf("alloc %q: %d B %s: the space was released (its node was closed)", name, rounded, onName(g))
	}
	data, err := back(base, rounded)
	if err != nil {
		return fmt.Errorf("alloc %q: %d B at %#x %s: %w", name, rounded, base, onName(g), err)
	}
	if data != nil && uint64(len(data)) != rounded {
		return fmt.Errorf("alloc %q: backed %d B, asked %d B", name, len(data), rounded)
	}
	if len(s.spare) == 0 {
		s.spare = make([]Region, max(firstRegions, len(s.regions)))
	}
	r := &s.spare[0]
	s.spare = s.spare[1:]
	*r = Region{Base: base, Size: rounded, GPU: g, Name: name, data: data}
	i := sort.Search(len(s.regions), func(i int) bool { return s.regions[i].Base > base })
	if s.regions == nil {
		s.regions = make([]*Region, 0, firstRegions)
	}
	s.regions = append(s.regions, nil)
	copy(s.regions[i+1:], s.regions[i:])
	s.regions[i] = r
	return nil
}

// Release drops every region, so that the memory behind them can be given
// back: every later access, and every later allocation, fails with an
// error saying the space was released. Releasing twice is harmless.
func (s *Space) Release() {
	s.released = true
	s.regions, s.last, s.watched, s.spare, s.sums, s.pristine = nil, [2]*Region{}, nil, nil, nil, nil
	s.near = nil
	s.sourceSum = nil
}

// Released reports whether Release was called.
func (s *Space) Released() bool { return s.released }

// Regions returns the allocated regions, sorted by address.
func (s *Space) Regions() []*Region { return s.regions }

// Region finds the region holding [addr, addr+n).
func (s *Space) Region(op string, addr, n uint64) (*Region, error) {
	// Copies alternate between a source and a destination region: a
	// two-entry cache saves the search on the per-packet path.
	for _, r := range s.last {
		if r != nil && addr >= r.Base && addr-r.Base+n <= r.Size && addr+n >= addr {
			return r, nil
		}
	}
	var r *Region
	h := nearSlot(addr)
	if s.near != nil {
		r = s.near[h]
	}
	if r == nil || addr < r.Base || addr-r.Base >= r.Size {
		i := sort.Search(len(s.regions), func(i int) bool { return s.regions[i].End() > addr })
		if i == len(s.regions) || s.regions[i].Base > addr {
			return nil, &AddrError{Op: op, Addr: addr, Len: n, Reason: s.hole(addr)}
		}
		r = s.regions[i]
		if s.near == nil && len(s.regions) >= nearFrom {
			s.near = new([nearSlots]*Region)
		}
		if s.near != nil {
			s.near[h] = r
		}
	}
	if n > r.Size-(addr-r.Base) {
		return nil, &AddrError{Op: op, Addr: addr, Len: n,
			Reason: fmt.Sprintf("runs %d B past the end of region %q [%#x, %#x)", addr+n-r.End(), r.Name, r.Base, r.End())}
	}
	s.last[1], s.last[0] = s.last[0], r
	return r, nil
}

// nearSlots is the size of Space.near: a power of two. nearFrom is the
// region count from which a space keeps it.
const (
	nearSlots = 512
	nearFrom  = 64
)

// nearSlot hashes an address to its Space.near entry: by its 256-byte
// granule (small allocations, such as a queue's pointer words, share
// pages) folded with its GPU slice's bits, so the same offset in two
// GPUs' slices lands apart.
func nearSlot(addr uint64) int {
	return int((addr>>8 ^ addr>>20 ^ addr>>32) & (nearSlots - 1))
}

func (s *Space) hole(addr uint64) string {
	if s.released {
		return "the space was released (its node was closed)"
	}
	if g := s.HomeOf(addr); g != -1 {
		return fmt.Sprintf("unmapped (VM hole in %s slice at offset %#x)", sliceName(g), addr-s.SliceBase(g))
	}
	return "unmapped (outside every GPU's slice and the host slice)"
}

// SetBeforeAccess makes fn run before each access to the space's bytes
// (Bytes and everything built on it), until set to nil: the emulator lands
// the bursts of copies in flight that are due by now, so that an access
// sees exactly the bytes landed before it. fn's own accesses do not call
// it again.
func (s *Space) SetBeforeAccess(fn func()) { s.before = fn }

// landDue calls the SetBeforeAccess function, whose own accesses do not
// call it again: what is due lands before any access.
func (s *Space) landDue() {
	if s.before != nil {
		fn := s.before
		s.before = nil
		fn()
		s.before = fn
	}
}

// Bytes returns the backing of [addr, addr+n): nil for a phantom region.
func (s *Space) Bytes(op string, addr, n uint64) ([]byte, error) {
	return s.bytes(op, addr, n, false)
}

// Reach is an access to [addr, addr+n) that does not look at the bytes
// (a consumer's load whose values nothing uses): like Bytes it lands what
// is due first (SetBeforeAccess) and checks the range, but it leaves
// stale and reference-landed granules (MarkStale, LandRef) as they are,
// for the access that reads them to copy in.
func (s *Space) Reach(op string, addr, n uint64) error {
	s.landDue()
	_, err := s.Region(op, addr, n)
	return err
}

// BytesOverwrite is Bytes for a caller that writes every byte of
// [addr, addr+n) before anything reads any: the stale granules
// (MarkStale) it covers whole are handed out as they are, not zeroed
// first, and of those it covers in part only the bytes outside the range
// are zeroed.
func (s *Space) BytesOverwrite(op string, addr, n uint64) ([]byte, error) {
	return s.bytes(op, addr, n, true)
}

func (s *Space) bytes(op string, addr, n uint64, overwrite bool) ([]byte, error) {
	s.landDue()
	r, err := s.Region(op, addr, n)
	if err != nil || r.data == nil {
		return nil, err
	}
	off := addr - r.Base
	if overwrite && len(s.pristine) > 0 {
		s.endPristine(addr, n)
	}
	if r.stale != nil {
		r.unstale(off, n, overwrite)
	}
	return r.data[off : off+n : off+n], nil
}

// MarkStale says that the bytes of the region at base are a previous
// user's, to read as zero: the backing need not be cleared now, Bytes
// zeroes each granule (StaleGranule) the first time an access reaches
// it. A backing reused from an earlier run (hostmem's kept mappings) then
// costs no clear for the granules a copy overwrites whole
// (BytesOverwrite), which for an all-to-all's receive windows is all. Only Bytes reaches a
// region's data, so no access can see the stale bytes. The bitmap of
// stale granules goes in buf when it is long enough (MarkStaleWords says
// how long it must be; its content does not matter), else in a new slice:
// the caller may reuse buf once the region is gone.
func (s *Space) MarkStale(base uint64, buf []uint64) error {
	r, err := s.Region("mark stale", base, 1)
	if err != nil {
		return err
	}
	if r.Base != base {
		return fmt.Errorf("mark stale %#x: not the base of region %q [%#x, %#x)", base, r.Name, r.Base, r.End())
	}
	if r.data == nil {
		return nil
	}
	gs := int((r.Size + StaleGranule - 1) / StaleGranule)
	sb := &staleBits{n: gs}
	if words := (gs + 63) / 64; cap(buf) >= words {
		sb.w = buf[:words]
	} else {
		sb.w = make([]uint64, words)
	}
	for w := range sb.w {
		sb.w[w] = ^uint64(0)
	}
	if gs%64 != 0 {
		sb.w[len(sb.w)-1] = ^uint64(0) >> (64 - gs%64)
	}
	r.stale = sb
	if len(s.pristine) > 0 {
		s.endPristine(r.Base, r.Size)
	}
	return nil
}

// MarkStaleWords is how many words of buf MarkStale needs for a region of
// size bytes.
func MarkStaleWords(size uint64) int {
	return int((size+StaleGranule-1)/StaleGranule+63) / 64
}

// StaleGranule is the unit in which a stale region's bytes are zeroed or
// taken as overwritten (MarkStale): a COPY's burst (256 B), so that the
// bursts a copy lands, at whatever time an access makes them land, cover
// whole granules and clear nothing.
const StaleGranule = 256

// Stale reports how many granules (StaleGranule) of the region at addr
// are still stale (MarkStale): for tests and measurements.
func (s *Space) Stale(addr uint64) int {
	r, err := s.Region("stale", addr, 1)
	if err != nil || r.stale == nil {
		return 0
	}
	return r.stale.n
}

// unstale zeroes the stale granules that [off, off+n) of the region
// meets, or with overwrite only their bytes outside it, and marks them
// fresh. Runs of stale granules are cleared in one call each.
func (r *Region) unstale(off, n uint64, overwrite bool) {
	if n == 0 {
		return
	}
	sb := r.stale
	end := off + n
	g0, g1 := off/StaleGranule, (end-1)/StaleGranule // the granules met, inclusive
	for w := g0 / 64; w <= g1/64; w++ {
		m := sb.w[w]
		if w == g0/64 {
			m &= ^uint64(0) << (g0 % 64)
		}
		if w == g1/64 {
			m &= ^uint64(0) >> (63 - g1%64)
		}
		if m == 0 {
			continue
		}
		sb.w[w] &^= m
		sb.n -= bits.OnesCount64(m)
		for m != 0 {
			first := uint64(bits.TrailingZeros64(m))
			run := uint64(bits.TrailingZeros64(^(m >> first))) // 64 when m is all ones from first on
			m &^= (^uint64(0) >> (64 - run)) << first
			lo := (w*64 + first) * StaleGranule
			hi := min(lo+run*StaleGranule, uint64(len(r.data)))
			if sb.refs != nil {
				r.materialise(lo, hi, off, end, overwrite)
				continue
			}
			if !overwrite {
				clear(r.data[lo:hi])
				continue
			}
			if lo < off {
				clear(r.data[lo:off])
			}
			if end < hi {
				clear(r.data[end:hi])
			}
		}
	}
	if sb.n == 0 {
		r.stale = nil
	}
}

// materialise gives the stale granules [lo, hi) of the data their content
// (a LandRef source's bytes, or zero), or with overwrite only their bytes
// outside [off, end), and drops their references.
func (r *Region) materialise(lo, hi, off, end uint64, overwrite bool) {
	for g := lo; g < hi; g += StaleGranule {
		ge := min(g+StaleGranule, hi)
		if overwrite && off <= g && ge <= end {
			continue // the caller writes all of it
		}
		src := r.stale.refAt(int(g / StaleGranule))
		fill := func(a, b uint64) {
			if src == nil {
				clear(r.data[a:b])
			} else {
				copy(r.data[a:b], src[a-g:b-g])
			}
		}
		switch {
		case !overwrite:
			fill(g, ge)
		case ge <= off || end <= g:
			fill(g, ge)
		default:
			if g < off {
				fill(g, off)
			}
			if end < ge {
				fill(end, ge)
			}
		}
	}
}

// Check reports whether [addr, addr+n) lies in one region.
func (s *Space) Check(op string, addr, n uint64) error {
	_, err := s.Region(op, addr, n)
	return err
}

// Read copies [addr, addr+len(dst)) into dst (a phantom region leaves dst
// as it is).
func (s *Space) Read(addr uint64, dst []byte) error {
	b, err := s.Bytes("read", addr, uint64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

// Write copies src to [addr, addr+len(src)) and wakes the waiters on it.
func (s *Space) Write(addr uint64, src []byte) error {
	b, err := s.BytesOverwrite("write", addr, uint64(len(src)))
	if err != nil {
		return err
	}
	copy(b, src)
	s.Notify(addr, uint64(len(src)))
	return nil
}

// Load32 reads a little-endian 32-bit word (0 from a phantom region). An
// aligned word is read atomically: on hardware the engine writes device
// memory while the host reads it.
func (s *Space) Load32(addr uint64) (uint32, error) {
	b, err := s.Bytes("read", addr, 4)
	if err != nil || b == nil {
		return 0, err
	}
	if w := word32(b); w != nil {
		return atomic.LoadUint32(w), nil
	}
	return binary.LittleEndian.Uint32(b), nil
}

// Load64 reads a little-endian 64-bit word (0 from a phantom region),
// atomically when aligned.
func (s *Space) Load64(addr uint64) (uint64, error) {
	b, err := s.Bytes("read", addr, 8)
	if err != nil || b == nil {
		return 0, err
	}
	if w := word64(b); w != nil {
		return atomic.LoadUint64(w), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// Store32 writes a 32-bit word, atomically when aligned, and wakes the
// waiters on it.
func (s *Space) Store32(addr uint64, v uint32) error {
	b, err := s.Bytes("write", addr, 4)
	if err != nil {
		return err
	}
	if w := word32(b); w != nil {
		atomic.StoreUint32(w, v)
	} else if b != nil {
		binary.LittleEndian.PutUint32(b, v)
	}
	s.Notify(addr, 4)
	return nil
}

// Store64 writes a 64-bit word, atomically when aligned, and wakes the
// waiters on it.
func (s *Space) Store64(addr uint64, v uint64) error {
	b, err := s.Bytes("write", addr, 8)
	if err != nil {
		return err
	}
	if w := word64(b); w != nil {
		atomic.StoreUint64(w, v)
	} else if b != nil {
		binary.LittleEndian.PutUint64(b, v)
	}
	s.Notify(addr, 8)
	return nil
}

// Watch returns the watch list the space's writes notify (nil: none).
func (s *Space) Watch() *sim.WatchList { return s.watch }

// Notify wakes the waiters on [addr, addr+n): for a write made through
// Bytes rather than Write or a Store.
func (s *Space) Notify(addr, n uint64) {
	if s.sums != nil && len(s.sums.t) > 0 && n > 0 {
		s.breakSums(addr, n)
	}
	s.notify(addr, n)
}

// notify is Notify for a write whose tracked sums (TrackSum) the writer
// has dealt with (Land).
func (s *Space) notify(addr, n uint64) {
	if len(s.pristine) > 0 {
		s.endPristine(addr, n)
	}
	if len(s.watched) > 0 {
		s.markWritten(addr, n)
	}
	if s.watch != nil {
		s.watch.Notify(addr, addr+n)
	}
	if s.onNotify != nil {
		s.onNotify(addr, n)
	}
}

// WatchWrites makes every notified write (Notify, and Write and the
// Stores, which notify) that reaches r mark it Written: its owner can
// then tell that its bytes are still those it put there (a send window
// whose fill can be kept for the next run). Writes made through Bytes
// without a Notify are not seen; every writer in the emulator notifies,
// as the waiters on memory need.
func (s *Space) WatchWrites(r *Region) {
	if !r.written && !slices.Contains(s.watched, r) {
		s.watched = append(s.watched, r)
	}
}

// Written reports whether a notified write reached r since WatchWrites.
func (r *Region) Written() bool { return r.written }

// markWritten marks the watched regions [addr, addr+n) reaches and stops
// watching them.
func (s *Space) markWritten(addr, n uint64) {
	if n == 0 {
		return
	}
	hi := addr + n
	if hi < addr {
		hi = ^uint64(0)
	}
	for i := 0; i < len(s.watched); {
		if r := s.watched[i]; addr < r.End() && r.Base < hi {
			r.written = true
			last := len(s.watched) - 1
			s.watched[i], s.watched[last] = s.watched[last], nil
			s.watched = s.watched[:last]
			continue
		}
		i++
	}
}

// Observed reports whether a write to [addr, addr+n) would be seen now by
// anything but a later access: a watch or the write log on it
// (sim.WatchList.Observed), or a SetOnNotify function (which forwards every
// write elsewhere).
func (s *Space) Observed(addr, n uint64) bool {
	return s.onNotify != nil || (s.watch != nil && s.watch.Observed(addr, addr+n))
}

// SetOnNotify makes fn see every write the space notifies, after its own
// waiters: a layer that keeps its own watch lists over the same bytes
// (package fabric's GIN over SDMA maps its ranks' memory here) wakes its
// waiters from it. Nil removes it.
func (s *Space) SetOnNotify(fn func(addr, n uint64)) {
	s.onNotify = fn
	s.foreign = s.foreign || fn != nil
}

// word32 and word64 view an aligned word of b for atomic access (nil when
// b is nil or the word is not aligned).
func word32(b []byte) *uint32 {
	if b == nil || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil
	}
	return (*uint32)(unsafe.Pointer(&b[0]))
}

func word64(b []byte) *uint64 {
	if b == nil || uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		return nil
	}
	return (*uint64)(unsafe.Pointer(&b[0]))
}
