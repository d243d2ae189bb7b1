package hostmem

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMapIsZeroedWritableAndOffHeap(t *testing.T) {
	const n = 64 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := Map(n)
	require.NoError(t, err)
	require.Len(t, b, n)
	for _, i := range []int{0, n / 2, n - 1} {
		assert.Zero(t, b[i], "byte %d of a fresh mapping", i)
		b[i] = byte(i) | 1
		assert.Equal(t, byte(i)|1, b[i])
	}
	runtime.ReadMemStats(&after)
	if OffHeap {
		assert.Less(t, after.HeapAlloc, before.HeapAlloc+n/2, "64 MiB mapped must not be on the Go heap")
	}
	require.NoError(t, Unmap(b))
}

func TestMapRefusesEmpty(t *testing.T) {
	_, err := Map(0)
	assert.ErrorContains(t, err, "cannot map 0 B")
}
