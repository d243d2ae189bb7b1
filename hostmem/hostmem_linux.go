package hostmem

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Map returns n zeroed bytes outside the Go heap (an anonymous private
// mapping): a buffer of that size Unmap kept, cleared, or a new mapping.
// n must be positive.
func Map(n uint64) ([]byte, error) {
	b, stale, err := MapStale(n)
	if stale {
		clear(b)
	}
	return b, err
}

// mapDense maps n fresh bytes that the caller will touch throughout:
// from hugeMin, 2 MiB-aligned and advised as transparent huge pages
// (MADV_HUGEPAGE), so that first touches take one fault per 2 MiB
// instead of one per 4 KiB page and the copies over them miss the TLB
// far less. Where the kernel has transparent huge pages off, the advice
// is refused and the pages stay small: nothing else changes.
func mapDense(n uint64) ([]byte, error) {
	if n < hugeMin {
		b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return nil, fmt.Errorf("hostmem: map %d B: %w", n, err)
		}
		return b, nil
	}
	all, err := unix.Mmap(-1, 0, int(n+hugeMin), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("hostmem: map %d B: %w", n, err)
	}
	head := int(hugeMin-uint64(uintptr(unsafe.Pointer(&all[0])))%hugeMin) % int(hugeMin)
	b := all[head : head+int(n) : head+int(n)]
	// Give back the unaligned head and the tail past b.
	if head > 0 {
		_ = unix.Munmap(all[:head])
	}
	if tail := all[head+int(n):]; len(tail) > 0 {
		_ = unix.Munmap(tail)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	return b, nil
}

// hugeMin is a transparent huge page's size on amd64 and arm64 (4 KiB
// base pages): the size from which mapDense aligns and advises.
const hugeMin = 2 << 20

// MapStale is Map for a caller that zeroes lazily what it reads before
// writing (lsa.Space.MarkStale), or that writes every byte before it reads
// any: a kept buffer comes back as its last user left it, stale true,
// which saves the clear; a fresh mapping is zero, stale false.
func MapStale(n uint64) (b []byte, stale bool, err error) {
	if n == 0 || n != uint64(int(n)) {
		return nil, false, fmt.Errorf("hostmem: cannot map %d B", n)
	}
	if b, _ := kept.take(n, ""); b != nil {
		return b, true, nil
	}
	b, err = mapDense(n)
	return b, false, err
}

// MapAs is MapStale for a buffer whose every byte the caller would
// write with the same content named key (a send window's fill, the same
// for every seed): a kept buffer that UnmapAs released under key comes
// back holding it, hit true, and the caller skips the writing; otherwise
// hit is false and the caller writes every byte.
func MapAs(n uint64, key string) (b []byte, hit bool, err error) {
	if n == 0 || n != uint64(int(n)) {
		return nil, false, fmt.Errorf("hostmem: cannot map %d B", n)
	}
	if b, hit := kept.take(n, key); b != nil {
		return b, hit, nil
	}
	b, err = mapDense(n)
	return b, false, err
}

// MapSparse is Map for a buffer of which a run touches a few pages (a
// slab of rings): always a fresh mapping, whose untouched pages cost
// nothing, and Unmap never keeps it (a kept one would be cleared whole on
// reuse, every page of it).
func MapSparse(n uint64) ([]byte, error) {
	if n == 0 || n != uint64(int(n)) {
		return nil, fmt.Errorf("hostmem: cannot map %d B", n)
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("hostmem: map %d B: %w", n, err)
	}
	kept.Lock()
	if kept.sparse == nil {
		kept.sparse = map[*byte]bool{}
	}
	kept.sparse[&b[0]] = true
	kept.Unlock()
	return b, nil
}

// Unmap releases a buffer Map returned, whole: it keeps it for the next
// Map of the same size while the kept buffers total at most KeepMax
// bytes, and unmaps it otherwise.
func Unmap(b []byte) error { return UnmapAs(b, "") }

// UnmapAs is Unmap of a buffer that holds, byte for byte, the content
// MapAs(len(b), key) asks for: the next MapAs of that key and size gets it
// back without the writing. The caller vouches for the content: nothing
// may have written b since it held key's bytes. An empty key is Unmap.
func UnmapAs(b []byte, key string) error {
	if kept.put(b, key) {
		return nil
	}
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("hostmem: unmap %d B: %w", len(b), err)
	}
	return nil
}

// OffHeap reports whether Map's buffers are outside the Go heap here.
const OffHeap = true

// KeepMax is how many bytes of released buffers Unmap keeps for Map. A
// run of the same shape after another (explore's seeds) then writes into
// pages already present: clearing them costs a fraction of the page
// faults and the kernel's zeroing that fresh mappings cost, and of the
// unmapping.
const KeepMax = 512 << 20

// kept is the released buffers, by size.
var kept keptSet

type keptSet struct {
	sync.Mutex
	list   KeptList
	sparse map[*byte]bool // MapSparse's buffers, never kept
}

func (k *keptSet) take(n uint64, key string) (b []byte, hit bool) {
	k.Lock()
	defer k.Unlock()
	return k.list.Take(n, key)
}

func (k *keptSet) put(b []byte, key string) bool {
	n := uint64(len(b))
	if n == 0 || cap(b) != len(b) {
		return false
	}
	k.Lock()
	defer k.Unlock()
	if k.sparse[&b[0]] {
		delete(k.sparse, &b[0])
		return false
	}
	if k.list.Bytes()+n > KeepMax {
		return false
	}
	k.list.Put(b, key)
	return true
}

// Kept reports how many bytes of released buffers are kept for reuse.
func Kept() uint64 {
	kept.Lock()
	defer kept.Unlock()
	return kept.list.Bytes()
}
