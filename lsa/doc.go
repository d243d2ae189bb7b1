// Package lsa is the flat LSA (load/store-accessible) address space every
// backend presents to cco, with nothing of the emulator in it: the layout
// (how many GPUs, queue ids per GPU pair, GPU g's slice at Base + g·Stride
// and host memory's slice after the last GPU's, Host, the ring options of
// every queue), the name of a queue (QueueID) and the
// bookkeeping of the space (Space: page-aligned bump allocation per slice,
// regions resolved by address, holes reported as *AddrError).
//
// The emulator (engine.Node, engine.Memory) backs a Space's regions with Go
// bytes; the ROCm backend (hw/rocm) backs the same regions with device
// memory at the same addresses. Both resolve their configuration through
// Layout.Resolve, so one program gets the same addresses, and so the same
// packet bytes, on both.
//
// A Space's writes (Write, Store32, Store64, Notify) wake the waiters on
// the sim.WatchList it was built with, and mark the regions WatchWrites
// watches as Written. Aligned 4- and 8-byte loads and
// stores are atomic, because on hardware the engine writes device memory
// while the host reads it.
//
// Only Bytes (and BytesOverwrite, for a caller that writes every byte it
// asks for) reaches a region's backing, which lets a region backed by
// reused memory skip clearing it (MarkStale): each granule is zeroed when an
// access first reaches it, unless an overwrite covers it whole.
//
// A stale granule can also read as 256 bytes of a known immutable source
// rather than zero (LandRef: a COPY landed by reference, without moving
// the bytes); the access that reaches it copies them in first, as it
// zeroes a zero one, so every access sees what a copy would have left.
// A region keeps its reference landings as a few runs of granules (one
// per landing, extended by the next piece of the same source), at most
// 64 live ones; past that LandRef declines and the caller copies. A
// region can be marked as holding immutable content, block by block
// (SetPristine: a scenario's pattern blocks), until any write reaches it
// (a notified write, BytesOverwrite, MarkStale): Pristine hands out that
// content for LandRef. A tracked range (below) that LandRef landed whole,
// in order, from one contiguous source takes its sum from the function
// SetSourceSums gives (a pattern cache's sums) instead of hashing the
// source. Reach is an access that looks at no bytes (a consumer's load
// whose values nothing uses): it lands what is due and copies nothing in.
// engine's Memory.Move lands a copy by reference where its source is
// pristine (issue 43: an 8-rank 1 MiB all-to-all seed then moves none of
// its 64 MiB unless something reads them).
//
// A range named beforehand (TrackSum) is hashed (package blocksum) as
// copies land in it (Land: a piece copied, then hashed while in cache),
// so that a receive check can take its sum (LandedSum) without reading
// the bytes back. The sum is given only when copies landed every byte of
// the range once, in order, and no other write reached it (Notify breaks
// it); otherwise there is none and the check reads the bytes.
package lsa
