//go:build cgo

package main

import (
	"fmt"

	"github.com/emud-dev/emud/lsa"
)

// hipUsed is, per GPU, how many bytes hipMalloc has taken from the upper
// half of the GPU's slice. hipMalloc allocates upward from the slice's
// middle while ccoMemAlloc, and emud's own regions (signal pools, barrier
// state), bump upward from its start: on MORI ccoMemAlloc's slots come
// from the comm's own VMM reservation, which hipMalloc never touches, so a
// hipMalloc must not move the slot offsets that ccoWindowRegister expects
// alike on every rank. Sharing one bump allocator made a hipMalloc on one
// rank before its ccoMemAlloc fail the registration
// (examples/cxx/hipmalloc_first.cpp). Guarded by rt.mu, as every host
// call is.
var hipUsed []uint64

// hipAlloc backs size bytes (rounded up to a page) of GPU g's slice, in
// its upper half.
func hipAlloc(g int, size uint64) (uint64, error) {
	if hipUsed == nil {
		hipUsed = make([]uint64, rt.gpus)
	}
	half := rt.j.Node.Config().Stride / 2
	rounded := (size + lsa.PageSize - 1) / lsa.PageSize * lsa.PageSize
	if rounded < size || rounded > half-hipUsed[g] {
		return 0, fmt.Errorf("%d B does not fit in the upper half of GPU %d's slice, hipMalloc's (%d B, %d B used)", size, g, half, hipUsed[g])
	}
	p, err := rt.mem.AllocAt(rt.mem.SliceBase(g)+half+hipUsed[g], size, fmt.Sprintf("hipMalloc gpu%d", g))
	if err != nil {
		// ccoMemAlloc and emud's regions outgrew the lower half.
		return 0, fmt.Errorf("%d B does not fit in GPU %d's slice: %w", size, g, err)
	}
	hipUsed[g] += rounded
	return p, nil
}
