// Package issuer is the issuer side of MORI's SDMA ring protocol
// (docs/sdma-hardware.md §3), written once for every backend: reservation by
// fetch-add on the cached write pointer (Claim), the full-ring rule
// (AwaitSpace), the in-order commit chain (AwaitChain, Submit), committing
// everything reserved (Commit) and draining to the commit frontier
// (QuietTarget, AwaitDrained).
//
// A [Queue] keeps the issuer's pointers in a [ring.Ring] over the queue's
// ring memory and reaches the engine only through a [Port]: publishing a
// write pointer and doorbell, reading the read pointer the engine writes
// back, and waiting for the engine. The emulator (package engine)
// implements Port with its simulated engine, whose read-pointer write-backs
// wake waiters directly; the ROCm backend (package hw/rocm) with a real KFD
// queue, whose read pointer changes outside the simulator and is polled.
// So the same calls write the same packet bytes and ring the same doorbells
// on both.
//
// The backend tells the issuer side what its engine did through the
// [Backend] handle [New] returns (read-pointer write-backs, doorbell
// stores, retired packets), so no issuer can fake them; a [Set] keeps a
// backend's queues by [QueueID]. An [Observer] sees queue work as it
// happens (doorbells; the emulated engine's retired packets); package
// trace implements it.
//
// When a run hangs, [Queue.Causes] names what keeps the waiting issuers
// from going on, from the issuer's pointers alone (a full ring whose
// reservations were never rung, a stalled or jumped commit chain), as
// typed sim.Cause values a higher layer may refine.
//
// With the run's race detector on (package race), writing a packet and
// ringing the doorbell release the issuing actor to the engine, which
// acquires them when it starts the packet (Backend.RaceAcquire), and AwaitDrained
// acquires the engine's clock at the packet it drained to (race.go).
//
// A caller may label each packet with who posted it ([Queue.Posted]; cco
// names the lane), and the engine takes the label when it starts the
// packet ([Backend.Poster]) to name the packet's writes in reports: two
// blocks posting to one queue are told apart only by it (poster.go).
//
// A Queue's methods must be called from the running simulator actor or
// event: the simulator runs one at a time, so nothing here locks.
package issuer
