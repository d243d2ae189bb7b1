package redop

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFP8: the formats' landmarks (OCP's table), every code round-trips,
// midpoints round to the even code, and past the range saturates.
func TestFP8(t *testing.T) {
	for _, c := range []struct {
		name   string
		value  func(uint8) float64
		round  func(float64) uint8
		one    uint8
		max    float64
		maxc   uint8
		minSub float64
	}{
		{"E4M3", E4M3ToFloat64, RoundE4M3, 0x38, 448, 0x7E, math.Ldexp(1, -9)},
		{"E5M2", E5M2ToFloat64, RoundE5M2, 0x3C, 57344, 0x7B, math.Ldexp(1, -16)},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, 1.0, c.value(c.one))
			assert.Equal(t, c.max, c.value(c.maxc))
			assert.Equal(t, c.minSub, c.value(1))
			assert.True(t, math.IsNaN(c.value(0x7F)) && math.IsNaN(c.value(0xFF)))
			for b := 0; b < 256; b++ {
				v := c.value(uint8(b))
				if math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				assert.Equal(t, uint8(b), c.round(v), "code %#x", b)
			}
			assert.Equal(t, c.maxc, c.round(1e9), "saturates")
			assert.Equal(t, 0x80|c.maxc, c.round(math.Inf(-1)), "saturates")
			assert.Equal(t, uint8(0x7F), c.round(math.NaN()))
			// Between 1 and the next code: the midpoint goes to 1 (even), past it up.
			next := c.value(c.one + 1)
			assert.Equal(t, c.one, c.round((1+next)/2))
			assert.Equal(t, c.one+1, c.round(math.Nextafter((1+next)/2, 2)))
			assert.Equal(t, c.one+2, c.round((next+c.value(c.one+2))/2), "an odd code's midpoint goes up to the even one")
		})
	}
}
