package ring

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// The copies that carry their own wait and signal, and the multicast copy
// (gfx950 SDMA OSS 7.0 and gfx1250). Layouts, from the public headers:
//
//   - rocSHMEM projects/rocshmem/src/sdma/sdma_pkt_struct_mi4.h in
//     ROCm/rocm-systems (https://github.com/ROCm/rocm-systems):
//     SDMA_PKT_COPY_LINEAR_WAIT_SIGNAL_MI4, OP=1 SUB_OP=0, 19 dwords
//     (static_assert): DW0 npd bit 28, wait bit 30, signal bit 31; DW1
//     wait_function 2:0, wait_scope 19:18; DW2-3 wait address (bits 2:0
//     reserved, 8-byte aligned); DW4-5 64-bit reference; DW6-7 64-bit
//     mask; DW8 copy_count 29:0; DW9 dst_scope 19:18, src_scope 27:26;
//     DW10-11 source; DW12-13 destination; DW14 signal_operation 6:0,
//     signal_scope 19:18; DW15-16 signal address (8-byte aligned);
//     DW17-18 64-bit signal data. Its builder sets the wait and signal
//     bits from whether a wait address and a signal address were given, and
//     writes all 19 dwords either way.
//   - ROCr projects/rocr-runtime/runtime/hsa-runtime/core/inc/sdma_registers.h
//     (same repository): the GFX1250 forms of the same packet ("When
//     WAIT=0, DW1-DW7 are absent and copy DWs shift down. When SIGNAL=0,
//     DW14-DW18 are absent"), SDMA_SUBOP_COPY_SWAP = 9 and
//     SDMA_SUBOP_COPY_MULTICAST = 10, the multicast parameter dword's
//     num_of_destination 9:0, the indirect copy's indirect_src (bit 20) and
//     indirect_dst (bit 21), and the swap packet's 32-byte (gfx1250) / 64-byte
//     (gfx94x/gfx950) address alignment. ROCr's amd_blit_sdma.cpp
//     (BuildMulticastCopyCommand, BuildMulticastWaitSignalCopyCommand) writes
//     num_of_destination = N-1, N destination pairs from DW5 (5+2N dwords),
//     and in the wait/signal form "header, optional wait, count, parameter,
//     src, then N dst pairs, then optional signal".
//
// What the sources do not settle, and the choice made here:
//
//   - [inferred] A gfx950 COPY_LINEAR (sub_op 0) with neither the wait nor
//     the signal bit is the 7-dword COPY_LINEAR: no source gives the two
//     packets different opcodes, and MORI's cco.hpp still posts the 7-dword
//     copy on gfx950. With either bit set it is the 19-dword fused packet.
//   - [inferred] The swap packet's wait/signal bits are read on gfx1250 only
//     (its gfx94x/gfx950 layout, SDMA_PKT_COPY_LINEAR_SWAP, has no such
//     bits).
//   - The temporal hints, tmz and the wait/signal scope fields are not
//     modelled: ignored on decode, encoded as zero.

// MaxMulticastDsts is the most destinations one COPY_LINEAR_MULTICAST has
// (num_of_destination is 10 bits and holds N-1).
const MaxMulticastDsts = 1024

// Header bits of the fused and multicast copies.
const (
	npdFlag         = 1 << 28
	waitFlag        = 1 << 30
	signalFlag      = 1 << 31
	indirectSrcFlag = 1 << 20
	indirectDstFlag = 1 << 21

	// SubOpSwap and SubOpMulticast are the COPY sub-opcodes of the swap
	// and multicast copies.
	SubOpSwap      = 9
	SubOpMulticast = 10
)

// WaitBlock is a fused packet's wait: before the copy, the engine polls
// until (mem64[Addr] & Mask) <Func> Ref holds (64-bit unsigned compare).
type WaitBlock struct {
	Func      CompareFunc
	Addr      uint64 // 8-byte aligned; bits 2:0 are not encodable
	Ref, Mask uint64
}

// SignalBlock is a fused packet's signal: after the copy's data has landed,
// the engine applies the 64-bit atomic Op with operand Data to mem64[Addr].
// Op uses the ATOMIC packet's TC_OP numbering (rocSHMEM signals with
// SDMA_SIGNAL_OP_ADD64_MI4 = 111, ADD64 no-return; ROCr with 0x70, SUB64
// no-return).
type SignalBlock struct {
	Op   AtomicOp
	Addr uint64 // 8-byte aligned; bits 2:0 are not encodable
	Data uint64
}

func npdBit(b bool) uint32 {
	if b {
		return npdFlag
	}
	return 0
}

// scopeBits is a copy parameter dword's src/dst scope fields.
func scopeBits(src, dst uint8) uint32 { return uint32(dst&3)<<18 | uint32(src&3)<<26 }

// CopyWaitSignal builds a COPY_LINEAR_WAIT_SIGNAL for dialect d: wait (if
// w is not nil), copy bytes from src to dst, then signal (if s is not nil).
// On GFX1250 it is compact (absent blocks take no dwords); on GFX950 it has
// all 19 dwords. With neither block it is a plain Copy. Same size rule as
// Copy; the addresses' low three bits are dropped.
func CopyWaitSignal(d Dialect, dst, src, bytes uint64, w *WaitBlock, s *SignalBlock) Packet {
	if w == nil && s == nil {
		return Copy(dst, src, bytes)
	}
	p := Packet{Kind: KindCopyWaitSignal, Count: uint32(bytes-1) & (1<<30 - 1), Src: src, Dst: dst,
		Compact: d == GFX1250, NPD: true, SrcScope: 3, DstScope: 3}
	p.setBlocks(w, s)
	p.Header = p.header()
	return p
}

// Multicast builds a gfx1250 COPY_LINEAR_MULTICAST: one read of bytes at src
// written to every address in dsts (1..MaxMulticastDsts), with an optional
// wait before and signal after.
func Multicast(dsts []uint64, src, bytes uint64, w *WaitBlock, s *SignalBlock) (Packet, error) {
	if len(dsts) == 0 || len(dsts) > MaxMulticastDsts {
		return Packet{}, errors.New("ring: multicast needs 1.." + strconv.Itoa(MaxMulticastDsts) + " destinations, got " + strconv.Itoa(len(dsts)))
	}
	p := Packet{Kind: KindMulticast, Count: uint32(bytes-1) & (1<<30 - 1), Src: src, Dst: dsts[0],
		Dsts: append([]uint64(nil), dsts...), Compact: true, SrcScope: 3, DstScope: 3}
	p.setBlocks(w, s)
	p.Header = p.header()
	p.SubOp = SubOpMulticast
	return p, nil
}

// Swap builds a COPY_LINEAR_SWAP exchanging bytes at a and b. The wait and
// signal blocks exist on GFX1250 only (pass nil elsewhere).
func Swap(d Dialect, a, b, bytes uint64, w *WaitBlock, s *SignalBlock) Packet {
	p := Packet{Kind: KindSwap, Count: uint32(bytes-1) & (1<<30 - 1), Src: a, Dst: b, Compact: true}
	if d == GFX1250 {
		p.setBlocks(w, s)
	}
	p.Header = p.header()
	p.SubOp = SubOpSwap
	return p
}

func (p *Packet) setBlocks(w *WaitBlock, s *SignalBlock) {
	if w != nil {
		p.HasWait, p.Wait = true, *w
		p.Wait.Addr &^= 7
		p.Wait.Func &= 7
	}
	if s != nil {
		p.HasSignal, p.Signal = true, *s
		p.Signal.Addr &^= 7
		p.Signal.Op &= 0x7f
	}
}

func (p *Packet) fusedHeader() uint32 {
	h := uint32(OpCopy)
	switch p.Kind {
	case KindMulticast:
		h |= SubOpMulticast << 8
	case KindSwap:
		h |= SubOpSwap << 8
	}
	if p.Kind != KindSwap {
		h |= npdBit(p.NPD)
	}
	if p.Kind == KindCopyWaitSignal {
		if p.IndirectSrc {
			h |= indirectSrcFlag
		}
		if p.IndirectDst {
			h |= indirectDstFlag
		}
	}
	if p.HasWait {
		h |= waitFlag
	}
	if p.HasSignal {
		h |= signalFlag
	}
	return h
}

// blocks reports which of the wait and signal blocks take dwords.
func (p *Packet) blocks() (wait, signal bool) {
	if !p.Compact {
		return true, true
	}
	return p.HasWait, p.HasSignal
}

func (p *Packet) fusedSize() int {
	w, s := p.blocks()
	n := 7 // header, count, parameter, source or A, destination or B
	if p.Kind == KindMulticast {
		n = 5 + 2*max(len(p.Dsts), 1)
	}
	if w {
		n += 7
	}
	if s {
		n += 5
	}
	return 4 * n
}

func (p *Packet) appendFused(b []byte) []byte {
	le := binary.LittleEndian
	w, s := p.blocks()
	if w {
		b = le.AppendUint32(b, uint32(p.Wait.Func&7))
		b = le.AppendUint64(b, p.Wait.Addr&^7)
		b = le.AppendUint64(b, p.Wait.Ref)
		b = le.AppendUint64(b, p.Wait.Mask)
	}
	b = le.AppendUint32(b, p.Count&(1<<30-1))
	param := scopeBits(p.SrcScope, p.DstScope)
	if p.Kind == KindMulticast {
		param |= uint32(max(len(p.Dsts), 1)-1) & (MaxMulticastDsts - 1)
	}
	b = le.AppendUint32(b, param)
	b = le.AppendUint64(b, p.Src)
	if p.Kind == KindMulticast {
		if len(p.Dsts) == 0 {
			b = le.AppendUint64(b, p.Dst)
		}
		for _, d := range p.Dsts {
			b = le.AppendUint64(b, d)
		}
	} else {
		b = le.AppendUint64(b, p.Dst)
	}
	if s {
		b = le.AppendUint32(b, uint32(p.Signal.Op&0x7f))
		b = le.AppendUint64(b, p.Signal.Addr&^7)
		b = le.AppendUint64(b, p.Signal.Data)
	}
	return b
}

// fusedLen classifies a COPY header h under dialect d when it is one of the
// packets of this file: its length in bytes (a lower bound when exact is
// false: a multicast's length is in its parameter dword), ok=false when it
// is not one of them (a plain COPY, or another sub_op), or an error naming
// the architecture that lacks it.
func fusedLen(h uint32, d Dialect) (n int, exact, ok bool, err *DecodeError) {
	sub := uint8(h >> 8)
	wait, signal := h&waitFlag != 0, h&signalFlag != 0
	compactLen := func(body int) int {
		n := body
		if wait {
			n += 7
		}
		if signal {
			n += 5
		}
		return 4 * n
	}
	switch sub {
	case 0:
		if h&broadcastBit != 0 {
			return 0, false, false, nil
		}
		switch d {
		case GFX950:
			if wait || signal {
				return 76, true, true, nil
			}
		case GFX1250:
			if wait || signal || h&(indirectSrcFlag|indirectDstFlag) != 0 {
				return compactLen(7), true, true, nil
			}
		}
		return 0, false, false, nil
	case SubOpSwap:
		switch d {
		case GFX9Legacy:
			return 0, false, false, illegal(h, 0, true, "COPY_LINEAR_SWAP: "+d.String()+" does not have it (SDMA 5.2+)")
		case GFX1250:
			return compactLen(7), true, true, nil
		}
		return 28, true, true, nil
	case SubOpMulticast:
		if d != GFX1250 {
			return 0, false, false, illegal(h, 0, true, "COPY_LINEAR_MULTICAST: a gfx1250 packet, "+d.String()+" does not have it")
		}
		return compactLen(5 + 2), false, true, nil
	}
	return 0, false, false, nil
}

// multicastLen is a multicast's exact length once its parameter dword is
// in b (b holds at least the lower bound fusedLen gave).
func multicastLen(h uint32, b []byte) int {
	at := 8 // DW2: header, count, parameter
	if h&waitFlag != 0 {
		at += 28
	}
	nd := int(binary.LittleEndian.Uint32(b[at:])&(MaxMulticastDsts-1)) + 1
	n := 5 + 2*nd
	if h&waitFlag != 0 {
		n += 7
	}
	if h&signalFlag != 0 {
		n += 5
	}
	return 4 * n
}

// decodeFused fills p from the n bytes of b (n from fusedLen/multicastLen).
func decodeFused(p *Packet, b []byte, d Dialect) {
	le := binary.LittleEndian
	h := p.Header
	switch uint8(h >> 8) {
	case SubOpSwap:
		p.Kind = KindSwap
	case SubOpMulticast:
		p.Kind = KindMulticast
	default:
		p.Kind = KindCopyWaitSignal
		p.NPD = h&npdFlag != 0
		if d == GFX1250 {
			p.IndirectSrc, p.IndirectDst = h&indirectSrcFlag != 0, h&indirectDstFlag != 0
		}
	}
	if p.Kind == KindMulticast {
		p.NPD = h&npdFlag != 0
	}
	p.Compact = p.Kind != KindCopyWaitSignal || d == GFX1250
	if p.Kind != KindSwap || d == GFX1250 {
		p.HasWait, p.HasSignal = h&waitFlag != 0, h&signalFlag != 0
	}
	w, s := p.blocks()
	at := 4
	if w {
		p.Wait = WaitBlock{Func: CompareFunc(le.Uint32(b[at:]) & 7), Addr: le.Uint64(b[at+4:]) &^ 7,
			Ref: le.Uint64(b[at+12:]), Mask: le.Uint64(b[at+20:])}
		at += 28
	}
	p.Count = le.Uint32(b[at:]) & (1<<30 - 1)
	param := le.Uint32(b[at+4:])
	p.DstScope, p.SrcScope = uint8(param>>18&3), uint8(param>>26&3)
	p.Src = le.Uint64(b[at+8:])
	at += 16
	if p.Kind == KindMulticast {
		nd := int(param&(MaxMulticastDsts-1)) + 1
		for i := 0; i < nd; i++ {
			p.Dsts = append(p.Dsts, le.Uint64(b[at:]))
			at += 8
		}
		p.Dst = p.Dsts[0]
	} else {
		p.Dst = le.Uint64(b[at:])
		at += 8
	}
	if s {
		p.Signal = SignalBlock{Op: AtomicOp(le.Uint32(b[at:]) & 0x7f), Addr: le.Uint64(b[at+4:]) &^ 7, Data: le.Uint64(b[at+12:])}
	}
}

func (p *Packet) fusedString(s *strings.Builder) {
	if p.IndirectSrc || p.IndirectDst {
		s.WriteString(" indirect")
	}
	if p.HasWait {
		s.WriteString(" wait mem64[" + hex(p.Wait.Addr) + "] & " + hex(p.Wait.Mask) + " " + p.Wait.Func.String() + " " + strconv.FormatUint(p.Wait.Ref, 10) + ";")
	}
	s.WriteString(" " + strconv.FormatUint(p.CopyBytes(), 10) + " B src=" + hex(p.Src))
	switch p.Kind {
	case KindMulticast:
		s.WriteString(" dsts=" + strconv.Itoa(len(p.Dsts)) + " [")
		for i, d := range p.Dsts {
			if i == 4 {
				s.WriteString(" ...")
				break
			}
			if i > 0 {
				s.WriteByte(' ')
			}
			s.WriteString(hex(d))
		}
		s.WriteByte(']')
	case KindSwap:
		s.WriteString(" <-> " + hex(p.Dst))
	default:
		s.WriteString(" dst=" + hex(p.Dst))
	}
	if p.HasSignal {
		s.WriteString("; signal " + p.Signal.Op.String() + " [" + hex(p.Signal.Addr) + "] " + hex(p.Signal.Data))
	}
}

// Eval64 is Eval for the fused packets' 64-bit wait compare.
func (f CompareFunc) Eval64(v, ref uint64) bool {
	switch f {
	case CmpAlways:
		return true
	case CmpLT:
		return v < ref
	case CmpLE:
		return v <= ref
	case CmpEQ:
		return v == ref
	case CmpNE:
		return v != ref
	case CmpGE:
		return v >= ref
	case CmpGT:
		return v > ref
	}
	return false
}
