//go:build !race

// The Go race detector's shadow of 2 GiB of written memory is more than CI
// should hold, so this file is left out of -race builds (emud's own race
// detector still runs it under EMUD_TEST_RACE=1).

package cco_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
)

// A put of 1 GiB + 4 KiB is more than one COPY's 30-bit count holds: it
// goes as two COPYs (MaxCopyBytes, then the rest), lands every byte and
// signals once, on the last chunk (MORI's split; before it, such a put moved
// what the truncated count said and reported success).
func TestPutOverOneGiB(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 1 GiB of real bytes")
	}
	const total = 1<<30 + 4096
	r := newRig(t, 1, rigOpts{ranks: 2, winBytes: 4096})
	var wins []cco.Window
	for _, c := range r.comms {
		buf, err := cco.MemAlloc(c, total)
		require.NoError(t, err)
		w, err := cco.WindowRegister(c, buf, total)
		require.NoError(t, err)
		wins = append(wins, w)
	}
	src := wins[0].LocalPtr(0)
	// A pattern that differs in every 4 KiB page and at the chunk seam,
	// written and checked 1 MiB at a time.
	const block = 1 << 20
	fill := func(b []byte, off uint64) {
		for i := range b {
			b[i] = byte((off+uint64(i))>>12) ^ byte(i*7)
		}
	}
	buf := make([]byte, block)
	for off := uint64(0); off < total; off += block {
		b := buf[:min(block, total-off)]
		fill(b, off)
		require.NoError(t, r.mem.Write(src+off, b))
	}
	r.launch(0, 1, 1, func(th *kernel.Thread, s *cco.Sdma) {
		s.Put(1, wins[0], 0, wins[0], 0, total, 0, cco.RemoteSignal)
		s.Quiet(1)
	})
	require.NoError(t, r.s.Run())
	dst := wins[0].LsaPtr(1, 0)
	got := make([]byte, block)
	for off := uint64(0); off < total; off += block {
		b, g := buf[:min(block, total-off)], got[:min(block, total-off)]
		fill(b, off)
		require.NoError(t, r.mem.Read(dst+off, g))
		if !bytes.Equal(b, g) {
			t.Fatalf("the MiB at %#x differs", off)
		}
	}
	assert.Equal(t, uint64(1), r.signal(1, 0, 0), "one signal for the call, on the last chunk")
	var sizes []uint64
	for _, p := range ringPackets(t, esideRing(t, r, 0, 1, 0)) {
		if p.Kind == ring.KindCopy {
			sizes = append(sizes, p.CopyBytes())
		}
	}
	assert.Equal(t, []uint64{cco.MaxCopyBytes, total - cco.MaxCopyBytes}, sizes)
	assert.Error(t, ring.CheckCopyBytes(total), "one COPY of it would truncate")
}
