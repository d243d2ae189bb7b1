package ring

import (
	"errors"
	"fmt"
	"math/bits"
)

const (
	// Unit is the ring allocation granule (CCO_SDMA_UNIT): every reservation
	// is a whole number of units and every CCO packet lives in one unit.
	Unit = 32
	// DefaultSize is MORI's ring size (CCO_SDMA_QUEUE_SIZE).
	DefaultSize = 256 << 10
	// MaxCopyBytes is the largest single CCO copy (CCO_SDMA_MAX_COPY_BYTES):
	// the 30-bit count rounded down to a unit multiple.
	MaxCopyBytes = 0x3fffffe0
	// maxSize bounds Options.Size so a typo cannot allocate the machine away.
	maxSize = 1 << 30
)

// CheckCopyBytes reports a COPY of bytes that the 30-bit count field
// (bytes-1) cannot hold: Copy encodes it as hardware reads it, truncated, and
// the engine moves the truncated count. Debug checks use it to name a put
// that would truncate (before MORI split large puts, a 4 GiB put moved
// 1 GiB and reported success).
func CheckCopyBytes(bytes uint64) error {
	if bytes == 0 {
		return errors.New("0 B COPY: the count field holds bytes-1, a COPY moves at least 1 byte")
	}
	if bytes > 1<<30 {
		moved := (bytes-1)&(1<<30-1) + 1
		return fmt.Errorf("%d B COPY: the 30-bit count field holds at most %d B; the engine moves %d B", bytes, uint64(1<<30), moved)
	}
	return nil
}

// CapacityRule decides how many bytes may be outstanding (reserved but not
// yet consumed by the engine).
type CapacityRule uint8

const (
	// CapacitySeed leaves one unit to spare: capacity = size - Unit. Default.
	CapacitySeed CapacityRule = iota
	// CapacityMORI allows a full ring, as MORI HEAD does: capacity = size.
	CapacityMORI
)

// ErrOutOfOrder: Submit was called for a range whose base is not the commit
// frontier; the issuer must wait until CanSubmit.
var ErrOutOfOrder = errors.New("ring: submit out of order")

// Options configure New.
type Options struct {
	// Size in bytes; 0 means DefaultSize. A power of two, at least 2*Unit.
	Size int
	// Start is the initial value of every pointer, as KFD reports it. A
	// multiple of Unit.
	Start    uint64
	Capacity CapacityRule
	Dialect  Dialect
	// Buf, if not nil, is the ring's buffer: Size bytes (DefaultSize when
	// Size is 0), zeroed, owned by the ring from New on. The engine hands
	// out buffers outside the Go heap this way; nil makes one.
	Buf []byte
}

// Ring is one SDMA queue's ring buffer plus the issuer- and engine-side
// pointers of spec section 3. Pointers are monotonic 64-bit byte offsets that
// never wrap; only buffer addressing is reduced modulo Size.
//
// A Ring is not safe for concurrent use: the simulator runs one actor at a
// time, and the fetch-add / spin semantics of the real protocol are modelled
// by the caller (Reserve then wait for Fits; wait for CanSubmit then Submit).
type Ring struct {
	buf      []byte
	size     uint64
	mask     uint64
	capacity uint64
	dialect  Dialect

	rptr            uint64 // engine write-back
	wptr            uint64 // last published write pointer
	doorbell        uint64 // last doorbell value
	cachedWptr      uint64 // reservation frontier
	committedWptr   uint64 // commit frontier
	cachedReadIndex uint64 // issuer's rptr hint

	scratch []byte // for packets that straddle the ring end
	// dirty bounds the buffer offsets writes may have reached: [0, dirty)
	// (Dirty; an owner that keeps the buffer clears only that much).
	dirty uint64
}

// Check reports whether New accepts o, without making the ring (whose
// buffer a check need not allocate).
func (o Options) Check() error {
	size := o.Size
	if size == 0 {
		size = DefaultSize
	}
	switch {
	case size < 2*Unit:
		return fmt.Errorf("ring: size %d is smaller than two units (%d bytes)", size, 2*Unit)
	case size > maxSize:
		return fmt.Errorf("ring: size %d exceeds %d bytes", size, maxSize)
	case bits.OnesCount(uint(size)) != 1:
		return fmt.Errorf("ring: size %d is not a power of two", size)
	case o.Start%Unit != 0:
		return fmt.Errorf("ring: start 0x%x is not a multiple of the %d-byte unit", o.Start, Unit)
	case o.Capacity > CapacityMORI:
		return fmt.Errorf("ring: unknown capacity rule %d", o.Capacity)
	case o.Dialect >= numDialects:
		return fmt.Errorf("ring: unknown dialect %d", o.Dialect)
	case o.Buf != nil && len(o.Buf) != size:
		return fmt.Errorf("ring: a buffer of %d bytes for a ring of %d", len(o.Buf), size)
	}
	return nil
}

// New allocates a ring.
func New(o Options) (*Ring, error) {
	r := new(Ring)
	if err := r.init(o); err != nil {
		return nil, err
	}
	return r, nil
}

// NewIn is New into r, which the caller allocated (a node makes its
// queues' rings a few at a time, internal/slab); r is overwritten.
func NewIn(r *Ring, o Options) error { return r.init(o) }

func (r *Ring) init(o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	size := o.Size
	if size == 0 {
		size = DefaultSize
	}
	buf := o.Buf
	if buf == nil {
		buf = make([]byte, size)
	}
	*r = Ring{
		buf:     buf,
		size:    uint64(size),
		mask:    uint64(size) - 1,
		dialect: o.Dialect,
		rptr:    o.Start, wptr: o.Start, doorbell: o.Start,
		cachedWptr: o.Start, committedWptr: o.Start, cachedReadIndex: o.Start,
	}
	r.capacity = r.size - Unit
	if o.Capacity == CapacityMORI {
		r.capacity = r.size
	}
	return nil
}

// Size is the ring size in bytes.
func (r *Ring) Size() uint64 { return r.size }

// Capacity is the most bytes that may be outstanding (see CapacityRule).
func (r *Ring) Capacity() uint64 { return r.capacity }

// Dialect is the packet dialect DecodeAt uses.
func (r *Ring) Dialect() Dialect { return r.dialect }

// Rptr is the engine's read pointer: everything below it has executed.
func (r *Ring) Rptr() uint64 { return r.rptr }

// Wptr is the last value published to the hardware write pointer.
func (r *Ring) Wptr() uint64 { return r.wptr }

// Doorbell is the last value rung; the engine executes [Rptr, Doorbell).
func (r *Ring) Doorbell() uint64 { return r.doorbell }

// CachedWptr is the reservation frontier: bytes handed out by Reserve.
func (r *Ring) CachedWptr() uint64 { return r.cachedWptr }

// CommittedWptr is the commit frontier: everything below it has been rung.
func (r *Ring) CommittedWptr() uint64 { return r.committedWptr }

// CachedReadIndex is the issuer's last observed rptr; it only moves forward.
func (r *Ring) CachedReadIndex() uint64 { return r.cachedReadIndex }

// Reserve hands out [base, base+bytes) by advancing the reservation
// frontier, like MORI's single fetch-add: it never fails for lack of space.
// The caller then waits until Fits(base, bytes) before writing. bytes must
// be a positive multiple of Unit and at most Capacity, else nothing changes.
func (r *Ring) Reserve(bytes uint64) (base uint64, err error) {
	switch {
	case bytes == 0 || bytes%Unit != 0:
		return 0, fmt.Errorf("ring: reservation of %d bytes is not a positive multiple of %d", bytes, Unit)
	case bytes > r.capacity:
		return 0, fmt.Errorf("ring: reservation of %d bytes exceeds capacity %d", bytes, r.capacity)
	}
	base = r.cachedWptr
	r.cachedWptr += bytes
	return base, nil
}

// Fits refreshes the read index (the uncached rptr read) and reports whether
// [base, base+bytes) may be written: (base+bytes) - readIndex <= Capacity.
func (r *Ring) Fits(base, bytes uint64) bool {
	r.RefreshReadIndex()
	return r.FitsCached(base, bytes)
}

// FitsCached is Fits against the cached read index, without the rptr read.
// MORI checks this first and re-reads rptr only when it fails, so callers
// that charge for rptr reads can do the same.
func (r *Ring) FitsCached(base, bytes uint64) bool {
	end := base + bytes
	if end <= r.cachedReadIndex {
		return true
	}
	return end-r.cachedReadIndex <= r.capacity
}

// RefreshReadIndex sets the cached read index to max(itself, rptr) and
// returns it.
func (r *Ring) RefreshReadIndex() uint64 {
	if r.rptr > r.cachedReadIndex {
		r.cachedReadIndex = r.rptr
	}
	return r.cachedReadIndex
}

// CanSubmit reports whether the commit chain has reached base.
func (r *Ring) CanSubmit(base uint64) bool { return r.committedWptr == base }

// Submit rings [base, end): wptr = end, doorbell = end, committedWptr = end,
// in that order. It requires committedWptr == base (else ErrOutOfOrder) and
// base <= end <= CachedWptr; on error nothing changes.
func (r *Ring) Submit(base, end uint64) error {
	if base != r.committedWptr {
		return fmt.Errorf("%w: base 0x%x, committed 0x%x", ErrOutOfOrder, base, r.committedWptr)
	}
	if end < base || end > r.cachedWptr {
		return fmt.Errorf("ring: submit [0x%x, 0x%x) outside the reserved range [0x%x, 0x%x)",
			base, end, r.committedWptr, r.cachedWptr)
	}
	r.wptr = end
	r.doorbell = end
	r.committedWptr = end
	return nil
}

// StoreDoorbell records a raw doorbell store of v, outside the commit chain
// (a host-side or misbehaving issuer writing the doorbell directly). It
// changes neither wptr nor the commit frontier; the engine validates v.
func (r *Ring) StoreDoorbell(v uint64) { r.doorbell = v }

// StoreWptr records a raw write-pointer store of v by a producer outside
// the commit chain (ROCr stores the write pointer, then rings the
// doorbell). It changes neither the doorbell nor the issuer frontiers.
func (r *Ring) StoreWptr(v uint64) { r.wptr = v }

// Commit rings everything reserved so far, by anyone (ccoSdmaRingQueueDbr):
// [CommittedWptr, CachedWptr). Issuers whose slots were inside that range but
// not yet submitted will then never satisfy CanSubmit.
func (r *Ring) Commit() (base, end uint64, rang bool) {
	base, end = r.committedWptr, r.cachedWptr
	if base == end {
		return base, end, false
	}
	_ = r.Submit(base, end) // cannot fail: base is the frontier and end the reservation limit
	return base, end, true
}

// QuietTarget is what quiet waits for rptr to reach: the commit frontier.
func (r *Ring) QuietTarget() uint64 { return r.committedWptr }

// Unrung is the number of bytes reserved but not rung (quiet leaves them).
func (r *Ring) Unrung() uint64 { return r.cachedWptr - r.committedWptr }

// SetRptr is the engine's read-pointer write-back. v must be a multiple of
// 4, not below the current rptr and not beyond the doorbell.
func (r *Ring) SetRptr(v uint64) error {
	switch {
	case v < r.rptr:
		return fmt.Errorf("ring: rptr 0x%x would move back from 0x%x", v, r.rptr)
	case v > r.doorbell:
		return fmt.Errorf("ring: rptr 0x%x is beyond the doorbell 0x%x", v, r.doorbell)
	case v%4 != 0:
		return fmt.Errorf("ring: rptr 0x%x is not dword aligned", v)
	}
	r.rptr = v
	return nil
}

// Write copies b into the ring at byte pointer ptr, wrapping at the end.
func (r *Ring) Write(ptr uint64, b []byte) {
	for len(b) > 0 {
		off := ptr & r.mask
		n := copy(r.buf[off:], b)
		r.dirty = max(r.dirty, off+uint64(n))
		b = b[n:]
		ptr += uint64(n)
	}
}

// Read fills dst from the ring at byte pointer ptr, wrapping at the end.
func (r *Ring) Read(ptr uint64, dst []byte) {
	for len(dst) > 0 {
		off := ptr & r.mask
		n := copy(dst, r.buf[off:])
		dst = dst[n:]
		ptr += uint64(n)
	}
}

// Contiguous returns the ring bytes [ptr, ptr+n) without copying, or nil if
// that range crosses the ring end (or n is negative or exceeds Size).
func (r *Ring) Contiguous(ptr uint64, n int) []byte {
	off := ptr & r.mask
	if n < 0 || uint64(n) > r.size-off {
		return nil
	}
	r.dirty = max(r.dirty, off+uint64(n)) // the caller may write through it
	return r.buf[off : off+uint64(n) : off+uint64(n)]
}

// Release drops the ring's buffer, for an owner about to give back the
// memory behind it: any later access panics (an index out of range, not a
// fault on released memory).
func (r *Ring) Release() { r.buf, r.scratch = nil, nil }

// Bytes is the whole ring buffer, aliased (for golden tests and the
// hardware backend): any byte may be written from then on (Dirty).
func (r *Ring) Bytes() []byte {
	r.dirty = r.size
	return r.buf
}

// Dirty is how many bytes from the buffer's start the ring's writes may
// have reached (Write, WriteUnit, WritePacket, WriteBroadcast, Contiguous,
// and all of it once Bytes aliased it): the bytes past it are as the
// buffer was given. An owner that keeps a zeroed buffer for the next ring
// clears only that much.
func (r *Ring) Dirty() uint64 { return r.dirty }

// WriteUnit places p in the 32-byte unit at ptr the way CCO does: the
// encoding followed by zero dwords (one-dword NOPs) up to the unit end. ptr
// must be Unit-aligned and p at most 32 bytes. It does not allocate.
func (r *Ring) WriteUnit(ptr uint64, p *Packet) error {
	if ptr%Unit != 0 {
		return fmt.Errorf("ring: unit pointer 0x%x is not %d-byte aligned", ptr, Unit)
	}
	if n := p.Size(); n == 0 || n > Unit {
		return fmt.Errorf("ring: %v packet of %d bytes does not fit a %d-byte unit", p.Kind, n, Unit)
	}
	var u [Unit]byte
	p.AppendTo(u[:0])
	// Units tile the ring, so an aligned unit never crosses the end.
	copy(r.buf[ptr&r.mask:], u[:])
	r.dirty = max(r.dirty, ptr&r.mask+Unit)
	return nil
}

// WritePacket encodes p at base and fills the rest of units units with zero
// dwords (one-dword NOPs). The packet may cross the ring end: the engine's
// decoder reads it across (DecodeAt). For a packet longer than one unit
// (COPY_LINEAR_WAIT_SIGNAL, COPY_LINEAR_MULTICAST) in its own reservation.
func (r *Ring) WritePacket(base uint64, units int, p *Packet) error {
	n := p.Size()
	switch {
	case base%Unit != 0:
		return fmt.Errorf("ring: packet base 0x%x is not %d-byte aligned", base, Unit)
	case n == 0 || n > units*Unit || uint64(units*Unit) > r.size:
		return fmt.Errorf("ring: %v packet of %d bytes does not fit %d units of a %d-byte ring", p.Kind, n, units, r.size)
	}
	b := make([]byte, 0, units*Unit)
	b = p.AppendTo(b)
	b = b[:units*Unit]
	clear(b[n:])
	r.Write(base, b)
	return nil
}

// WriteBroadcast places a packet of 33..64 bytes (the 36-byte broadcast
// COPY) in the three-unit reservation at base [inferred placement]. If base
// is the ring's last unit that unit becomes NOP fill and the packet starts at
// base+Unit (the ring start); otherwise the packet takes units 1-2 and unit 3
// is NOP fill. Everything not covered by the packet is zero dwords. It
// returns the packet's byte pointer.
func (r *Ring) WriteBroadcast(base uint64, p *Packet) (at uint64, err error) {
	if base%Unit != 0 {
		return 0, fmt.Errorf("ring: broadcast base 0x%x is not %d-byte aligned", base, Unit)
	}
	if n := p.Size(); n == 0 || n > 2*Unit {
		return 0, fmt.Errorf("ring: %v packet of %d bytes does not fit two %d-byte units", p.Kind, n, Unit)
	}
	var u [3 * Unit]byte
	at = base
	if base&r.mask == r.size-Unit {
		at = base + Unit
	}
	p.AppendTo(u[at-base : at-base])
	r.Write(base, u[:])
	return at, nil
}

// DecodeAt decodes the packet at byte pointer ptr, reading at most avail
// bytes (the engine passes doorbell - ptr) and never more than Size. A packet
// that crosses the ring end is copied into scratch space first; otherwise the
// ring is decoded in place. Errors are *DecodeError with Offset = ptr.
func (r *Ring) DecodeAt(p *Packet, ptr uint64, avail uint64) (int, error) {
	if avail > r.size {
		avail = r.size
	}
	off := ptr & r.mask
	first := r.size - off
	var b []byte
	if avail <= first {
		b = r.buf[off : off+avail]
	} else {
		b = r.buf[off:]
		if want := r.wantBytes(ptr, avail); want > first {
			if uint64(cap(r.scratch)) < want {
				r.scratch = make([]byte, want, r.size)
			}
			b = r.scratch[:want]
			r.Read(ptr, b)
		}
	}
	n, err := Decode(p, b, r.dialect)
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			de.Offset = ptr
			de.Have = int(avail)
		}
	}
	return n, err
}

// wantBytes is how many bytes (at most avail) the packet at ptr needs, read
// across the ring end as necessary.
func (r *Ring) wantBytes(ptr, avail uint64) uint64 {
	var w [16]byte
	if avail < 4 {
		return avail
	}
	r.Read(ptr, w[:4])
	h := uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(w[3])<<24
	if Op(h) == OpCopy {
		if n, exact, ok, err := fusedLen(h, r.dialect); err != nil {
			return 4
		} else if ok {
			if !exact && avail >= uint64(n) {
				var hb [76]byte
				r.Read(ptr, hb[:n])
				n = multicastLen(h, hb[:n])
			}
			return min(uint64(n), avail)
		}
	}
	n, exact, err := packetLen(h)
	if err != nil {
		return 4
	}
	if !exact && avail >= 16 {
		r.Read(ptr, w[:16])
		n = 4 * (5 + int((uint32(w[12])|uint32(w[13])<<8|uint32(w[14])<<16|uint32(w[15])<<24)&writeCntMask))
	}
	return min(uint64(n), avail)
}
