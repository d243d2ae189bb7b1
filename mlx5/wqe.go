package mlx5

import (
	"encoding/binary"
	"fmt"
)

// BB is the send queue's basic block: WQEs are whole blocks.
const BB = 64

// Opcodes of the control segment.
const (
	OpRDMAWrite       = 0x08
	OpRDMAWriteImm    = 0x09
	OpSend            = 0x0a
	OpRDMARead        = 0x10
	OpAtomicCS        = 0x11
	OpAtomicFA        = 0x12
	OpAtomicMaskedCS  = 0x14
	OpAtomicMaskedFA  = 0x15
	CtrlCQUpdate      = 0x08 // fm_ce_se: write a CQE for this WQE
	inlineBit         = 0x80000000
	segBytes          = 16
	maxDS             = 0x3f // DS is six bits
	atomicDataSegSize = 8
)

var opNames = map[uint8]string{
	OpRDMAWrite: "RDMA_WRITE", OpRDMAWriteImm: "RDMA_WRITE_IMM", OpSend: "SEND", OpRDMARead: "RDMA_READ",
	OpAtomicCS: "ATOMIC_CS", OpAtomicFA: "ATOMIC_FA", OpAtomicMaskedCS: "ATOMIC_MASKED_CS", OpAtomicMaskedFA: "ATOMIC_MASKED_FA",
}

// OpName names an opcode for reports.
func OpName(op uint8) string {
	if n, ok := opNames[op]; ok {
		return fmt.Sprintf("%#02x (%s)", op, n)
	}
	return fmt.Sprintf("%#02x", op)
}

// Seg is a data segment: len bytes at addr of the region key names.
type Seg struct {
	Len  uint32
	Key  uint32
	Addr uint64
}

// WQE is one decoded work-queue entry.
type WQE struct {
	Index    uint16 // the control segment's WQE index
	Opcode   uint8
	OpMod    uint8
	QPN      uint32
	DS       uint8 // size in 16-byte units
	Signaled bool  // CQ_UPDATE: report a completion
	Imm      uint32
	RAddr    uint64 // remote address segment (all emulated opcodes have one)
	RKey     uint32
	Segs     []Seg  // gather (WRITE), scatter (READ) or the old value's buffer (atomics)
	Inline   []byte // an inline WRITE's bytes
	SwapAdd  uint64 // atomics
	Compare  uint64
}

// BBs is how many basic blocks the WQE takes.
func (w *WQE) BBs() int { return (int(w.DS)*segBytes + BB - 1) / BB }

// Bytes is the payload length: the inline bytes, the segments' sum, or 8
// for an atomic.
func (w *WQE) Bytes() uint64 {
	if w.Opcode == OpAtomicCS || w.Opcode == OpAtomicFA {
		return 8
	}
	if w.Inline != nil {
		return uint64(len(w.Inline))
	}
	var n uint64
	for _, s := range w.Segs {
		n += uint64(s.Len)
	}
	return n
}

// DecodeError is a WQE the NIC cannot run.
type DecodeError struct {
	Index  uint16 // where it sits (the consumer counter)
	Opcode uint8
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("WQE %d (opcode %s): %s", e.Index, OpName(e.Opcode), e.Reason)
}

// Header reads the control segment's opcode, index and DS, enough to
// know how many blocks to fetch; b holds at least 8 bytes.
func Header(b []byte) (op uint8, index uint16, ds uint8) {
	w0 := binary.BigEndian.Uint32(b[0:])
	w1 := binary.BigEndian.Uint32(b[4:])
	return uint8(w0), uint16(w0 >> 8), uint8(w1) & maxDS
}

// Decode decodes the WQE at the start of b, which sits at consumer counter
// at. b must hold the WQE's blocks (BBs of its DS; Header tells them).
func Decode(b []byte, at uint16) (WQE, error) {
	if len(b) < segBytes {
		return WQE{}, &DecodeError{Index: at, Reason: fmt.Sprintf("%d bytes: shorter than a control segment", len(b))}
	}
	w0 := binary.BigEndian.Uint32(b[0:])
	w1 := binary.BigEndian.Uint32(b[4:])
	w := WQE{Opcode: uint8(w0), Index: uint16(w0 >> 8), OpMod: uint8(w0 >> 24), QPN: w1 >> 8, DS: uint8(w1) & maxDS,
		Signaled: b[11]&CtrlCQUpdate != 0, Imm: binary.BigEndian.Uint32(b[12:])}
	bad := func(f string, a ...any) (WQE, error) {
		return WQE{}, &DecodeError{Index: at, Opcode: w.Opcode, Reason: fmt.Sprintf(f, a...)}
	}
	if w.Index != at {
		return bad("its index field is %d, not the counter it sits at (a stale or half-written WQE)", w.Index)
	}
	if w.DS == 0 {
		return bad("DS 0: no control segment")
	}
	if n := w.BBs() * BB; len(b) < n {
		return bad("DS %d needs %d bytes, %d given", w.DS, n, len(b))
	}
	segs := int(w.DS) - 1 // after the control segment
	body := b[segBytes : int(w.DS)*segBytes]
	raddr := func() {
		w.RAddr = binary.BigEndian.Uint64(body[0:])
		w.RKey = binary.BigEndian.Uint32(body[8:])
		body, segs = body[segBytes:], segs-1
	}
	dataSegs := func() error {
		for ; segs > 0; segs-- {
			s := Seg{Len: binary.BigEndian.Uint32(body[0:]), Key: binary.BigEndian.Uint32(body[4:]), Addr: binary.BigEndian.Uint64(body[8:])}
			if s.Len&inlineBit != 0 {
				return fmt.Errorf("an inline segment where a data segment belongs")
			}
			w.Segs = append(w.Segs, s)
			body = body[segBytes:]
		}
		return nil
	}
	switch w.Opcode {
	case OpRDMAWrite, OpRDMAWriteImm:
		if segs < 2 {
			return bad("DS %d: a write needs a remote address and a data or inline segment", w.DS)
		}
		raddr()
		if bc := binary.BigEndian.Uint32(body[0:]); bc&inlineBit != 0 {
			n := int(bc &^ inlineBit)
			if room := len(body) - 4; n > room {
				return bad("inline length %d does not fit the WQE's DS %d (%d bytes of room)", n, w.DS, room)
			}
			w.Inline = append([]byte{}, body[4:4+n]...)
			return w, nil
		}
		if err := dataSegs(); err != nil {
			return bad("%v", err)
		}
	case OpRDMARead:
		if segs < 2 {
			return bad("DS %d: a read needs a remote address and a data segment", w.DS)
		}
		raddr()
		if err := dataSegs(); err != nil {
			return bad("%v", err)
		}
	case OpAtomicCS, OpAtomicFA:
		if w.OpMod != 0 {
			return bad("opmod %#x: extended (masked) atomics are not emulated", w.OpMod)
		}
		if segs != 3 {
			return bad("DS %d: an atomic is a control, remote address, atomic and data segment (DS 4)", w.DS)
		}
		raddr()
		w.SwapAdd = binary.BigEndian.Uint64(body[0:])
		w.Compare = binary.BigEndian.Uint64(body[8:])
		body, segs = body[segBytes:], segs-1
		if err := dataSegs(); err != nil {
			return bad("%v", err)
		}
		if w.Segs[0].Len != atomicDataSegSize {
			return bad("the old value's data segment is %d bytes, an 8-byte atomic returns 8", w.Segs[0].Len)
		}
		if w.RAddr%8 != 0 {
			return bad("remote address %#x is not 8-byte aligned", w.RAddr)
		}
	default:
		return bad("not emulated (emud's mlx5 NIC runs RDMA_WRITE, RDMA_WRITE_IMM, RDMA_READ, ATOMIC_CS and ATOMIC_FA)")
	}
	return w, nil
}

// Encode writes w into b (its BBs, zeroed first): the inverse of Decode,
// for tests and fixtures. DS is computed from the segments.
func Encode(b []byte, w *WQE) error {
	ds := 2 // control, remote address
	switch {
	case w.Opcode == OpAtomicCS || w.Opcode == OpAtomicFA:
		ds += 1 + len(w.Segs)
	case w.Inline != nil:
		ds += (4 + len(w.Inline) + segBytes - 1) / segBytes
	default:
		ds += len(w.Segs)
	}
	if ds > maxDS {
		return fmt.Errorf("mlx5: a WQE of %d segments does not fit DS's six bits", ds)
	}
	n := (ds*segBytes + BB - 1) / BB * BB
	if len(b) < n {
		return fmt.Errorf("mlx5: the WQE takes %d bytes, %d given", n, len(b))
	}
	clear(b[:n])
	binary.BigEndian.PutUint32(b[0:], uint32(w.OpMod)<<24|uint32(w.Index)<<8|uint32(w.Opcode))
	binary.BigEndian.PutUint32(b[4:], w.QPN<<8|uint32(ds))
	if w.Signaled {
		b[11] = CtrlCQUpdate
	}
	binary.BigEndian.PutUint32(b[12:], w.Imm)
	binary.BigEndian.PutUint64(b[16:], w.RAddr)
	binary.BigEndian.PutUint32(b[24:], w.RKey)
	p := b[32:]
	if w.Opcode == OpAtomicCS || w.Opcode == OpAtomicFA {
		binary.BigEndian.PutUint64(p[0:], w.SwapAdd)
		binary.BigEndian.PutUint64(p[8:], w.Compare)
		p = p[segBytes:]
	}
	if w.Inline != nil {
		binary.BigEndian.PutUint32(p[0:], uint32(len(w.Inline))|inlineBit)
		copy(p[4:], w.Inline)
		return nil
	}
	for _, s := range w.Segs {
		binary.BigEndian.PutUint32(p[0:], s.Len)
		binary.BigEndian.PutUint32(p[4:], s.Key)
		binary.BigEndian.PutUint64(p[8:], s.Addr)
		p = p[segBytes:]
	}
	return nil
}
