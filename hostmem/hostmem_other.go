//go:build !linux

package hostmem

import "fmt"

// Map returns n zeroed bytes; outside Linux they are Go memory.
func Map(n uint64) ([]byte, error) {
	if n == 0 || n != uint64(int(n)) {
		return nil, fmt.Errorf("hostmem: cannot map %d B", n)
	}
	return make([]byte, n), nil
}

// MapSparse is Map outside Linux.
func MapSparse(n uint64) ([]byte, error) { return Map(n) }

// MapStale is Map outside Linux: never stale.
func MapStale(n uint64) ([]byte, bool, error) {
	b, err := Map(n)
	return b, false, err
}

// MapAs is Map outside Linux: never a hit.
func MapAs(n uint64, _ string) ([]byte, bool, error) {
	b, err := Map(n)
	return b, false, err
}

// Unmap does nothing outside Linux: the collector frees the buffer.
func Unmap(b []byte) error { return nil }

// UnmapAs is Unmap outside Linux.
func UnmapAs(b []byte, _ string) error { return nil }

// OffHeap reports whether Map's buffers are outside the Go heap here.
const OffHeap = false

// Kept is 0 outside Linux: Unmap keeps nothing there.
func Kept() uint64 { return 0 }
