package redop

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHalfConversions(t *testing.T) {
	for _, c := range []struct {
		name     string
		v        float64
		f16, b16 uint16
	}{
		{"one", 1, 0x3C00, 0x3F80},
		{"one and a half", 1.5, 0x3E00, 0x3FC0},
		{"minus zero", math.Copysign(0, -1), 0x8000, 0x8000},
		{"half's largest", 65504, 0x7BFF, 0x4780},
		{"past half's largest: a tie to Inf", 65520, 0x7C00, 0x4780},
		{"half's smallest subnormal", math.Ldexp(1, -24), 0x0001, 0x3380},
		{"below half's subnormals: to zero", math.Ldexp(1, -26), 0x0000, 0x3280},
		{"a tie to even (1 + 2^-11 in half)", 1 + math.Ldexp(1, -11), 0x3C00, 0x3F80},
		{"a bfloat16 tie to even (1 + 2^-8)", 1 + math.Ldexp(1, -8), 0x3C04, 0x3F80},
		{"minus infinity", math.Inf(-1), 0xFC00, 0xFF80},
		{"NaN", math.NaN(), 0x7FFF, 0x7FFF},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.f16, RoundF16(c.v), "half")
			assert.Equal(t, c.b16, RoundBF16(c.v), "bfloat16")
		})
	}
	// Every non-NaN value of both formats goes there and back unchanged.
	for h := range 1 << 16 {
		u := uint16(h)
		if !f16.isNaN(u) {
			assert.Equal(t, u, RoundF16(F16ToFloat64(u)), "half %#04x", u)
		}
		if !bf16.isNaN(u) {
			assert.Equal(t, u, RoundBF16(BF16ToFloat64(u)), "bfloat16 %#04x", u)
		}
	}
}
