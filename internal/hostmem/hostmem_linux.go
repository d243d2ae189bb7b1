package hostmem

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Map returns n zeroed bytes outside the Go heap (an anonymous private
// mapping). n must be positive.
func Map(n uint64) ([]byte, error) {
	if n == 0 || n != uint64(int(n)) {
		return nil, fmt.Errorf("hostmem: cannot map %d B", n)
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("hostmem: map %d B: %w", n, err)
	}
	return b, nil
}

// Unmap releases a buffer Map returned, whole.
func Unmap(b []byte) error {
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("hostmem: unmap %d B: %w", len(b), err)
	}
	return nil
}

// OffHeap reports whether Map's buffers are outside the Go heap here.
const OffHeap = true
