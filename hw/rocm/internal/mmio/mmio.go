// Package mmio holds the one store the ROCm backend makes to device
// registers: the SDMA doorbell. It is assembly on amd64, so it lives
// apart from the cgo code (a cgo package may not hold Go assembly) and
// costs no cgo call.
package mmio
