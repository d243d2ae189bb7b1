// Package redop models the element arithmetic of NCCL CFT reductions: the
// RedOp tags (ncclCftOpSum, Min, Max, And, Or, Xor) applied to the element
// types NCCL accepts, bit-exact and little-endian, as the fabric performs
// them for red, redCpMask, redMultimem, redMultimemCpMask and pullRed.
//
// It also holds the conversions other layers round as the reductions do:
// half and bfloat16 (RoundF16, F16ToFloat64, ...) and NCCL's two 8-bit
// floats, which CFT does not reduce (RoundE4M3, E4M3ToFloat64, ...: fp8.go).
//
// It knows nothing about endpoints, timing or ordering; package fabric calls
// it once per reduction (or per element batch) it applies to memory.
//
// # Which pairs exist (docs/cft-semantics.md §8)
//
// [Check] encodes the trait table of NCCL's impl/cft__funcs.h:
//
//	Sum         uint32_t uint64_t half __nv_bfloat16 float double (not pullRed)
//	Min, Max    uint32_t int32_t uint64_t int64_t half __nv_bfloat16
//	And/Or/Xor  uint32_t int32_t (.b32) uint64_t int64_t (.b64)
//
// Everything else (Sum on signed integers, Min/Max on float/double, bitwise
// ops on floats) has no specialization in NCCL, a compile error in C++ and an
// error wrapping [ErrUnsupported] here. Sum on double is valid for red but not
// for pullRed.
//
// # Arithmetic
//
//   - Integers: add wraps modulo 2^32 / 2^64 (add.u32, add.u64); min/max
//     compare unsigned or signed according to the type; And/Or/Xor act on
//     the raw bits (.b32/.b64), so signedness does not matter.
//   - half and __nv_bfloat16 add: the exact sum rounded once to the
//     destination type, round-to-nearest-even, subnormals kept (PTX add.rn
//     on .f16/.bf16 defaults to .rn and supports subnormals; the reduction
//     forms use .noftz, e.g. red.add.noftz.f16 and
//     cp.reduce.async.bulk .add.noftz.f16). Overflow rounds to ±Inf by the
//     IEEE rule (65504 + 16 in half is a tie that rounds to the even
//     neighbour, +Inf). Implementation: both operands convert exactly to
//     float64 and are added there, then rounded once to the 16-bit format.
//     The float64 sum is exact for half (every half is a multiple of 2^-24
//     below 2^16). For bfloat16 it is not always exact (0x7F7F + 0x0001
//     spans 260 bits), so a TwoSum error term is kept: the only case where
//     rounding float64 then bfloat16 could differ from one rounding is a
//     float64 result exactly on a bfloat16 midpoint, and the error term
//     decides that case. For two bfloat16 operands it cannot actually occur
//     (double rounding of + is innocuous when 53 >= 2·8+2, Figueroa 1995);
//     the guard makes correctness not rest on that argument. The property
//     tests compare both formats against an exact big.Float reference.
//   - float add: Go's float32 addition, IEEE round-to-nearest-even with
//     subnormals kept (add.rn.f32 without .ftz).
//   - double add: Go's float64 addition, IEEE round-to-nearest-even.
//   - half / __nv_bfloat16 min and max follow PTX ISA §9.7.4.7 (min) and
//     §9.7.4.8 (max) without .NaN/.ftz/.xorsign: if exactly one operand is
//     NaN the result is the other operand; if both are NaN the result is the
//     canonical NaN; otherwise (a < b) ? a : b (min) or (a > b) ? a : b
//     (max), with the note "If values of both inputs are 0.0, then
//     +0.0 > -0.0", so min(-0, +0) = -0 and max(-0, +0) = +0.
//
// # NaN bit patterns
//
//   - half and __nv_bfloat16: 0x7FFF, CUDA's canonical NaN for both types
//     (CUDART_NAN_FP16 and CUDART_NAN_BF16 in cuda_fp16.h / cuda_bf16.h,
//     documented as "canonical NaN"). Used for min/max of two NaNs and for
//     every add whose result is NaN (a NaN input or Inf + -Inf).
//   - float: 0x7FFFFFFF. CUDA single precision has one canonical NaN and no
//     payloads (NVIDIA developer forums, "nan function tagp argument",
//     njuffa), so any NaN result of add.f32 is that pattern.
//   - double: 0x7FFFFFFFFFFFFFFF. [inferred] No source read states what the
//     fabric writes for a NaN double sum. A fixed pattern is chosen over
//     payload propagation so that Sum stays commutative bit for bit: spec §8
//     lets concurrent reductions on one element apply in a seeded order, and
//     the result must not depend on that order except through rounding.
//
// # Fold order and precision for pullRed
//
// [Reduce] validates with Check(op, t, true), so it rejects Sum on double.
// It folds left over its inputs in argument order, rounding every step
// to the element type. PTX multimem.ld_reduce accumulates in the specified
// type by default (.acc_prec changes that; NCCL does not expose it), which is
// why each step rounds. The order in which hardware combines members' copies
// is not documented; package fabric chooses the order (a seeded choice,
// spec §8) and passes the inputs in it.
//
// # cpMask (spec §7)
//
// [ApplyMasked] takes the cpMask expanded to one byte per data byte. Only
// whole elements are meaningful for reductions [inferred, spec §7]: an
// element with some but not all bytes enabled is reported as a misuse
// ([ErrMask]) and nothing is written, rather than modelling whatever partial
// write the hardware might do.
//
// # What is left out
//
//   - Mixed-precision accumulation (.acc_prec) and fp8 reductions, which PTX
//     has but NCCL CFT does not expose.
//   - Atomicity and interleaving of concurrent reductions: the caller applies
//     each element update as one step.
//   - Flush-to-zero variants: no NCCL path uses them [inferred; the
//     fabric-instruction PTX section was not available, so f32 add follows
//     the non-.ftz add.rn.f32 semantics].
package redop
