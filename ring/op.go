package ring

import "strconv"

// Dialect selects the encoding details that differ between gfx9 parts.
type Dialect uint8

const (
	// GFX94x is gfx94x/gfx950 (MI300, MI355X): 30-bit copy count. Default.
	GFX94x Dialect = iota
	// GFX9Legacy is gfx9 before gfx94x: 22-bit copy count.
	GFX9Legacy
	// GFX950 is gfx950 (MI350X/MI355X, SDMA OSS 7.0): GFX94x plus the
	// 19-dword COPY_LINEAR_WAIT_SIGNAL (fused.go).
	GFX950
	// GFX1250 is gfx1250: GFX950's packets in their compact, variable-length
	// form (absent wait and signal blocks take no dwords), plus
	// COPY_LINEAR_MULTICAST, the wait/signal swap and indirect copies.
	GFX1250

	numDialects
)

// String names the dialect.
func (d Dialect) String() string {
	switch d {
	case GFX94x:
		return "gfx94x"
	case GFX9Legacy:
		return "gfx9-legacy"
	case GFX950:
		return "gfx950"
	case GFX1250:
		return "gfx1250"
	}
	return "DIALECT_" + strconv.Itoa(int(d))
}

// copyCountMask is the width of the COPY (and CONST_FILL) count field.
func (d Dialect) copyCountMask() uint32 {
	if d == GFX9Legacy {
		return 1<<22 - 1
	}
	return 1<<30 - 1
}

// Op is the SDMA opcode, DW0 bits 7:0.
type Op uint8

// Opcodes from Linux vega10_sdma_pkt_open.h (GCR from the gfx10+ headers).
const (
	OpNOP       Op = 0
	OpCopy      Op = 1
	OpWrite     Op = 2
	OpIndirect  Op = 4
	OpFence     Op = 5
	OpTrap      Op = 6
	OpSem       Op = 7
	OpPoll      Op = 8
	OpCondExe   Op = 9
	OpAtomic    Op = 10
	OpConstFill Op = 11
	OpPTEPDE    Op = 12
	OpTimestamp Op = 13
	OpSRBMWrite Op = 14
	OpPreExe    Op = 15
	OpDummyTrap Op = 16
	OpGCR       Op = 17
)

var opNames = [...]string{
	OpNOP:       "NOP",
	OpCopy:      "COPY",
	OpWrite:     "WRITE",
	OpIndirect:  "INDIRECT",
	OpFence:     "FENCE",
	OpTrap:      "TRAP",
	OpSem:       "SEM",
	OpPoll:      "POLL_REGMEM",
	OpCondExe:   "COND_EXE",
	OpAtomic:    "ATOMIC",
	OpConstFill: "CONST_FILL",
	OpPTEPDE:    "PTEPDE",
	OpTimestamp: "TIMESTAMP",
	OpSRBMWrite: "SRBM_WRITE",
	OpPreExe:    "PRE_EXE",
	OpDummyTrap: "DUMMY_TRAP",
	OpGCR:       "GCR",
}

// String gives the opcode name, or "OP_0x3f" for an unknown opcode.
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "OP_0x" + strconv.FormatUint(uint64(o), 16)
}

// Kind is what the decoder recognised.
type Kind uint8

const (
	KindNop            Kind = iota
	KindCopy                // COPY_LINEAR, 7 DW
	KindBroadcastCopy       // COPY linear with DW0 bit 27, 9 DW
	KindWrite               // WRITE linear, 5+count DW
	KindFence               // 4 DW
	KindTrap                // 2 DW
	KindPoll                // POLL_REGMEM, 6 DW
	KindAtomic              // 8 DW
	KindTimestamp           // 3 DW
	KindConstFill           // 5 DW
	KindCopyWaitSignal      // COPY_LINEAR_WAIT_SIGNAL: 19 DW on gfx950, 7..19 DW compact on gfx1250 (fused.go)
	KindMulticast           // COPY_LINEAR_MULTICAST, gfx1250: 5+2N DW plus optional wait/signal blocks
	KindSwap                // COPY_LINEAR_SWAP: 7 DW, plus optional wait/signal blocks on gfx1250

	// NumKinds is the number of packet kinds: arrays indexed by Kind (a
	// per-kind counter, say) are sized with it.
	NumKinds
)

const numKinds = NumKinds

var kindNames = [numKinds]string{
	KindNop:            "NOP",
	KindCopy:           "COPY_LINEAR",
	KindBroadcastCopy:  "COPY_BROADCAST",
	KindWrite:          "WRITE_LINEAR",
	KindFence:          "FENCE",
	KindTrap:           "TRAP",
	KindPoll:           "POLL_REGMEM",
	KindAtomic:         "ATOMIC",
	KindTimestamp:      "TIMESTAMP",
	KindConstFill:      "CONST_FILL",
	KindCopyWaitSignal: "COPY_LINEAR_WAIT_SIGNAL",
	KindMulticast:      "COPY_LINEAR_MULTICAST",
	KindSwap:           "COPY_LINEAR_SWAP",
}

var kindOps = [numKinds]Op{
	KindNop:            OpNOP,
	KindCopy:           OpCopy,
	KindBroadcastCopy:  OpCopy,
	KindWrite:          OpWrite,
	KindFence:          OpFence,
	KindTrap:           OpTrap,
	KindPoll:           OpPoll,
	KindAtomic:         OpAtomic,
	KindTimestamp:      OpTimestamp,
	KindConstFill:      OpConstFill,
	KindCopyWaitSignal: OpCopy,
	KindMulticast:      OpCopy,
	KindSwap:           OpCopy,
}

// String gives the packet name used in reports.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "KIND_" + strconv.Itoa(int(k))
}

// Op is the opcode that carries this kind of packet. Unknown kinds give
// OpNOP.
func (k Kind) Op() Op {
	if k < numKinds {
		return kindOps[k]
	}
	return OpNOP
}

// CompareFunc is the POLL_REGMEM compare code, DW0 bits 30:28.
type CompareFunc uint8

const (
	CmpAlways CompareFunc = 0
	CmpLT     CompareFunc = 1
	CmpLE     CompareFunc = 2
	CmpEQ     CompareFunc = 3
	CmpNE     CompareFunc = 4
	CmpGE     CompareFunc = 5
	CmpGT     CompareFunc = 6
)

// Eval reports whether v <f> ref holds as an unsigned 32-bit compare. The
// caller applies the poll mask to v first. Invalid codes (7 is reserved)
// never hold.
func (f CompareFunc) Eval(v, ref uint32) bool {
	return f.Eval64(uint64(v), uint64(ref)) // zero-extended, an unsigned compare is the same
}

var cmpNames = [...]string{"always", "<", "<=", "==", "!=", ">=", ">"}

// String gives the operator, e.g. "==", or "always".
func (f CompareFunc) String() string {
	if int(f) < len(cmpNames) {
		return cmpNames[f]
	}
	return "FUNC_" + strconv.Itoa(int(f))
}

// AtomicOp is the ATOMIC packet's operation, DW0 bits 31:25. The codes are
// the gfx9 TC_OP encoding: bit 5 selects 64-bit, bit 6 selects the
// no-return form, bits 4:0 the operation.
type AtomicOp uint8

// The constants are named AtomicOpXxx because AtomicAdd64 is the packet
// constructor.
const (
	AtomicOpSwap32    AtomicOp = 0x07
	AtomicOpCmpSwap32 AtomicOp = 0x08
	AtomicOpAdd32     AtomicOp = 0x0f // MORI SDMA_ATOMIC_ADD32
	AtomicOpSub32     AtomicOp = 0x10
	AtomicOpSMin32    AtomicOp = 0x11
	AtomicOpUMin32    AtomicOp = 0x12
	AtomicOpSMax32    AtomicOp = 0x13
	AtomicOpUMax32    AtomicOp = 0x14
	AtomicOpAnd32     AtomicOp = 0x15
	AtomicOpOr32      AtomicOp = 0x16
	AtomicOpXor32     AtomicOp = 0x17
	AtomicOpInc32     AtomicOp = 0x18
	AtomicOpDec32     AtomicOp = 0x19

	AtomicOpSwap64    AtomicOp = 0x27
	AtomicOpCmpSwap64 AtomicOp = 0x28
	AtomicOpAdd64     AtomicOp = 0x2f // 47, SDMA_ATOMIC_ADD64: the CCO signal and ROCr decrement
	AtomicOpSub64     AtomicOp = 0x30
	AtomicOpSMin64    AtomicOp = 0x31
	AtomicOpUMin64    AtomicOp = 0x32
	AtomicOpSMax64    AtomicOp = 0x33
	AtomicOpUMax64    AtomicOp = 0x34
	AtomicOpAnd64     AtomicOp = 0x35
	AtomicOpOr64      AtomicOp = 0x36
	AtomicOpXor64     AtomicOp = 0x37
	AtomicOpInc64     AtomicOp = 0x38
	AtomicOpDec64     AtomicOp = 0x39

	// No-return forms are the returning code | 0x40.
	AtomicOpAdd32NoRtn AtomicOp = 0x4f
	AtomicOpAdd64NoRtn AtomicOp = 0x6f // 111, tried by MORI as ADD64_NO_RETURN

	atomicWide  = 0x20
	atomicNoRtn = 0x40
)

// atomicBase names the operation in bits 4:0; "" marks codes that are not
// atomics (reads, writes, cache operations, reserved codes).
var atomicBase = [32]string{
	0x01: "FCMPSWAP",
	0x02: "FMIN",
	0x03: "FMAX",
	0x07: "SWAP",
	0x08: "CMPSWAP",
	0x09: "FCMPSWAP_FLUSH_DENORM",
	0x0a: "FMIN_FLUSH_DENORM",
	0x0b: "FMAX_FLUSH_DENORM",
	0x0f: "ADD",
	0x10: "SUB",
	0x11: "SMIN",
	0x12: "UMIN",
	0x13: "SMAX",
	0x14: "UMAX",
	0x15: "AND",
	0x16: "OR",
	0x17: "XOR",
	0x18: "INC",
	0x19: "DEC",
}

// Valid reports whether a names an atomic memory operation.
func (a AtomicOp) Valid() bool { return a < 0x80 && atomicBase[a&0x1f] != "" }

// Width is the operand size in bytes: 8 for 64-bit ops, 4 for 32-bit ops, 0
// for codes that are not atomics.
func (a AtomicOp) Width() int {
	switch {
	case !a.Valid():
		return 0
	case a&atomicWide != 0:
		return 8
	}
	return 4
}

// Returns reports whether the op is the returning (RTN) form. SDMA discards
// the returned value either way.
func (a AtomicOp) Returns() bool { return a.Valid() && a&atomicNoRtn == 0 }

// String gives e.g. "ADD64", "CMPSWAP32", "ADD64_NORTN", or "ATOMIC_OP_n"
// for codes that are not atomics.
func (a AtomicOp) String() string {
	if !a.Valid() {
		return "ATOMIC_OP_" + strconv.Itoa(int(a))
	}
	s := atomicBase[a&0x1f]
	if a&atomicWide != 0 {
		s += "64"
	} else {
		s += "32"
	}
	if a&atomicNoRtn != 0 {
		s += "_NORTN"
	}
	return s
}
