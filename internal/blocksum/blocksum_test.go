package blocksum

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Of changes with any one wrong byte, at every position of blocks of
// several lengths (a whole number of 64-byte rows, a partial last word,
// under one row), and the length counts.
func TestOfOneWrongByte(t *testing.T) {
	for _, n := range []int{1, 8, 9, 63, 64, 65, 200, 4096 + 17} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + 3)
		}
		want := Of(b)
		for at := range b {
			b[at] ^= 0x21
			assert.NotEqual(t, want, Of(b), "%d B, byte %d", n, at)
			b[at] ^= 0x21
		}
		assert.Equal(t, want, Of(b), "%d B restored", n)
	}
	assert.NotEqual(t, Of(make([]byte, 8)), Of(make([]byte, 9)), "the length counts: zero padding is not data")
}

// Whole is true until a Write of a length not a multiple of 64.
func TestWhole(t *testing.T) {
	var h Summer
	assert.True(t, h.Whole())
	h.Write(make([]byte, 128))
	assert.True(t, h.Whole())
	h.Write(make([]byte, 3))
	assert.False(t, h.Whole())
	assert.Panics(t, func() { h.Write(make([]byte, 64)) }, "a write after the tail is the caller's bug")
}

// FuzzSum: any data, any split into 64-byte-multiple pieces, gives
// the one-shot sum, and flipping any one byte changes it.
func FuzzSum(f *testing.F) {
	f.Add([]byte("emud"), uint16(0), byte(1))
	f.Add(make([]byte, 300), uint16(250), byte(0x80))
	f.Fuzz(func(t *testing.T, b []byte, at uint16, flip byte) {
		want := Of(b)
		var h Summer
		cut := len(b) / 2 / 64 * 64
		h.Write(b[:cut])
		h.Write(b[cut:])
		if got := h.Sum(); got != want {
			t.Fatalf("split at %d: %#x, one shot %#x", cut, got, want)
		}
		if len(b) == 0 || flip == 0 {
			return
		}
		i := int(at) % len(b)
		c := append([]byte(nil), b...)
		c[i] ^= flip
		if Of(c) == want {
			t.Fatalf("byte %d ^ %#02x of %d B: same sum", i, flip, len(b))
		}
	})
}
