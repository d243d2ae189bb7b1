// Package hostmem allocates large byte buffers outside the Go heap, as
// anonymous private memory mappings, for the emulated devices' memory.
//
// Why: a run with real bytes holds gigabytes of device memory. On the Go
// heap every such buffer counts toward the collector's heap goal, so a run
// with 9 GiB of windows could grow to twice that before a collection (the
// soft memory limit caps it, but then the collector works hard instead).
// Mapped memory is invisible to the collector: the heap stays as small as
// the emulator's own objects, and resident memory is the pages the run
// touched. Fresh mappings read as zero, so nothing is cleared by hand.
//
// Map maps anywhere; engine.MapAt (package engine) maps at a fixed device
// address with MAP_FIXED_NOREPLACE for native lanes. Both return plain
// []byte. The caller owns the lifetime: Unmap a buffer once nothing uses
// it. Unmap keeps up to KeepMax bytes of released buffers for the next Map
// of the same size, which clears one instead of mapping fresh pages (the
// page faults and the kernel's zeroing of fresh pages cost several times a
// clear of present ones, and explore's seeds map the same sizes run after
// run); a slice of a kept buffer therefore reads whatever its next user
// writes, and a slice of an unmapped one faults on use. UnmapAs keeps a
// buffer with a key naming its content, and MapAs of that key hands it
// back as it is, so that content written the same way run after run (a
// send window's pattern) is written once, and MapStale hands a kept
// buffer back uncleared, saying so, to a caller that zeroes only what it
// reads before writing (engine's regions, lsa.Space.MarkStale). A
// KeptList is such a list of buffers and their contents on its own, for
// an owner that keeps its buffers apart from the process's (an explore
// worker's, engine.Scratch: its mappings, and, with no content named,
// its small regions' buffers and its rings, as engine's ring pool keeps
// its rings). Fresh buffers of 2 MiB and more
// are aligned to 2 MiB and advised as transparent huge pages, so that
// their first touches fault once per 2 MiB and the copies over them miss
// the TLB less (MapSparse's are not: their untouched pages stay free).
// Other systems than Linux get Go memory from Map, and Unmap does nothing
// there.
package hostmem
