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

// A released buffer is kept and handed out again for the same size, and
// handed out zeroed whatever was written to it.
func TestUnmapKeepsForTheNextMap(t *testing.T) {
	if !OffHeap {
		t.Skip("no mappings here")
	}
	const n = 3 << 20 // a size no other test maps
	a, err := Map(n)
	require.NoError(t, err)
	for i := range a {
		a[i] = 0xA5
	}
	before := Kept()
	require.NoError(t, Unmap(a))
	assert.Equal(t, before+n, Kept())
	b, err := Map(n)
	require.NoError(t, err)
	assert.Equal(t, &a[0], &b[0], "the kept buffer comes back")
	assert.Equal(t, before, Kept())
	for i := range b {
		if b[i] != 0 {
			require.Zero(t, b[i], "byte %d of a reused buffer", i)
		}
	}
	require.NoError(t, Unmap(b))
}

// MapStale says which buffer holds a previous user's bytes: a fresh
// mapping is zero and not stale, a kept one comes back as left, stale.
func TestMapStale(t *testing.T) {
	if !OffHeap {
		t.Skip("no mappings here")
	}
	const n = 11 << 20 // a size no other test maps
	a, stale, err := MapStale(n)
	require.NoError(t, err)
	assert.False(t, stale, "a fresh mapping")
	assert.Zero(t, a[n-1], "a fresh mapping is zero")
	a[n-1] = 5
	require.NoError(t, Unmap(a))
	b, stale, err := MapStale(n)
	require.NoError(t, err)
	assert.True(t, stale, "the kept buffer")
	assert.Equal(t, byte(5), b[n-1], "as it was left")
	require.NoError(t, Unmap(b))
	_, _, err = MapStale(0)
	assert.ErrorContains(t, err, "cannot map 0 B")
}

// MapSparse's buffers are never kept: a run touches a few of their pages,
// and a kept one would be cleared whole.
func TestMapSparseIsNotKept(t *testing.T) {
	if !OffHeap {
		t.Skip("no mappings here")
	}
	const n = 9 << 20 // a size no other test maps
	b, err := MapSparse(n)
	require.NoError(t, err)
	b[n-1] = 1
	before := Kept()
	require.NoError(t, Unmap(b))
	assert.Equal(t, before, Kept())
}

// UnmapAs keeps a buffer with the content its key names: MapAs of that
// key gets it back as a hit, holding the bytes; a Map of no key takes a
// buffer of no key first, and another key misses.
func TestMapAsByKey(t *testing.T) {
	if !OffHeap {
		t.Skip("no mappings here")
	}
	const n = 11 << 20 // a size no other test maps
	a, hit, err := MapAs(n, "sevens")
	require.NoError(t, err)
	assert.False(t, hit, "nothing kept yet")
	a[0], a[n-1] = 7, 7
	plain, err := Map(n)
	require.NoError(t, err)
	require.NoError(t, UnmapAs(a, "sevens"))
	require.NoError(t, Unmap(plain))

	c, err := Map(n)
	require.NoError(t, err)
	assert.Equal(t, &plain[0], &c[0], "a Map of no key takes the buffer of no key")
	b, hit, err := MapAs(n, "sevens")
	require.NoError(t, err)
	assert.True(t, hit)
	assert.Equal(t, &a[0], &b[0])
	assert.Equal(t, []byte{7, 7}, []byte{b[0], b[n-1]}, "the content kept")
	require.NoError(t, UnmapAs(b, "sevens"))

	d, hit, err := MapAs(n, "eights")
	require.NoError(t, err)
	assert.False(t, hit, "another key is a miss")
	require.NoError(t, Unmap(d))
	require.NoError(t, Unmap(c))
	e, hit, err := MapAs(n, "sevens")
	require.NoError(t, err)
	assert.False(t, hit, "the buffer went back without its key")
	require.NoError(t, Unmap(e))
}
