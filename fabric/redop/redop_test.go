package redop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// enc packs raw element bit patterns little-endian.
func enc(t Type, vals ...uint64) []byte {
	b := make([]byte, len(vals)*t.Size())
	for i, v := range vals {
		store(t, b[i*t.Size():], v)
	}
	return b
}

// dec unpacks raw element bit patterns.
func dec(t Type, b []byte) []uint64 {
	var out []uint64
	for i := 0; i+t.Size() <= len(b); i += t.Size() {
		out = append(out, load(t, b[i:]))
	}
	return out
}

func f32b(v float32) uint64 { return uint64(math.Float32bits(v)) }
func f64b(v float64) uint64 { return math.Float64bits(v) }

// supportedPairs is the spec §8 table written out independently of the
// package's own table.
var supportedPairs = map[string]bool{
	"Sum/U32": true, "Sum/U64": true, "Sum/F16": true, "Sum/BF16": true, "Sum/F32": true, "Sum/F64": true,
	"Min/U32": true, "Min/S32": true, "Min/U64": true, "Min/S64": true, "Min/F16": true, "Min/BF16": true,
	"Max/U32": true, "Max/S32": true, "Max/U64": true, "Max/S64": true, "Max/F16": true, "Max/BF16": true,
	"And/U32": true, "And/S32": true, "And/U64": true, "And/S64": true,
	"Or/U32": true, "Or/S32": true, "Or/U64": true, "Or/S64": true,
	"Xor/U32": true, "Xor/S32": true, "Xor/U64": true, "Xor/S64": true,
}

var opShort = map[Op]string{Sum: "Sum", Min: "Min", Max: "Max", And: "And", Or: "Or", Xor: "Xor"}
var typeShort = map[Type]string{U32: "U32", S32: "S32", U64: "U64", S64: "S64", F16: "F16", BF16: "BF16", F32: "F32", F64: "F64"}

func pairKey(op Op, t Type) string { return opShort[op] + "/" + typeShort[t] }

func TestNamesAndSizes(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		want string
	}{{Sum, "ncclCftOpSum"}, {Min, "ncclCftOpMin"}, {Max, "ncclCftOpMax"}, {And, "ncclCftOpAnd"}, {Or, "ncclCftOpOr"}, {Xor, "ncclCftOpXor"}, {Op(6), "redop.Op(6)"}} {
		assert.Equal(t, tc.want, tc.op.String())
	}
	for _, tc := range []struct {
		t    Type
		name string
		size int
	}{
		{U32, "uint32_t", 4}, {S32, "int32_t", 4}, {U64, "uint64_t", 8}, {S64, "int64_t", 8},
		{F16, "half", 2}, {BF16, "__nv_bfloat16", 2}, {F32, "float", 4}, {F64, "double", 8},
		{Type(8), "redop.Type(8)", 0},
	} {
		assert.Equal(t, tc.name, tc.t.String())
		assert.Equal(t, tc.size, tc.t.Size(), tc.name)
	}
	assert.Len(t, AllOps(), 6)
	assert.Len(t, AllTypes(), 8)
}

func TestCheckTable(t *testing.T) {
	n := 0
	for _, op := range AllOps() {
		for _, ty := range AllTypes() {
			key := pairKey(op, ty)
			want := supportedPairs[key]
			for _, pull := range []bool{false, true} {
				err := Check(op, ty, pull)
				wantPull := want && !(pull && key == "Sum/F64")
				if wantPull {
					assert.NoError(t, err, "%s pull=%v", key, pull)
					continue
				}
				n++
				require.Error(t, err, "%s pull=%v", key, pull)
				assert.ErrorIs(t, err, ErrUnsupported, key)
				assert.ErrorContains(t, err, op.String(), key)
				assert.ErrorContains(t, err, ty.String(), key)
			}
		}
	}
	// 48 pairs, 30 supported: 18 rejected twice, plus Sum/F64 for pullRed.
	assert.Equal(t, 18*2+1, n)
}

func TestCheckPullRedF64(t *testing.T) {
	require.NoError(t, Check(Sum, F64, false))
	err := Check(Sum, F64, true)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "pullRed")
	assert.ErrorContains(t, err, "ncclCftOpSum")
	assert.ErrorContains(t, err, "double")

	// Apply is red: allowed. Reduce is pullRed: rejected, out untouched.
	dst := enc(F64, f64b(1))
	require.NoError(t, Apply(Sum, F64, dst, enc(F64, f64b(2))))
	assert.Equal(t, []uint64{f64b(3)}, dec(F64, dst))
	out := enc(F64, f64b(7))
	err = Reduce(Sum, F64, out, enc(F64, f64b(1)), enc(F64, f64b(2)))
	assert.ErrorContains(t, err, "pullRed")
	assert.Equal(t, []uint64{f64b(7)}, dec(F64, out))
}

func TestUnknownOpAndType(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		ty   Type
		want string
	}{{Op(6), U32, "redop.Op(6)"}, {Op(255), F16, "redop.Op(255)"}, {Sum, Type(8), "redop.Type(8)"}, {Xor, Type(200), "redop.Type(200)"}} {
		err := Check(tc.op, tc.ty, false)
		assert.ErrorIs(t, err, ErrUnknown)
		assert.ErrorContains(t, err, tc.want)
		dst := []byte{1, 2, 3, 4, 5, 6, 7, 8}
		assert.ErrorIs(t, Apply(tc.op, tc.ty, dst, make([]byte, 8)), ErrUnknown)
		assert.ErrorIs(t, ApplyMasked(tc.op, tc.ty, dst, make([]byte, 8), make([]byte, 8)), ErrUnknown)
		assert.ErrorIs(t, Reduce(tc.op, tc.ty, dst, make([]byte, 8)), ErrUnknown)
		assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, dst)
	}
}

func TestRejectedPairsApply(t *testing.T) {
	for _, op := range AllOps() {
		for _, ty := range AllTypes() {
			if supportedPairs[pairKey(op, ty)] {
				continue
			}
			dst := enc(ty, 1, 2)
			orig := bytes.Clone(dst)
			src := enc(ty, 3, 4)
			mask := bytes.Repeat([]byte{1}, len(dst))
			for name, err := range map[string]error{
				"Apply":       Apply(op, ty, dst, src),
				"ApplyMasked": ApplyMasked(op, ty, dst, src, mask),
				"Reduce":      Reduce(op, ty, dst, src, src),
			} {
				assert.ErrorIs(t, err, ErrUnsupported, "%s %s", name, pairKey(op, ty))
				assert.ErrorContains(t, err, op.String())
				assert.ErrorContains(t, err, ty.String())
			}
			assert.Equal(t, orig, dst, pairKey(op, ty))
		}
	}
}

type vec struct {
	op      Op
	ty      Type
	a, b    uint64 // dst, src bit patterns
	want    uint64
	comment string
}

var vectors = []vec{
	// Integer add wraps.
	{Sum, U32, 1, 2, 3, ""},
	{Sum, U32, 0xFFFFFFFF, 1, 0, "u32 wrap"},
	{Sum, U32, 0x80000000, 0x80000000, 0, "u32 wrap"},
	{Sum, U32, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFE, "u32 wrap"},
	{Sum, U64, 0xFFFFFFFFFFFFFFFF, 2, 1, "u64 wrap"},
	{Sum, U64, 0xFFFFFFFF, 1, 0x100000000, "u64 carries past 32 bits"},
	// Signed vs unsigned min/max.
	{Min, U32, 0xFFFFFFFF, 1, 1, "unsigned: 0xFFFFFFFF is large"},
	{Min, S32, 0xFFFFFFFF, 1, 0xFFFFFFFF, "signed: -1 < 1"},
	{Max, U32, 0xFFFFFFFF, 1, 0xFFFFFFFF, ""},
	{Max, S32, 0xFFFFFFFF, 1, 1, ""},
	{Min, S32, 0x80000000, 0x7FFFFFFF, 0x80000000, "INT32_MIN"},
	{Max, S32, 0x80000000, 0x7FFFFFFF, 0x7FFFFFFF, ""},
	{Min, U64, 0x8000000000000000, 1, 1, ""},
	{Min, S64, 0x8000000000000000, 1, 0x8000000000000000, "INT64_MIN"},
	{Max, U64, 0x8000000000000000, 1, 0x8000000000000000, ""},
	{Max, S64, 0x8000000000000000, 1, 1, ""},
	{Max, S64, 0xFFFFFFFFFFFFFFFE, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, "-2 vs -1"},
	{Min, U32, 7, 7, 7, "equal"},
	// Bitwise, signedness irrelevant, all bits kept.
	{And, U32, 0xF0F0FF00, 0xFF00FF0F, 0xF000FF00, ""},
	{And, S32, 0xFFFFFFFF, 0x80000001, 0x80000001, ""},
	{Or, U32, 0xF0F00000, 0x0000F00F, 0xF0F0F00F, ""},
	{Or, S32, 0x80000000, 1, 0x80000001, ""},
	{Xor, U32, 0xFFFF0000, 0xFF00FF00, 0x00FFFF00, ""},
	{Xor, S32, 0xFFFFFFFF, 0xFFFFFFFF, 0, ""},
	{And, U64, 0xFFFFFFFF00000000, 0xF0000000F0000000, 0xF000000000000000, ""},
	{And, S64, 0x8000000000000001, 0xFFFFFFFFFFFFFFFF, 0x8000000000000001, ""},
	{Or, U64, 0x8000000000000000, 0x1, 0x8000000000000001, ""},
	{Or, S64, 0x0123000000000000, 0x0000000000004567, 0x0123000000004567, ""},
	{Xor, U64, 0xAAAAAAAAAAAAAAAA, 0xFFFFFFFFFFFFFFFF, 0x5555555555555555, ""},
	{Xor, S64, 0x8000000000000000, 0x8000000000000000, 0, ""},

	// half add.
	{Sum, F16, 0x3C00, 0x3C00, 0x4000, "1+1=2"},
	{Sum, F16, 0x3C00, 0x1000, 0x3C00, "1+2^-11: tie, to even (down)"},
	{Sum, F16, 0x3C01, 0x1000, 0x3C02, "(1+2^-10)+2^-11: tie, to even (up)"},
	{Sum, F16, 0x3C00, 0x1001, 0x3C01, "just above the tie"},
	{Sum, F16, 0x3C00, 0x0FFF, 0x3C00, "just below the tie"},
	{Sum, F16, 0x0001, 0x0001, 0x0002, "subnormal + subnormal"},
	{Sum, F16, 0x03FF, 0x0001, 0x0400, "largest subnormal + ulp = smallest normal"},
	{Sum, F16, 0x0400, 0x8001, 0x03FF, "normal - ulp = subnormal"},
	{Sum, F16, 0x0001, 0x8001, 0x0000, "x + -x = +0"},
	{Sum, F16, 0x3C00, 0xBC00, 0x0000, "1 + -1 = +0"},
	{Sum, F16, 0x8000, 0x8000, 0x8000, "-0 + -0 = -0"},
	{Sum, F16, 0x0000, 0x8000, 0x0000, "+0 + -0 = +0"},
	{Sum, F16, 0x8000, 0x0000, 0x0000, "-0 + +0 = +0"},
	{Sum, F16, 0x7BFF, 0x4C00, 0x7C00, "65504+16: tie to even = +Inf"},
	{Sum, F16, 0x7BFF, 0x4B80, 0x7BFF, "65504+15 stays finite"},
	{Sum, F16, 0xFBFF, 0xCC00, 0xFC00, "-65504-16 = -Inf"},
	{Sum, F16, 0x7BFF, 0x7BFF, 0x7C00, "overflow"},
	{Sum, F16, 0x7C00, 0x3C00, 0x7C00, "Inf + 1"},
	{Sum, F16, 0xFC00, 0x7BFF, 0xFC00, "-Inf + max"},
	{Sum, F16, 0x7C00, 0xFC00, 0x7FFF, "Inf + -Inf = canonical NaN"},
	{Sum, F16, 0x7E00, 0x3C00, 0x7FFF, "NaN + 1 = canonical NaN"},
	{Sum, F16, 0x3C00, 0xFC01, 0x7FFF, "1 + negative sNaN = canonical NaN"},
	{Sum, F16, 0x4248, 0x3E00, 0x44A4, "3.140625+1.5 = 4.640625 exact"},

	// bfloat16 add.
	{Sum, BF16, 0x3F80, 0x3F80, 0x4000, "1+1=2"},
	{Sum, BF16, 0x3F80, 0x3B80, 0x3F80, "1+2^-8: tie, to even (down)"},
	{Sum, BF16, 0x3F81, 0x3B80, 0x3F82, "(1+2^-7)+2^-8: tie, to even (up)"},
	{Sum, BF16, 0x3F80, 0x3B81, 0x3F81, "just above the tie"},
	{Sum, BF16, 0x0001, 0x0001, 0x0002, "subnormal + subnormal"},
	{Sum, BF16, 0x007F, 0x0001, 0x0080, "largest subnormal + ulp = smallest normal"},
	{Sum, BF16, 0x0080, 0x8001, 0x007F, "normal - ulp = subnormal"},
	{Sum, BF16, 0x8000, 0x8000, 0x8000, "-0 + -0 = -0"},
	{Sum, BF16, 0x3F80, 0xBF80, 0x0000, "1 + -1 = +0"},
	{Sum, BF16, 0x7F7F, 0x7B00, 0x7F80, "max + half ulp: tie to even = +Inf"},
	{Sum, BF16, 0x7F7F, 0x7A80, 0x7F7F, "max + quarter ulp stays finite"},
	{Sum, BF16, 0xFF7F, 0xFF7F, 0xFF80, "overflow to -Inf"},
	{Sum, BF16, 0x7F7F, 0x0001, 0x7F7F, "max + min subnormal: float64 sum inexact"},
	{Sum, BF16, 0x0001, 0xFF7F, 0xFF7F, "min subnormal - max"},
	{Sum, BF16, 0x7F80, 0xFF80, 0x7FFF, "Inf + -Inf = canonical NaN"},
	{Sum, BF16, 0x7FC0, 0x3F80, 0x7FFF, "NaN + 1 = canonical NaN"},
	{Sum, BF16, 0x7F80, 0x3F80, 0x7F80, "Inf + 1"},

	// float add.
	{Sum, F32, f32b(1), f32b(2), f32b(3), ""},
	{Sum, F32, f32b(1), 0x33800000, f32b(1), "1+2^-24: tie, to even"},
	{Sum, F32, 0x3F800001, 0x33800000, 0x3F800002, "tie, to even (up)"},
	{Sum, F32, 0x00000001, 0x00000001, 0x00000002, "subnormals kept (no ftz)"},
	{Sum, F32, 0x007FFFFF, 0x00000001, 0x00800000, "subnormal to normal"},
	{Sum, F32, 0x7F7FFFFF, 0x73000000, 0x7F800000, "max + half ulp = +Inf"},
	{Sum, F32, 0x80000000, 0x80000000, 0x80000000, "-0 + -0"},
	{Sum, F32, f32b(1), f32b(-1), 0, "+0"},
	{Sum, F32, 0x7FC00001, f32b(1), 0x7FFFFFFF, "NaN payload not kept"},
	{Sum, F32, 0x7F800000, 0xFF800000, 0x7FFFFFFF, "Inf + -Inf"},

	// double add.
	{Sum, F64, f64b(0.1), f64b(0.2), 0x3FD3333333333334, "0.1+0.2"},
	{Sum, F64, f64b(1), 0x3CA0000000000000, f64b(1), "1+2^-53: tie, to even"},
	{Sum, F64, 0x3FF0000000000001, 0x3CA0000000000000, 0x3FF0000000000002, "tie, to even (up)"},
	{Sum, F64, 1, 1, 2, "subnormals"},
	{Sum, F64, 0x7FEFFFFFFFFFFFFF, 0x7C90000000000000, 0x7FF0000000000000, "max + half ulp = +Inf"},
	{Sum, F64, 0x8000000000000000, 0x8000000000000000, 0x8000000000000000, "-0 + -0"},
	{Sum, F64, 0x7FF8000000000123, f64b(1), 0x7FFFFFFFFFFFFFFF, "NaN canonical"},
	{Sum, F64, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FFFFFFFFFFFFFFF, "Inf + -Inf"},

	// half min/max (PTX min.f16 / max.f16).
	{Min, F16, 0x3C00, 0x4000, 0x3C00, "min(1,2)"},
	{Max, F16, 0x3C00, 0x4000, 0x4000, "max(1,2)"},
	{Min, F16, 0xBC00, 0x3C00, 0xBC00, "min(-1,1)"},
	{Max, F16, 0xC000, 0xBC00, 0xBC00, "max(-2,-1)"},
	{Min, F16, 0x8000, 0x0000, 0x8000, "min(-0,+0) = -0"},
	{Min, F16, 0x0000, 0x8000, 0x8000, "min(+0,-0) = -0"},
	{Max, F16, 0x8000, 0x0000, 0x0000, "max(-0,+0) = +0"},
	{Max, F16, 0x0000, 0x8000, 0x0000, "max(+0,-0) = +0"},
	{Min, F16, 0x7E00, 0x3C00, 0x3C00, "min(NaN,1) = 1"},
	{Min, F16, 0x3C00, 0x7E01, 0x3C00, "min(1,NaN) = 1"},
	{Max, F16, 0xFE00, 0xBC00, 0xBC00, "max(-NaN,-1) = -1"},
	{Max, F16, 0xBC00, 0x7C01, 0xBC00, "max(-1,sNaN) = -1"},
	{Min, F16, 0x7E00, 0xFE01, 0x7FFF, "min(NaN,NaN) = canonical"},
	{Max, F16, 0x7C01, 0x7E00, 0x7FFF, "max(NaN,NaN) = canonical"},
	{Min, F16, 0xFC00, 0x3C00, 0xFC00, "min(-Inf,1)"},
	{Max, F16, 0x7C00, 0x7BFF, 0x7C00, "max(Inf,max)"},
	{Min, F16, 0x0001, 0x0002, 0x0001, "subnormals compare"},
	{Min, F16, 0x8001, 0x0001, 0x8001, "min(-tiny,tiny)"},
	{Max, F16, 0x8001, 0x8000, 0x8000, "max(-tiny,-0) = -0"},
	{Min, F16, 0x3C00, 0x3C00, 0x3C00, "equal"},

	// bfloat16 min/max.
	{Min, BF16, 0x3F80, 0x4000, 0x3F80, "min(1,2)"},
	{Max, BF16, 0x3F80, 0x4000, 0x4000, "max(1,2)"},
	{Min, BF16, 0xBF80, 0x3F80, 0xBF80, "min(-1,1)"},
	{Max, BF16, 0xC000, 0xBF80, 0xBF80, "max(-2,-1)"},
	{Min, BF16, 0x0000, 0x8000, 0x8000, "min(+0,-0) = -0"},
	{Max, BF16, 0x8000, 0x0000, 0x0000, "max(-0,+0) = +0"},
	{Min, BF16, 0x7FC0, 0x3F80, 0x3F80, "min(NaN,1) = 1"},
	{Max, BF16, 0x3F80, 0xFFC0, 0x3F80, "max(1,-NaN) = 1"},
	{Min, BF16, 0x7FC0, 0x7F81, 0x7FFF, "both NaN = canonical"},
	{Max, BF16, 0xFFC0, 0x7FC0, 0x7FFF, "both NaN = canonical"},
	{Min, BF16, 0xFF80, 0xFF7F, 0xFF80, "min(-Inf,-max)"},
	{Max, BF16, 0x0001, 0x0000, 0x0001, "subnormal > +0"},
}

func TestApplyVectors(t *testing.T) {
	covered := map[string]bool{}
	for _, v := range vectors {
		name := fmt.Sprintf("%s/%#x_%#x/%s", pairKey(v.op, v.ty), v.a, v.b, v.comment)
		covered[pairKey(v.op, v.ty)] = true
		t.Run(name, func(t *testing.T) {
			// Put the vector between two neighbours to check element
			// boundaries and that the neighbours are reduced independently.
			dst := enc(v.ty, 0, v.a, 0)
			src := enc(v.ty, 0, v.b, 0)
			require.NoError(t, Apply(v.op, v.ty, dst, src))
			got := dec(v.ty, dst)
			assert.Equalf(t, v.want, got[1], "got %#x want %#x", got[1], v.want)
			assert.Equal(t, elemFunc(v.op, v.ty)(0, 0), got[0])

			// Reduce agrees for pullRed-capable pairs.
			if Check(v.op, v.ty, true) == nil {
				out := make([]byte, v.ty.Size())
				require.NoError(t, Reduce(v.op, v.ty, out, enc(v.ty, v.a), enc(v.ty, v.b)))
				assert.Equal(t, v.want, dec(v.ty, out)[0])
			}
		})
	}
	for key := range supportedPairs {
		assert.True(t, covered[key], "no vector for %s", key)
	}
}

func TestLengthErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ty       Type
		dst, src int
		want     string
	}{
		{"dst not whole u32", U32, 6, 6, "dst is 6 bytes, not a multiple of the 4-byte uint32_t element"},
		{"dst not whole u64", U64, 12, 12, "not a multiple of the 8-byte uint64_t"},
		{"odd f16", F16, 3, 3, "2-byte half"},
		{"src shorter", U32, 8, 4, "src is 4 bytes, want 8"},
		{"src longer", F32, 8, 12, "src is 12 bytes, want 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := bytes.Repeat([]byte{0x11}, tc.dst)
			err := Apply(Sum, tc.ty, dst, make([]byte, tc.src))
			assert.ErrorIs(t, err, ErrLength)
			assert.ErrorContains(t, err, tc.want)
			err = ApplyMasked(Sum, tc.ty, dst, make([]byte, tc.src), bytes.Repeat([]byte{1}, tc.dst))
			assert.ErrorIs(t, err, ErrLength)
			assert.Equal(t, bytes.Repeat([]byte{0x11}, tc.dst), dst)
		})
	}
	t.Run("empty is fine", func(t *testing.T) {
		assert.NoError(t, Apply(Sum, U64, nil, nil))
		assert.NoError(t, ApplyMasked(Sum, U64, nil, nil, nil))
		assert.NoError(t, Reduce(Sum, U64, nil, nil, nil))
	})
	t.Run("mask length", func(t *testing.T) {
		err := ApplyMasked(Sum, U32, make([]byte, 8), make([]byte, 8), make([]byte, 7))
		assert.ErrorIs(t, err, ErrLength)
		assert.ErrorContains(t, err, "mask is 7 bytes")
	})
	t.Run("reduce", func(t *testing.T) {
		out := enc(U32, 9, 9)
		assert.ErrorContains(t, Reduce(Sum, U32, out), "at least one input")
		err := Reduce(Sum, U32, out, enc(U32, 1, 2), enc(U32, 1))
		assert.ErrorIs(t, err, ErrLength)
		assert.ErrorContains(t, err, "input 1 is 4 bytes, want 8")
		assert.ErrorContains(t, Reduce(Sum, U32, out[:7], out[:7]), "out is 7 bytes")
		assert.Equal(t, []uint64{9, 9}, dec(U32, out))
	})
}

func TestApplyMasked(t *testing.T) {
	t.Run("whole elements", func(t *testing.T) {
		dst := enc(U32, 10, 20, 30, 40)
		src := enc(U32, 1, 2, 3, 4)
		mask := []byte{
			1, 1, 1, 1,
			0, 0, 0, 0,
			0xFF, 2, 3, 4, // any non-zero byte enables
			0, 0, 0, 0,
		}
		require.NoError(t, ApplyMasked(Sum, U32, dst, src, mask))
		assert.Equal(t, []uint64{11, 20, 33, 40}, dec(U32, dst))
	})
	t.Run("all enabled equals Apply", func(t *testing.T) {
		dst1 := enc(BF16, 0x3F80, 0x3F81, 0x7F7F)
		dst2 := bytes.Clone(dst1)
		src := enc(BF16, 0x3B80, 0x3B80, 0x7B00)
		require.NoError(t, ApplyMasked(Sum, BF16, dst1, src, bytes.Repeat([]byte{1}, len(dst1))))
		require.NoError(t, Apply(Sum, BF16, dst2, src))
		assert.Equal(t, dst2, dst1)
	})
	t.Run("none enabled", func(t *testing.T) {
		dst := enc(F16, 0x3C00, 0x3C00)
		orig := bytes.Clone(dst)
		require.NoError(t, ApplyMasked(Max, F16, dst, enc(F16, 0x4000, 0x4000), make([]byte, 4)))
		assert.Equal(t, orig, dst)
	})
	for _, tc := range []struct {
		name string
		ty   Type
		mask []byte
		want string
	}{
		{"one byte of a u32", U32, []byte{1, 1, 1, 1, 1, 0, 0, 0}, "uint32_t element 1 (bytes 4..7) has 1 of 4 bytes enabled"},
		{"three bytes of a u32", U32, []byte{0, 1, 1, 1, 1, 1, 1, 1}, "element 0 (bytes 0..3) has 3 of 4"},
		{"half a u64", U64, []byte{1, 1, 1, 1, 0, 0, 0, 0}, "uint64_t element 0 (bytes 0..7) has 4 of 8"},
		{"one byte of a half", F16, []byte{1, 1, 0, 1, 1, 1, 1, 1}, "half element 1 (bytes 2..3) has 1 of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := bytes.Repeat([]byte{0x01}, len(tc.mask))
			orig := bytes.Clone(dst)
			err := ApplyMasked(Sum, tc.ty, dst, bytes.Repeat([]byte{0x01}, len(tc.mask)), tc.mask)
			assert.ErrorIs(t, err, ErrMask)
			assert.ErrorContains(t, err, tc.want)
			// Earlier, fully enabled elements are not written either.
			assert.Equal(t, orig, dst)
		})
	}
}

func TestReduce(t *testing.T) {
	t.Run("fold order and per-step rounding", func(t *testing.T) {
		// ((1 + 2^-11) + 2^-11) in half: each step is a tie that rounds to
		// 1, so the result is 1, not 1+2^-10 as an exact sum would give.
		out := make([]byte, 2)
		require.NoError(t, Reduce(Sum, F16, out, enc(F16, 0x3C00), enc(F16, 0x1000), enc(F16, 0x1000)))
		assert.Equal(t, []uint64{0x3C00}, dec(F16, out))
		// (2^-11 + 2^-11) + 1 is exact.
		require.NoError(t, Reduce(Sum, F16, out, enc(F16, 0x1000), enc(F16, 0x1000), enc(F16, 0x3C00)))
		assert.Equal(t, []uint64{0x3C01}, dec(F16, out))
	})
	t.Run("single input copies", func(t *testing.T) {
		out := make([]byte, 8)
		require.NoError(t, Reduce(Max, S32, out, enc(S32, 5, 0xFFFFFFFF)))
		assert.Equal(t, []uint64{5, 0xFFFFFFFF}, dec(S32, out))
	})
	t.Run("out aliases an input", func(t *testing.T) {
		a := enc(S64, 3, 0xFFFFFFFFFFFFFFFF)
		b := enc(S64, 1, 7)
		c := enc(S64, 2, 0x8000000000000000)
		require.NoError(t, Reduce(Min, S64, b, a, b, c))
		assert.Equal(t, []uint64{1, 0x8000000000000000}, dec(S64, b))
	})
	t.Run("many members", func(t *testing.T) {
		ins := make([][]byte, 8)
		for i := range ins {
			ins[i] = enc(U32, uint64(i+1), 0xFFFFFFFF)
		}
		out := make([]byte, 8)
		require.NoError(t, Reduce(Sum, U32, out, ins...))
		assert.Equal(t, []uint64{36, 0xFFFFFFF8}, dec(U32, out))
		require.NoError(t, Reduce(Xor, U32, out, ins...))
		assert.Equal(t, []uint64{1 ^ 2 ^ 3 ^ 4 ^ 5 ^ 6 ^ 7 ^ 8, 0}, dec(U32, out))
	})
}

// TestRoundTieWithError exercises the TwoSum guard directly: a float64 value
// on a bfloat16 midpoint whose exact value lies just off it. Two bfloat16
// operands cannot produce this (see doc.go), so Apply never reaches it.
func TestRoundTieWithError(t *testing.T) {
	mid := 1 + math.Ldexp(1, -8) // between 0x3F80 and 0x3F81
	tiny := math.Ldexp(1, -80)
	assert.Equal(t, uint16(0x3F80), bf16.round(mid, 0), "true tie: even")
	assert.Equal(t, uint16(0x3F81), bf16.round(mid, tiny), "above the tie")
	assert.Equal(t, uint16(0x3F80), bf16.round(mid, -tiny), "below the tie")
	assert.Equal(t, uint16(0xBF81), bf16.round(-mid, -tiny), "negative, magnitude above")
	assert.Equal(t, uint16(0xBF80), bf16.round(-mid, tiny), "negative, magnitude below")
}

func TestHalfToFloat64(t *testing.T) {
	for _, tc := range []struct {
		f    halfFormat
		h    uint16
		want float64
	}{
		{f16, 0x3C00, 1}, {f16, 0xC000, -2}, {f16, 0x7BFF, 65504}, {f16, 0x0001, math.Ldexp(1, -24)},
		{f16, 0x0400, math.Ldexp(1, -14)}, {f16, 0x7C00, math.Inf(1)}, {f16, 0xFC00, math.Inf(-1)},
		{bf16, 0x3F80, 1}, {bf16, 0x0001, math.Ldexp(1, -133)}, {bf16, 0x7F7F, math.Ldexp(255, 120)},
		{bf16, 0xFF80, math.Inf(-1)},
	} {
		assert.Equal(t, tc.want, tc.f.toFloat64(tc.h), "%#x", tc.h)
	}
	assert.True(t, math.IsNaN(f16.toFloat64(0x7E00)))
	assert.True(t, math.IsNaN(bf16.toFloat64(0xFFC1)))
	assert.True(t, math.Signbit(f16.toFloat64(0x8000)))
	// bf16 is the top half of a float32, a second derivation for all values.
	for h := 0; h < 1<<16; h++ {
		want := float64(math.Float32frombits(uint32(h) << 16))
		got := bf16.toFloat64(uint16(h))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(got), "%#x", h)
			continue
		}
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%#x", h)
	}
}

// TestLittleEndian pins the byte order of the element encoding.
func TestLittleEndian(t *testing.T) {
	dst := []byte{0xFF, 0x00, 0x00, 0x00}
	require.NoError(t, Apply(Sum, U32, dst, []byte{0x01, 0x00, 0x00, 0x00}))
	assert.Equal(t, []byte{0x00, 0x01, 0x00, 0x00}, dst)
	d := make([]byte, 8)
	binary.LittleEndian.PutUint64(d, 1<<32-1)
	require.NoError(t, Apply(Sum, U64, d, []byte{1, 0, 0, 0, 0, 0, 0, 0}))
	assert.Equal(t, []byte{0, 0, 0, 0, 1, 0, 0, 0}, d)
}
