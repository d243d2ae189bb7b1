package ring

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/golden_stream.hex")

const goldenPath = "testdata/golden_stream.hex"

// goldenStream issues a fixed sequence through the full reserve/fits/write/
// submit protocol on a 16-unit ring whose pointers start at its last unit,
// so the first broadcast takes the last-unit placement and a later one the
// normal placement.
func goldenStream(t testing.TB) *Ring {
	r := newRing(t, Options{Size: 16 * Unit, Start: 15 * Unit})
	put := func(units uint64, write func(base uint64)) {
		base, err := r.Reserve(units * Unit)
		require.NoError(t, err)
		require.True(t, r.Fits(base, units*Unit))
		write(base)
		require.NoError(t, r.Submit(base, base+units*Unit))
	}
	unit := func(p Packet) {
		put(1, func(base uint64) { require.NoError(t, r.WriteUnit(base, &p)) })
	}
	bcast := func(p Packet) {
		put(3, func(base uint64) {
			_, err := r.WriteBroadcast(base, &p)
			require.NoError(t, err)
		})
	}
	bcast(Broadcast(0x7f0000100000, 0x7e0000100000, 0x7d0000000000, 0x100000))
	unit(Copy(0x200000000, 0x100000040, 64))
	unit(AtomicAdd64(0x7f0000001008, 1))
	unit(Poll(0x7f0000000040, 1, 0xffffffff, CmpEQ, 4, RetryForever))
	bcast(Broadcast(0x3020, 0x5020, 0x1000, MaxCopyBytes))
	unit(Fence(0x7f0000000080, 0xcafe))
	unit(Trap(0x1234))
	unit(TimestampGlobal(0x7f00000000a0))
	unit(WriteLinear(0x7f00000000c0, []uint32{0xdeadbeef, 0x1}))
	unit(ConstFill(0x10000, 0xa5a5a5a5, 0xfff))
	unit(Nop(7))
	return r
}

func formatUnits(b []byte) string {
	var s strings.Builder
	s.WriteString("# ring/golden_test.go goldenStream: one 32-byte unit per line, little-endian dwords\n")
	for u := 0; u < len(b); u += Unit {
		for i, v := range dwords(b[u : u+Unit]) {
			if i > 0 {
				s.WriteByte(' ')
			}
			fmt.Fprintf(&s, "%08x", v)
		}
		s.WriteByte('\n')
	}
	return s.String()
}

func TestGoldenStream(t *testing.T) {
	r := goldenStream(t)
	got := formatUnits(r.Bytes())
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(goldenPath), 0o755))
		require.NoError(t, os.WriteFile(goldenPath, []byte(got), 0o644))
	}
	want, err := os.ReadFile(goldenPath)
	require.NoError(t, err, "run go test ./ring -run TestGoldenStream -update")
	assert.Equal(t, string(want), got)

	// The file parses back to the ring bytes (one unit per line).
	var units int
	sc := bufio.NewScanner(bytes.NewReader(want))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		assert.Len(t, strings.Fields(sc.Text()), 8)
		units++
	}
	assert.Equal(t, 16, units)
}

// TestGoldenStreamDecodes walks the stream like the engine: every unit's
// padding is a run of one-dword NOPs and the packets come out in order.
func TestGoldenStreamDecodes(t *testing.T) {
	r := goldenStream(t)
	var kinds []Kind
	var p Packet
	for ptr := r.Rptr(); ptr < r.Doorbell(); {
		n, err := r.DecodeAt(&p, ptr, r.Doorbell()-ptr)
		require.NoError(t, err, "at 0x%x", ptr)
		if p.Kind != KindNop || p.Count != 0 {
			kinds = append(kinds, p.Kind)
		}
		ptr += uint64(n)
		require.NoError(t, r.SetRptr(ptr))
	}
	assert.Equal(t, []Kind{KindBroadcastCopy, KindCopy, KindAtomic, KindPoll, KindBroadcastCopy,
		KindFence, KindTrap, KindTimestamp, KindWrite, KindConstFill, KindNop}, kinds)
	assert.Equal(t, r.Doorbell(), r.Rptr())
}
