package cxx

import (
	"bufio"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lowpFormat is a binary floating-point format for the test's own
// references: its non-negative finite values in encoding order (which is
// their order), so rounding is a search of the table, independent of
// include/emud/lowp.h's arithmetic.
type lowpFormat struct {
	name   string
	vals   []float64 // vals[c] is code c's value, c up to the largest finite
	inf    uint32    // the infinity's code, 0 without one
	sign   uint32
	decode func(uint32) float64
}

func newLowpFormat(name string, expBits, manBits int, ieee bool) *lowpFormat {
	f := &lowpFormat{name: name, sign: 1 << (expBits + manBits)}
	bias := 1<<(expBits-1) - 1
	f.decode = func(c uint32) float64 {
		mag := c &^ f.sign
		e, m := int(mag>>manBits), float64(mag&(1<<manBits-1))
		var v float64
		switch {
		case ieee && e == 1<<expBits-1 && m == 0:
			v = math.Inf(1)
		case ieee && e == 1<<expBits-1, !ieee && mag == f.sign-1:
			v = math.NaN()
		case e == 0:
			v = math.Ldexp(m, 1-bias-manBits)
		default:
			v = math.Ldexp(m+float64(int(1)<<manBits), e-bias-manBits)
		}
		if c&f.sign != 0 {
			v = -v
		}
		return v
	}
	last := f.sign - 2 // E4M3: S.1111.110 is the largest finite
	if ieee {
		f.inf = uint32((1<<expBits - 1) << manBits)
		last = f.inf - 1
	}
	for c := uint32(0); c <= last; c++ {
		f.vals = append(f.vals, f.decode(c))
	}
	return f
}

func (f *lowpFormat) isNaN(c uint32) bool { return math.IsNaN(f.decode(c)) }

// round is the code of v (finite, or an infinity) rounded by mode ("rn",
// "rz", "rd", "ru"); past the largest finite value it gives over, the
// code a caller says an overflow makes (IEEE: infinity for rn and for
// rounding away from zero, the largest finite value toward it).
func (f *lowpFormat) round(v float64, mode string, sat bool) uint32 {
	neg := math.Signbit(v)
	a := math.Abs(v)
	var sign uint32
	if neg {
		sign = f.sign
	}
	maxc := uint32(len(f.vals) - 1)
	maxv := f.vals[maxc]
	toward := mode == "rz" || (mode == "rd" && !neg) || (mode == "ru" && neg)
	over := func() uint32 {
		switch {
		case sat || toward:
			return sign | maxc
		case f.inf != 0:
			return sign | f.inf
		}
		return sign | (f.sign - 1) // E4M3's NaN
	}
	if math.IsInf(a, 0) {
		if f.inf != 0 && !sat {
			return sign | f.inf
		}
		return over()
	}
	// lo: the largest code at or below a.
	lo := uint32(sort.Search(len(f.vals), func(i int) bool { return f.vals[i] > a }) - 1)
	if f.vals[lo] == a {
		return sign | lo
	}
	up := false
	switch mode {
	case "rn":
		if lo == maxc {
			ulp := maxv - f.vals[maxc-1]
			if a >= maxv+ulp/2 {
				return over()
			}
			return sign | maxc
		}
		d0, d1 := a-f.vals[lo], f.vals[lo+1]-a
		up = d1 < d0 || (d1 == d0 && lo%2 == 1)
	case "rz":
	case "rd":
		up = neg
	case "ru":
		up = !neg
	}
	if up {
		if lo == maxc {
			return over()
		}
		lo++
	}
	return sign | lo
}

// roundExact is the code of x, an exact value, rounded to nearest even
// (finite x only); big.Float keeps the tie test exact.
func (f *lowpFormat) roundExact(x *big.Float) uint32 {
	v, _ := x.Float64()
	c := f.round(v, "rn", false)
	if x.Sign() == 0 {
		return c
	}
	// Past the largest finite value and half its step: an overflow (a tie
	// there goes to the even code, the infinity).
	n := len(f.vals)
	limit := new(big.Float).SetFloat64(f.vals[n-1] + (f.vals[n-1]-f.vals[n-2])/2)
	if new(big.Float).Abs(x).Cmp(limit) >= 0 {
		return f.round(math.Copysign(math.Inf(1), v), "rn", false)
	}
	// v is x rounded to float64: the answer is c or a neighbour of it.
	best := c
	var bestD *big.Float
	for _, d := range []int64{-1, 0, 1} {
		cand := int64(c&^f.sign) + d
		if cand < 0 || cand >= int64(len(f.vals)) {
			continue
		}
		cv := new(big.Float).SetFloat64(f.vals[cand])
		if x.Sign() < 0 {
			cv.Neg(cv)
		}
		dist := new(big.Float).Sub(x, cv)
		dist.Abs(dist)
		code := uint32(cand) | c&f.sign
		if bestD == nil || dist.Cmp(bestD) < 0 || (dist.Cmp(bestD) == 0 && cand%2 == 0) {
			best, bestD = code, dist
		}
	}
	return best
}

func hexes(t *testing.T, fields []string) []uint32 {
	t.Helper()
	out := make([]uint32, len(fields))
	for i, s := range fields {
		v, err := strconv.ParseUint(s, 16, 32)
		require.NoError(t, err, "%q", strings.Join(fields, " "))
		out[i] = uint32(v)
	}
	return out
}

// toIntRef is the device's cvt of v to int32 by mode: clamped, NaN 0.
func toIntRef(v float64, mode int) uint32 {
	if math.IsNaN(v) {
		return 0
	}
	switch mode {
	case 0:
		v = math.RoundToEven(v)
	case 1:
		v = math.Trunc(v)
	case 2:
		v = math.Floor(v)
	case 3:
		v = math.Ceil(v)
	}
	v = math.Max(math.Min(v, math.MaxInt32), math.MinInt32)
	return uint32(int32(v))
}

// opRef is a op b (or fma a*b+c) in f, rounded once: NaN and infinity
// cases by float64 (which cannot overflow on these formats' values),
// zeros by IEEE's sign rules, the rest exactly.
func opRef(f *lowpFormat, op string, a, b, c uint32) (code uint32, nan bool) {
	x, y, z := f.decode(a), f.decode(b), f.decode(c)
	var r float64
	X, Y, Z := new(big.Float).SetPrec(4096), new(big.Float).SetPrec(4096), new(big.Float).SetPrec(4096)
	exact := new(big.Float).SetPrec(4096)
	switch op {
	case "add":
		r = x + y
	case "sub":
		r = x - y
	case "mul":
		r = x * y
	case "div":
		r = x / y
	case "fma":
		r = math.FMA(x, y, z)
	}
	if math.IsNaN(r) {
		return 0, true
	}
	if math.IsInf(r, 0) || r == 0 {
		return f.round(r, "rn", false), false
	}
	X.SetFloat64(x)
	Y.SetFloat64(y)
	switch op {
	case "add":
		exact.Add(X, Y)
	case "sub":
		exact.Sub(X, Y)
	case "mul":
		exact.Mul(X, Y)
	case "div":
		exact.Quo(X, Y)
	case "fma":
		Z.SetFloat64(z)
		exact.Mul(X, Y)
		exact.Add(exact, Z)
	}
	return f.roundExact(exact), false
}

// minMaxRef: a NaN gives the other operand, two give NaN; +0 is above -0.
func minMaxRef(f *lowpFormat, a, b uint32, isMax bool) (uint32, bool) {
	an, bn := f.isNaN(a), f.isNaN(b)
	switch {
	case an && bn:
		return 0, true
	case an:
		return b, false
	case bn:
		return a, false
	}
	x, y := f.decode(a), f.decode(b)
	if x == y {
		neg := a&f.sign != 0
		if neg == isMax {
			return b, false
		}
		return a, false
	}
	if (x > y) == isMax {
		return a, false
	}
	return b, false
}

// TestLowPrecision checks emud's cuda_fp16.h, cuda_bf16.h and cuda_fp8.h
// (include/emud/lowp.h underneath) bit for bit against this test's own
// references, over every half and bfloat16 encoding, floats at and around
// every half midpoint and a stride over all floats, in all four roundings
// and both fp8 saturation modes, and 40,000 operand triples for each
// arithmetic operation; and that a kernel computes what the host does.
// A HIP program of the same names builds and agrees (hip_fp16.h,
// hip_bf16.h).
func TestLowPrecision(t *testing.T) {
	needCxx(t)
	plainLine(t) // a million lines checked in Go: the -race binary would only be slower at it
	half := newLowpFormat("half", 5, 10, true)
	bf16 := newLowpFormat("bfloat16", 8, 7, true)
	e4m3 := newLowpFormat("E4M3", 4, 3, false)
	e5m2 := newLowpFormat("E5M2", 5, 2, true)
	require.Equal(t, 448.0, e4m3.vals[len(e4m3.vals)-1])
	require.Equal(t, 57344.0, e5m2.vals[len(e5m2.vals)-1])
	require.Equal(t, 65504.0, half.vals[len(half.vals)-1])

	prog := buildExample(t, "testdata/lowp/convert.cu", "-O2")
	r := runProgram(t, runOpts{}, prog)
	require.Equal(t, 0, r.code, r.stderr+lastLines(r.stdout, 3))
	counts := map[string]int{}
	bad := 0
	fail := func(line, format string, args ...any) {
		bad++
		if bad <= 20 {
			t.Errorf("%s: "+format, append([]any{line}, args...)...)
		}
	}
	checkNaN := func(line string, f *lowpFormat, got uint32, what string) {
		if !f.isNaN(got) {
			fail(line, "%s: got %#x, want a NaN", what, got)
		}
	}
	modes := []string{"rn", "rz", "rd", "ru"}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		line := sc.Text()
		fs := strings.Fields(line)
		if len(fs) == 0 || fs[0] == "device" || (fs[0] == "fp8" && len(fs) > 1 && fs[1] == "pairs") {
			continue
		}
		op, v := fs[0], hexes(t, fs[1:])
		counts[op]++
		switch op {
		case "h2f", "b2f":
			f := map[string]*lowpFormat{"h2f": half, "b2f": bf16}[op]
			want := f.decode(v[0])
			got := float64(math.Float32frombits(v[1]))
			if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && (want != got || math.Signbit(want) != math.Signbit(got))) {
				fail(line, "%s of %#x: got %v, want %v", op, v[0], got, want)
			}
		case "h2i", "b2i":
			f := map[string]*lowpFormat{"h2i": half, "b2i": bf16}[op]
			for m := 0; m < 4; m++ {
				if want := toIntRef(f.decode(v[0]), m); v[1+m] != want {
					fail(line, "%s %s of %#x: got %#x, want %#x", op, modes[m], v[0], v[1+m], want)
				}
			}
		case "e4h", "e5h":
			f := map[string]*lowpFormat{"e4h": e4m3, "e5h": e5m2}[op]
			x := f.decode(v[0])
			if math.IsNaN(x) {
				checkNaN(line, half, v[1], op)
			} else if want := half.round(x, "rn", false); v[1] != want {
				fail(line, "%s of %#x: got %#x, want %#x", op, v[0], v[1], want)
			}
		case "f2h", "f2b":
			f := map[string]*lowpFormat{"f2h": half, "f2b": bf16}[op]
			x := float64(math.Float32frombits(v[0]))
			for m, mode := range modes {
				if math.IsNaN(x) {
					checkNaN(line, f, v[1+m], op)
				} else if want := f.round(x, mode, false); v[1+m] != want {
					fail(line, "%s %s of %v: got %#x, want %#x", op, mode, x, v[1+m], want)
				}
			}
		case "f2e":
			x := float64(math.Float32frombits(v[0]))
			for i, c := range []struct {
				f   *lowpFormat
				sat bool
			}{{e4m3, false}, {e4m3, true}, {e5m2, false}, {e5m2, true}} {
				want := c.f.round(x, "rn", c.sat)
				if math.IsNaN(x) || c.f.isNaN(want) {
					checkNaN(line, c.f, v[1+i], op)
				} else if v[1+i] != want {
					fail(line, "%s %s sat=%v of %v: got %#x, want %#x", op, c.f.name, c.sat, x, v[1+i], want)
				}
			}
		case "hop", "bop":
			f := map[string]*lowpFormat{"hop": half, "bop": bf16}[op]
			for i, name := range []string{"add", "sub", "mul", "div", "fma"} {
				want, nan := opRef(f, name, v[0], v[1], v[2])
				if nan {
					checkNaN(line, f, v[3+i], name)
				} else if v[3+i] != want {
					fail(line, "%s %s: got %#x, want %#x", f.name, name, v[3+i], want)
				}
			}
			for i, isMax := range []bool{false, true} {
				want, nan := minMaxRef(f, v[0], v[1], isMax)
				if nan {
					checkNaN(line, f, v[8+i], "min/max")
				} else if v[8+i] != want {
					fail(line, "%s min/max(%v): got %#x, want %#x", f.name, isMax, v[8+i], want)
				}
			}
		default:
			t.Fatalf("an unknown line: %q", line)
		}
	}
	require.NoError(t, sc.Err())
	assert.Zero(t, bad, "results that differ from the references")
	assert.Equal(t, 65536, counts["h2f"])
	assert.Equal(t, 256, counts["e4h"])
	assert.Greater(t, counts["f2h"], 250000)
	assert.Equal(t, 40000, counts["hop"])
	assert.Contains(t, r.stdout, "device 0 of 4096 differ\n")
	assert.Regexp(t, `fp8 pairs 0 of \d+ differ\n`, r.stdout)

	hip := buildExample(t, "testdata/lowp/hip_names.cpp")
	h := runProgram(t, runOpts{}, hip)
	require.Equal(t, 0, h.code, h.stderr)
	assert.Equal(t, "3.75 4.875 9 1.5 2 0x3c00 0x3f80\n", h.stdout)
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return "\n" + strings.Join(ls, "\n")
}
