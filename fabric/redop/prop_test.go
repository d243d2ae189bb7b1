package redop

import (
	"bytes"
	"math/big"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// refValue decodes a 16-bit pattern of format f into an exact big.Float, by
// the textbook formula and independently of halfFormat.toFloat64. The
// all-ones exponent with a zero significand decodes as 2^(emax+1), the value
// IEEE rounding treats as the first number past the largest finite one.
func refValue(f halfFormat, h uint16) *big.Float {
	e := int(h>>f.manBits) & (1<<f.expBits - 1)
	m := int64(h) & (1<<f.manBits - 1)
	exp := 1 - f.bias - int(f.manBits)
	if e != 0 {
		m += 1 << f.manBits
		exp = e - f.bias - int(f.manBits)
	}
	v := new(big.Float).SetPrec(1024).SetInt64(m)
	v.SetMantExp(v, exp)
	if h&0x8000 != 0 {
		v.Neg(v)
	}
	return v
}

// refAdd is a slow, simple reference for add.rn on a 16-bit format: the
// exact sum in big.Float, then the two representable neighbours found by
// binary search over the ordered bit patterns, the nearer one taken, ties to
// the even pattern.
func refAdd(f halfFormat, a, b uint16) uint16 {
	inf := f.infBits()
	nanA, nanB := a&0x7FFF > inf, b&0x7FFF > inf
	infA, infB := a&0x7FFF == inf, b&0x7FFF == inf
	switch {
	case nanA || nanB:
		return 0x7FFF
	case infA && infB && a != b:
		return 0x7FFF
	case infA:
		return a
	case infB:
		return b
	}
	sum := new(big.Float).SetPrec(1024).Add(refValue(f, a), refValue(f, b))
	if sum.Sign() == 0 {
		if a == 0x8000 && b == 0x8000 {
			return 0x8000
		}
		return 0
	}
	var sign uint16
	if sum.Sign() < 0 {
		sign = 0x8000
	}
	mag := new(big.Float).SetPrec(1024).Abs(sum)
	// Largest pattern in [0, inf] whose value is <= mag.
	n := int(inf) + 1
	lo := sort.Search(n, func(i int) bool { return refValue(f, uint16(i)).Cmp(mag) > 0 }) - 1
	if refValue(f, uint16(lo)).Cmp(mag) == 0 || lo == int(inf) {
		return uint16(lo) | sign
	}
	hi := lo + 1
	dLo := new(big.Float).SetPrec(1024).Sub(mag, refValue(f, uint16(lo)))
	dHi := new(big.Float).SetPrec(1024).Sub(refValue(f, uint16(hi)), mag)
	pick := lo
	switch c := dLo.Cmp(dHi); {
	case c > 0:
		pick = hi
	case c == 0 && lo%2 == 1:
		pick = hi
	}
	return uint16(pick) | sign
}

// nearTie draws b with an exponent close to half an ulp of a, where ties and
// near-ties live, so they are exercised far more often than uniform draws
// would.
func nearTie(t *rapid.T, f halfFormat, a uint16, label string) uint16 {
	ea := int(a>>f.manBits) & (1<<f.expBits - 1)
	eb := ea - int(f.manBits) - 1 + rapid.IntRange(-2, 2).Draw(t, label+"_d")
	eb = max(0, min(eb, 1<<f.expBits-2))
	man := rapid.SampledFrom([]uint16{0, 1, uint16(1<<f.manBits - 1)}).Draw(t, label+"_m")
	sign := rapid.SampledFrom([]uint16{0, 0x8000}).Draw(t, label+"_s")
	return sign | uint16(eb)<<f.manBits | man
}

func TestPropHalfAddMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    halfFormat
	}{{"f16", f16}, {"bf16", bf16}} {
		t.Run(tc.name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				for i := 0; i < 32; i++ {
					a := rapid.Uint16().Draw(rt, "a")
					var b uint16
					if rapid.Bool().Draw(rt, "near") {
						b = nearTie(rt, tc.f, a, "b")
					} else {
						b = rapid.Uint16().Draw(rt, "b")
					}
					got, want := addHalf(tc.f, a, b), refAdd(tc.f, a, b)
					if got != want {
						rt.Fatalf("%s add(%#04x, %#04x) = %#04x, reference %#04x", tc.name, a, b, got, want)
					}
				}
			})
		})
	}
}

// refMinMax is PTX min/max.{f16,bf16} written from the ISA pseudo-code, with
// exact values from refValue.
func refMinMax(f halfFormat, isMin bool, a, b uint16) uint16 {
	nanA, nanB := a&0x7FFF > f.infBits(), b&0x7FFF > f.infBits()
	switch {
	case nanA && nanB:
		return 0x7FFF
	case nanA:
		return b
	case nanB:
		return a
	}
	c := refValue(f, a).Cmp(refValue(f, b))
	if c == 0 && a != b { // +0 and -0: "+0.0 > -0.0"
		if a == 0x8000 {
			c = -1
		} else {
			c = 1
		}
	}
	if isMin == (c < 0) {
		return a
	}
	return b
}

func TestPropHalfMinMaxMatchesReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a := rapid.Uint16().Draw(rt, "a")
		b := rapid.Uint16().Draw(rt, "b")
		for _, f := range []halfFormat{f16, bf16} {
			for _, isMin := range []bool{true, false} {
				got, want := minMaxHalf(f, isMin, a, b), refMinMax(f, isMin, a, b)
				if got != want {
					rt.Fatalf("%+v isMin=%v (%#04x, %#04x) = %#04x, reference %#04x", f, isMin, a, b, got, want)
				}
			}
		}
	})
}

type pair struct {
	op Op
	ty Type
}

func supportedList(pull bool) []pair {
	var ps []pair
	for _, op := range AllOps() {
		for _, ty := range AllTypes() {
			if Check(op, ty, pull) == nil {
				ps = append(ps, pair{op, ty})
			}
		}
	}
	return ps
}

func drawElems(t *rapid.T, ty Type, n int, label string) []byte {
	return rapid.SliceOfN(rapid.Byte(), n*ty.Size(), n*ty.Size()).Draw(t, label)
}

// Every supported reduction commutes bit for bit: concurrent reductions
// applied in any (seeded) order differ only through rounding order, never
// through operand order.
func TestPropCommutative(t *testing.T) {
	pairs := supportedList(false)
	rapid.Check(t, func(rt *rapid.T) {
		p := rapid.SampledFrom(pairs).Draw(rt, "pair")
		n := rapid.IntRange(1, 4).Draw(rt, "n")
		x, y := drawElems(rt, p.ty, n, "x"), drawElems(rt, p.ty, n, "y")
		xy, yx := bytes.Clone(x), bytes.Clone(y)
		if err := Apply(p.op, p.ty, xy, y); err != nil {
			rt.Fatal(err)
		}
		if err := Apply(p.op, p.ty, yx, x); err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(xy, yx) {
			rt.Fatalf("%v on %v: x op y = %x, y op x = %x", p.op, p.ty, xy, yx)
		}
	})
}

func TestPropReduceIsFoldedApply(t *testing.T) {
	pairs := supportedList(true)
	rapid.Check(t, func(rt *rapid.T) {
		p := rapid.SampledFrom(pairs).Draw(rt, "pair")
		n := rapid.IntRange(0, 4).Draw(rt, "n")
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		ins := make([][]byte, k)
		for i := range ins {
			ins[i] = drawElems(rt, p.ty, n, "in")
		}
		out := make([]byte, n*p.ty.Size())
		if err := Reduce(p.op, p.ty, out, ins...); err != nil {
			rt.Fatal(err)
		}
		fold := bytes.Clone(ins[0])
		for _, in := range ins[1:] {
			if err := Apply(p.op, p.ty, fold, in); err != nil {
				rt.Fatal(err)
			}
		}
		if !bytes.Equal(out, fold) {
			rt.Fatalf("%v on %v: Reduce = %x, folded Apply = %x", p.op, p.ty, out, fold)
		}
		// Writing into the first input gives the same answer.
		alias := make([][]byte, k)
		for i := range ins {
			alias[i] = bytes.Clone(ins[i])
		}
		if err := Reduce(p.op, p.ty, alias[0], alias...); err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(alias[0], fold) {
			rt.Fatalf("aliased Reduce = %x, want %x", alias[0], fold)
		}
	})
}

// Integer min/max agree with Go's typed comparisons.
func TestPropIntegerMinMax(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a := rapid.Uint64().Draw(rt, "a")
		b := rapid.Uint64().Draw(rt, "b")
		check := func(op Op, ty Type, want uint64) {
			got := elemFunc(op, ty)(a&mask(ty), b&mask(ty))
			if got != want {
				rt.Fatalf("%v %v (%#x, %#x) = %#x, want %#x", op, ty, a, b, got, want)
			}
		}
		check(Min, U32, uint64(min(uint32(a), uint32(b))))
		check(Max, U32, uint64(max(uint32(a), uint32(b))))
		check(Min, S32, uint64(uint32(min(int32(a), int32(b)))))
		check(Max, S32, uint64(uint32(max(int32(a), int32(b)))))
		check(Min, U64, min(a, b))
		check(Max, U64, max(a, b))
		check(Min, S64, uint64(min(int64(a), int64(b))))
		check(Max, S64, uint64(max(int64(a), int64(b))))
	})
}

func mask(ty Type) uint64 {
	if ty.Size() == 8 {
		return ^uint64(0)
	}
	return 1<<(8*ty.Size()) - 1
}
