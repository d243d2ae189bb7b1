package ring

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	tWait   = WaitBlock{Func: CmpGE, Addr: 0x7f0000001000, Ref: 5, Mask: ^uint64(0)}
	tSignal = SignalBlock{Op: AtomicOpAdd64NoRtn, Addr: 0x7f0000002008, Data: 1}
)

func mustMulticast(t testing.TB, dsts []uint64, src, bytes uint64, w *WaitBlock, s *SignalBlock) Packet {
	p, err := Multicast(dsts, src, bytes, w, s)
	require.NoError(t, err)
	return p
}

// fusedPackets covers every form of the packets of fused.go.
func fusedPackets() []Packet {
	mc := func(dsts []uint64, w *WaitBlock, s *SignalBlock) Packet {
		p, err := Multicast(dsts, 0x1000, 64, w, s)
		if err != nil {
			panic(err)
		}
		return p
	}
	ind := Packet{Kind: KindCopyWaitSignal, Compact: true, IndirectSrc: true, IndirectDst: true, Count: 63, Src: 0x10, Dst: 0x20, NPD: true, SrcScope: 2, DstScope: 1}
	ind.Header = ind.header()
	return []Packet{
		CopyWaitSignal(GFX950, 0x7f0000200000, 0x7f0000100000, 4096, &tWait, &tSignal),
		CopyWaitSignal(GFX950, 0x2000, 0x1000, 64, nil, &tSignal),
		CopyWaitSignal(GFX950, 0x2000, 0x1000, 64, &tWait, nil),
		CopyWaitSignal(GFX1250, 0x2000, 0x1000, 64, &tWait, &tSignal),
		CopyWaitSignal(GFX1250, 0x2000, 0x1000, 64, nil, &tSignal),
		CopyWaitSignal(GFX1250, 0x2000, 0x1000, 64, &tWait, nil),
		ind,
		mc([]uint64{0x2000}, nil, nil),
		mc([]uint64{0x2000, 0x3000, 0x4000}, nil, nil),
		mc([]uint64{0x2000, 0x3000}, &tWait, &tSignal),
		mc([]uint64{0x2000, 0x3000}, nil, &tSignal),
		Swap(GFX950, 0x1000, 0x2000, 128, nil, nil),
		Swap(GFX1250, 0x1000, 0x2000, 128, &tWait, &tSignal),
	}
}

func randFused(r *rand.Rand, k Kind) Packet {
	var w *WaitBlock
	var s *SignalBlock
	if r.IntN(2) == 1 {
		w = &WaitBlock{Func: CompareFunc(r.IntN(7)), Addr: r.Uint64(), Ref: r.Uint64(), Mask: r.Uint64()}
	}
	if r.IntN(2) == 1 || (w == nil && k == KindCopyWaitSignal) {
		s = &SignalBlock{Op: AtomicOp(r.IntN(128)), Addr: r.Uint64(), Data: r.Uint64()}
	}
	bytes := uint64(r.Uint32()&(1<<30-1)) + 1
	switch k {
	case KindMulticast:
		dsts := make([]uint64, 1+r.IntN(8))
		for i := range dsts {
			dsts[i] = r.Uint64()
		}
		p, err := Multicast(dsts, r.Uint64(), bytes, w, s)
		if err != nil {
			panic(err)
		}
		return p
	case KindSwap:
		d := GFX950
		if r.IntN(2) == 1 {
			d = GFX1250
		}
		return Swap(d, r.Uint64(), r.Uint64(), bytes, w, s)
	}
	d := GFX950
	if r.IntN(2) == 1 {
		d = GFX1250
	}
	return CopyWaitSignal(d, r.Uint64(), r.Uint64(), bytes, w, s)
}

func fusedSeeds() map[string][]byte {
	// fusedPackets are in allPackets, so fuzzSeeds has them (kind-NN).
	seeds := map[string][]byte{}
	seeds["multicast-1024"] = func() []byte {
		dsts := make([]uint64, MaxMulticastDsts)
		for i := range dsts {
			dsts[i] = uint64(i) << 12
		}
		p, _ := Multicast(dsts, 0, 32, nil, nil)
		return p.AppendTo(nil)
	}()
	seeds["multicast-header-only"] = fromDwords(0xC0000A01, 0, 0)
	return seeds
}

// TestFusedGolden pins each new packet's dwords against the layouts written
// from the public headers (fused.go cites them).
func TestFusedGolden(t *testing.T) {
	tests := []struct {
		name string
		p    Packet
		want []uint32
	}{
		{"gfx950 wait+copy+signal (SDMA_PKT_COPY_LINEAR_WAIT_SIGNAL_MI4)",
			CopyWaitSignal(GFX950, 0x7f0000200000, 0x7f0000100000, 4096, &tWait, &tSignal),
			[]uint32{0xD0000001, 5, 0x00001000, 0x7f00, 5, 0, 0xffffffff, 0xffffffff,
				0xfff, 0x0C0C0000, 0x00100000, 0x7f00, 0x00200000, 0x7f00,
				0x6f, 0x00002008, 0x7f00, 1, 0}},
		{"gfx950 copy+signal keeps the zero wait block",
			CopyWaitSignal(GFX950, 0x2000, 0x1000, 64, nil, &tSignal),
			[]uint32{0x90000001, 0, 0, 0, 0, 0, 0, 0,
				63, 0x0C0C0000, 0x1000, 0, 0x2000, 0,
				0x6f, 0x00002008, 0x7f00, 1, 0}},
		{"gfx1250 compact copy+signal: DW1-7 absent",
			CopyWaitSignal(GFX1250, 0x2000, 0x1000, 64, nil, &tSignal),
			[]uint32{0x90000001, 63, 0x0C0C0000, 0x1000, 0, 0x2000, 0,
				0x6f, 0x00002008, 0x7f00, 1, 0}},
		{"gfx1250 compact wait+copy: DW14-18 absent",
			CopyWaitSignal(GFX1250, 0x2000, 0x1000, 64, &tWait, nil),
			[]uint32{0x50000001, 5, 0x00001000, 0x7f00, 5, 0, 0xffffffff, 0xffffffff,
				63, 0x0C0C0000, 0x1000, 0, 0x2000, 0}},
		{"gfx1250 multicast to 3 (num_of_destination = N-1, 5+2N dwords)",
			mustMulticast(t, []uint64{0x2000, 0x3000, 0x7f0000004000}, 0x1000, 64, nil, nil),
			[]uint32{0x00000A01, 63, 0x0C0C0002, 0x1000, 0, 0x2000, 0, 0x3000, 0, 0x4000, 0x7f00}},
		{"gfx1250 multicast wait+signal: dst pairs before the signal block",
			mustMulticast(t, []uint64{0x2000, 0x3000}, 0x1000, 64, &tWait, &tSignal),
			[]uint32{0xC0000A01, 5, 0x00001000, 0x7f00, 5, 0, 0xffffffff, 0xffffffff,
				63, 0x0C0C0001, 0x1000, 0, 0x2000, 0, 0x3000, 0,
				0x6f, 0x00002008, 0x7f00, 1, 0}},
		{"swap (SDMA_PKT_COPY_LINEAR_SWAP, sub_op 9)",
			Swap(GFX950, 0x1000, 0x2000, 128, nil, nil),
			[]uint32{0x00000901, 127, 0, 0x1000, 0, 0x2000, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.p.AppendTo(nil)
			assert.Equal(t, tt.want, dwords(b))
			assert.Equal(t, len(b), tt.p.Size())
			var q Packet
			n, err := Decode(&q, b, dialectOf(&tt.p))
			require.NoError(t, err)
			assert.Equal(t, len(b), n)
			assert.True(t, packetsEqual(&tt.p, &q), "%+v\n%+v", tt.p, q)
		})
	}
}

// TestFusedLengths: every compact form is exactly as long as its blocks.
func TestFusedLengths(t *testing.T) {
	for _, tt := range []struct {
		w, s bool
		n    int
	}{{false, false, 28}, {true, false, 56}, {false, true, 48}, {true, true, 76}} {
		var w *WaitBlock
		var s *SignalBlock
		if tt.w {
			w = &tWait
		}
		if tt.s {
			s = &tSignal
		}
		p := CopyWaitSignal(GFX1250, 0x2000, 0x1000, 64, w, s)
		assert.Equal(t, tt.n, p.Size(), "gfx1250 wait=%v signal=%v", tt.w, tt.s)
		if tt.w || tt.s {
			p = CopyWaitSignal(GFX950, 0x2000, 0x1000, 64, w, s)
			assert.Equal(t, 76, p.Size(), "gfx950 is fixed at 19 dwords")
		}
	}
	dsts := make([]uint64, MaxMulticastDsts)
	p := mustMulticast(t, dsts, 0, 32, &tWait, &tSignal)
	assert.Equal(t, 4*(1+7+4+2*MaxMulticastDsts+5), p.Size())
	b := p.AppendTo(nil)
	var q Packet
	n, err := Decode(&q, b, GFX1250)
	require.NoError(t, err)
	assert.Equal(t, len(b), n)
	assert.Len(t, q.Dsts, MaxMulticastDsts)

	_, err = Multicast(nil, 0, 1, nil, nil)
	assert.ErrorContains(t, err, "1..1024 destinations, got 0")
	_, err = Multicast(make([]uint64, MaxMulticastDsts+1), 0, 1, nil, nil)
	assert.ErrorContains(t, err, "got 1025")
}

// TestFusedByArchitecture: the same bytes mean different packets on each
// architecture, and a packet the architecture lacks is illegal, naming it.
func TestFusedByArchitecture(t *testing.T) {
	f950 := CopyWaitSignal(GFX950, 0x2000, 0x1000, 64, nil, &tSignal)
	fused950 := f950.AppendTo(nil)
	var p Packet
	n, err := Decode(&p, fused950, GFX950)
	require.NoError(t, err)
	assert.Equal(t, 76, n)
	assert.Equal(t, KindCopyWaitSignal, p.Kind)
	// gfx94x has no fused packet: the header's bits 30/31 are reserved and
	// the first 7 dwords are a COPY_LINEAR.
	n, err = Decode(&p, fused950, GFX94x)
	require.NoError(t, err)
	assert.Equal(t, 28, n)
	assert.Equal(t, KindCopy, p.Kind)
	// gfx1250 reads the same header as a compact packet: 12 dwords, whose
	// "signal" is the zero wait block's dwords (a producer that wrote the
	// gfx950 layout for gfx1250 gets what the engine would do with it).
	n, err = Decode(&p, fused950, GFX1250)
	require.NoError(t, err)
	assert.Equal(t, 48, n)

	mcp := mustMulticast(t, []uint64{0x2000, 0x3000}, 0x1000, 64, nil, nil)
	mc := mcp.AppendTo(nil)
	for _, d := range []Dialect{GFX94x, GFX950, GFX9Legacy} {
		_, err := Decode(&p, mc, d)
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrIllegal))
		assert.Contains(t, err.Error(), "COPY_LINEAR_MULTICAST: a gfx1250 packet, "+d.String()+" does not have it")
	}
	swp := Swap(GFX950, 0x1000, 0x2000, 128, nil, nil)
	sw := swp.AppendTo(nil)
	_, err = Decode(&p, sw, GFX9Legacy)
	assert.ErrorContains(t, err, "COPY_LINEAR_SWAP: gfx9-legacy does not have it")

	// gfx1250 reads a plain COPY_LINEAR's npd and scope fields.
	c := Copy(0x2000, 0x1000, 64)
	c.NPD, c.SrcScope, c.DstScope = true, 3, 3
	c.Header = c.header()
	b := c.AppendTo(nil)
	assert.Equal(t, []uint32{0x10000001, 63, 0x0C0C0000, 0x1000, 0, 0x2000, 0}, dwords(b))
	_, err = Decode(&p, b, GFX1250)
	require.NoError(t, err)
	assert.Equal(t, c, p)
	_, err = Decode(&p, b, GFX950)
	require.NoError(t, err)
	assert.False(t, p.NPD, "gfx950 leaves the copy's npd and scope bits reserved")
}

// TestFusedTruncated: a compact packet cut short asks for exactly its
// length; a multicast cut before its parameter dword asks for the bound.
func TestFusedTruncated(t *testing.T) {
	mp := mustMulticast(t, []uint64{1 << 12, 2 << 12, 3 << 12}, 0, 32, &tWait, nil)
	b := mp.AppendTo(nil)
	var p Packet
	for cut := 0; cut < len(b); cut += 4 {
		_, err := Decode(&p, b[:cut], GFX1250)
		require.Error(t, err, "cut %d", cut)
		var de *DecodeError
		require.True(t, errors.As(err, &de))
		assert.True(t, errors.Is(err, ErrTruncated))
		assert.Greater(t, de.Need, cut)
	}
	// Straddling the ring end decodes identically.
	r, err := New(Options{Size: 4096, Dialect: GFX1250})
	require.NoError(t, err)
	ptr := uint64(4096 - 20)
	r.Write(ptr, b)
	var q Packet
	n, err := r.DecodeAt(&q, ptr, uint64(len(b)))
	require.NoError(t, err)
	assert.Equal(t, len(b), n)
	_, err = Decode(&p, b, GFX1250)
	require.NoError(t, err)
	assert.True(t, packetsEqual(&p, &q))
}

func TestFusedString(t *testing.T) {
	p := CopyWaitSignal(GFX950, 0x2000, 0x1000, 64, &tWait, &tSignal)
	assert.Equal(t, "COPY_LINEAR_WAIT_SIGNAL wait mem64[0x7f0000001000] & 0xffffffffffffffff >= 5; 64 B src=0x1000 dst=0x2000; signal ADD64_NORTN [0x7f0000002008] 0x1", p.String())
	m := mustMulticast(t, []uint64{1, 2, 3, 4, 5}, 0x1000, 32, nil, nil)
	assert.Equal(t, "COPY_LINEAR_MULTICAST 32 B src=0x1000 dsts=5 [0x1 0x2 0x3 0x4 ...]", m.String())
	s := Swap(GFX950, 0x1000, 0x2000, 128, nil, nil)
	assert.Equal(t, "COPY_LINEAR_SWAP 128 B src=0x1000 <-> 0x2000", s.String())
	assert.True(t, CmpGE.Eval64(1<<40, 1<<40))
	assert.False(t, CmpLT.Eval64(1<<40, 1))
}
