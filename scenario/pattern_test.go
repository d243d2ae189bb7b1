package scenario_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/scenario"
)

func TestPatternDependsOnKeySourceAndDestination(t *testing.T) {
	a, b, c, d := make([]byte, 13), make([]byte, 13), make([]byte, 13), make([]byte, 13)
	scenario.Pattern(a, 0, 1, 2)
	scenario.Pattern(b, 0, 2, 1)
	scenario.Pattern(c, 0, 1, 2)
	scenario.Pattern(d, 7, 1, 2)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, c)
	assert.NotEqual(t, a, d, "the key changes the pattern")
	assert.NotEqual(t, make([]byte, 5), a[8:], "the tail past the last whole word is filled too")
	assert.Equal(t, a, scenario.PatternOf(13, 0, 1, 2))
}

// F32 elements are small integers, so every order of summation is exact.
func TestElementsF32AreSmallIntegers(t *testing.T) {
	b := make([]byte, 4096)
	scenario.Elements(b, redop.F32, 3, 1, 0)
	for i := 0; i < len(b); i += 4 {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))
		assert.True(t, v >= -64 && v <= 64 && v == float32(int(v)), "element %d is %v", i/4, v)
	}
}
