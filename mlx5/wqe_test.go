package mlx5

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// mori builds a WQE block byte by byte as MORI's mlx5 device code lays it
// (Mlx5PostReadWriteImpl, Mlx5PostWriteInline, mlx5PrepareAtomicWqe),
// independent of Encode.
func mori(op uint8, idx uint16, qpn uint32, ds uint8, fill func(b []byte)) []byte {
	b := make([]byte, BB)
	binary.BigEndian.PutUint32(b[0:], uint32(idx)<<8|uint32(op))
	binary.BigEndian.PutUint32(b[4:], qpn<<8|uint32(ds))
	b[11] = CtrlCQUpdate
	fill(b)
	return b
}

func TestDecodeMORIWrite(t *testing.T) {
	b := mori(OpRDMAWrite, 7, 0x1234, 3, func(b []byte) {
		binary.BigEndian.PutUint64(b[16:], 0x4000) // raddr
		binary.BigEndian.PutUint32(b[24:], 0x77)   // rkey
		binary.BigEndian.PutUint32(b[32:], 1024)   // byte_count
		binary.BigEndian.PutUint32(b[36:], 0x55)   // lkey
		binary.BigEndian.PutUint64(b[40:], 0x800)  // addr
	})
	w, err := Decode(b, 7)
	require.NoError(t, err)
	require.Equal(t, WQE{Index: 7, Opcode: OpRDMAWrite, QPN: 0x1234, DS: 3, Signaled: true, RAddr: 0x4000, RKey: 0x77,
		Segs: []Seg{{Len: 1024, Key: 0x55, Addr: 0x800}}}, w)
	require.Equal(t, 1, w.BBs())
	require.Equal(t, uint64(1024), w.Bytes())
}

func TestDecodeMORIInlineReadAtomic(t *testing.T) {
	in := mori(OpRDMAWrite, 1, 9, 3, func(b []byte) {
		binary.BigEndian.PutUint64(b[16:], 0x10)
		binary.BigEndian.PutUint32(b[24:], 3)
		binary.BigEndian.PutUint32(b[32:], 8|inlineBit)
		binary.LittleEndian.PutUint64(b[36:], 0x1122334455667788)
	})
	w, err := Decode(in, 1)
	require.NoError(t, err)
	require.Equal(t, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, w.Inline)
	require.Nil(t, w.Segs)

	rd := mori(OpRDMARead, 2, 9, 3, func(b []byte) {
		binary.BigEndian.PutUint64(b[16:], 0x20)
		binary.BigEndian.PutUint32(b[24:], 4)
		binary.BigEndian.PutUint32(b[32:], 64)
		binary.BigEndian.PutUint32(b[36:], 5)
		binary.BigEndian.PutUint64(b[40:], 0x40)
	})
	w, err = Decode(rd, 2)
	require.NoError(t, err)
	require.Equal(t, []Seg{{Len: 64, Key: 5, Addr: 0x40}}, w.Segs)

	fa := mori(OpAtomicFA, 0xffff, 9, 4, func(b []byte) {
		binary.BigEndian.PutUint64(b[16:], 0x18)
		binary.BigEndian.PutUint32(b[24:], 6)
		binary.BigEndian.PutUint64(b[32:], 1) // swap_add
		binary.BigEndian.PutUint32(b[48:], 8)
		binary.BigEndian.PutUint32(b[52:], 7)
		binary.BigEndian.PutUint64(b[56:], 0xabc0)
	})
	w, err = Decode(fa, 0xffff)
	require.NoError(t, err)
	require.Equal(t, uint64(1), w.SwapAdd)
	require.Equal(t, uint64(0x18), w.RAddr)
	require.Equal(t, []Seg{{Len: 8, Key: 7, Addr: 0xabc0}}, w.Segs)
}

// Every refusal names the WQE index and the opcode.
func TestDecodeRefuses(t *testing.T) {
	write := func(b []byte) {
		binary.BigEndian.PutUint32(b[32:], 16)
	}
	for _, c := range []struct {
		name string
		b    []byte
		at   uint16
		want string
	}{
		{"stale index", mori(OpRDMAWrite, 3, 1, 3, write), 4, "WQE 4 (opcode 0x08 (RDMA_WRITE)): its index field is 3"},
		{"DS 0", mori(OpRDMAWrite, 4, 1, 0, write), 4, "DS 0"},
		{"DS past the block", mori(OpRDMAWrite, 4, 1, 5, write), 4, "DS 5 needs 128 bytes"},
		{"SEND", mori(OpSend, 4, 1, 2, write), 4, "WQE 4 (opcode 0x0a (SEND)): not emulated"},
		{"masked FA", mori(OpAtomicMaskedFA, 4, 1, 4, write), 4, "opcode 0x15 (ATOMIC_MASKED_FA)): not emulated"},
		{"extended FA", func() []byte {
			b := mori(OpAtomicFA, 4, 1, 4, write)
			b[0] = 0x09
			return b
		}(), 4, "opmod 0x9: extended (masked) atomics are not emulated"},
		{"inline too long", mori(OpRDMAWrite, 4, 1, 3, func(b []byte) { binary.BigEndian.PutUint32(b[32:], 13|inlineBit) }), 4, "inline length 13 does not fit"},
		{"atomic of 4 bytes", mori(OpAtomicFA, 4, 1, 4, func(b []byte) { binary.BigEndian.PutUint32(b[48:], 4) }), 4, "data segment is 4 bytes"},
		{"short", []byte{1, 2, 3}, 4, "shorter than a control segment"},
	} {
		_, err := Decode(c.b, c.at)
		require.ErrorContains(t, err, c.want, c.name)
	}
}

func TestEncodeDecode(t *testing.T) {
	b := make([]byte, 2*BB)
	w := WQE{Index: 9, Opcode: OpRDMAWrite, QPN: 3, Signaled: true, RAddr: 1, RKey: 2,
		Segs: []Seg{{Len: 1, Key: 2, Addr: 3}, {Len: 4, Key: 5, Addr: 6}, {Len: 7, Key: 8, Addr: 9}}}
	require.NoError(t, Encode(b, &w))
	got, err := Decode(b, 9)
	require.NoError(t, err)
	w.DS = 5
	require.Equal(t, w, got)
	require.Equal(t, 2, got.BBs())
}

// The CQE's bytes sit where mlx5_cqe64 has them: byte_cnt at 44,
// sop_drop_qpn at 56, wqe_counter at 60, op_own at 63 (all big-endian).
func TestCQEPut(t *testing.T) {
	b := make([]byte, CQESize)
	for i := range b {
		b[i] = 0xff
	}
	CQE{Opcode: CQEReq, Owner: 1, WQECounter: 0x1234, WQEOpcode: OpRDMAWrite, QPN: 0xabcdef, ByteCnt: 4096}.Put(b)
	want := make([]byte, CQESize)
	binary.BigEndian.PutUint32(want[44:], 4096)
	binary.BigEndian.PutUint32(want[56:], 0x08abcdef)
	binary.BigEndian.PutUint16(want[60:], 0x1234)
	want[63] = 0x01
	require.Equal(t, want, b)

	CQE{Opcode: CQEReqErr, WQECounter: 5, WQEOpcode: OpAtomicFA, QPN: 1, ByteCnt: 8, Syndrome: SyndromeRemoteAccess}.Put(b)
	c := ReadCQE(b)
	require.Equal(t, uint8(0xd), b[63]>>4)
	require.Equal(t, uint8(0x13), b[55])
	require.Equal(t, uint32(0), c.ByteCnt) // an error CQE has none
	require.Equal(t, uint16(5), c.WQECounter)
}

// FuzzDecode: no input panics the decoder; what it accepts re-encodes to
// a WQE that decodes the same (DS aside: an inline WQE may have room to
// spare).
func FuzzDecode(f *testing.F) {
	f.Add(mori(OpRDMAWrite, 0, 1, 3, func(b []byte) { binary.BigEndian.PutUint32(b[32:], 16) }), uint16(0))
	f.Add(mori(OpAtomicFA, 2, 1, 4, func(b []byte) { binary.BigEndian.PutUint32(b[48:], 8) }), uint16(2))
	f.Add(mori(OpRDMAWrite, 1, 9, 3, func(b []byte) { binary.BigEndian.PutUint32(b[32:], 4|inlineBit) }), uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, at uint16) {
		w, err := Decode(b, at)
		if err != nil {
			return
		}
		out := make([]byte, 16*BB)
		require.NoError(t, Encode(out, &w))
		w2, err := Decode(out, at)
		require.NoError(t, err)
		w.DS, w2.DS = 0, 0
		w.Imm, w2.Imm = 0, 0
		if len(w.Inline) == 0 && w.Inline != nil {
			w.Inline = []byte{}
		}
		require.Equal(t, w, w2)
	})
}
