//go:build cgo

package main

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/sim"
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
//
// A block hipFreeAsync gave back is taken only once the stream work it
// waits for (after) is done; the caller then orders itself after that
// work (the returned op's Wait), as a stream-ordered allocator's reuse is.
func hipAlloc(g int, size uint64) (uint64, streamOp, error) {
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
		if b := free[i]; b.rounded == rounded && b.size >= size && (b.after == nil || b.after.Done()) {
			hipFreed[g] = append(free[:i], free[i+1:]...)
			hipSerial++
			b.serial = hipSerial
			after := b.after
			b.after = nil
			hipLive[b.addr] = b
			return b.addr, after, nil
		}
	}
	if rounded < size || rounded > half-hipUsed[g] {
		return 0, nil, fmt.Errorf("%d B does not fit in the upper half of GPU %d's slice, hipMalloc's (%d B, %d B used)", size, g, half, hipUsed[g])
	}
	p, err := rt.mem.AllocAt(rt.mem.SliceBase(g)+half+hipUsed[g], size, fmt.Sprintf("hipMalloc gpu%d", g))
	if err != nil {
		// ccoMemAlloc and emud's regions outgrew the lower half.
		return 0, nil, fmt.Errorf("%d B does not fit in GPU %d's slice: %w", size, g, err)
	}
	hipUsed[g] += rounded
	hipSerial++
	hipLive[p] = hipBlock{addr: p, size: size, rounded: rounded, serial: hipSerial}
	return p, nil, nil
}

// hipBlock is one hipMalloc allocation: its address, the size of its
// region (what the hipMalloc that made it asked for), that size rounded
// up to a page, and its serial (hipSerial when it was handed out: an IPC
// handle of a block freed and handed out again is not the new one's); a
// block hipFreeAsync gave back also has the stream work it waits for.
type hipBlock struct {
	addr, size, rounded, serial uint64
	after                       streamOp // hipFreeAsync's: the stream work the block waits for before reuse
}

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

// hipFree gives block p back; after, if not nil, is the stream work it
// waits for before hipAlloc may hand it out again (hipFreeAsync).
func hipFree(p uint64, after streamOp) error {
	switch b, live := hipLive[p]; {
	case p == 0:
		return nil
	case live:
		delete(hipLive, p)
		b.after = after
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

// mallocCall is EMUD_H_MALLOC: a[0] bytes, a[2] where the pointer goes
// (not null), a[3] the call (0 hipMalloc, 1 hipMallocManaged with flags
// a[5], 2 hipMallocAsync on stream a[4]) -> a[1] the pointer.
func mallocCall(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	call := [...]string{"hipMalloc", "hipMallocManaged", "hipMallocAsync"}[min(a[3], 2)]
	if a[2] == 0 {
		return bad(call, hipErrorInvalidValue, errors.New("ptr is null: nowhere to store the pointer"))
	}
	switch a[3] {
	case 1:
		if a[5] != hipMemAttachGlobal && a[5] != hipMemAttachHost {
			return bad(call, hipErrorInvalidValue, fmt.Errorf("flags %#x: hipMemAttachGlobal or hipMemAttachHost", a[5]))
		}
	case 2:
		if _, err := streamOf(h, a[4]); err != nil {
			return bad(call, hipErrorInvalidHandle, err)
		}
	}
	if a[0] == 0 {
		a[1] = 0
		return hipSuccess
	}
	p, after, err := hipAlloc(h.dev, a[0])
	if err != nil {
		return bad(call, hipErrorOutOfMemory, err)
	}
	if after != nil {
		// The block's last users (the work before its hipFreeAsync) are
		// done: its new user is ordered after them.
		if err := after.Wait(act); err != nil {
			return bad(call, hipErrorLaunchFailure, err)
		}
	}
	a[1] = p
	return hipSuccess
}

// hipMallocManaged's flags.
const (
	hipMemAttachGlobal = 1
	hipMemAttachHost   = 2
)

// freeCall is EMUD_H_FREE: a[0] the pointer; a[1] 1 for hipFreeAsync on
// stream a[2].
func freeCall(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	if a[1] != 0 {
		// hipFreeAsync: the block goes back once the stream's work so far
		// is done (a marker on the stream, as an event's record), without
		// the host waiting for it.
		st, err := streamOf(h, a[2])
		if err != nil {
			return bad("hipFreeAsync", hipErrorInvalidHandle, err)
		}
		if a[0] == 0 {
			return hipSuccess
		}
		if _, live := hipLive[a[0]]; !live {
			return bad("hipFreeAsync", hipErrorInvalidValue, fmt.Errorf("ptr %#x is not a pointer hipMalloc or hipMallocAsync returned, or it was freed already", a[0]))
		}
		e := &event{}
		recordEvent(act, e, st) // a synchronize of the stream waits for the block's release too
		if err := hipFree(a[0], e.rec); err != nil {
			return bad("hipFreeAsync", hipErrorInvalidValue, err)
		}
		return hipSuccess
	}
	// HIP's hipFree makes an implicit hipDeviceSynchronize: the block's
	// last users have finished (and, for the race detector, come before
	// this thread) when hipMalloc hands it out again.
	if a[0] != 0 {
		if err := syncDevice(act, h.dev); err != nil {
			return bad("hipFree", hipErrorLaunchFailure, err)
		}
	}
	// Regions live as long as the run (engine.Memory never frees): a
	// freed block stays mapped until hipMalloc reuses it, so a use after
	// free is not caught; freeing it twice, or a pointer hipMalloc never
	// returned, is.
	if err := hipFree(a[0], nil); err != nil {
		return bad("hipFree", hipErrorInvalidValue, err)
	}
	return hipSuccess
}
