package mlx5

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

// flat is a test memory: one byte slice from address 0, with every write
// recorded (address, bytes) in order.
type flat struct {
	b      []byte
	writes []write
}

type write struct {
	addr uint64
	b    []byte
}

func (m *flat) Read(addr uint64, dst []byte) error {
	if addr+uint64(len(dst)) > uint64(len(m.b)) {
		return fmt.Errorf("read past memory")
	}
	copy(dst, m.b[addr:])
	return nil
}

func (m *flat) Write(addr uint64, src []byte) error {
	if addr+uint64(len(src)) > uint64(len(m.b)) {
		return fmt.Errorf("write past memory")
	}
	copy(m.b[addr:], src)
	m.writes = append(m.writes, write{addr, append([]byte{}, src...)})
	return nil
}

func (m *flat) Atomic(addr uint64, width int, f func(uint64) uint64) (uint64, error) {
	old := binary.LittleEndian.Uint64(m.b[addr:])
	binary.LittleEndian.PutUint64(m.b[addr:], f(old))
	return old, nil
}

// The test's layout: GPU 0's region (key 1) at 0x2000 and GPU 1's (key 2)
// at 0x9000, 4 KiB each, addressed from 0; the send queue, doorbell
// record and CQ below them.
const (
	tSQ, tDB, tCQ = 0x400, 0x40, 0x80
	tLocal        = 0x2000
	tRemote       = 0x9000
)

func keys(key uint32, gpu int, off, n uint64) (uint64, error) {
	base := map[uint32]struct {
		gpu  int
		base uint64
	}{1: {0, tLocal}, 2: {1, tRemote}}
	r, ok := base[key]
	if !ok || r.gpu != gpu || off+n > 4096 {
		return 0, fmt.Errorf("no region %#x on GPU %d for [%#x, %#x)", key, gpu, off, off+n)
	}
	return r.base + off, nil
}

type rig struct {
	s     *sim.Sim
	m     *flat
	q     *QP
	fails []error
}

func newRig(t *testing.T, cqes uint32, collapsed bool) *rig {
	t.Helper()
	s := sim.New(sim.Config{Seed: 1})
	net, err := nic.New(s, nic.DefaultModel(), 2, 0, func(i int) string { return fmt.Sprint("nic", i) })
	require.NoError(t, err)
	link, err := net.NewQP(0, 1, "link")
	require.NoError(t, err)
	back, err := net.NewQP(1, 0, "back")
	require.NoError(t, err)
	r := &rig{s: s, m: &flat{b: make([]byte, 0x10000)}}
	for i := range CQESize * int(cqes) {
		r.m.b[tCQ+i] = 0xff
	}
	r.q, err = New(s, Config{Name: "rank 0 -> rank 1", QPN: 0x42, GPU: 0, Peer: 1, SQ: tSQ, WQEs: 8, DBRec: tDB, CQ: tCQ, CQEs: cqes,
		Collapsed: collapsed, Link: link, Back: back, Latency: net.Model().Latency, Mem: r.m, Keys: keys,
		Fail: func(err error) { r.fails = append(r.fails, err) }})
	require.NoError(t, err)
	return r
}

// post writes ws at the next slots from counter at and rings.
func (r *rig) post(t *testing.T, at uint16, ws ...WQE) {
	t.Helper()
	for i := range ws {
		ws[i].Index, ws[i].QPN, ws[i].Signaled = at+uint16(i), 0x42, true
		off := uint64((uint32(at)+uint32(i))&7) * BB
		require.NoError(t, Encode(r.m.b[tSQ+off:tSQ+off+BB], &ws[i]))
	}
	binary.BigEndian.PutUint32(r.m.b[tDB+4:], uint32(at)+uint32(len(ws)))
	r.q.Doorbell(nil)
}

// A WRITE, a READ and a fetch-add land where their keys say, the old
// value comes back little-endian, and CQE[0] of the collapsed CQ names
// the last WQE, written after one network latency or more.
func TestQPWriteReadAtomic(t *testing.T) {
	r := newRig(t, 1, true)
	for i := range 100 {
		r.m.b[tLocal+i] = byte(i + 1)
	}
	binary.LittleEndian.PutUint64(r.m.b[tRemote+512:], 0x1122334455667788)
	binary.LittleEndian.PutUint64(r.m.b[tRemote+256:], 40)
	r.post(t, 0,
		WQE{Opcode: OpRDMAWrite, RAddr: 16, RKey: 2, Segs: []Seg{{Len: 100, Key: 1, Addr: 0}}},
		WQE{Opcode: OpRDMARead, RAddr: 512, RKey: 2, Segs: []Seg{{Len: 8, Key: 1, Addr: 1024}}},
		WQE{Opcode: OpAtomicFA, RAddr: 256, RKey: 2, SwapAdd: 5, Segs: []Seg{{Len: 8, Key: 1, Addr: 2048}}})
	require.NoError(t, r.s.Run())
	require.Empty(t, r.fails)
	require.Equal(t, r.m.b[tLocal:tLocal+100], r.m.b[tRemote+16:tRemote+116])
	require.Equal(t, uint64(0x1122334455667788), binary.LittleEndian.Uint64(r.m.b[tLocal+1024:]))
	require.Equal(t, uint64(45), binary.LittleEndian.Uint64(r.m.b[tRemote+256:]))
	require.Equal(t, uint64(40), binary.LittleEndian.Uint64(r.m.b[tLocal+2048:]))
	c := ReadCQE(r.m.b[tCQ:])
	require.Equal(t, CQE{Opcode: CQEReq, WQECounter: 2, WQEOpcode: OpAtomicFA, QPN: 0x42, ByteCnt: 8}, c)
	require.GreaterOrEqual(t, r.s.Now(), 2*nic.DefaultModel().Latency)
	require.Equal(t, uint16(3), r.q.Consumed())
}

// Completions are reported in WQE order: a READ's round trip outlasts the
// small WRITE after it, whose CQE waits for the READ's. With a CQ of four
// entries each gets its own, its owner bit the pass.
func TestQPCompletionOrder(t *testing.T) {
	r := newRig(t, 4, false)
	r.post(t, 0,
		WQE{Opcode: OpRDMARead, RAddr: 0, RKey: 2, Segs: []Seg{{Len: 4096, Key: 1, Addr: 0}}},
		WQE{Opcode: OpRDMAWrite, RAddr: 0, RKey: 2, Segs: []Seg{{Len: 8, Key: 1, Addr: 0}}})
	// Later, a second pass: counters wrap the 8-entry send queue and the
	// CQ's owner bit flips after four CQEs.
	w := WQE{Opcode: OpRDMAWrite, RKey: 2, Segs: []Seg{{Len: 8, Key: 1}}}
	r.s.AtWork(sim.Millisecond, func() { r.post(t, 2, w, w, w) })
	require.NoError(t, r.s.Run())
	require.Empty(t, r.fails)
	var order []uint16
	for _, w := range r.m.writes {
		if w.addr >= tCQ && w.addr < tCQ+4*CQESize {
			order = append(order, ReadCQE(w.b).WQECounter)
		}
	}
	require.Equal(t, []uint16{0, 1, 2, 3, 4}, order)
	require.Equal(t, uint16(1), ReadCQE(r.m.b[tCQ+CQESize:]).WQECounter)
	c := ReadCQE(r.m.b[tCQ:])
	require.Equal(t, uint16(4), c.WQECounter)
	require.Equal(t, uint8(1), c.Owner)
}

// A bad key completes in error (REQ_ERR, REMOTE_ACCESS) and fails the run
// naming the queue, the WQE and the key; an undecodable WQE and a
// doorbell record past the queue fail it naming what was wrong.
func TestQPRefusals(t *testing.T) {
	r := newRig(t, 1, true)
	r.post(t, 0, WQE{Opcode: OpRDMAWrite, RAddr: 0, RKey: 7, Segs: []Seg{{Len: 8, Key: 1}}})
	require.NoError(t, r.s.Run())
	require.Len(t, r.fails, 1)
	require.ErrorContains(t, r.fails[0], "mlx5 NIC: queue rank 0 -> rank 1 (QPN 0x42): WQE 0 (opcode 0x08 (RDMA_WRITE)) completed in error (syndrome 0x13): remote key 0x7 at GPU 1")
	c := ReadCQE(r.m.b[tCQ:])
	require.Equal(t, uint8(CQEReqErr), c.Opcode)
	require.Equal(t, uint8(SyndromeRemoteAccess), c.Syndrome)

	r = newRig(t, 1, true)
	r.post(t, 0, WQE{Opcode: OpRDMAWrite, RKey: 2, Segs: []Seg{{Len: 8, Key: 1}}})
	r.m.b[tSQ+BB+3] = OpSend // WQE 1: SEND
	binary.BigEndian.PutUint32(r.m.b[tSQ+BB:], 1<<8|OpSend)
	binary.BigEndian.PutUint32(r.m.b[tSQ+BB+4:], 0x42<<8|3)
	binary.BigEndian.PutUint32(r.m.b[tDB+4:], 2)
	r.q.Doorbell(nil)
	require.NoError(t, r.s.Run())
	require.Len(t, r.fails, 1)
	require.ErrorContains(t, r.fails[0], "queue rank 0 -> rank 1 (QPN 0x42): WQE 1 (opcode 0x0a (SEND)): not emulated")

	r = newRig(t, 1, true)
	binary.BigEndian.PutUint32(r.m.b[tDB+4:], 9)
	r.q.Doorbell(nil)
	require.Len(t, r.fails, 1)
	require.ErrorContains(t, r.fails[0], "the doorbell record's counter 9 is 9 blocks past the consumer's 0: more than the 8 the send queue holds")
}

// With the race detector: two WRITEs of one remote range on one QP, on an
// in-order link, land in order (no report; MORI's test_gda_counter was a
// false write-write race before); on a link that does not keep order they
// race; and a second atomic's returned value into the same scratch word
// is no race.
func TestQPRaceEdges(t *testing.T) {
	for _, inOrder := range []bool{true, false} {
		r := newRig(t, 1, true)
		d := r.s.EnableRace()
		r.q.c.Race, r.q.c.Space, r.q.c.InOrder = d, d.Space(r.m, "memory"), inOrder
		lane := d.NewThread("lane")
		w := WQE{Opcode: OpRDMAWrite, RAddr: 64, RKey: 2, Segs: []Seg{{Len: 256, Key: 1}}}
		fa := WQE{Opcode: OpAtomicFA, RAddr: 1024, RKey: 2, SwapAdd: 1, Segs: []Seg{{Len: 8, Key: 1, Addr: 2048}}}
		for i := range 4 {
			ws := []WQE{w, fa}
			for j := range ws {
				ws[j].Index, ws[j].QPN, ws[j].Signaled = uint16(2*i+j), 0x42, true
				off := uint64(2*i+j) * BB
				require.NoError(t, Encode(r.m.b[tSQ+off:tSQ+off+BB], &ws[j]))
			}
		}
		binary.BigEndian.PutUint32(r.m.b[tDB+4:], 8)
		r.q.Doorbell(lane)
		err := r.s.Run() // the detector's reports end the run
		require.Empty(t, r.fails)
		if inOrder {
			require.NoError(t, err)
			require.Empty(t, d.Reports())
		} else {
			require.ErrorContains(t, err, "RDMA_WRITE) write at the peer (WQE 0)")
			require.NotContains(t, err.Error(), "returned value")
		}
	}
}
