//go:build !amd64

package mmio

import "sync/atomic"

// StoreDoorbell is the release fence and the single 64-bit doorbell store.
// Off amd64 it is an atomic store (a release store on arm64); ROCm's SDMA
// hosts are amd64, so this path is untested on hardware.
func StoreDoorbell(p *uint64, v uint64) { atomic.StoreUint64(p, v) }
