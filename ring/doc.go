// Package ring models the SDMA queue of an AMD MI300/MI355X-class (gfx94x,
// gfx950) copy engine: the packet codec and the ring protocol that ROCm's
// issuers (MORI CCO on the device, ROCr on the host) use to feed it.
//
// It is pure data: no goroutines, no clocks, no dependency on other emud
// packages. The simulator drives it one actor at a time, so nothing here is
// safe for concurrent use; wrap it if you need that.
//
// # Hardware facts followed
//
// The authority is the project's SDMA hardware spec (docs/sdma-hardware.md,
// sections 1, 2, 3 and 6), which in turn cites:
//
//   - Linux drivers/gpu/drm/amd/amdgpu/vega10_sdma_pkt_open.h: the gfx9
//     ("SDMA 4.x") packet layouts: opcodes in DW0 7:0, sub-opcodes in 15:8,
//     NOP count in 29:16, POLL_REGMEM func/mem_poll/hdp_flush, ATOMIC op in
//     31:25, and the rest of section 2 of the spec.
//   - ROCm/ROCR-Runtime sdma_registers.h and amd_blit_sdma.cpp: the exact
//     headers ROCr emits (0xB0000008 poll, ADD64 = 47 decrement idiom,
//     0x0000020D global timestamp) and the 30-bit copy count on gfx94x.
//   - ROCm/mori include/mori/cco/cco.hpp: 32-byte ring units, 256 KiB ring,
//     monotonic 64-bit pointers, fetch-add reservation, the in-order commit
//     chain, CCO_SDMA_MAX_COPY_BYTES = 0x3fffffe0 and zero-dword NOP padding.
//   - The atomic opcode numbering (AtomicOp) is the TC_OP encoding used by
//     the gfx9 PM4/SDMA headers (TC_OP_ATOMIC_ADD_RTN_64 = 0x2f is the
//     SDMA_ATOMIC_ADD64 = 47 that ROCr and MORI use).
//
// All packets are little-endian dwords. The dialects: GFX94x (gfx94x, the
// default) and GFX9Legacy (older gfx9 parts) differ only in the width of the
// copy (and constant-fill) count, 30 bits and 22 bits. GFX950 (MI350X/MI355X,
// SDMA OSS 7.0) adds the 19-dword COPY_LINEAR_WAIT_SIGNAL; GFX1250 has it in
// a compact, variable-length form (absent wait and signal blocks take no
// dwords: 7, 12, 14 or 19 dwords), plus COPY_LINEAR_MULTICAST (1..1024
// destinations, 5+2N dwords plus the optional blocks), the wait/signal swap,
// the indirect copy bits and the npd-gated scope fields of COPY_LINEAR.
// COPY_LINEAR_SWAP exists on every dialect but GFX9Legacy. A packet a
// dialect lacks decodes as ErrIllegal naming the architecture. fused.go
// cites the headers these layouts come from and the choices they leave
// open. NumKinds sizes arrays indexed by Kind.
//
// # Inferred choices
//
// Where no source states the behaviour the package makes these choices
// (marked [inferred] or [seed] in the spec):
//
//   - Broadcast placement: a 36-byte broadcast COPY gets a three-unit (96 B)
//     reservation. If the first unit is the last unit of the ring it becomes
//     NOP fill and the packet takes the next two units (at the ring start);
//     otherwise the packet takes units 1-2 and unit 3 is NOP fill. NOP fill is
//     zero dwords (one-dword NOPs), as MORI pads.
//   - Capacity rule: by default at most Size-Unit bytes may be outstanding
//     (the seed's "one unit to spare", 8191 single-unit puts on a 256 KiB
//     ring). CapacityMORI allows a full Size, as MORI HEAD does.
//   - Wrap-aware decode: the engine may decode a packet that crosses the
//     ring end (ROCr-style issuers pad instead, CCO never produces one). The
//     decoder copies such a packet into scratch space rather than faulting.
//   - The CONST_FILL count follows the copy count's dialect width (Linux
//     sdma_v4_4_2.c raised fill_max_bytes to 1<<30 together with the copy
//     limit).
//   - Fields the emulator does not model (encrypt, tmz, byte swap, cache
//     policy) are ignored on decode and encoded as zero.
package ring
