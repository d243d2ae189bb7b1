package mmio

// StoreDoorbell is the release fence and the single 64-bit doorbell store
// of docs/sdma-hardware.md §4.2: SFENCE, then one MOVQ of v to *p. It is
// assembly rather than atomic.StoreUint64, which compiles to a locked XCHG
// that nobody has tried on doorbell MMIO, and rather than a plain Go store,
// which the compiler could split or reorder.
//
//go:noescape
func StoreDoorbell(p *uint64, v uint64)
