package rocm_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/sim"
)

// The backend hands out the addresses the emulator hands out, so the same
// program writes the same addresses into its packets.
func TestAllocAddressesMatchTheEmulator(t *testing.T) {
	s := sim.New(sim.Config{})
	node, err := engine.NewNode(s, cco.MI355X(3))
	require.NoError(t, err)
	_, _, d := rig(t, 3, rocm.Config{}, sim.Config{})
	allocs := []struct {
		gpu  int
		size uint64
	}{{0, 1}, {0, 4096}, {2, 5000}, {1, 64 << 10}, {0, 12345}, {2, 1}}
	for _, a := range allocs {
		want, err := node.Memory().Alloc(a.gpu, a.size, "x")
		require.NoError(t, err)
		got, err := d.Memory().Alloc(a.gpu, a.size, "x")
		require.NoError(t, err)
		require.Equal(t, want, got, "alloc %d B on GPU %d", a.size, a.gpu)
		require.Equal(t, node.Memory().GPUOf(want), d.Memory().GPUOf(got))
	}
	for g := 0; g < 3; g++ {
		require.Equal(t, node.Memory().SliceBase(g), d.Memory().SliceBase(g))
	}
	require.Equal(t, -1, d.Memory().GPUOf(0))
	require.Equal(t, -1, d.Memory().GPUOf(d.Memory().SliceBase(3)))
}

func TestMemoryAccess(t *testing.T) {
	_, si, d := rig(t, 2, rocm.Config{}, sim.Config{})
	m := d.Memory()
	a, err := m.Alloc(1, 100, "buf")
	require.NoError(t, err)
	require.Equal(t, uint64(4096), si.Backed())

	require.NoError(t, m.Write(a+8, []byte("hello")))
	b := make([]byte, 5)
	require.NoError(t, m.Read(a+8, b))
	require.Equal(t, "hello", string(b))

	require.NoError(t, m.Store64(a+16, 0x1122334455667788))
	v64, err := m.Load64(a + 16)
	require.NoError(t, err)
	require.Equal(t, uint64(0x1122334455667788), v64)
	v32, err := m.Load32(a + 20)
	require.NoError(t, err)
	require.Equal(t, uint32(0x11223344), v32)
	require.NoError(t, m.Store32(a+3, 0xaabbccdd)) // unaligned: byte-wise
	v32, err = m.Load32(a + 3)
	require.NoError(t, err)
	require.Equal(t, uint32(0xaabbccdd), v32)

	cases := []struct {
		name string
		err  error
		want string
	}{
		{"hole in a slice", m.Check("read", a+4096, 8), "VM hole in GPU 1's slice at offset 0x1000"},
		{"outside every slice", m.Read(0x1000, b), "outside every GPU's slice"},
		{"past the region", m.Write(a+4090, make([]byte, 8)), `runs 2 B past the end of region "buf"`},
		{"store past the end", m.Store64(a+4092, 1), "past the end"},
		{"load in a hole", func() error { _, err := m.Load64(a - 8); return err }(), "read of 8 B"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, tc.err, tc.want)
			var ae *lsa.AddrError
			require.True(t, errors.As(tc.err, &ae), "an lsa.AddrError, as the emulator reports")
		})
	}
}

func TestAllocErrors(t *testing.T) {
	_, _, d := rig(t, 2, rocm.Config{}, sim.Config{})
	m := d.Memory()
	_, err := m.Alloc(2, 64, "x")
	require.ErrorContains(t, err, "GPU 2 outside [0, 2)")
	_, err = m.Alloc(0, 0, "x")
	require.ErrorContains(t, err, "size 0")
	_, err = m.Alloc(0, d.Stride()+1, "x")
	require.ErrorContains(t, err, "does not fit in GPU 0's")
	_, err = m.Alloc(0, 8<<30, "huge") // fits the slice, not the stand-in
	require.ErrorContains(t, err, "more than the stand-in backs")
	_, err = m.AllocPhantom(0, 64, "timing only")
	require.ErrorContains(t, err, "phantom memory (timing only, no bytes) is the emulator's")
	fixed := d.Mem().SliceBase(1) + 0x10_0000
	got, err := d.Mem().AllocAt(fixed, 64, "fixed")
	require.NoError(t, err)
	require.Equal(t, fixed, got)
	_, err = d.Mem().AllocAt(fixed, 64, "again")
	require.ErrorContains(t, err, `overlaps region "fixed"`)
	require.NoError(t, d.Close())
	_, err = m.Alloc(0, 64, "x")
	require.ErrorContains(t, err, "device closed")
}

// A signal the engine writes (outside the simulator: here a store into
// the backing bytes that notifies nobody) is seen at the next poll.
func TestAwaitSeesWritesFromOutsideTheSimulator(t *testing.T) {
	s, si, d := rig(t, 1, rocm.Config{Poll: 100 * sim.Nanosecond}, sim.Config{Seed: 7})
	m := d.Memory()
	addr, err := m.Alloc(0, 64, "signal")
	require.NoError(t, err)
	var seen sim.Time
	s.Spawn("waiter", func(a *sim.Actor) {
		m.Await(a, addr, 8, func() bool { v, _ := m.Load64(addr); return v == 3 },
			func() string { return "signal == 3" })
		seen = a.Now()
	})
	s.Spawn("engine", func(a *sim.Actor) {
		a.Sleep(5 * sim.Microsecond)
		binary.LittleEndian.PutUint64(si.Bytes(addr, 8), 3)
	})
	require.NoError(t, s.Run())
	require.GreaterOrEqual(t, seen, 5*sim.Microsecond)
	require.Less(t, seen, 5*sim.Microsecond+200*sim.Nanosecond, "seen within one or two polls")
}
