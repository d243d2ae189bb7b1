package engine

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/sim"
)

// TestMapAtBacksRegionsAtTheirAddresses: with Config.Backing = MapAt a
// region's flat address is a pointer to its bytes, a second mapping of the
// same address is refused, and the bytes the Memory writes are the bytes
// at that pointer.
func TestMapAtBacksRegionsAtTheirAddresses(t *testing.T) {
	const base = 0x6e00_0000_0000 // clear of the defaults other tests use
	n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2, Base: base, Backing: MapAt})
	require.NoError(t, err)
	m := n.Memory()
	a, err := m.Alloc(1, 100, "buf")
	require.NoError(t, err)
	require.NoError(t, m.Write(a+8, []byte{1, 2, 3, 4}))
	p := (*[12]byte)(unsafe.Add(unsafe.Pointer(nil), uintptr(a)))
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, p[:])
	p[0] = 9
	got := make([]byte, 1)
	require.NoError(t, m.Read(a, got))
	require.Equal(t, byte(9), got[0])

	_, err = MapAt(a, 4096)
	require.ErrorContains(t, err, "already in use")
	_, err = MapAt(a+1, 4096)
	require.ErrorContains(t, err, "page-aligned")
}
