package ring

import (
	"encoding/binary"
	"errors"
	"strconv"
)

var (
	// ErrTruncated: the buffer ends before the packet does.
	ErrTruncated = errors.New("truncated")
	// ErrIllegal: unknown or unsupported opcode, sub-opcode or field value;
	// the engine raises an illegal-instruction fault.
	ErrIllegal = errors.New("illegal instruction")
)

// DecodeError describes why a packet could not be decoded. errors.Is
// matches ErrTruncated or ErrIllegal.
type DecodeError struct {
	Offset uint64 // ring byte pointer of the header (callers set it; DecodeAt fills it)
	Op     Op
	SubOp  uint8
	Header uint32
	Need   int // bytes the packet needs (a lower bound if its length field is missing); 0 unless truncated
	Have   int // bytes that were available
	Reason string
	kind   error
	subOp  bool // the reason concerns the sub-op or fields, so name it
}

func (e *DecodeError) Error() string {
	s := "ring offset " + hex(e.Offset) + ": "
	if e.kind == ErrTruncated && e.Have < 4 {
		return s + "truncated: header needs 4 bytes, " + strconv.Itoa(e.Have) + " available"
	}
	s += e.Op.String() + " (op " + strconv.Itoa(int(e.Op)) + ")"
	if e.subOp {
		s += " sub_op " + strconv.Itoa(int(e.SubOp))
	}
	if e.kind == ErrTruncated {
		return s + ": truncated: packet needs " + strconv.Itoa(e.Need) + " bytes, " + strconv.Itoa(e.Have) + " available"
	}
	return s + ": " + e.Reason
}

// Unwrap returns ErrTruncated or ErrIllegal.
func (e *DecodeError) Unwrap() error { return e.kind }

func illegal(h uint32, have int, subOp bool, reason string) *DecodeError {
	return &DecodeError{Op: Op(h), SubOp: uint8(h >> 8), Header: h, Have: have, Reason: reason, kind: ErrIllegal, subOp: subOp}
}

func truncated(h uint32, need, have int) *DecodeError {
	return &DecodeError{Op: Op(h), SubOp: uint8(h >> 8), Header: h, Need: need, Have: have,
		Reason: "truncated", kind: ErrTruncated}
}

var copySubOps = [...]string{
	1: "tiled copy",
	2: "copy sub_op 2",
	3: "SOA copy",
	4: "linear sub-window copy",
	5: "tiled sub-window copy",
	6: "T2T sub-window copy",
	7: "dirty page copy",
	8: "linear physical copy",
}

var pollSubOps = [...]string{
	1: "poll-reg-write-mem",
	2: "poll-dbit-write-mem",
	3: "poll-mem-verify",
}

// packetLen classifies header h: the packet's length in bytes, or a lower
// bound (exact=false) when the length depends on a later dword (WRITE), or
// an error for headers the emulator does not decode.
func packetLen(h uint32) (n int, exact bool, err *DecodeError) {
	sub := uint8(h >> 8)
	switch op := Op(h); op {
	case OpNOP:
		if sub != 0 {
			return 0, false, illegal(h, 0, true, "unknown sub_op")
		}
		return 4 * (1 + int(h>>16&nopCountMask)), true, nil
	case OpCopy:
		switch {
		case sub == 0 && h&broadcastBit != 0:
			return 36, true, nil
		case sub == 0:
			return 28, true, nil
		case int(sub) < len(copySubOps):
			return 0, false, illegal(h, 0, true, copySubOps[sub]+" not emulated")
		}
		return 0, false, illegal(h, 0, true, "unknown sub_op")
	case OpWrite:
		switch sub {
		case 0:
			return 20, false, nil
		case 1:
			return 0, false, illegal(h, 0, true, "tiled write not emulated")
		}
		return 0, false, illegal(h, 0, true, "unknown sub_op")
	case OpFence:
		switch sub {
		case 0:
			return 16, true, nil
		case 2:
			return 0, false, illegal(h, 0, true, "64-bit fence (gfx1250) not emulated")
		}
		return 0, false, illegal(h, 0, true, "unknown sub_op")
	case OpTrap:
		if sub != 0 {
			return 0, false, illegal(h, 0, true, "unknown sub_op")
		}
		return 8, true, nil
	case OpPoll:
		switch {
		case int(sub) < len(pollSubOps) && sub != 0:
			return 0, false, illegal(h, 0, true, pollSubOps[sub]+" not emulated")
		case sub != 0:
			return 0, false, illegal(h, 0, true, "unknown sub_op")
		case h>>28&7 == 7:
			return 0, false, illegal(h, 0, true, "reserved compare function 7")
		}
		return 24, true, nil
	case OpAtomic:
		if sub != 0 {
			return 0, false, illegal(h, 0, true, "unknown sub_op")
		}
		return 32, true, nil
	case OpTimestamp:
		if sub > TimestampGetGlobal {
			return 0, false, illegal(h, 0, true, "unknown sub_op")
		}
		return 12, true, nil
	case OpConstFill:
		if sub != 0 {
			return 0, false, illegal(h, 0, true, "unknown sub_op")
		}
		return 20, true, nil
	case OpIndirect, OpSem, OpCondExe, OpPTEPDE, OpSRBMWrite, OpPreExe, OpDummyTrap, OpGCR:
		return 0, false, illegal(h, 0, false, "not emulated")
	}
	return 0, false, illegal(h, 0, false, "unknown opcode")
}

// reset makes p a packet of header h and nothing else, keeping its
// slices' storage. Zeroing p in place, not assigning it a literal that
// reads its own slices (a temporary, then a copy of the whole packet), was
// ~4% of a 64 B copy benchmark's CPU.
func (p *Packet) reset(h uint32) {
	pl, ds := p.Payload[:0], p.Dsts[:0]
	*p = Packet{}
	p.Header, p.SubOp, p.Payload, p.Dsts = h, uint8(h>>8), pl, ds
}

// Decode decodes the packet whose header is b[0:4] into p and returns the
// bytes consumed. It never panics. On failure it returns 0 and a
// *DecodeError (Offset 0; the caller knows the ring position) and p's
// contents are unspecified. Bytes after the packet are not examined.
func Decode(p *Packet, b []byte, d Dialect) (int, error) {
	if len(b) < 4 {
		return 0, &DecodeError{Need: 4, Have: len(b), Reason: "truncated", kind: ErrTruncated}
	}
	le := binary.LittleEndian
	h := le.Uint32(b)
	if Op(h) == OpCopy {
		if n, exact, ok, derr := fusedLen(h, d); derr != nil || ok {
			if derr != nil {
				derr.Have = len(b)
				return 0, derr
			}
			if !exact { // multicast: the length is in the parameter dword
				if len(b) < n {
					return 0, truncated(h, n, len(b))
				}
				n = multicastLen(h, b)
			}
			if len(b) < n {
				return 0, truncated(h, n, len(b))
			}
			p.reset(h)
			decodeFused(p, b[:n], d)
			return n, nil
		}
	}
	n, exact, derr := packetLen(h)
	if derr != nil {
		derr.Have = len(b)
		return 0, derr
	}
	if !exact { // WRITE: the length is in DW3
		if len(b) < 16 {
			return 0, truncated(h, n, len(b))
		}
		n = 4 * (5 + int(le.Uint32(b[12:])&writeCntMask))
	}
	if len(b) < n {
		return 0, truncated(h, n, len(b))
	}
	p.reset(h)
	dw := func(i int) uint32 { return le.Uint32(b[4*i:]) }
	qw := func(i int) uint64 { return le.Uint64(b[4*i:]) }
	switch Op(h) {
	case OpNOP:
		p.Kind = KindNop
		p.Count = h >> 16 & nopCountMask
	case OpCopy:
		p.Kind = KindCopy
		p.Count = dw(1) & d.copyCountMask()
		p.Src, p.Dst = qw(3), qw(5)
		if h&broadcastBit != 0 {
			p.Kind = KindBroadcastCopy
			p.Dst2 = qw(7)
		} else if d == GFX1250 {
			// gfx1250 reads the scope fields, gated by npd (MORI cco.hpp
			// CCO_SDMA_SCOPE_FIELDS); gfx9 leaves those bits reserved.
			p.NPD = h&npdFlag != 0
			p.DstScope, p.SrcScope = uint8(dw(2)>>18&3), uint8(dw(2)>>26&3)
		}
	case OpWrite:
		p.Kind = KindWrite
		p.Dst = qw(1)
		p.Count = dw(3) & writeCntMask
		for i := 0; i <= int(p.Count); i++ {
			p.Payload = append(p.Payload, dw(4+i))
		}
	case OpFence:
		p.Kind = KindFence
		p.Addr, p.Data = qw(1), uint64(dw(3))
	case OpTrap:
		p.Kind = KindTrap
		p.Context = dw(1) & trapCtxMask
	case OpPoll:
		p.Kind = KindPoll
		p.Func = CompareFunc(h >> 28 & 7)
		p.MemPoll = h&(1<<31) != 0
		p.HDPFlush = h&(1<<26) != 0
		p.Addr, p.Ref, p.Mask = qw(1), dw(3), dw(4)
		p.Interval = uint16(dw(5))
		p.Retry = uint16(dw(5) >> 16 & retryMask)
	case OpAtomic:
		p.Kind = KindAtomic
		p.AtomicOp = AtomicOp(h >> 25)
		p.Loop = h&(1<<16) != 0
		p.Addr, p.Data, p.Cmp = qw(1), qw(3), qw(5)
		p.LoopInterval = uint16(dw(7) & loopIntMask)
	case OpTimestamp:
		p.Kind = KindTimestamp
		if p.SubOp == TimestampSet {
			p.Data = qw(1)
		} else {
			p.Addr = qw(1) &^ 7
		}
	case OpConstFill:
		p.Kind = KindConstFill
		p.FillSize = uint8(h >> 30)
		p.Dst, p.Data = qw(1), uint64(dw(3))
		p.Count = dw(4) & d.copyCountMask()
	}
	return n, nil
}
