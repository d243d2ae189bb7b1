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
	if hipLive == nil {
		hipLive = map[uint64]bool{}
	}
	hipLive[p] = true
	return p, nil
}

// hipLive holds the pointers hipMalloc returned and hipFree has not
// freed (guarded by rt.mu).
var hipLive map[uint64]bool

// hipFree forgets p, a pointer hipMalloc returned; null is a no-op, as in
// HIP. A pointer freed already, into a buffer, or never allocated is an
// error (HIP's hipErrorInvalidValue); the mapping stays either way.
func hipFree(p uint64) error {
	switch {
	case p == 0:
		return nil
	case hipLive[p]:
		delete(hipLive, p)
		return nil
	case hostHas(p):
		delete(hostAllocs, p) // ROCm's hipFree takes hipHostMalloc's memory too
		return nil
	case rt.mem.GPUOf(p) < 0:
		return fmt.Errorf("ptr %#x is not device memory (host memory is freed with free, hipHostFree, or not at all)", p)
	}
	return fmt.Errorf("ptr %#x is not a pointer hipMalloc returned, or it was freed already", p)
}

// hostHas reports whether p is a live hipHostMalloc allocation's base.
func hostHas(p uint64) bool {
	_, ok := hostAllocs[p]
	return ok
}
