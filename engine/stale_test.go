package engine

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/sim"
)

// TestKeptMappingReadsZero: a region backed by a mapping a closed node
// left dirty is not cleared when allocated but marked stale
// (lsa.Space.MarkStale), and still reads as zero wherever nothing wrote;
// a copy (Move) lands its exact bytes without the granules it covers being
// cleared first, and a copy from a phantom source leaves zeros, not the
// old bytes. Twice on one Scratch: the second node's bitmap is the
// first's, all fresh by then, and still starts all stale.
func TestKeptMappingReadsZero(t *testing.T) {
	const size = 3<<20 + 7*lsa.PageSize // a size no other test maps
	first, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2})
	require.NoError(t, err)
	a, err := first.Memory().Alloc(1, size, "old")
	require.NoError(t, err)
	head := make([]byte, 8)
	require.NoError(t, first.Memory().Read(a+size-8, head))
	assert.Equal(t, make([]byte, 8), head, "a new region reads as zero, fresh or kept")
	require.NoError(t, first.Memory().Fill(a, size, 0xab))
	first.Close()

	sc := NewScratch()
	defer sc.Close()
	for range 2 {
		reuseStale(t, sc, size)
	}
	// The source's 1 MiB region may be a kept mapping too (stale), after
	// other tests or the first round: one bitmap each, reused, not more.
	assert.LessOrEqual(t, len(sc.bits), 2, "the bitmaps went back to the Scratch and were taken again")
}

func reuseStale(t *testing.T, sc *Scratch, size uint64) {
	grains := int(size / lsa.StaleGranule)
	s := sim.New(sim.Config{Seed: 1, Scratch: sc.Sim})
	n, err := NewNode(s, Config{GPUs: 2, Scratch: sc})
	require.NoError(t, err)
	defer n.Close()
	m := n.Memory()
	src, err := m.Alloc(0, 1<<20, "src")
	require.NoError(t, err)
	pat := make([]byte, 1<<20)
	for i := range pat {
		pat[i] = byte(i*7 + 1)
	}
	require.NoError(t, m.Write(src, pat))
	dst, err := m.Alloc(1, size, "recv")
	require.NoError(t, err)
	require.Equal(t, grains, m.Stale(dst), "the kept mapping came back uncleared, all of it stale")

	// A copy of whole pages and one ending inside a page.
	_, err = m.Move(dst+lsa.PageSize, src, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, grains-(1<<20)/lsa.StaleGranule, m.Stale(dst), "the copy's granules are fresh")
	_, err = m.Move(dst+2<<20+100, src, 5000)
	require.NoError(t, err)

	ph, err := m.AllocPhantom(0, 1<<20, "phantom")
	require.NoError(t, err)
	_, err = m.Move(dst+3<<20, ph, 2*lsa.PageSize)
	require.NoError(t, err)

	got := make([]byte, size)
	require.NoError(t, m.Read(dst, got))
	want := make([]byte, size)
	copy(want[lsa.PageSize:], pat)
	copy(want[2<<20+100:], pat[:5000])
	if !bytes.Equal(want, got) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("first wrong byte at %d: %#x, want %#x", i, got[i], want[i])
			}
		}
	}
	assert.Equal(t, 0, m.Stale(dst))
}
