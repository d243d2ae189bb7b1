package ring

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pad appends zero dwords so the header's packet is never truncated.
func pad(hdr uint32) []byte { return append(fromDwords(hdr), make([]byte, 64)...) }

func TestDecodeIllegal(t *testing.T) {
	tests := []struct {
		name string
		hdr  uint32
		want string // Error() with Offset 0x40
	}{
		{"indirect", 0x00000004, "ring offset 0x40: INDIRECT (op 4): not emulated"},
		{"sem", 0x00000007, "ring offset 0x40: SEM (op 7): not emulated"},
		{"cond_exe", 0x00000009, "ring offset 0x40: COND_EXE (op 9): not emulated"},
		{"ptepde", 0x0000000c, "ring offset 0x40: PTEPDE (op 12): not emulated"},
		{"srbm_write", 0x0000000e, "ring offset 0x40: SRBM_WRITE (op 14): not emulated"},
		{"gcr", 0x00000111, "ring offset 0x40: GCR (op 17): not emulated"},
		{"op 3", 0x00000003, "ring offset 0x40: OP_0x3 (op 3): unknown opcode"},
		{"op 0x3f", 0x0000003f, "ring offset 0x40: OP_0x3f (op 63): unknown opcode"},
		{"copy tiled", 0x00000101, "ring offset 0x40: COPY (op 1) sub_op 1: tiled copy not emulated"},
		{"copy soa", 0x00000301, "ring offset 0x40: COPY (op 1) sub_op 3: SOA copy not emulated"},
		{"copy sub-window", 0x00000401, "ring offset 0x40: COPY (op 1) sub_op 4: linear sub-window copy not emulated"},
		{"copy physical", 0x00000801, "ring offset 0x40: COPY (op 1) sub_op 8: linear physical copy not emulated"},
		{"copy unknown", 0x00002001, "ring offset 0x40: COPY (op 1) sub_op 32: unknown sub_op"},
		{"write tiled", 0x00000102, "ring offset 0x40: WRITE (op 2) sub_op 1: tiled write not emulated"},
		{"poll func 7", 0xF0000008, "ring offset 0x40: POLL_REGMEM (op 8) sub_op 0: reserved compare function 7"},
		{"poll reg-write-mem", 0x80000108, "ring offset 0x40: POLL_REGMEM (op 8) sub_op 1: poll-reg-write-mem not emulated"},
		{"poll dbit", 0x80000208, "ring offset 0x40: POLL_REGMEM (op 8) sub_op 2: poll-dbit-write-mem not emulated"},
		{"poll verify", 0x80000308, "ring offset 0x40: POLL_REGMEM (op 8) sub_op 3: poll-mem-verify not emulated"},
		{"poll sub 9", 0x80000908, "ring offset 0x40: POLL_REGMEM (op 8) sub_op 9: unknown sub_op"},
		{"fence64", 0x00000205, "ring offset 0x40: FENCE (op 5) sub_op 2: 64-bit fence (gfx1250) not emulated"},
		{"fence sub 1", 0x00000105, "ring offset 0x40: FENCE (op 5) sub_op 1: unknown sub_op"},
		{"timestamp 3", 0x0000030d, "ring offset 0x40: TIMESTAMP (op 13) sub_op 3: unknown sub_op"},
		{"nop sub 1", 0x00000100, "ring offset 0x40: NOP (op 0) sub_op 1: unknown sub_op"},
		{"atomic sub 1", 0x5E00010A, "ring offset 0x40: ATOMIC (op 10) sub_op 1: unknown sub_op"},
		{"trap sub 1", 0x00000106, "ring offset 0x40: TRAP (op 6) sub_op 1: unknown sub_op"},
		{"const fill sub 1", 0x0000010b, "ring offset 0x40: CONST_FILL (op 11) sub_op 1: unknown sub_op"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Packet
			n, err := Decode(&p, pad(tt.hdr), GFX94x)
			require.Error(t, err)
			assert.Zero(t, n)
			assert.ErrorIs(t, err, ErrIllegal)
			assert.NotErrorIs(t, err, ErrTruncated)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.hdr, de.Header)
			assert.Equal(t, Op(tt.hdr), de.Op)
			assert.Equal(t, uint8(tt.hdr>>8), de.SubOp)
			assert.Zero(t, de.Need)
			de.Offset = 0x40
			assert.Equal(t, tt.want, de.Error())
		})
	}
}

func TestDecodeTruncated(t *testing.T) {
	c := Copy(1, 2, 3)
	cp := c.AppendTo(nil)
	w := WriteLinear(0, []uint32{1, 2, 3, 4})
	wr := w.AppendTo(nil)
	tests := []struct {
		name       string
		b          []byte
		need, have int
		want       string
	}{
		{"empty", nil, 4, 0, "ring offset 0x3ffe0: truncated: header needs 4 bytes, 0 available"},
		{"half header", []byte{1, 0}, 4, 2, "ring offset 0x3ffe0: truncated: header needs 4 bytes, 2 available"},
		{"copy", cp[:12], 28, 12, "ring offset 0x3ffe0: COPY (op 1): truncated: packet needs 28 bytes, 12 available"},
		{"copy 27", cp[:27], 28, 27, "ring offset 0x3ffe0: COPY (op 1): truncated: packet needs 28 bytes, 27 available"},
		{"broadcast", fromDwords(0x08000001, 0, 0, 0, 0, 0, 0), 36, 28,
			"ring offset 0x3ffe0: COPY (op 1): truncated: packet needs 36 bytes, 28 available"},
		{"write no count", wr[:8], 20, 8, "ring offset 0x3ffe0: WRITE (op 2): truncated: packet needs 20 bytes, 8 available"},
		{"write payload", wr[:24], 32, 24, "ring offset 0x3ffe0: WRITE (op 2): truncated: packet needs 32 bytes, 24 available"},
		{"nop", fromDwords(0x00030000, 0), 16, 8, "ring offset 0x3ffe0: NOP (op 0): truncated: packet needs 16 bytes, 8 available"},
		{"poll", fromDwords(0xB0000008), 24, 4, "ring offset 0x3ffe0: POLL_REGMEM (op 8): truncated: packet needs 24 bytes, 4 available"},
		{"atomic", fromDwords(0x5E00000A, 0, 0, 0, 0, 0, 0), 32, 28,
			"ring offset 0x3ffe0: ATOMIC (op 10): truncated: packet needs 32 bytes, 28 available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Packet
			n, err := Decode(&p, tt.b, GFX94x)
			assert.Zero(t, n)
			assert.ErrorIs(t, err, ErrTruncated)
			assert.NotErrorIs(t, err, ErrIllegal)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.need, de.Need)
			assert.Equal(t, tt.have, de.Have)
			de.Offset = 0x3ffe0
			assert.Equal(t, tt.want, de.Error())
		})
	}
}

// Illegal headers are reported as illegal even when the buffer is short:
// the header alone decides.
func TestDecodeIllegalBeatsTruncated(t *testing.T) {
	var p Packet
	_, err := Decode(&p, fromDwords(0xF0000008), GFX94x)
	assert.ErrorIs(t, err, ErrIllegal)
}

func TestDecodeDialect(t *testing.T) {
	tests := []struct {
		dw1            uint32
		gfx94x, legacy uint32
	}{
		{0xffffffff, 0x3fffffff, 0x3fffff},
		{0x00400000, 0x400000, 0},
		{0x3fffffdf, 0x3fffffdf, 0x3fffdf},
		{0x003fffff, 0x3fffff, 0x3fffff},
		{0xc0000007, 7, 7},
	}
	for _, tt := range tests {
		for _, hdr := range []uint32{0x00000001, 0x08000001} {
			b := fromDwords(hdr, tt.dw1, 0, 1, 2, 3, 4, 5, 6)
			var p Packet
			_, err := Decode(&p, b, GFX94x)
			require.NoError(t, err)
			assert.Equal(t, tt.gfx94x, p.Count, "gfx94x %#x", tt.dw1)
			_, err = Decode(&p, b, GFX9Legacy)
			require.NoError(t, err)
			assert.Equal(t, tt.legacy, p.Count, "legacy %#x", tt.dw1)
			assert.Equal(t, uint64(tt.legacy)+1, p.CopyBytes())
		}
	}
	// CONST_FILL follows the same widths.
	b := fromDwords(0x8000000B, 0, 0, 0, 0xffffffff)
	var p Packet
	_, err := Decode(&p, b, GFX94x)
	require.NoError(t, err)
	assert.Equal(t, uint32(0x3fffffff), p.Count)
	_, err = Decode(&p, b, GFX9Legacy)
	require.NoError(t, err)
	assert.Equal(t, uint32(0x3fffff), p.Count)
}

func TestDecodeFields(t *testing.T) {
	var p Packet
	// Register poll with hdp_flush: decodes, the engine decides.
	n, err := Decode(&p, fromDwords(0x34000008, 0x1000, 0, 5, 0xf, 0xabcd1234), GFX94x)
	require.NoError(t, err)
	assert.Equal(t, 24, n)
	assert.Equal(t, KindPoll, p.Kind)
	assert.False(t, p.MemPoll)
	assert.True(t, p.HDPFlush)
	assert.Equal(t, CmpEQ, p.Func)
	assert.Equal(t, uint16(0x1234), p.Interval)
	assert.Equal(t, uint16(0xbcd), p.Retry, "bits 31:28 of DW5 are reserved")

	// Ignored flags (tmz, encrypt, byte swap) do not change the copy.
	n, err = Decode(&p, fromDwords(0x00050001, 31, 0x03030000, 0x10, 0, 0x20, 0), GFX94x)
	require.NoError(t, err)
	assert.Equal(t, 28, n)
	assert.Equal(t, KindCopy, p.Kind)
	assert.Equal(t, uint32(0x00050001), p.Header)
	assert.Equal(t, uint64(32), p.CopyBytes())

	// Timestamp get: low three address bits are reserved.
	_, err = Decode(&p, fromDwords(0x0000010D, 0x1007, 0x2), GFX94x)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x200001000), p.Addr)
	assert.Equal(t, uint8(TimestampGetLocal), p.SubOp)

	// Every atomic op decodes.
	for op := 0; op < 128; op++ {
		_, err = Decode(&p, fromDwords(uint32(op)<<25|0xA, 8, 0, 1, 0, 0, 0, 0x1234), GFX94x)
		require.NoError(t, err)
		assert.Equal(t, AtomicOp(op), p.AtomicOp)
		assert.Equal(t, uint16(0x1234), p.LoopInterval)
	}

	// Decode consumes only the packet.
	c := Copy(1, 2, 3)
	b := append(c.AppendTo(nil), 0xff, 0xff, 0xff, 0xff)
	n, err = Decode(&p, b, GFX94x)
	require.NoError(t, err)
	assert.Equal(t, 28, n)
}

func TestDecodeErrorIs(t *testing.T) {
	var p Packet
	_, err := Decode(&p, pad(4), GFX94x)
	assert.True(t, errors.Is(err, ErrIllegal))
	_, err = Decode(&p, nil, GFX94x)
	assert.True(t, errors.Is(err, ErrTruncated))
}
