//go:build !linux

package engine

import "fmt"

// MapAt is the Linux-only Backing that maps regions at their flat
// addresses; elsewhere it fails.
func MapAt(base, size uint64) ([]byte, error) {
	return nil, fmt.Errorf("map at %#x (%d B): mapping regions at their device addresses needs Linux", base, size)
}
