package ring

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dwords(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func fromDwords(dw ...uint32) []byte {
	b := make([]byte, 0, 4*len(dw))
	for _, v := range dw {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

func TestConstructorGolden(t *testing.T) {
	tests := []struct {
		name string
		p    Packet
		want []uint32
	}{
		{"copy", Copy(0x200000000, 0x100000040, 64),
			[]uint32{0x00000001, 63, 0, 0x00000040, 0x1, 0x00000000, 0x2}},
		{"copy max", Copy(0x2000, 0x1000, MaxCopyBytes),
			[]uint32{0x00000001, 0x3fffffdf, 0, 0x1000, 0, 0x2000, 0}},
		{"copy 2^30", Copy(0x2000, 0x1000, 1<<30),
			[]uint32{0x00000001, 0x3fffffff, 0, 0x1000, 0, 0x2000, 0}},
		{"broadcast", Broadcast(0x7f0000003020, 0x7e0000000020, 0x1000, 4096),
			[]uint32{0x08000001, 4095, 0, 0x1000, 0, 0x3020, 0x7f00, 0x20, 0x7e00}},
		{"atomic add64", AtomicAdd64(0x7f0000001008, 1),
			[]uint32{0x5E00000A, 0x1008, 0x7f00, 1, 0, 0, 0, 0}},
		{"atomic dec (ROCr)", AtomicAdd64(0x1000, ^uint64(0)),
			[]uint32{0x5E00000A, 0x1000, 0, 0xffffffff, 0xffffffff, 0, 0, 0}},
		{"fence", Fence(0x123456780, 0xdeadbeef),
			[]uint32{0x00000005, 0x23456780, 0x1, 0xdeadbeef}},
		{"trap", Trap(0x0abcdef1),
			[]uint32{0x00000006, 0x0abcdef1}},
		{"trap ctx masked", Trap(0xfabcdef1),
			[]uint32{0x00000006, 0x0abcdef1}},
		{"timestamp global", TimestampGlobal(0x7f0000000020),
			[]uint32{0x0000020D, 0x20, 0x7f00}},
		{"nop 0", Nop(0), []uint32{0x00000000}},
		{"nop 1", Nop(1), []uint32{0x00010000, 0}},
		{"nop 3", Nop(3), []uint32{0x00030000, 0, 0, 0}},
		{"write", WriteLinear(0x100000008, []uint32{0xa, 0xb}),
			[]uint32{0x00000002, 0x8, 0x1, 1, 0xa, 0xb}},
		{"write empty", WriteLinear(0x8, nil),
			[]uint32{0x00000002, 0x8, 0, 0, 0}},
		{"const fill", ConstFill(0x4000, 0x5a5a5a5a, 4095),
			[]uint32{0x8000000B, 0x4000, 0, 0x5a5a5a5a, 4095}},
	}
	for f := CmpAlways; f <= CmpGT; f++ {
		tests = append(tests, struct {
			name string
			p    Packet
			want []uint32
		}{"poll " + f.String(), Poll(0x7f0000000040, 1, 0xffffffff, f, 4, RetryForever),
			[]uint32{0x80000008 | uint32(f)<<28, 0x40, 0x7f00, 1, 0xffffffff, 0x0FFF0004}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.p.AppendTo(nil)
			assert.Equal(t, tt.want, dwords(b))
			assert.Equal(t, tt.want[0], tt.p.Header, "constructor Header")
			assert.Equal(t, len(b), tt.p.Size())
		})
	}
	// The spec's worked example: ROCr's standard poll.
	p := Poll(0, 0, 0xffffffff, CmpEQ, 4, RetryForever)
	assert.Equal(t, uint32(0xB0000008), p.Header)
}

func TestAppendToIgnoresHeaderField(t *testing.T) {
	p := Copy(0x2000, 0x1000, 8)
	p.Header = 0xffffffff
	assert.Equal(t, uint32(1), dwords(p.AppendTo(nil))[0])
	bad := Packet{Kind: 200}
	assert.Empty(t, bad.AppendTo(nil))
	assert.Equal(t, 0, bad.Size())
}

func TestSizes(t *testing.T) {
	tests := []struct {
		p    Packet
		size int
	}{
		{Copy(0, 0, 1), 28}, {Broadcast(0, 0, 0, 1), 36}, {AtomicAdd64(0, 1), 32},
		{Poll(0, 0, 0, CmpEQ, 4, 1), 24}, {Fence(0, 0), 16}, {Trap(0), 8},
		{TimestampGlobal(0), 12}, {Nop(0), 4}, {Nop(7), 32},
		{WriteLinear(0, make([]uint32, 3)), 28}, {WriteLinear(0, make([]uint32, 4)), 32}, {ConstFill(0, 0, 0), 20},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.size, tt.p.Size(), tt.p.Kind.String())
	}
	c := Copy(0, 0, 4096)
	assert.Equal(t, uint64(4096), c.CopyBytes())
	f := Fence(0, 0)
	assert.Zero(t, f.CopyBytes())
}

// handPackets are packets no constructor builds, to cover every field.
func handPackets() []Packet {
	ps := []Packet{
		{Kind: KindPoll, Addr: 0x1234, Ref: 7, Mask: 0xff, Func: CmpNE, HDPFlush: true, Interval: 10, Retry: 3},
		{Kind: KindAtomic, AtomicOp: AtomicOpCmpSwap64, Loop: true, LoopInterval: 0x1fff, Addr: 0x8, Data: 2, Cmp: 1},
		{Kind: KindAtomic, AtomicOp: 0x7f, Addr: 0x8},
		{Kind: KindTimestamp, SubOp: TimestampSet, Data: 0x1122334455667788},
		{Kind: KindTimestamp, SubOp: TimestampGetLocal, Addr: 0x7f0000000040},
		{Kind: KindConstFill, FillSize: 0, Dst: 0x10, Data: 0xab, Count: 0x3fffffff},
		{Kind: KindNop, Count: nopCountMask},
	}
	for i := range ps {
		ps[i].Header = ps[i].header()
	}
	return ps
}

func allPackets() []Packet {
	ps := []Packet{
		Copy(0x200000000, 0x100000040, 64),
		Broadcast(0x3000, 0x4000, 0x1000, 100),
		WriteLinear(0x8, []uint32{1, 2, 3, 4, 5}),
		Fence(0x10, 0xffffffff),
		Trap(0xfffffff),
		Poll(0x40, 1, 0xffffffff, CmpGE, 4, RetryForever),
		AtomicAdd64(0x1008, 1),
		TimestampGlobal(0x20),
		ConstFill(0x4000, 0xffffffff, 15),
		Nop(2),
	}
	ps = append(ps, fusedPackets()...)
	return append(ps, handPackets()...)
}

// dialectOf is a dialect that has packet p's layout.
func dialectOf(p *Packet) Dialect {
	switch {
	case p.Kind == KindMulticast, p.Compact && p.Kind == KindCopyWaitSignal, p.Kind == KindSwap && (p.HasWait || p.HasSignal):
		return GFX1250
	case p.Kind == KindCopyWaitSignal:
		return GFX950
	}
	return GFX94x
}

func TestRoundTripEveryKind(t *testing.T) {
	seen := map[Kind]bool{}
	for _, p := range allPackets() {
		t.Run(p.String(), func(t *testing.T) {
			b := p.AppendTo(nil)
			require.Len(t, b, p.Size())
			var q Packet
			n, err := Decode(&q, b, dialectOf(&p))
			require.NoError(t, err)
			require.Equal(t, len(b), n)
			assert.Equal(t, p, q)
			seen[q.Kind] = true
		})
	}
	for k := KindNop; k < numKinds; k++ {
		assert.True(t, seen[k], "kind %v not covered", k)
	}
}

// randPacket builds a random packet of kind k with every field in range.
func randPacket(r *rand.Rand, k Kind) Packet {
	p := Packet{Kind: k}
	switch k {
	case KindNop:
		p.Count = uint32(r.IntN(64))
	case KindCopy, KindBroadcastCopy:
		p.Count = r.Uint32() & (1<<30 - 1)
		p.Src, p.Dst = r.Uint64(), r.Uint64()
		if k == KindBroadcastCopy {
			p.Dst2 = r.Uint64()
		}
	case KindWrite:
		p.Dst = r.Uint64()
		p.Count = uint32(r.IntN(16))
		for i := 0; i <= int(p.Count); i++ {
			p.Payload = append(p.Payload, r.Uint32())
		}
	case KindFence:
		p.Addr, p.Data = r.Uint64(), uint64(r.Uint32())
	case KindTrap:
		p.Context = r.Uint32() & trapCtxMask
	case KindPoll:
		p.Addr, p.Ref, p.Mask = r.Uint64(), r.Uint32(), r.Uint32()
		p.Func = CompareFunc(r.IntN(7))
		p.MemPoll, p.HDPFlush = r.IntN(2) == 1, r.IntN(2) == 1
		p.Interval, p.Retry = uint16(r.Uint32()), uint16(r.Uint32())&retryMask
	case KindAtomic:
		p.AtomicOp = AtomicOp(r.IntN(128))
		p.Loop = r.IntN(2) == 1
		p.LoopInterval = uint16(r.Uint32()) & loopIntMask
		p.Addr, p.Data, p.Cmp = r.Uint64(), r.Uint64(), r.Uint64()
	case KindTimestamp:
		p.SubOp = uint8(r.IntN(3))
		if p.SubOp == TimestampSet {
			p.Data = r.Uint64()
		} else {
			p.Addr = r.Uint64() &^ 7
		}
	case KindConstFill:
		p.FillSize = uint8(r.IntN(4))
		p.Dst, p.Data, p.Count = r.Uint64(), uint64(r.Uint32()), r.Uint32()&(1<<30-1)
	case KindCopyWaitSignal, KindMulticast, KindSwap:
		return randFused(r, k)
	}
	p.Header = p.header()
	return p
}

func TestRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q Packet
	for i := 0; i < 20000; i++ {
		p := randPacket(r, Kind(r.IntN(int(numKinds))))
		b := p.AppendTo(nil)
		require.Len(t, b, p.Size())
		n, err := Decode(&q, b, dialectOf(&p))
		require.NoError(t, err, p.String())
		require.Equal(t, len(b), n)
		if p.Kind != KindWrite {
			q.Payload = nil // q is reused: Decode keeps Payload's capacity
		}
		if p.Kind != KindMulticast {
			q.Dsts = nil // likewise
		}
		require.Equal(t, p, q)
	}
}

func TestDecodeReusesPayload(t *testing.T) {
	w := WriteLinear(0, []uint32{1, 2, 3})
	b := w.AppendTo(nil)
	var p Packet
	_, err := Decode(&p, b, GFX94x)
	require.NoError(t, err)
	before := &p.Payload[0]
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Decode(&p, b, GFX94x); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	assert.Same(t, before, &p.Payload[0])
	assert.Equal(t, []uint32{1, 2, 3}, p.Payload)
	// A copy decoded after a write keeps the capacity but exposes nothing.
	c := Copy(1, 2, 3)
	_, err = Decode(&p, c.AppendTo(nil), GFX94x)
	require.NoError(t, err)
	assert.Empty(t, p.Payload)
}

func TestWriteLinearCopiesData(t *testing.T) {
	data := []uint32{1, 2}
	p := WriteLinear(0, data)
	data[0] = 99
	assert.Equal(t, []uint32{1, 2}, p.Payload)
}

func TestPacketString(t *testing.T) {
	tests := []struct {
		p    Packet
		want string
	}{
		{Copy(0x200000000, 0x100000040, 64), "COPY_LINEAR 64 B src=0x100000040 dst=0x200000000"},
		{Broadcast(0x3000, 0x4000, 0x1000, 32), "COPY_BROADCAST 32 B src=0x1000 dst=0x3000 dst2=0x4000"},
		{Poll(0x7f0000000040, 1, 0xffffffff, CmpEQ, 4, RetryForever),
			"POLL_REGMEM mem[0x7f0000000040] & 0xffffffff == 1 interval=4 retry=forever"},
		{Poll(0x40, 5, 0xff, CmpGE, 8, 3), "POLL_REGMEM mem[0x40] & 0xff >= 5 interval=8 retry=3"},
		{handPackets()[0], "POLL_REGMEM reg[0x1234] & 0xff != 7 interval=10 retry=3 hdp_flush"},
		{AtomicAdd64(0x7f0000001008, 1), "ATOMIC ADD64 [0x7f0000001008] += 1"},
		{AtomicAdd64(0x1000, ^uint64(0)), "ATOMIC ADD64 [0x1000] -= 1"},
		{handPackets()[1], "ATOMIC CMPSWAP64 [0x8] src=0x2 cmp=0x1 loop interval=8191"},
		{Fence(0x10, 7), "FENCE [0x10] = 0x7"},
		{Trap(0x42), "TRAP ctx=0x42"},
		{TimestampGlobal(0x20), "TIMESTAMP get_global -> [0x20]"},
		{handPackets()[3], "TIMESTAMP set 0x1122334455667788"},
		{Nop(3), "NOP skip=3"},
		{WriteLinear(0x8, []uint32{1, 2}), "WRITE_LINEAR 2 DW dst=0x8 [0x1 0x2]"},
		{WriteLinear(0x8, []uint32{1, 2, 3, 4, 5}), "WRITE_LINEAR 5 DW dst=0x8 [0x1 0x2 0x3 0x4 ...]"},
		{ConstFill(0x10, 0xab, 3), "CONST_FILL dst=0x10 data=0xab count=3 fillsize=2"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.p.String())
	}
}

func TestNames(t *testing.T) {
	assert.Equal(t, "NOP", OpNOP.String())
	assert.Equal(t, "COPY", OpCopy.String())
	assert.Equal(t, "POLL_REGMEM", OpPoll.String())
	assert.Equal(t, "GCR", OpGCR.String())
	assert.Equal(t, "OP_0x3f", Op(0x3f).String())
	assert.Equal(t, "OP_0x3", Op(3).String())

	names := []string{"NOP", "COPY_LINEAR", "COPY_BROADCAST", "WRITE_LINEAR", "FENCE", "TRAP",
		"POLL_REGMEM", "ATOMIC", "TIMESTAMP", "CONST_FILL", "COPY_LINEAR_WAIT_SIGNAL", "COPY_LINEAR_MULTICAST", "COPY_LINEAR_SWAP"}
	ops := []Op{OpNOP, OpCopy, OpCopy, OpWrite, OpFence, OpTrap, OpPoll, OpAtomic, OpTimestamp, OpConstFill, OpCopy, OpCopy, OpCopy}
	require.Len(t, names, int(NumKinds))
	for k := KindNop; k < numKinds; k++ {
		assert.Equal(t, names[k], k.String())
		assert.Equal(t, ops[k], k.Op())
	}

	assert.Equal(t, "ADD64", AtomicOpAdd64.String())
	assert.Equal(t, AtomicOp(47), AtomicOpAdd64)
	assert.Equal(t, "CMPSWAP32", AtomicOpCmpSwap32.String())
	assert.Equal(t, "ADD64_NORTN", AtomicOpAdd64NoRtn.String())
	assert.Equal(t, "ATOMIC_OP_0", AtomicOp(0).String())
	assert.Equal(t, "ATOMIC_OP_32", AtomicOp(32).String())
	assert.Equal(t, 8, AtomicOpAdd64.Width())
	assert.Equal(t, 4, AtomicOpAdd32.Width())
	assert.Equal(t, 0, AtomicOp(0x20).Width())
	assert.True(t, AtomicOpAdd64.Returns())
	assert.False(t, AtomicOpAdd64NoRtn.Returns())

	assert.Equal(t, "gfx94x", GFX94x.String())
	assert.Equal(t, "gfx9-legacy", GFX9Legacy.String())
	assert.Equal(t, "gfx950", GFX950.String())
	assert.Equal(t, "gfx1250", GFX1250.String())
}

func TestCompareFunc(t *testing.T) {
	tests := []struct {
		f       CompareFunc
		str     string
		lt, eq  bool // Eval(1,2), Eval(2,2)
		gt, big bool // Eval(3,2), Eval(0xffffffff, 1) (unsigned)
	}{
		{CmpAlways, "always", true, true, true, true},
		{CmpLT, "<", true, false, false, false},
		{CmpLE, "<=", true, true, false, false},
		{CmpEQ, "==", false, true, false, false},
		{CmpNE, "!=", true, false, true, true},
		{CmpGE, ">=", false, true, true, true},
		{CmpGT, ">", false, false, true, true},
		{7, "FUNC_7", false, false, false, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.str, tt.f.String())
		assert.Equal(t, tt.lt, tt.f.Eval(1, 2), "%v lt", tt.f)
		assert.Equal(t, tt.eq, tt.f.Eval(2, 2), "%v eq", tt.f)
		assert.Equal(t, tt.gt, tt.f.Eval(3, 2), "%v gt", tt.f)
		assert.Equal(t, tt.big, tt.f.Eval(0xffffffff, 1), "%v unsigned", tt.f)
	}
}
