package hostmem

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// Map returns n zeroed bytes outside the Go heap (an anonymous private
// mapping): a buffer of that size Unmap kept, cleared, or a new mapping.
// n must be positive.
func Map(n uint64) ([]byte, error) {
	if n == 0 || n != uint64(int(n)) {
		return nil, fmt.Errorf("hostmem: cannot map %d B", n)
	}
	if b := kept.take(n); b != nil {
		clear(b)
		return b, nil
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("hostmem: map %d B: %w", n, err)
	}
	return b, nil
}

// MapUncleared is Map for a caller that writes every byte before it reads
// any: a kept buffer comes back as its last user left it (a fresh mapping
// is zero all the same), which saves the clear.
func MapUncleared(n uint64) ([]byte, error) {
	if n == 0 || n != uint64(int(n)) {
		return nil, fmt.Errorf("hostmem: cannot map %d B", n)
	}
	if b := kept.take(n); b != nil {
		return b, nil
	}
	return Map(n)
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
func Unmap(b []byte) error {
	if kept.put(b) {
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
	free   map[uint64][][]byte
	bytes  uint64
	sparse map[*byte]bool // MapSparse's buffers, never kept
}

func (k *keptSet) take(n uint64) []byte {
	k.Lock()
	defer k.Unlock()
	l := k.free[n]
	if len(l) == 0 {
		return nil
	}
	b := l[len(l)-1]
	l[len(l)-1] = nil
	k.free[n] = l[:len(l)-1]
	k.bytes -= n
	return b
}

func (k *keptSet) put(b []byte) bool {
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
	if k.bytes+n > KeepMax {
		return false
	}
	if k.free == nil {
		k.free = map[uint64][][]byte{}
	}
	k.free[n] = append(k.free[n], b)
	k.bytes += n
	return true
}

// Kept reports how many bytes of released buffers are kept for reuse.
func Kept() uint64 {
	kept.Lock()
	defer kept.Unlock()
	return kept.bytes
}
