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
// its upper half: a block hipFree gave back, of the same rounded size and
// at least size bytes, the newest first, as a caching allocator reuses
// one; else new memory above the last. Before, freed blocks were never
// reused: a correct loop of hipMalloc and hipFree of 1 GiB ran out of the
// 32 GiB half after 32 rounds, where a GPU runs it for ever.
func hipAlloc(g int, size uint64) (uint64, error) {
	if hipUsed == nil {
		hipUsed = make([]uint64, rt.gpus)
		hipFreed = make([][]hipBlock, rt.gpus)
	}
	half := rt.j.Node.Config().Stride / 2
	rounded := (size + lsa.PageSize - 1) / lsa.PageSize * lsa.PageSize // wraps to 0 for sizes near 2^64: no freed block has it
	if hipLive == nil {
		hipLive = map[uint64]hipBlock{}
	}
	free := hipFreed[g]
	for i := len(free) - 1; i >= 0; i-- {
		if b := free[i]; b.rounded == rounded && b.size >= size {
			hipFreed[g] = append(free[:i], free[i+1:]...)
			hipSerial++
			b.serial = hipSerial
			hipLive[b.addr] = b
			return b.addr, nil
		}
	}
	if rounded < size || rounded > half-hipUsed[g] {
		return 0, fmt.Errorf("%d B does not fit in the upper half of GPU %d's slice, hipMalloc's (%d B, %d B used)", size, g, half, hipUsed[g])
	}
	p, err := rt.mem.AllocAt(rt.mem.SliceBase(g)+half+hipUsed[g], size, fmt.Sprintf("hipMalloc gpu%d", g))
	if err != nil {
		// ccoMemAlloc and emud's regions outgrew the lower half.
		return 0, fmt.Errorf("%d B does not fit in GPU %d's slice: %w", size, g, err)
	}
	hipUsed[g] += rounded
	hipSerial++
	hipLive[p] = hipBlock{addr: p, size: size, rounded: rounded, serial: hipSerial}
	return p, nil
}

// hipBlock is one hipMalloc allocation: its address, the size of its
// region (what the hipMalloc that made it asked for), that size rounded
// up to a page, and its serial (hipSerial when it was handed out: an IPC
// handle of a block freed and handed out again is not the new one's).
type hipBlock struct{ addr, size, rounded, serial uint64 }

// hipLive holds the blocks hipMalloc returned and hipFree has not freed,
// by address; hipFreed, per GPU, the blocks hipFree gave back, oldest
// first, for hipAlloc to reuse (guarded by rt.mu).
var (
	hipLive   map[uint64]hipBlock
	hipFreed  [][]hipBlock
	hipSerial uint64
)

// hipFreedBytes is the region bytes of GPU g's freed blocks: free again
// for hipMemGetInfo, as the memory a GPU's hipFree gives back is.
func hipFreedBytes(g int) uint64 {
	n := uint64(0)
	if g < len(hipFreed) {
		for _, b := range hipFreed[g] {
			n += b.size
		}
	}
	return n
}

func hipFree(p uint64) error {
	switch b, live := hipLive[p]; {
	case p == 0:
		return nil
	case live:
		delete(hipLive, p)
		if g := rt.mem.GPUOf(p); g >= 0 {
			hipFreed[g] = append(hipFreed[g], b)
		}
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
