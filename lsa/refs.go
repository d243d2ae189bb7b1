package lsa

import (
	"fmt"
	"math/bits"
	"slices"
)

// Reference landing. A COPY whose source is known immutable content (a
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

// refRun says that granules [g0, g0+n) of a region read as src (n
// granules of bytes) while they are stale. A region keeps a few runs, the
// newest last: a granule landed by reference again takes the newer run's
// bytes. One run per LandRef, not a slice per granule: an 8 MiB window's
// 32,768 granules would cost 768 KiB of pointers a seed.
type refRun struct {
	g0, n int
	src   []byte // n granules long; its capacity may run on (follows)
}

// maxRefRuns bounds a region's runs: past it LandRef first drops the
// runs that no stale granule reads any longer, and refuses (the caller
// copies) if that frees none, so a region landed in many small pieces
// costs no more than a copy each.
const maxRefRuns = 64

// extends returns the run that granules [g0, g0+k) landed from src
// continue (it ends at g0 and src is its source's next bytes), or -1. Runs
// are searched newest first, and none newer than the one extended may
// meet the new granules (it would take precedence over the newer
// landing).
func (sb *staleBits) extends(g0, k int, src []byte) int {
	for i := len(sb.refs) - 1; i >= 0; i-- {
		r := &sb.refs[i]
		if r.g0+r.n == g0 && follows(r.src, src) {
			return i
		}
		if r.g0 < g0+k && g0 < r.g0+r.n {
			return -1
		}
	}
	return -1
}

// setStale marks granules [g0, g0+k) stale, a word of the bitmap at a
// time.
func (sb *staleBits) setStale(g0, k int) {
	for g, end := g0, g0+k; g < end; {
		w, b := g/64, g%64
		c := min(64-b, end-g)
		m := (^uint64(0) >> (64 - c)) << b
		sb.n += bits.OnesCount64(m &^ sb.w[w])
		sb.w[w] |= m
		g += c
	}
}

// refAt is the source bytes of stale granule g (nil: zero).
func (sb *staleBits) refAt(g int) []byte {
	for i := len(sb.refs) - 1; i >= 0; i-- {
		if r := &sb.refs[i]; g >= r.g0 && g < r.g0+r.n {
			o := (g - r.g0) * StaleGranule
			return r.src[o : o+StaleGranule]
		}
	}
	return nil
}

// live reports whether any granule of run r is still stale, and so may
// read r's bytes.
func (sb *staleBits) live(r *refRun) bool {
	for g := r.g0; g < r.g0+r.n; g++ {
		if sb.w[g/64]&(1<<(g%64)) != 0 {
			return true
		}
	}
	return false
}

// prune drops the runs no stale granule reads (a newer run over all of
// a run's stale granules is not looked for: rare, and only costs room).
func (sb *staleBits) prune() {
	k := 0
	for i := range sb.refs {
		if sb.live(&sb.refs[i]) {
			sb.refs[k] = sb.refs[i]
			k++
		}
	}
	clear(sb.refs[k:])
	sb.refs = sb.refs[:k]
}

// LandRef is BytesOverwrite of [addr, addr+len(src)) followed by Land of
// src there, without copying: the range reads as src from now on, and src
// must not change while any granule of the range still refers to it (it
// is immutable content, such as a scenario's pattern). addr and len(src)
// are multiples of StaleGranule and the range lies in one region with
// bytes. It reports false, having done nothing, when the region holds
// maxRefRuns live landings already or another layer reads these bytes
// without Bytes (SetOnNotify): the caller copies instead.
func (s *Space) LandRef(addr uint64, src []byte) (bool, error) {
	n := uint64(len(src))
	if n == 0 {
		return false, fmt.Errorf("land reference at %#x: an empty source", addr)
	}
	if addr%StaleGranule != 0 || n%StaleGranule != 0 {
		return false, fmt.Errorf("land reference [%#x, +%d): not whole %d B granules", addr, n, StaleGranule)
	}
	if s.foreign {
		return false, nil
	}
	s.landDue()
	r, err := s.Region("land reference", addr, n)
	if err != nil {
		return false, err
	}
	if r.data == nil {
		return false, fmt.Errorf("land reference [%#x, +%d): region %q is phantom (it holds no bytes)", addr, n, r.Name)
	}
	gs := int((r.Size + StaleGranule - 1) / StaleGranule)
	if r.stale == nil {
		r.stale = &staleBits{w: make([]uint64, (gs+63)/64)}
	}
	sb, g0 := r.stale, int((addr-r.Base)/StaleGranule)
	k := int(n / StaleGranule)
	if i := sb.extends(g0, k, src); i >= 0 {
		// The next bytes of a run's source, landed next to it (a copy's
		// chunks and bursts, between other copies' into the same
		// region): one run.
		r := &sb.refs[i]
		r.src = r.src[:len(r.src)+len(src)]
		r.n += k
		sb.setStale(g0, k)
		s.landSums(addr, src)
		return true, nil
	}
	if len(sb.refs) == maxRefRuns {
		sb.prune()
		k := int(n / StaleGranule)
		if last := len(sb.refs) - 1; last >= 0 && sb.refs[last].g0+sb.refs[last].n == g0 && follows(sb.refs[last].src, src) {
			// The next bytes of the last run's source, landed next to it (a
			// copy's chunks and bursts): one run.
			r := &sb.refs[last]
			r.src = r.src[:len(r.src)+len(src)]
			r.n += k
			sb.setStale(g0, k)
			s.landSums(addr, src)
			return true, nil
		}
		if len(sb.refs) == maxRefRuns {
			return false, nil
		}
	}
	if sb.refs == nil {
		sb.refs = make([]refRun, 0, 16)
	}
	sb.refs = append(sb.refs, refRun{g0: g0, n: k, src: src})
	sb.setStale(g0, k)
	s.landSums(addr, src) // notifies, which ends a pristine region's content
	return true, nil
}

// SetPristine says that the region at base holds blocks laid end to end
// from its start, each of block bytes (a nil one: content not known), as
// long as no write reaches the region: immutable content shared read-only
// by whoever holds it (a scenario's pattern blocks), which Pristine then
// hands out for LandRef. Any notified write (Notify, and so Write, the
// stores and every landing) and any BytesOverwrite that reaches the
// region ends it, as does MarkStale. A writer that changes bytes without
// notifying (native code on a node's Config.Backing) would go unseen, so
// such memory must not be marked.
func (s *Space) SetPristine(base, block uint64, blocks [][]byte) error {
	r, err := s.blocksRegion("set pristine", base, block, blocks)
	if err != nil {
		return err
	}
	s.setPristine(r, block, blocks)
	return nil
}

// blocksRegion is the region at base, checked to hold blocks of block
// bytes (nil ones allowed) from its start: SetPristine's and Refer's
// arguments.
func (s *Space) blocksRegion(op string, base, block uint64, blocks [][]byte) (*Region, error) {
	r, err := s.Region(op, base, 1)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Base != base:
		return nil, fmt.Errorf("%s %#x: not the base of region %q [%#x, %#x)", op, base, r.Name, r.Base, r.End())
	case r.data == nil:
		return nil, fmt.Errorf("%s %#x: region %q is phantom (it holds no bytes)", op, base, r.Name)
	case block == 0 || len(blocks) == 0:
		return nil, fmt.Errorf("%s %#x: no content (%d blocks of %d B)", op, base, len(blocks), block)
	case block*uint64(len(blocks))/block != uint64(len(blocks)) || block*uint64(len(blocks)) > r.Size:
		return nil, fmt.Errorf("%s %#x: %d blocks of %d B for region %q of %d B", op, base, len(blocks), block, r.Name, r.Size)
	}
	for i, b := range blocks {
		if b != nil && uint64(len(b)) != block {
			return nil, fmt.Errorf("%s %#x: block %d holds %d B, not %d", op, base, i, len(b), block)
		}
	}
	return r, nil
}

// setPristine records r's content (SetPristine, checked).
func (s *Space) setPristine(r *Region, block uint64, blocks [][]byte) {
	for i := range s.pristine {
		if s.pristine[i].r == r {
			s.pristine[i].block, s.pristine[i].blocks = block, blocks
			return
		}
	}
	s.pristine = append(s.pristine, pristineRegion{r, block, blocks})
}

// pristineRegion is a region SetPristine marked, with its content: kept
// in the space's list, not in Region, whose size a seed's dozen regions
// pay for.
type pristineRegion struct {
	r      *Region
	block  uint64
	blocks [][]byte
}

// Pristine returns the content of [addr, addr+n) when it lies in one
// known block of a region SetPristine marked and no write has reached
// that region since, else nil. The slice's capacity runs to its block's
// end, so that a tracked range landed from consecutive pieces of one
// block is known to be that block (SetSourceSums). Like an access, it
// first lands what is due (SetBeforeAccess), which may end the content.
func (s *Space) Pristine(addr, n uint64) []byte {
	if len(s.pristine) == 0 || n == 0 {
		return nil
	}
	s.landDue()
	r, err := s.Region("pristine", addr, n)
	if err != nil {
		return nil
	}
	for _, p := range s.pristine {
		if p.r != r {
			continue
		}
		off := addr - r.Base
		i, o := off/p.block, off%p.block
		if i >= uint64(len(p.blocks)) || o+n > p.block || p.blocks[i] == nil {
			return nil
		}
		return p.blocks[i][o : o+n]
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

// Refer gives the region at base its first content without writing it:
// it reads as blocks laid end to end from its start, each of block bytes
// (a multiple of StaleGranule), as if copied there, and is pristine with
// them (SetPristine). Each granule copies its bytes in when an access
// first reaches it, as LandRef's do; what lies past the blocks reads as
// it did (zero for a fresh or stale region). Like an allocation's own
// zeroing it notifies nothing. The bitmap of referred granules goes in
// buf when the region has none and buf is long enough (MarkStaleWords).
// It reports false, having done nothing, for more blocks than a region
// keeps runs (maxRefRuns) or a block missing (nil): the caller writes
// the content instead.
func (s *Space) Refer(base, block uint64, blocks [][]byte, buf []uint64) (bool, error) {
	r, err := s.blocksRegion("refer", base, block, blocks)
	switch {
	case err != nil:
		return false, err
	case block%StaleGranule != 0:
		return false, fmt.Errorf("refer %#x: blocks of %d B, not whole %d B granules", base, block, StaleGranule)
	case s.foreign || len(blocks) > maxRefRuns || slices.ContainsFunc(blocks, func(b []byte) bool { return b == nil }):
		return false, nil
	}
	if r.stale == nil {
		gs := int((r.Size + StaleGranule - 1) / StaleGranule)
		sb := &staleBits{}
		if words := (gs + 63) / 64; cap(buf) >= words {
			sb.w = buf[:words]
			clear(sb.w)
		} else {
			sb.w = make([]uint64, words)
		}
		r.stale = sb
	}
	sb := r.stale
	if len(sb.refs) > 0 {
		return false, fmt.Errorf("refer %#x: region %q already holds landings by reference: Refer gives a region its first content", base, r.Name)
	}
	if cap(sb.refs) < len(blocks) {
		sb.refs = make([]refRun, 0, max(16, len(blocks)))
	}
	k := int(block / StaleGranule)
	for i, b := range blocks {
		sb.refs = append(sb.refs, refRun{g0: i * k, n: k, src: b})
		sb.setStale(i*k, k)
	}
	s.setPristine(r, block, blocks)
	return true, nil
}
