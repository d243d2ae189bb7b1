package engine

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/hostmem"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/sim"
)

// TestCloseReleasesMemory: the default backing maps regions of 1 MiB and
// more outside the Go heap and makes smaller ones on it; both read and
// write as memory, and after Node.Close every access and allocation fails
// naming the closed node instead of touching released bytes.
func TestCloseReleasesMemory(t *testing.T) {
	n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2})
	require.NoError(t, err)
	m := n.Memory()
	small, err := m.Alloc(0, 4096, "small")
	require.NoError(t, err)
	big, err := m.Alloc(1, offHeapMin, "big")
	require.NoError(t, err)
	for _, a := range []uint64{small, big} {
		require.NoError(t, m.Write(a+8, []byte{1, 2, 3}))
		got := make([]byte, 4)
		require.NoError(t, m.Read(a+7, got))
		assert.Equal(t, []byte{0, 1, 2, 3}, got)
	}
	if hostmem.OffHeap {
		assert.Len(t, m.mapped.bufs, 1, "the 1 MiB region is mapped, the 4 KiB one is not")
	}

	n.Close()
	assert.Nil(t, m.mapped.bufs, "the mappings are given back")
	for _, a := range []uint64{small, big} {
		err := m.Read(a, make([]byte, 1))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "closed")
		_, err = m.Load32(a)
		assert.ErrorContains(t, err, "closed")
	}
	_, err = m.Alloc(0, 4096, "after")
	assert.ErrorContains(t, err, "closed")
	n.Close() // twice is harmless
}

// TestCloseReleasesRings: a node's first rings are buffers kept across
// nodes, the rest carved from mappings of the node's own; either way
// zeroed and distinct. Close drops them so that a later use panics
// instead of touching released memory, and a kept ring comes back
// zeroed to the next node.
func TestCloseReleasesRings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		keptMax int // Memory.ringKeptMax
		slabs   int // mappings of the node's own the three rings take
	}{
		{"kept", ringKeptBytes, 0},
		{"in a slab", 0, 1},
		{"past the kept share", 2 * 256 << 10, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 2 {
				n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 4})
				require.NoError(t, err)
				n.mem.ringKeptMax = tc.keptMax
				var qs []*Queue
				for p := 1; p < 4; p++ {
					q, err := n.Queue(0, p, 0)
					require.NoError(t, err)
					qs = append(qs, q)
				}
				seen := map[*byte]bool{}
				for _, q := range qs {
					b := q.Ring().Bytes()
					require.Len(t, b, 256<<10)
					require.Equal(t, make([]byte, len(b)), b, "round %d: a fresh ring is zeroed", round)
					assert.False(t, seen[&b[0]], "rings do not share a buffer")
					seen[&b[0]] = true
					b[0], b[len(b)-1] = 1, 1 // writable, and the next ring starts after it
				}
				if hostmem.OffHeap {
					assert.Len(t, n.mem.mapped.bufs, tc.slabs, "the rings past the kept share fit one slab")
				}
				n.Close()
				assert.Nil(t, qs[0].Ring().Bytes(), "the ring's buffer is dropped")
			}
		})
	}
}

// TestReusedRegions: a region released by one node's Close backs the next
// node's region of the same size; a plain Alloc clears it, an Alloc under
// WillOverwrite hands out its bytes as the last user left them except the
// last page's tail past the size asked for, which reads zero.
func TestReusedRegions(t *testing.T) {
	if !hostmem.OffHeap {
		t.Skip("no mappings here")
	}
	const size = 5<<20 + 100 // a size no other test maps
	dirty := func() {
		n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 1})
		require.NoError(t, err)
		a, err := n.Memory().Alloc(0, size, "dirty")
		require.NoError(t, err)
		b, err := n.Memory().Bytes("write", a, size+4096-100)
		require.NoError(t, err)
		for i := range b {
			b[i] = 0xEE
		}
		n.Close()
	}
	for _, tc := range []struct {
		name      string
		overwrite bool
	}{{"plain", false}, {"overwrite", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dirty()
			n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 1})
			require.NoError(t, err)
			defer n.Close()
			m := n.Memory()
			m.WillOverwrite(tc.overwrite)
			a, err := m.Alloc(0, size, "reused")
			m.WillOverwrite(false)
			require.NoError(t, err)
			body, err := m.Bytes("read", a, size)
			require.NoError(t, err)
			tail, err := m.Bytes("read", a+size, 4096-100)
			require.NoError(t, err)
			assert.Equal(t, make([]byte, len(tail)), tail, "the tail past the size is zero")
			if tc.overwrite {
				assert.Equal(t, byte(0xEE), body[0], "the kept bytes, not cleared")
			} else {
				assert.Equal(t, make([]byte, size), body, "a plain Alloc is zeroed")
			}
		})
	}
}

// TestPrefill: a Prefill'd region holds fill's bytes; closed with no write
// reaching it, its mapping backs the next Prefill of the same key and size
// without fill being called; a write to it (here a store) or another key
// gets fill's bytes written afresh. A region on the Go heap (under 1 MiB)
// is filled every time. PrefillContent, the same content as one value,
// behaves alike.
func TestPrefill(t *testing.T) {
	if !hostmem.OffHeap {
		t.Skip("no mappings here")
	}
	for i, api := range []string{"funcs", "content"} {
		t.Run(api, func(t *testing.T) {
			size := uint64(6<<20 + 100 + 4096*i) // a size no other test maps
			c := &countingFill{}
			alloc := func(key string, size uint64, touch bool) (hit bool) {
				t.Helper()
				n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 1})
				require.NoError(t, err)
				defer n.Close()
				m := n.Memory()
				if api == "funcs" {
					m.Prefill(func() string { return key }, c.Fill)
				} else {
					c.key = key
					m.PrefillContent(c)
				}
				a, err := m.Alloc(0, size, "pre")
				require.NoError(t, err)
				assert.False(t, m.EndPrefill(), "the Alloc took it")
				b, err := m.Bytes("read", a, (size+4095)&^4095)
				require.NoError(t, err)
				for _, i := range []int{0, 250, 251, len(b) - 1} {
					require.Equal(t, byte(i%251), b[i], "byte %d", i)
				}
				if touch {
					require.NoError(t, m.Store32(a+size/2, 1))
				}
				return m.Prefilled(a)
			}
			assert.False(t, alloc("p", size, false), "first: filled")
			assert.Equal(t, 1, c.calls)
			assert.True(t, alloc("p", size, true), "second: kept, then written")
			assert.Equal(t, 1, c.calls, "fill not called for a kept mapping")
			assert.False(t, alloc("p", size, false), "after a write: filled again")
			assert.Equal(t, 2, c.calls)
			assert.False(t, alloc("q", size, false), "another key")
			assert.Equal(t, 3, c.calls)
			const small = 8192
			assert.False(t, alloc("s", small, false))
			assert.False(t, alloc("s", small, false), "the Go heap keeps nothing")
			assert.Equal(t, 5, c.calls)
		})
	}
}

// countingFill is TestPrefill's content: bytes i%251, its calls counted.
type countingFill struct {
	key   string
	calls int
}

func (c *countingFill) Key() string { return c.key }

func (c *countingFill) Fill(b []byte) {
	c.calls++
	for i := range b {
		b[i] = byte(i % 251)
	}
}

func (c *countingFill) Blocks() (uint64, [][]byte) { return 0, nil }

// blockFill is content of immutable blocks (engine.Content's Blocks), as
// a scenario's pattern windows are; fill, if ever called, writes the
// same bytes.
type blockFill struct {
	block  uint64
	blocks [][]byte
	calls  int
}

func (c *blockFill) Key() string { return fmt.Sprintf("blocks of %d B at %p", c.block, c.blocks[0]) }

func (c *blockFill) Fill(b []byte) {
	c.calls++
	clear(b)
	for i, blk := range c.blocks {
		copy(b[uint64(i)*c.block:], blk)
	}
}

func (c *blockFill) Blocks() (uint64, [][]byte) { return c.block, c.blocks }

// Content with blocks is not written at all (Fill is not called): the
// region reads as the blocks and zeros past them, whether its mapping is
// fresh or a kept one marked stale, on a node with or without a Scratch;
// a COPY from it lands by reference (the destination's granules stay
// unmoved until read), and once a store reaches it, copies from it move
// bytes again.
func TestPrefillBlocksReferred(t *testing.T) {
	const block = 512 << 10 // a region of 2 MiB: mapped, and kept across runs
	blocks := make([][]byte, 3)
	for i := range blocks {
		blocks[i] = bytes.Repeat([]byte{byte(0x11 * (i + 1))}, block)
	}
	want := make([]byte, 4*block) // three blocks and a zero one
	for i, b := range blocks {
		copy(want[i*block:], b)
	}
	for _, tc := range []struct {
		name    string
		scratch bool
	}{{"no scratch", false}, {"scratch", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var sc *Scratch
			if tc.scratch {
				sc = NewScratch()
				defer sc.Close()
			}
			for run := range 3 { // later runs take the first's mapping back, stale
				c := &blockFill{block: block, blocks: blocks}
				n, err := NewNode(sim.New(sim.Config{Seed: 1}), Config{GPUs: 2, Scratch: sc})
				require.NoError(t, err)
				m := n.Memory()
				m.PrefillContent(c)
				src, err := m.Alloc(0, 4*block, "send")
				require.NoError(t, err)
				dst, err := m.Alloc(1, 4*block, "recv")
				require.NoError(t, err)
				assert.Zero(t, c.calls, "run %d: not filled", run)
				// The blocks' granules, and the zero block's too where the
				// mapping was a kept one (marked stale).
				assert.Contains(t, []int{3 * block / lsa.StaleGranule, 4 * block / lsa.StaleGranule}, m.Stale(src), "run %d: the blocks referred", run)
				// A copy would leave the block's granules fresh; by
				// reference they are stale (all of a kept mapping's
				// already were, none of a fresh one's).
				stale := m.Stale(dst)
				_, err = m.Move(dst+block, src+block, block)
				require.NoError(t, err)
				assert.Equal(t, max(stale, block/lsa.StaleGranule), m.Stale(dst), "run %d: landed by reference", run)
				got, err := m.Bytes("read", dst+block, block)
				require.NoError(t, err)
				require.Equal(t, blocks[1], got, "run %d", run)
				got, err = m.Bytes("read", src, 4*block)
				require.NoError(t, err)
				require.Equal(t, want, got, "run %d: the send window reads as its blocks", run)
				require.NoError(t, m.Store32(src+2*block, 7))
				_, err = m.Move(dst+2*block, src+2*block, block)
				require.NoError(t, err)
				assert.Nil(t, m.Pristine(src, 4), "run %d: the store ended the content", run)
				got, err = m.Bytes("read", dst+2*block, 4)
				require.NoError(t, err)
				assert.Equal(t, []byte{7, 0, 0, 0}, got, "run %d", run)
				n.Close()
			}
		})
	}
}
