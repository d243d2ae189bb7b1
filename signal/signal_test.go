package signal

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPoolLayout(t *testing.T) {
	p, err := NewPool(3, 0x1000, 8, 4)
	require.NoError(t, err)
	assert.Equal(t, uint64(8*4*8), p.Bytes())
	for _, tc := range []struct {
		sender, q int
		want      uint64
	}{{0, 0, 0x1000}, {0, 3, 0x1018}, {1, 0, 0x1020}, {7, 3, 0x1000 + 8*31}} {
		got, err := p.Slot(tc.sender, tc.q)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "slot(%d,%d)", tc.sender, tc.q)
	}
}

func TestPoolErrors(t *testing.T) {
	for _, tc := range []struct {
		base          uint64
		lsa, q        int
		want          string
		sender, queue int
	}{
		{0x1000, 0, 2, "lsaSize 0", 0, 0},
		{0x1000, 2, 0, "queue count 0", 0, 0},
		{0x1004, 2, 2, "not 8-byte aligned", 0, 0},
	} {
		_, err := NewPool(0, tc.base, tc.lsa, tc.q)
		assert.ErrorContains(t, err, tc.want)
	}
	p, err := NewPool(0, 0, 2, 2)
	require.NoError(t, err)
	_, err = p.Slot(2, 0)
	assert.ErrorContains(t, err, "sender rank 2 outside [0, 2)")
	_, err = p.Slot(0, -1)
	assert.ErrorContains(t, err, "queue id -1 outside [0, 2)")
}

func TestExpectedPerPair(t *testing.T) {
	var e Expected
	assert.Equal(t, uint64(0), e.Get(1, 0))
	assert.Equal(t, uint64(1), e.Next(1, 0))
	assert.Equal(t, uint64(2), e.Next(1, 0))
	assert.Equal(t, uint64(1), e.Next(1, 1), "another queue has its own total")
	assert.Equal(t, uint64(5), e.Add(2, 0, 5))
	assert.Equal(t, uint64(2), e.Get(1, 0))
	assert.True(t, Reached(3, 2))
	assert.True(t, Reached(2, 2))
	assert.False(t, Reached(1, 2))
}

func TestTruncated32(t *testing.T) {
	low, tr := Truncated32(1<<32 + 5)
	assert.Equal(t, uint32(5), low)
	assert.True(t, tr)
	low, tr = Truncated32(100)
	assert.Equal(t, uint32(100), low)
	assert.False(t, tr)
}

func ExampleExpected() {
	var e Expected
	// Two signalling puts from rank 1 on queue 0, one on queue 1.
	e.Next(1, 0)
	fmt.Println(e.Next(1, 0), e.Next(1, 1))
	// Output: 2 1
}

func ExamplePool_Slot() {
	p, _ := NewPool(0, 0x10000, 8, 2)
	a, _ := p.Slot(3, 1) // rank 3's signals on queue id 1
	fmt.Printf("%#x\n", a)
	// Output: 0x10038
}
