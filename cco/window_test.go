package cco_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
)

// ccoWindowRegister compares across ranks only what MORI's exchange
// depends on: the slot offset and the ccoMemAlloc slot's size. A byte
// count that differs while the slots match is accepted, as MORI
// exchanges no count (it failed with "ranks must allocate and register
// alike" before).
func TestWindowRegisterComparesSlots(t *testing.T) {
	for _, c := range []struct {
		name         string
		alloc, reg   [2]uint64 // per rank: ccoMemAlloc bytes, registered bytes
		before1      uint64    // rank 1 allocates this first (0: nothing)
		words        string    // "" = both register
		wantSameBase bool
	}{
		{name: "alike", alloc: [2]uint64{8192, 8192}, reg: [2]uint64{8192, 8192}, wantSameBase: true},
		{name: "counts differ in one slot", alloc: [2]uint64{8192, 8192}, reg: [2]uint64{8192, 100}, wantSameBase: true},
		{name: "slot sizes differ", alloc: [2]uint64{8192, 4096}, reg: [2]uint64{4096, 4096},
			words: "window 0 of rank 1 is at slot offset 0x0 (a 4096 B slot) but rank 0 registered it at 0x0 (a 8192 B slot)"},
		{name: "offsets differ", alloc: [2]uint64{4096, 4096}, reg: [2]uint64{4096, 4096}, before1: 8192,
			words: "window 0 of rank 1 is at slot offset 0x2000 (a 4096 B slot) but rank 0 registered it at 0x0 (a 4096 B slot)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, cco.Env{"MORI_ENABLE_SDMA": "1"})
			cs, err := cco.CommCreateAll(h, 2, 0)
			require.NoError(t, err)
			if c.before1 != 0 {
				_, err := cco.MemAlloc(cs[1], c.before1)
				require.NoError(t, err)
			}
			var wins [2]cco.Window
			for r := range 2 {
				buf, err := cco.MemAlloc(cs[r], c.alloc[r])
				require.NoError(t, err)
				wins[r], err = cco.WindowRegister(cs[r], buf, c.reg[r])
				if r == 1 && c.words != "" {
					assert.ErrorContains(t, err, c.words)
					assert.ErrorContains(t, err, "ranks must ccoMemAlloc and register alike")
					return
				}
				require.NoError(t, err, "rank %d", r)
			}
			assert.Equal(t, c.wantSameBase, wins[0].Base == wins[1].Base)
			assert.Equal(t, c.reg[1], wins[1].Bytes, "each rank's window keeps its own count")
		})
	}
}
