package lsa

import "fmt"

// Reference landing (partial: nothing in the emulator calls it yet; see
// the package doc). A COPY whose source is known immutable content (a
// scenario's pattern bytes) need not move the bytes when nothing reads
// them before the check: the destination's granules (StaleGranule) are
// marked stale as MarkStale marks them, but instead of "reads as zero"
// each holds "reads as these 256 bytes of the source". Every access that
// reaches a granule (Bytes, BytesOverwrite, and so Read, Write, the loads
// and stores) materialises it first, copying the source bytes in, exactly
// as a zero granule is cleared; an overwrite that covers a granule whole
// skips the copy. So every access sees the bytes a plain Land would have
// left there, and LandedSum gives the same sums (LandRef hashes the source
// bytes as Land hashes the landed ones).

// refGranules holds, for each granule of a region, the source bytes it
// reads as while stale (nil: zero).
type refGranules []([]byte)

// LandRef is BytesOverwrite of [addr, addr+len(src)) followed by Land of
// src there, without copying: the range reads as src from now on, and src
// must not change while any granule of the range still refers to it (it
// is immutable content, such as a scenario's pattern). addr and len(src)
// are multiples of StaleGranule and the range lies in one region with
// bytes.
func (s *Space) LandRef(addr uint64, src []byte) error {
	n := uint64(len(src))
	if n == 0 {
		return fmt.Errorf("land reference at %#x: an empty source", addr)
	}
	if addr%StaleGranule != 0 || n%StaleGranule != 0 {
		return fmt.Errorf("land reference [%#x, +%d): not whole %d B granules", addr, n, StaleGranule)
	}
	if s.before != nil {
		fn := s.before
		s.before = nil
		fn()
		s.before = fn
	}
	r, err := s.Region("land reference", addr, n)
	if err != nil {
		return err
	}
	if r.data == nil {
		return fmt.Errorf("land reference [%#x, +%d): region %q is phantom (it holds no bytes)", addr, n, r.Name)
	}
	gs := int(r.Size / StaleGranule)
	if r.stale == nil {
		r.stale = &staleBits{w: make([]uint64, (gs+63)/64)}
	}
	if r.stale.refs == nil {
		r.stale.refs = make(refGranules, gs)
	}
	sb, g0 := r.stale, int((addr-r.Base)/StaleGranule)
	for i := 0; i < int(n/StaleGranule); i++ {
		g := g0 + i
		if sb.w[g/64]&(1<<(g%64)) == 0 {
			sb.w[g/64] |= 1 << (g % 64)
			sb.n++
		}
		sb.refs[g] = src[i*StaleGranule : (i+1)*StaleGranule : (i+1)*StaleGranule]
	}
	s.landSums(addr, src)
	return nil
}

// SetPristine says that the region at base holds exactly content (as long
// as the region, immutable, shared read-only by whoever holds it: a
// scenario's pattern bytes) until a write reaches it: Pristine then hands
// out pieces of content for LandRef. Any notified write (Notify, and so
// Write, the stores and every landing) and any BytesOverwrite that
// reaches the region ends it, as does MarkStale. A writer that changes
// bytes without notifying (native code on a node's Config.Backing) would
// go unseen, so such memory must not be marked.
func (s *Space) SetPristine(base uint64, content []byte) error {
	r, err := s.Region("set pristine", base, 1)
	if err != nil {
		return err
	}
	switch {
	case r.Base != base:
		return fmt.Errorf("set pristine %#x: not the base of region %q [%#x, %#x)", base, r.Name, r.Base, r.End())
	case r.data == nil:
		return fmt.Errorf("set pristine %#x: region %q is phantom (it holds no bytes)", base, r.Name)
	case uint64(len(content)) != r.Size:
		return fmt.Errorf("set pristine %#x: %d B of content for region %q of %d B", base, len(content), r.Name, r.Size)
	}
	for i := range s.pristine {
		if s.pristine[i].r == r {
			s.pristine[i].content = content
			return nil
		}
	}
	s.pristine = append(s.pristine, pristineRegion{r, content})
	return nil
}

// pristineRegion is a region SetPristine marked, with its content: kept
// in the space's list, not in Region, whose size a seed's dozen regions
// pay for.
type pristineRegion struct {
	r       *Region
	content []byte
}

// Pristine returns the content of [addr, addr+n) when it lies in a region
// SetPristine marked and no write has reached that region since, else
// nil.
func (s *Space) Pristine(addr, n uint64) []byte {
	if len(s.pristine) == 0 || n == 0 {
		return nil
	}
	r, err := s.Region("pristine", addr, n)
	if err != nil {
		return nil
	}
	for _, p := range s.pristine {
		if p.r == r {
			off := addr - r.Base
			return p.content[off : off+n : off+n]
		}
	}
	return nil
}

// endPristine ends the pristine content (SetPristine) of the regions a
// write to [addr, addr+n) reaches.
func (s *Space) endPristine(addr, n uint64) {
	hi := addr + n
	if hi < addr {
		hi = ^uint64(0)
	}
	for i := 0; i < len(s.pristine); {
		if r := s.pristine[i].r; addr < r.End() && r.Base < hi {
			last := len(s.pristine) - 1
			s.pristine[i], s.pristine[last] = s.pristine[last], pristineRegion{}
			s.pristine = s.pristine[:last]
			continue
		}
		i++
	}
}
