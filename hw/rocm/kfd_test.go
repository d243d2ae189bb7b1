//go:build rocm && cgo

package rocm_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// nopUnit is a packet that does nothing: NOP skipping seven dwords, one
// 32-byte unit.
func nopUnit() ring.Packet { return ring.Nop(7) }

func kfdPresent() bool {
	_, err := os.Stat("/dev/kfd")
	return err == nil
}

// With the backend built in but no KFD, Open fails with one error that
// names what is missing.
func TestOpenWithoutKFDNamesIt(t *testing.T) {
	require.True(t, rocm.Available)
	for _, path := range []string{"/dev/kfd", t.TempDir() + "/kfd"} {
		if path == "/dev/kfd" && kfdPresent() {
			continue // a GPU host: the other path still checks the message
		}
		restore := rocm.SetKFDPathForTest(path)
		d, err := rocm.Open(sim.New(sim.Config{}), rocm.Config{})
		restore()
		require.Nil(t, d)
		require.True(t, errors.Is(err, rocm.ErrUnavailable))
		require.EqualError(t, err, "hw/rocm: "+path+" is missing: this machine has no AMD KFD device "+
			"(no ROCm-capable AMD GPU, or the amdgpu kernel driver is not loaded); the ROCm backend needs "+path)
	}
}

// A KFD node that exists but cannot be opened read/write gets its own
// message.
func TestOpenUnreadableKFD(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root opens any file")
	}
	path := t.TempDir() + "/kfd"
	require.NoError(t, os.WriteFile(path, nil, 0o400))
	restore := rocm.SetKFDPathForTest(path)
	defer restore()
	_, err := rocm.Open(sim.New(sim.Config{}), rocm.Config{})
	require.True(t, errors.Is(err, rocm.ErrUnavailable))
	require.ErrorContains(t, err, "permission denied")
	require.ErrorContains(t, err, "render and video groups")
}

// The real KFD, on a GPU host only: open, create a queue toward every peer,
// ring a NOP unit and wait for the engine to consume it.
func TestKFDQueuesOnHardware(t *testing.T) {
	if !kfdPresent() {
		t.Skip("no /dev/kfd: hardware-only test")
	}
	s := sim.New(sim.Config{Seed: 1, Watchdog: -1})
	d, err := rocm.Open(s, rocm.Config{})
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	s.Spawn("host", func(a *sim.Actor) {
		for peer := 0; peer < d.GPUs(); peer++ {
			q, err := d.HWQueue(0, peer, 0)
			require.NoError(t, err)
			base, err := q.Claim(32)
			require.NoError(t, err)
			q.AwaitSpace(a, base, 32)
			nop := nopUnit()
			require.NoError(t, q.WriteUnit(base, &nop))
			require.NoError(t, q.Submit(a, base, base+32))
			q.AwaitDrained(a, base+32)
		}
	})
	require.NoError(t, s.Run())
}
