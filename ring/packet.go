package ring

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// Bit positions and widths in the gfx9 layouts (spec section 2).
const (
	broadcastBit = 1 << 27 // COPY DW0
	nopCountMask = 1<<14 - 1
	writeCntMask = 1<<20 - 1
	trapCtxMask  = 1<<28 - 1
	retryMask    = 1<<12 - 1
	loopIntMask  = 1<<13 - 1

	// RetryForever is the POLL_REGMEM retry_count that never gives up.
	RetryForever = 0xFFF
)

// TIMESTAMP sub-operations.
const (
	TimestampSet       = 0
	TimestampGetLocal  = 1
	TimestampGetGlobal = 2
)

// Packet is a flat, allocation-free decoded form of any supported packet.
// Fields not used by Kind are zero.
type Packet struct {
	Kind   Kind
	Header uint32 // DW0 as encoded/decoded; AppendTo recomputes it
	SubOp  uint8  // DW0 15:8 (non-zero only for TIMESTAMP, COPY_LINEAR_SWAP and COPY_LINEAR_MULTICAST)

	// Count is the raw count field: NOP dwords skipped; COPY/broadcast
	// bytes-1; WRITE dwords-1; CONST_FILL the count field.
	Count uint32

	Src, Dst, Dst2 uint64 // copies; Dst also for WRITE and CONST_FILL

	Addr uint64 // ATOMIC target, POLL address, FENCE address, TIMESTAMP destination
	Data uint64 // ATOMIC src_data, FENCE data (low 32), CONST_FILL data (low 32), TIMESTAMP set value
	Cmp  uint64 // ATOMIC cmp_data

	AtomicOp     AtomicOp
	Loop         bool   // ATOMIC DW0 bit 16
	LoopInterval uint16 // ATOMIC DW7 12:0

	Func     CompareFunc // POLL DW0 30:28
	MemPoll  bool        // POLL DW0 bit 31 (false: register poll)
	HDPFlush bool        // POLL DW0 bit 26
	Ref      uint32      // POLL reference
	Mask     uint32      // POLL mask
	Interval uint16      // POLL DW5 15:0
	Retry    uint16      // POLL DW5 27:16; RetryForever = never give up

	Context uint32 // TRAP int_context (27:0)

	FillSize uint8 // CONST_FILL DW0 31:30 (0 byte, 2 dword)

	// The fused and multicast copies of gfx950/gfx1250 (fused.go). Src and
	// Dst are the copy's addresses (a swap's A and B); Count its raw count.
	HasWait, HasSignal bool        // DW0 bits 30 (wait) and 31 (signal)
	Wait               WaitBlock   // the wait block (poll before the copy)
	Signal             SignalBlock // the signal block (atomic after the copy)
	// Compact is the gfx1250 layout: an absent wait or signal block takes
	// no dwords. The gfx950 COPY_LINEAR_WAIT_SIGNAL always has 19.
	Compact bool
	// NPD is DW0 bit 28 of a linear copy: the scope fields are valid
	// (gfx1250; the gfx950 fused packet has the bit too).
	NPD                bool
	SrcScope, DstScope uint8 // copy parameter dword 27:26 and 19:18 (0 CU, 1 SE, 2 device, 3 system)
	// IndirectSrc/IndirectDst are DW0 bits 20 and 21 of a gfx1250 linear
	// copy: the address field holds the address of a 64-bit pointer to
	// the data, not the data's address.
	IndirectSrc, IndirectDst bool
	// Dsts are a multicast's destinations (1..MaxMulticastDsts); Dst is
	// Dsts[0]. Decode reuses the capacity like Payload's.
	Dsts []uint64

	// Payload holds WRITE's inline dwords. Decode copies into
	// Payload[:0], reusing its capacity, so a Packet reused across decodes
	// stops allocating once warm; a later Decode overwrites it.
	Payload []uint32
}

// Copy builds a gfx9 COPY_LINEAR of bytes bytes. bytes must be in 1..2^30
// (MaxCopyBytes for CCO-style chunking); checking that is the caller's job,
// other values are truncated to the 30-bit count field.
func Copy(dst, src, bytes uint64) Packet {
	p := Packet{Kind: KindCopy, Count: uint32(bytes-1) & (1<<30 - 1), Src: src, Dst: dst}
	p.Header = p.header()
	return p
}

// Broadcast builds a COPY_BROADCAST_LINEAR writing the same bytes to dst1
// and dst2 (header 0x08000001). Same size rule as Copy.
func Broadcast(dst1, dst2, src, bytes uint64) Packet {
	p := Packet{Kind: KindBroadcastCopy, Count: uint32(bytes-1) & (1<<30 - 1), Src: src, Dst: dst1, Dst2: dst2}
	p.Header = p.header()
	return p
}

// AtomicAdd64 builds ATOMIC ADD64 (header 0x5E00000A): mem64 += v.
func AtomicAdd64(addr, v uint64) Packet {
	p := Packet{Kind: KindAtomic, AtomicOp: AtomicOpAdd64, Addr: addr, Data: v}
	p.Header = p.header()
	return p
}

// Poll builds a memory POLL_REGMEM (mem_poll = 1): wait until
// (mem32[addr] & mask) <f> ref. retry is masked to 12 bits; RetryForever
// never gives up.
func Poll(addr uint64, ref, mask uint32, f CompareFunc, interval, retry uint16) Packet {
	p := Packet{Kind: KindPoll, Addr: addr, Ref: ref, Mask: mask, Func: f & 7,
		MemPoll: true, Interval: interval, Retry: retry & retryMask}
	p.Header = p.header()
	return p
}

// Fence builds a FENCE (header 0x00000005): a 32-bit store of data.
func Fence(addr uint64, data uint32) Packet {
	p := Packet{Kind: KindFence, Addr: addr, Data: uint64(data)}
	p.Header = p.header()
	return p
}

// Trap builds a TRAP (header 0x00000006); ctx is masked to 28 bits.
func Trap(ctx uint32) Packet {
	p := Packet{Kind: KindTrap, Context: ctx & trapCtxMask}
	p.Header = p.header()
	return p
}

// TimestampGlobal builds TIMESTAMP get-global (header 0x0000020D). The low
// three address bits are not encodable and are dropped.
func TimestampGlobal(addr uint64) Packet {
	p := Packet{Kind: KindTimestamp, SubOp: TimestampGetGlobal, Addr: addr &^ 7}
	p.Header = p.header()
	return p
}

// Nop builds a NOP that skips skip further dwords (header skip<<16), so the
// packet is 1+skip dwords. skip must be in 0..16383.
func Nop(skip int) Packet {
	p := Packet{Kind: KindNop, Count: uint32(skip) & nopCountMask}
	p.Header = p.header()
	return p
}

// WriteLinear builds a WRITE linear (header 0x00000002) storing data at dst.
// data is copied. It must hold 1..2^20 dwords; an empty slice writes one zero
// dword, because the count field cannot express zero dwords.
func WriteLinear(dst uint64, data []uint32) Packet {
	if len(data) == 0 {
		data = []uint32{0}
	}
	p := Packet{Kind: KindWrite, Dst: dst, Count: uint32(len(data)-1) & writeCntMask}
	p.Payload = append([]uint32(nil), data[:p.Count+1]...)
	p.Header = p.header()
	return p
}

// ConstFill builds a CONST_FILL of dwords (fillsize 2) at dst; count is the
// raw count field (Linux writes byte_count-1).
func ConstFill(dst uint64, data uint32, count uint32) Packet {
	p := Packet{Kind: KindConstFill, Dst: dst, Data: uint64(data), Count: count & (1<<30 - 1), FillSize: 2}
	p.Header = p.header()
	return p
}

// header computes DW0 from the semantic fields.
func (p *Packet) header() uint32 {
	switch p.Kind {
	case KindNop:
		return (p.Count & nopCountMask) << 16
	case KindCopy:
		return uint32(OpCopy) | npdBit(p.NPD)
	case KindCopyWaitSignal, KindMulticast, KindSwap:
		return p.fusedHeader()
	case KindBroadcastCopy:
		return uint32(OpCopy) | broadcastBit
	case KindWrite:
		return uint32(OpWrite)
	case KindFence:
		return uint32(OpFence)
	case KindTrap:
		return uint32(OpTrap)
	case KindPoll:
		h := uint32(OpPoll) | uint32(p.Func&7)<<28
		if p.MemPoll {
			h |= 1 << 31
		}
		if p.HDPFlush {
			h |= 1 << 26
		}
		return h
	case KindAtomic:
		h := uint32(OpAtomic) | uint32(p.AtomicOp&0x7f)<<25
		if p.Loop {
			h |= 1 << 16
		}
		return h
	case KindTimestamp:
		return uint32(OpTimestamp) | uint32(p.SubOp)<<8
	case KindConstFill:
		return uint32(OpConstFill) | uint32(p.FillSize&3)<<30
	}
	return 0
}

// Size is the encoded length in bytes; 0 for an unknown Kind.
func (p *Packet) Size() int {
	switch p.Kind {
	case KindNop:
		return 4 * (1 + int(p.Count&nopCountMask))
	case KindCopy:
		return 28
	case KindBroadcastCopy:
		return 36
	case KindWrite:
		return 4 * (5 + int(p.Count&writeCntMask))
	case KindFence:
		return 16
	case KindTrap:
		return 8
	case KindPoll:
		return 24
	case KindAtomic:
		return 32
	case KindTimestamp:
		return 12
	case KindConstFill:
		return 20
	case KindCopyWaitSignal, KindMulticast, KindSwap:
		return p.fusedSize()
	}
	return 0
}

// CopyBytes is the number of bytes a copy moves (Count+1); 0 for other
// kinds.
func (p *Packet) CopyBytes() uint64 {
	switch p.Kind {
	case KindCopy, KindBroadcastCopy, KindCopyWaitSignal, KindMulticast, KindSwap:
		return uint64(p.Count&(1<<30-1)) + 1
	}
	return 0
}

// AppendTo appends the encoded packet to b. The header is recomputed from the
// semantic fields; p.Header is not consulted. For WRITE, Count decides the
// length and missing Payload dwords are encoded as zero. An unknown Kind
// appends nothing.
func (p *Packet) AppendTo(b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, p.header())
	switch p.Kind {
	case KindNop:
		for i := uint32(0); i < p.Count&nopCountMask; i++ {
			b = le.AppendUint32(b, 0)
		}
	case KindCopy, KindBroadcastCopy:
		b = le.AppendUint32(b, p.Count&(1<<30-1))
		if p.Kind == KindCopy {
			b = le.AppendUint32(b, scopeBits(p.SrcScope, p.DstScope))
		} else {
			b = le.AppendUint32(b, 0)
		}
		b = le.AppendUint64(b, p.Src)
		b = le.AppendUint64(b, p.Dst)
		if p.Kind == KindBroadcastCopy {
			b = le.AppendUint64(b, p.Dst2)
		}
	case KindWrite:
		n := p.Count & writeCntMask
		b = le.AppendUint64(b, p.Dst)
		b = le.AppendUint32(b, n)
		for i := uint32(0); i <= n; i++ {
			var v uint32
			if int(i) < len(p.Payload) {
				v = p.Payload[i]
			}
			b = le.AppendUint32(b, v)
		}
	case KindFence:
		b = le.AppendUint64(b, p.Addr)
		b = le.AppendUint32(b, uint32(p.Data))
	case KindTrap:
		b = le.AppendUint32(b, p.Context&trapCtxMask)
	case KindPoll:
		b = le.AppendUint64(b, p.Addr)
		b = le.AppendUint32(b, p.Ref)
		b = le.AppendUint32(b, p.Mask)
		b = le.AppendUint32(b, uint32(p.Interval)|uint32(p.Retry&retryMask)<<16)
	case KindAtomic:
		b = le.AppendUint64(b, p.Addr)
		b = le.AppendUint64(b, p.Data)
		b = le.AppendUint64(b, p.Cmp)
		b = le.AppendUint32(b, uint32(p.LoopInterval&loopIntMask))
	case KindTimestamp:
		if p.SubOp == TimestampSet {
			b = le.AppendUint64(b, p.Data)
		} else {
			b = le.AppendUint64(b, p.Addr&^7)
		}
	case KindConstFill:
		b = le.AppendUint64(b, p.Dst)
		b = le.AppendUint32(b, uint32(p.Data))
		b = le.AppendUint32(b, p.Count&(1<<30-1))
	case KindCopyWaitSignal, KindMulticast, KindSwap:
		b = p.appendFused(b)
	default:
		return b[:len(b)-4]
	}
	return b
}

func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// String renders the packet on one line for hang reports, e.g.
// "COPY_LINEAR 64 B src=0x100000040 dst=0x200000000".
func (p *Packet) String() string {
	var s strings.Builder
	s.WriteString(p.Kind.String())
	switch p.Kind {
	case KindNop:
		s.WriteString(" skip=" + strconv.FormatUint(uint64(p.Count), 10))
	case KindCopy, KindBroadcastCopy:
		s.WriteString(" " + strconv.FormatUint(p.CopyBytes(), 10) + " B src=" + hex(p.Src) + " dst=" + hex(p.Dst))
		if p.Kind == KindBroadcastCopy {
			s.WriteString(" dst2=" + hex(p.Dst2))
		}
	case KindWrite:
		s.WriteString(" " + strconv.FormatUint(uint64(p.Count)+1, 10) + " DW dst=" + hex(p.Dst) + " [")
		for i, v := range p.Payload {
			if i == 4 {
				s.WriteString(" ...")
				break
			}
			if i > 0 {
				s.WriteByte(' ')
			}
			s.WriteString(hex(uint64(v)))
		}
		s.WriteByte(']')
	case KindFence:
		s.WriteString(" [" + hex(p.Addr) + "] = " + hex(p.Data))
	case KindTrap:
		s.WriteString(" ctx=" + hex(uint64(p.Context)))
	case KindPoll:
		space := " mem["
		if !p.MemPoll {
			space = " reg["
		}
		s.WriteString(space + hex(p.Addr) + "] & " + hex(uint64(p.Mask)) + " " + p.Func.String() + " " +
			strconv.FormatUint(uint64(p.Ref), 10) + " interval=" + strconv.Itoa(int(p.Interval)) + " retry=")
		if p.Retry == RetryForever {
			s.WriteString("forever")
		} else {
			s.WriteString(strconv.Itoa(int(p.Retry)))
		}
		if p.HDPFlush {
			s.WriteString(" hdp_flush")
		}
	case KindAtomic:
		s.WriteString(" " + p.AtomicOp.String() + " [" + hex(p.Addr) + "]")
		switch p.AtomicOp {
		case AtomicOpAdd64, AtomicOpAdd64NoRtn:
			if int64(p.Data) < 0 {
				s.WriteString(" -= " + strconv.FormatUint(-p.Data, 10))
			} else {
				s.WriteString(" += " + strconv.FormatUint(p.Data, 10))
			}
		default:
			s.WriteString(" src=" + hex(p.Data) + " cmp=" + hex(p.Cmp))
		}
		if p.Loop {
			s.WriteString(" loop interval=" + strconv.Itoa(int(p.LoopInterval)))
		}
	case KindTimestamp:
		switch p.SubOp {
		case TimestampSet:
			s.WriteString(" set " + hex(p.Data))
		case TimestampGetLocal:
			s.WriteString(" get_local -> [" + hex(p.Addr) + "]")
		default:
			s.WriteString(" get_global -> [" + hex(p.Addr) + "]")
		}
	case KindCopyWaitSignal, KindMulticast, KindSwap:
		p.fusedString(&s)
	case KindConstFill:
		s.WriteString(" dst=" + hex(p.Dst) + " data=" + hex(p.Data) + " count=" +
			strconv.FormatUint(uint64(p.Count), 10) + " fillsize=" + strconv.Itoa(int(p.FillSize)))
	}
	return s.String()
}
