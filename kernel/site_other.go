//go:build !amd64

package kernel

import "runtime"

// callSite falls back to runtime.Callers where no frame-pointer walker is
// written: slower, same identity of call sites.
func callSite(pcs []uintptr) int { return runtime.Callers(3, pcs) }
