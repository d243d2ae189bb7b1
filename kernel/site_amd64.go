package kernel

// fpWalk is implemented in site_amd64.s.
//
//go:noescape
func fpWalk(pcs []uintptr) int

// callSite records the calling chain of markSite's caller by frame
// pointers: a few nanoseconds a frame, where runtime.Callers pays about a
// hundred for its table lookups.
func callSite(pcs []uintptr) int { return fpWalk(pcs) }
