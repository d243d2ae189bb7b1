package redop

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Op is an NCCL CFT reduction tag (ncclCftOpSum, ...).
type Op uint8

// The reduction tags of the NCCL device API (nccl-device-api-cft, "Reduction
// Operations"). NCCL has no product tag.
const (
	Sum Op = iota
	Min
	Max
	And
	Or
	Xor
)

var opNames = [...]string{
	Sum: "ncclCftOpSum",
	Min: "ncclCftOpMin",
	Max: "ncclCftOpMax",
	And: "ncclCftOpAnd",
	Or:  "ncclCftOpOr",
	Xor: "ncclCftOpXor",
}

// String returns the NCCL tag name, e.g. "ncclCftOpSum".
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("redop.Op(%d)", uint8(o))
}

func (o Op) valid() bool { return int(o) < len(opNames) }

// Type is the C++ element type of a reduction. The trait must match it
// exactly; there are no conversions (spec §8).
type Type uint8

// Element types, in the column order of spec §8.
const (
	U32  Type = iota // uint32_t
	S32              // int32_t
	U64              // uint64_t
	S64              // int64_t
	F16              // half (IEEE binary16)
	BF16             // __nv_bfloat16
	F32              // float
	F64              // double
)

var typeNames = [...]string{
	U32:  "uint32_t",
	S32:  "int32_t",
	U64:  "uint64_t",
	S64:  "int64_t",
	F16:  "half",
	BF16: "__nv_bfloat16",
	F32:  "float",
	F64:  "double",
}

var typeSizes = [...]int{U32: 4, S32: 4, U64: 8, S64: 8, F16: 2, BF16: 2, F32: 4, F64: 8}

// String returns the C++ type name, e.g. "uint32_t" or "__nv_bfloat16".
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("redop.Type(%d)", uint8(t))
}

// Size is the element size in bytes; 0 for an unknown type.
func (t Type) Size() int {
	if int(t) < len(typeSizes) {
		return typeSizes[t]
	}
	return 0
}

func (t Type) valid() bool { return int(t) < len(typeNames) }

// AllOps lists every reduction tag, for callers that iterate the table.
func AllOps() []Op { return []Op{Sum, Min, Max, And, Or, Xor} }

// AllTypes lists every element type, for callers that iterate the table.
func AllTypes() []Type { return []Type{U32, S32, U64, S64, F16, BF16, F32, F64} }

// Errors returned (wrapped) by this package; test with errors.Is.
var (
	// ErrUnknown: the Op or Type value is outside the defined constants.
	ErrUnknown = errors.New("unknown reduction op or type")
	// ErrUnsupported: NCCL has no trait for this op×type pair (a compile
	// error in C++), or pullRed lacks the pair.
	ErrUnsupported = errors.New("unsupported reduction")
	// ErrLength: buffer lengths differ or are not whole elements.
	ErrLength = errors.New("bad buffer length")
	// ErrMask: a cpMask enables only part of an element (spec §7 misuse).
	ErrMask = errors.New("partial element in mask")
)

// supported is the op × type table of spec §8 (red, redCpMask, redMultimem,
// redMultimemCpMask). pullRed differs only by lacking Sum on double.
var supported = [len(opNames)][len(typeNames)]bool{
	Sum: {U32: true, U64: true, F16: true, BF16: true, F32: true, F64: true},
	Min: {U32: true, S32: true, U64: true, S64: true, F16: true, BF16: true},
	Max: {U32: true, S32: true, U64: true, S64: true, F16: true, BF16: true},
	And: {U32: true, S32: true, U64: true, S64: true},
	Or:  {U32: true, S32: true, U64: true, S64: true},
	Xor: {U32: true, S32: true, U64: true, S64: true},
}

// Check reports whether NCCL CFT supports op on elements of type t: for
// red/redCpMask/redMultimem/redMultimemCpMask when pull is false, for pullRed
// when pull is true. The error names the op, the type and, for the f64 case,
// pullRed.
func Check(op Op, t Type, pull bool) error {
	if !op.valid() {
		return fmt.Errorf("redop: op %v: %w", op, ErrUnknown)
	}
	if !t.valid() {
		return fmt.Errorf("redop: type %v: %w", t, ErrUnknown)
	}
	if !supported[op][t] {
		return fmt.Errorf("redop: %v on %v: %w: NCCL CFT has no trait for this pair (cft-semantics §8)", op, t, ErrUnsupported)
	}
	if pull && op == Sum && t == F64 {
		return fmt.Errorf("redop: pullRed with %v on %v: %w: f64 add has no pullRed form (cft-semantics §8)", op, t, ErrUnsupported)
	}
	return nil
}

// checkLen validates one buffer against the reference length n.
func checkLen(what string, got, n int, t Type) error {
	if got != n {
		return fmt.Errorf("redop: %s is %d bytes, want %d: %w", what, got, n, ErrLength)
	}
	if n%t.Size() != 0 {
		return fmt.Errorf("redop: %s is %d bytes, not a multiple of the %d-byte %v element: %w", what, n, t.Size(), t, ErrLength)
	}
	return nil
}

// Apply performs dst[i] = dst[i] op src[i] element-wise on little-endian
// elements of type t, as red does at the target. On error dst is unchanged.
func Apply(op Op, t Type, dst, src []byte) error {
	if err := Check(op, t, false); err != nil {
		return err
	}
	if err := checkLen("dst", len(dst), len(dst), t); err != nil {
		return err
	}
	if err := checkLen("src", len(src), len(dst), t); err != nil {
		return err
	}
	f := elemFunc(op, t)
	n := t.Size()
	for i := 0; i < len(dst); i += n {
		store(t, dst[i:], f(load(t, dst[i:]), load(t, src[i:])))
	}
	return nil
}

// ApplyMasked is Apply under a cpMask expanded to one byte per data byte
// (non-zero = enabled). Elements whose bytes are all disabled are left alone;
// elements whose bytes are all enabled are reduced. An element with only
// some bytes enabled is a misuse (spec §7, [inferred]): ApplyMasked returns
// an error naming the first such element and changes nothing.
func ApplyMasked(op Op, t Type, dst, src []byte, mask []byte) error {
	if err := Check(op, t, false); err != nil {
		return err
	}
	if err := checkLen("dst", len(dst), len(dst), t); err != nil {
		return err
	}
	if err := checkLen("src", len(src), len(dst), t); err != nil {
		return err
	}
	if len(mask) != len(dst) {
		return fmt.Errorf("redop: mask is %d bytes, want one per data byte (%d): %w", len(mask), len(dst), ErrLength)
	}
	n := t.Size()
	// Validate the whole mask first so a misuse leaves dst untouched.
	for i := 0; i < len(dst); i += n {
		on := 0
		for _, m := range mask[i : i+n] {
			if m != 0 {
				on++
			}
		}
		if on != 0 && on != n {
			return fmt.Errorf("redop: %v element %d (bytes %d..%d) has %d of %d bytes enabled: %w", t, i/n, i, i+n-1, on, n, ErrMask)
		}
	}
	f := elemFunc(op, t)
	for i := 0; i < len(dst); i += n {
		if mask[i] != 0 {
			store(t, dst[i:], f(load(t, dst[i:]), load(t, src[i:])))
		}
	}
	return nil
}

// Reduce computes out = ins[0] op ins[1] op ... op ins[k-1] element-wise,
// folding left in argument order with each step rounded to t, as pullRed
// returns the reduction over all members' copies. It validates with
// Check(op, t, true), so Sum on double is rejected. out may be the same slice
// as any input; partially overlapping slices are not supported. On error out
// is unchanged.
func Reduce(op Op, t Type, out []byte, ins ...[]byte) error {
	if err := Check(op, t, true); err != nil {
		return err
	}
	if len(ins) == 0 {
		return fmt.Errorf("redop: Reduce needs at least one input: %w", ErrLength)
	}
	if err := checkLen("out", len(out), len(out), t); err != nil {
		return err
	}
	for k, in := range ins {
		if err := checkLen(fmt.Sprintf("input %d", k), len(in), len(out), t); err != nil {
			return err
		}
	}
	f := elemFunc(op, t)
	n := t.Size()
	for i := 0; i < len(out); i += n {
		// Read every input for this element before writing out, so out may
		// alias an input.
		acc := load(t, ins[0][i:])
		for _, in := range ins[1:] {
			acc = f(acc, load(t, in[i:]))
		}
		store(t, out[i:], acc)
	}
	return nil
}

func load(t Type, b []byte) uint64 {
	switch t.Size() {
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	default:
		return binary.LittleEndian.Uint64(b)
	}
}

func store(t Type, b []byte, v uint64) {
	switch t.Size() {
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}
