package mmio

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStoreDoorbellStoresAllEightBytes(t *testing.T) {
	for _, v := range []uint64{0, 0x20, 0x1_0000_0040, ^uint64(0)} {
		words := [3]uint64{1, 2, 3}
		StoreDoorbell(&words[1], v)
		require.Equal(t, [3]uint64{1, v, 3}, words, "value %#x", v)
	}
}
