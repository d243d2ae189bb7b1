package ring

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDirty: Dirty bounds every byte the ring's writes reached, so that an
// owner keeping the buffer for the next ring clears no less than was
// written (engine's kept rings clear only [0, Dirty)).
func TestDirty(t *testing.T) {
	const size = 4096
	copyPkt := Copy(0x1000, 0x2000, 64)
	bcast := Broadcast(0x1000, 0x2000, 0x3000, 64)
	for _, tc := range []struct {
		name  string
		write func(r *Ring)
		want  uint64
	}{
		{"fresh", func(*Ring) {}, 0},
		{"write", func(r *Ring) { r.Write(64, make([]byte, 10)) }, 74},
		{"write past a lap", func(r *Ring) { r.Write(3*size+100, make([]byte, 28)) }, 128},
		{"write across the end", func(r *Ring) { r.Write(size-8, make([]byte, 16)) }, size},
		{"unit", func(r *Ring) { require.NoError(t, r.WriteUnit(2*size+96, &copyPkt)) }, 128},
		{"packet", func(r *Ring) { require.NoError(t, r.WritePacket(256, 2, &copyPkt)) }, 256 + 2*Unit},
		{"broadcast", func(r *Ring) {
			_, err := r.WriteBroadcast(512, &bcast)
			require.NoError(t, err)
		}, 512 + 3*Unit},
		{"contiguous", func(r *Ring) { require.NotNil(t, r.Contiguous(1000, 24)) }, 1024},
		{"bytes aliased", func(r *Ring) { r.Bytes()[7] = 1 }, size},
		{"largest wins", func(r *Ring) {
			r.Write(900, make([]byte, 4))
			r.Write(32, make([]byte, 4))
		}, 904},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing(t, Options{Size: size})
			tc.write(r)
			assert.Equal(t, tc.want, r.Dirty())
		})
	}
}
