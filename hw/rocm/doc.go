// Package rocm is emud's hardware backend: the cco.Device that puts the
// same gfx9 SDMA packets the emulator executes on real SDMA queues of AMD
// GPUs (MI300/MI355X), through the KFD and libhsakmt.
//
// # Build and selection
//
// The KFD driver is compiled only with `-tags rocm` and cgo on (kfd.go,
// `//go:build rocm && cgo`). Every other build has a stub whose Open
// returns an error wrapping ErrUnavailable that says which of the two is
// missing. Select (or the EMUD_BACKEND environment variable: "emu" or
// "rocm") switches an algorithm written against cco.Device between the
// emulator and this backend without code changes. With the tag but no
// /dev/kfd, Open fails with one message naming /dev/kfd.
//
// # What it follows (docs/sdma-hardware.md)
//
//   - Queue path (§3, §4.2). Queue is pure Go over a small Resource: the
//     ring memory, the write-pointer, read-pointer and doorbell words of
//     HsaQueueResource. The packet bytes, reservations, the full-ring rule
//     and the commit chain are the shared ring.Ring (ring.NewOver places it
//     on the queue's own ring memory); this package has no packet encoder.
//     Ringing is: write-pointer store (atomic), then SFENCE and one 64-bit
//     doorbell store (internal/mmio, assembly: no locked XCHG on MMIO, no
//     cgo call per doorbell), as ROCr's UpdateWriteAndDoorbellRegister does.
//     The read pointer is read from the engine's write-back word; a value
//     that moves back, passes the doorbell or is not dword aligned fails the
//     run.
//   - KFD (§4.1, §4.3, §4.4). Open: /dev/kfd check, hsaKmtOpenKFD,
//     hsaKmtGetVersion, hsaKmtAcquireSystemProperties and
//     hsaKmtGetNodeProperties (GPU nodes are those with compute cores).
//     Rings: 256 KiB, hsaKmtAllocMemory with MORI's flags (non-paged,
//     host access, 4 KiB pages, no NUMA bind, execute, uncached) and
//     hsaKmtMapMemoryToGPU. Queues: hsaKmtCreateQueueExt with
//     HSA_QUEUE_SDMA_BY_ENG_ID (6) on the engine MORI's anvil picks (engine
//     0 for loopback, else channel c on the c-th engine of the io link's
//     recommended_sdma_engine_id_mask, read from sysfs because libhsakmt
//     5.2.3's HsaIoLinkProperties lacks it) when the symbol resolves (weak
//     reference, then dlsym: Debian's 5.2.3 lacks it) and KFD is ≥ 1.17;
//     otherwise hsaKmtCreateQueue with HSA_QUEUE_SDMA_XGMI (HSA_QUEUE_SDMA
//     for loopback), letting KFD choose the engine. MORI's static OAM
//     fallback table is not reproduced.
//   - Memory. The flat LSA layout the emulator's engine.Memory uses too,
//     both built on package lsa (GPU g's slice at Base + g·Stride, page
//     bump allocation), so the same program gets the
//     same addresses and the same packet bytes on both backends. On KFD each
//     allocation is GPU g's memory, host-visible, at that fixed address
//     (FixedAddress), mapped to every GPU with hsaKmtMapMemoryToGPUNodes,
//     which must report the same GPU address; an allocation in the host
//     slice (lsa.Host, after the last GPU's) is the CPU node's system
//     memory instead, so copies to and from it take the host path over
//     PCIe (written from libhsakmt's interface, not run on hardware here).
//     Aligned 4- and 8-byte loads and stores are atomic, because the engine
//     writes signals with 64-bit atomics.
//
// # Waiting
//
// Kernels still run as simulator actors. Waits on what only actors change
// (the commit chain, CPU stores to memory) are subscriptions, as in the
// emulator. Waits on what the engine writes (the read pointer for ring
// space and quiet, signals and flags in memory) cannot be woken by the
// writer, so they poll: each poll is an AwaitTimeout, so the waiter yields
// to every other actor and shows in hang reports with what it waits for.
// PaceFixed (default of New) sleeps Config.Poll of virtual time per poll
// and keeps stand-in runs deterministic; PaceWallClock (default of Open)
// sleeps the real time since the previous poll, so virtual time follows the
// wall clock while waiting on hardware and the progress watchdog means real
// time. Either way nothing here spins on the CPU without yielding.
//
// # StandIn
//
// StandIn is an in-memory Driver: rings, words and memory are Go memory;
// its engine consumes rung units (Advance, or AutoDrain at each doorbell)
// without executing them, and it records every doorbell value and checks
// the store order. The acceptance test runs the same cco kernels on the
// emulator and on the backend over StandIn and compares every ring byte for
// byte and the doorbell value sequences.
//
// # Verified here and only on hardware
//
// Verified without a GPU: the queue path and memory layout (ring bytes and
// doorbell values identical to the emulator's, ring wrap, full rings, the
// commit chain, hang reports), the stub and no-KFD messages, and that the
// KFD driver compiles, vets and links against Debian's libhsakmt 5.2.3
// (where hsaKmtCreateQueueExt resolves to nil). Only on an MI300/MI355X
// host: everything that calls into KFD (queue creation on a chosen engine,
// doorbell MMIO, fixed-address window memory, rptr write-back) and the
// engine actually executing the packets; TestKFDQueuesOnHardware rings a
// NOP on a queue toward every GPU there. Partial: the fixed-address window
// memory needs Config.Base to lie inside libhsakmt's GPU VM aperture (the
// error says so if it does not); packets that libhsakmt would flag are not
// pre-validated; KFD queue errors (ErrorReason, HW exceptions) are not
// surfaced yet.
package rocm
