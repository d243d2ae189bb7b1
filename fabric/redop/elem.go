package redop

import "math"

// elemFunc returns the per-element operation on raw little-endian bit
// patterns (zero-extended to 64 bits). The caller has already run Check.
func elemFunc(op Op, t Type) func(a, b uint64) uint64 {
	switch op {
	case Sum:
		switch t {
		case U32:
			return func(a, b uint64) uint64 { return uint64(uint32(a) + uint32(b)) }
		case U64:
			return func(a, b uint64) uint64 { return a + b }
		case F16:
			return func(a, b uint64) uint64 { return uint64(addHalf(f16, uint16(a), uint16(b))) }
		case BF16:
			return func(a, b uint64) uint64 { return uint64(addHalf(bf16, uint16(a), uint16(b))) }
		case F32:
			return func(a, b uint64) uint64 { return uint64(addF32(uint32(a), uint32(b))) }
		case F64:
			return addF64
		}
	case Min, Max:
		isMin := op == Min
		switch t {
		case U32, U64:
			return func(a, b uint64) uint64 { return pick(isMin, a < b, a, b) }
		case S32:
			return func(a, b uint64) uint64 { return pick(isMin, int32(a) < int32(b), a, b) }
		case S64:
			return func(a, b uint64) uint64 { return pick(isMin, int64(a) < int64(b), a, b) }
		case F16:
			return func(a, b uint64) uint64 { return uint64(minMaxHalf(f16, isMin, uint16(a), uint16(b))) }
		case BF16:
			return func(a, b uint64) uint64 { return uint64(minMaxHalf(bf16, isMin, uint16(a), uint16(b))) }
		}
	case And:
		return func(a, b uint64) uint64 { return a & b }
	case Or:
		return func(a, b uint64) uint64 { return a | b }
	case Xor:
		return func(a, b uint64) uint64 { return a ^ b }
	}
	// Unreachable after Check; a panic here would mean the table and this
	// switch disagree, which the tests cover for every pair.
	panic("redop: no element function for " + op.String() + " on " + t.String())
}

// pick returns the smaller (isMin) or larger operand given less = a < b.
// For integers equal operands have equal bits, so which one is returned on a
// tie does not matter.
func pick(isMin, less bool, a, b uint64) uint64 {
	if isMin == less {
		return a
	}
	return b
}

// Canonical NaNs written when a float add produces NaN (see doc.go).
const (
	canonNaN16 = 0x7FFF             // CUDART_NAN_FP16 and CUDART_NAN_BF16
	canonNaN32 = 0x7FFFFFFF         // the only NaN CUDA single precision produces
	canonNaN64 = 0x7FFFFFFFFFFFFFFF // [inferred] same all-ones pattern for double
)

func addF32(a, b uint32) uint32 {
	// Go rounds float32 arithmetic to float32 with IEEE round-to-nearest-even,
	// subnormals kept, which is PTX add.rn.f32 without .ftz.
	s := math.Float32frombits(a) + math.Float32frombits(b)
	if s != s {
		return canonNaN32
	}
	return math.Float32bits(s)
}

func addF64(a, b uint64) uint64 {
	s := math.Float64frombits(a) + math.Float64frombits(b)
	if s != s {
		return canonNaN64
	}
	return math.Float64bits(s)
}
