package engine

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/emud-dev/emud/lsa"
)

// MapAt is a Backing that maps each region anonymously at its own flat
// address (MAP_FIXED_NOREPLACE), so the region's device address is also a
// valid pointer in this process: native lanes (package capi) dereference
// it and the engines' copies move the same bytes. The mapping is never
// unmapped (regions live as long as the node). An address already in use
// in the process is an error naming it.
func MapAt(base, size uint64) ([]byte, error) {
	if size == 0 || base%lsa.PageSize != 0 {
		return nil, fmt.Errorf("map at %#x: %d B: need a page-aligned, non-empty range", base, size)
	}
	hint := unsafe.Add(unsafe.Pointer(nil), uintptr(base)) // an address outside the Go heap, only a hint to mmap
	p, err := unix.MmapPtr(-1, 0, hint, uintptr(size), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE)
	switch {
	case errors.Is(err, unix.EEXIST):
		return nil, fmt.Errorf("map at %#x (%d B): the address is already in use in this process; choose another engine.Config.Base", base, size)
	case err != nil:
		return nil, fmt.Errorf("map at %#x (%d B): %w", base, size, err)
	case uintptr(p) != uintptr(base):
		// A kernel older than 4.17 ignores the flag and treats base as a hint.
		_ = unix.MunmapPtr(p, uintptr(size))
		return nil, fmt.Errorf("map at %#x (%d B): the kernel placed it at %p (MAP_FIXED_NOREPLACE needs Linux 4.17)", base, size, p)
	}
	return unsafe.Slice((*byte)(p), size), nil
}
