package redop

import (
	"math"
	"sort"
)

// The 8-bit floating-point formats of NCCL's ncclFloat8e4m3 and
// ncclFloat8e5m2 (OCP's E4M3, which has no infinity and one NaN a sign,
// S.1111.111, and E5M2, IEEE-like), for package capi's NCCL host
// collectives: exact values, and rounding to nearest even that saturates
// to the largest finite value as CUDA's fp8 constructors do
// (__NV_SATFINITE), a NaN staying a NaN (0x7F). NCCL's CFT reductions do
// not take these types, so no RedOp here uses them.

// fp8Format is one format's encodings: vals[c] is the value of the
// non-negative code c, up to the largest finite one, in increasing order.
type fp8Format struct {
	vals []float64
	nan  uint8
}

var (
	e4m3 = newFP8(4, 3, false)
	e5m2 = newFP8(5, 2, true)
)

func newFP8(expBits, manBits int, ieee bool) *fp8Format {
	bias := 1<<(expBits-1) - 1
	last := 0x7E // E4M3: S.1111.110 (448) is the largest finite
	if ieee {
		last = (1<<expBits-1)<<manBits - 1 // below the infinity
	}
	f := &fp8Format{nan: 0x7F}
	for c := 0; c <= last; c++ {
		e, m := c>>manBits, float64(c&(1<<manBits-1))
		if e == 0 {
			f.vals = append(f.vals, math.Ldexp(m, 1-bias-manBits))
		} else {
			f.vals = append(f.vals, math.Ldexp(m+float64(int(1)<<manBits), e-bias-manBits))
		}
	}
	return f
}

func (f *fp8Format) value(b uint8) float64 {
	mag := int(b & 0x7F)
	var v float64
	switch {
	case mag < len(f.vals):
		v = f.vals[mag]
	case f == e5m2 && mag == 0x7C:
		v = math.Inf(1)
	default:
		return math.NaN()
	}
	if b&0x80 != 0 {
		v = -v
	}
	return v
}

// round is v rounded once to the nearest code (ties to the even one),
// saturating past the largest finite value.
func (f *fp8Format) round(v float64) uint8 {
	if v != v {
		return f.nan
	}
	var sign uint8
	if math.Signbit(v) {
		sign = 0x80
	}
	a := math.Abs(v)
	maxc := len(f.vals) - 1
	if a >= f.vals[maxc] {
		return sign | uint8(maxc)
	}
	lo := sort.Search(len(f.vals), func(i int) bool { return f.vals[i] > a }) - 1
	if d0, d1 := a-f.vals[lo], f.vals[lo+1]-a; d1 < d0 || (d1 == d0 && lo%2 == 1) {
		lo++
	}
	return sign | uint8(lo)
}

// E4M3ToFloat64 and E5M2ToFloat64 are an fp8 value, exactly.
func E4M3ToFloat64(b uint8) float64 { return e4m3.value(b) }

// E5M2ToFloat64 is E4M3ToFloat64 for E5M2.
func E5M2ToFloat64(b uint8) float64 { return e5m2.value(b) }

// RoundE4M3 and RoundE5M2 round v once to the format, to nearest even,
// saturating to ±the largest finite value (±Inf too), a NaN to 0x7F.
func RoundE4M3(v float64) uint8 { return e4m3.round(v) }

// RoundE5M2 is RoundE4M3 for E5M2.
func RoundE5M2(v float64) uint8 { return e5m2.round(v) }
