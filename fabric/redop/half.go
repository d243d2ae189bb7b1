package redop

import "math"

// halfFormat describes a 16-bit IEEE-style binary format: 1 sign bit,
// expBits exponent bits, manBits stored significand bits.
type halfFormat struct {
	expBits, manBits uint
	bias             int
}

var (
	f16  = halfFormat{expBits: 5, manBits: 10, bias: 15} // IEEE binary16
	bf16 = halfFormat{expBits: 8, manBits: 7, bias: 127} // bfloat16
)

func (f halfFormat) infBits() uint16 { return uint16((1<<f.expBits - 1) << f.manBits) }

func (f halfFormat) isNaN(h uint16) bool { return h&0x7FFF > f.infBits() }

// toFloat64 converts exactly (float64 has more range and precision than
// either 16-bit format).
func (f halfFormat) toFloat64(h uint16) float64 {
	mag := h & 0x7FFF
	var v float64
	switch e := int(mag >> f.manBits); {
	case mag > f.infBits():
		v = math.NaN()
	case mag == f.infBits():
		v = math.Inf(1)
	case e == 0: // subnormal or zero: m × 2^(1-bias-manBits)
		v = math.Ldexp(float64(mag), 1-f.bias-int(f.manBits))
	default: // normal: (2^manBits + m) × 2^(e-bias-manBits)
		m := int(mag&(1<<f.manBits-1)) | 1<<f.manBits
		v = math.Ldexp(float64(m), e-f.bias-int(f.manBits))
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

// addHalf is add.rn.{f16,bf16} without flush-to-zero: the exact sum rounded
// once to the format, ties to even.
func addHalf(f halfFormat, a, b uint16) uint16 {
	x, y := f.toFloat64(a), f.toFloat64(b)
	s := x + y
	switch {
	case s != s: // a NaN input, or Inf + -Inf
		return canonNaN16
	case math.IsInf(s, 0): // only from an infinite input: float64 cannot overflow here
		return f.infBits() | signBit16(s)
	}
	// TwoSum (Knuth): s + e == x + y exactly. For f16 e is always 0; for
	// bf16 far-apart exponents can make the float64 sum inexact, and e
	// then breaks the one case where that matters, a tie at s.
	bb := s - x
	e := (x - (s - bb)) + (y - bb)
	return f.round(s, e)
}

func signBit16(v float64) uint16 {
	if math.Signbit(v) {
		return 0x8000
	}
	return 0
}

// round rounds the exact value s+e to the format with round-to-nearest-even,
// gradual underflow and overflow to infinity. s is finite and s = RN64(s+e),
// so |e| is at most half an ulp of s in float64.
func (f halfFormat) round(s, e float64) uint16 {
	sign := signBit16(s)
	if s == 0 {
		// An exact zero (e is 0 too); float64 already gave it the IEEE
		// sign: -0 only for (-0) + (-0).
		return sign
	}
	a := math.Abs(s)
	if s < 0 {
		e = -e // e now measures |exact| - a
	}
	minNormalExp := 1 - f.bias // exponent of the smallest normal
	_, exp := math.Frexp(a)    // a = frac × 2^exp, frac in [0.5, 1)
	E := exp - 1               // a in [2^E, 2^(E+1))
	normal := E >= minNormalExp
	if !normal {
		E = minNormalExp // subnormals share the smallest normal's quantum
	}
	// Scale so the format's ulp is 1: n = a / ulp, exact (power-of-two
	// scaling far from float64's limits).
	n := math.Ldexp(a, int(f.manBits)-E)
	m := math.Floor(n)
	switch frac := n - m; {
	case frac > 0.5:
		m++
	case frac == 0.5:
		// A tie in float64. It is a true tie only if e is 0; otherwise the
		// exact value lies on e's side of the midpoint.
		if e > 0 || (e == 0 && math.Mod(m, 2) == 1) {
			m++
		}
	}
	// m includes the hidden bit for normals (m in [2^manBits, 2^(manBits+1)]).
	// Adding (E+bias-1)<<manBits to it gives the encoding, and a carry out of
	// the significand (m == 2^(manBits+1)) bumps the exponent by itself. For
	// subnormals m < 2^manBits+1 is the encoding; m == 2^manBits rounds up to
	// the smallest normal, which has the same bit pattern.
	bits := uint64(m)
	if normal {
		bits += uint64(E+f.bias-1) << f.manBits
	}
	if bits >= uint64(f.infBits()) {
		return f.infBits() | sign
	}
	return uint16(bits) | sign
}

// orderKey maps a non-NaN value to an integer with the same order, and
// -0 < +0 as PTX min/max require ("+0.0 > -0.0").
func orderKey(h uint16) int32 {
	mag := int32(h & 0x7FFF)
	if h&0x8000 != 0 {
		return -mag - 1
	}
	return mag
}

// minMaxHalf is PTX min.{f16,bf16} / max.{f16,bf16} without .NaN, .ftz or
// .xorsign.abs: one NaN operand yields the other operand, two NaNs yield the
// canonical NaN.
func minMaxHalf(f halfFormat, isMin bool, a, b uint16) uint16 {
	an, bn := f.isNaN(a), f.isNaN(b)
	switch {
	case an && bn:
		return canonNaN16
	case an:
		return b
	case bn:
		return a
	}
	less := orderKey(a) < orderKey(b)
	if isMin == less {
		return a
	}
	return b
}

// F16ToFloat64 and BF16ToFloat64 are a half's or a bfloat16's value,
// exactly (a NaN as float64's NaN).
func F16ToFloat64(h uint16) float64 { return f16.toFloat64(h) }

// BF16ToFloat64 is F16ToFloat64 for bfloat16.
func BF16ToFloat64(h uint16) float64 { return bf16.toFloat64(h) }

// RoundF16 and RoundBF16 round v once to the 16-bit format, to nearest
// with ties to even, keeping subnormals and overflowing to ±Inf, as the
// reductions' own steps round; a NaN is the canonical NaN (0x7FFF). For
// other users of the formats' arithmetic (package capi's NCCL host
// collectives), so that they round as the CFT reductions do.
func RoundF16(v float64) uint16 { return roundTo(f16, v) }

// RoundBF16 is RoundF16 for bfloat16.
func RoundBF16(v float64) uint16 { return roundTo(bf16, v) }

func roundTo(f halfFormat, v float64) uint16 {
	switch {
	case v != v:
		return canonNaN16
	case math.IsInf(v, 0):
		return f.infBits() | signBit16(v)
	}
	return f.round(v, 0)
}
