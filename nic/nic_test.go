package nic_test

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

func newNet(t *testing.T, m nic.Model, n int) (*sim.Sim, *nic.Network) {
	t.Helper()
	s := sim.New(sim.Config{Seed: 1})
	net, err := nic.New(s, m, n, 0, func(i int) string { return fmt.Sprintf("nic%d", i) })
	require.NoError(t, err)
	return s, net
}

// One message's time is its packets through the port plus one latency:
// the closed form the package doc gives.
func TestOneMessageClosedForm(t *testing.T) {
	m := nic.DefaultModel()
	for _, bytes := range []uint64{0, 64, 4096, 1 << 20} {
		s, net := newNet(t, m, 2)
		qp, err := net.NewQP(0, 1, "qp")
		require.NoError(t, err)
		var done sim.Time
		qp.Post(&nic.Message{Op: "put", Bytes: bytes, Done: func() { done = s.Now() }})
		require.NoError(t, s.Run())
		pk := max(1, (bytes+m.MTU-1)/m.MTU)
		full := bytes / m.MTU
		want := m.PostCost + sim.Time(full)*m.Serialize(m.MTU) + m.Latency
		if rest := bytes - full*m.MTU; rest > 0 || bytes == 0 {
			want += m.Serialize(rest)
		}
		require.InDelta(t, float64(want), float64(done), float64(pk), "bytes %d", bytes)
	}
}

// Two flows from one NIC share its bandwidth: each takes about twice as
// long as alone; two flows from two NICs into one share the receiver.
func TestBandwidthShared(t *testing.T) {
	m := nic.DefaultModel()
	const bytes = 4 << 20
	alone := func() sim.Time {
		s, net := newNet(t, m, 2)
		qp, _ := net.NewQP(0, 1, "a")
		var end sim.Time
		qp.Post(&nic.Message{Bytes: bytes, Done: func() { end = s.Now() }})
		require.NoError(t, s.Run())
		return end
	}()
	for _, tc := range []struct {
		name       string
		src0, dst0 int
		src1, dst1 int
	}{{"egress", 0, 1, 0, 2}, {"incast", 0, 2, 1, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			s, net := newNet(t, m, 3)
			a, _ := net.NewQP(tc.src0, tc.dst0, "a")
			b, _ := net.NewQP(tc.src1, tc.dst1, "b")
			var ea, eb sim.Time
			a.Post(&nic.Message{Bytes: bytes, Done: func() { ea = s.Now() }})
			b.Post(&nic.Message{Bytes: bytes, Done: func() { eb = s.Now() }})
			require.NoError(t, s.Run())
			ser := float64(alone - m.Latency - m.PostCost)
			for _, e := range []sim.Time{ea, eb} {
				got := float64(e-m.Latency-m.PostCost) / ser
				require.InDelta(t, 2.0, got, 0.05, "a flow sharing a port takes twice as long")
			}
		})
	}
}

// In order: packets of a QP land in send order. Out of order: with jitter
// some land before an earlier one, and the seed fixes which.
func TestOrdering(t *testing.T) {
	run := func(o nic.Ordering, seed uint64) (inversions int, order []uint64) {
		m := nic.DefaultModel()
		m.Ordering = o
		s := sim.New(sim.Config{Seed: seed})
		net, err := nic.New(s, m, 2, 0, func(i int) string { return fmt.Sprint(i) })
		require.NoError(t, err)
		qp, _ := net.NewQP(0, 1, "qp")
		var last uint64
		for k := range 4 {
			base := uint64(k) << 20
			qp.Post(&nic.Message{Bytes: 64 << 10, Land: func(lo, hi uint64) {
				if base+lo < last {
					inversions++
				}
				last = max(last, base+lo)
				order = append(order, base+lo)
			}})
		}
		require.NoError(t, s.Run())
		return inversions, order
	}
	inv, _ := run(nic.InOrder, 1)
	require.Zero(t, inv)
	inv, o1 := run(nic.OutOfOrder, 1)
	require.Positive(t, inv, "jitter of 1 µs against 80 ns packets reorders")
	_, o2 := run(nic.OutOfOrder, 1)
	require.Equal(t, o1, o2, "the seed fixes the order")
}

func TestModelCheck(t *testing.T) {
	for _, tc := range []struct {
		edit func(*nic.Model)
		want string
	}{
		{func(m *nic.Model) { m.LinkGBps = 0 }, "LinkGBps"},
		{func(m *nic.Model) { m.MTU = 1 }, "MTU"},
		{func(m *nic.Model) { m.Latency = -1 }, "negative"},
	} {
		m := nic.DefaultModel()
		tc.edit(&m)
		require.ErrorContains(t, m.Check(), tc.want)
	}
	s := sim.New(sim.Config{})
	net, err := nic.New(s, nic.DefaultModel(), 2, 0, func(int) string { return "" })
	require.NoError(t, err)
	_, err = net.NewQP(0, 2, "x")
	require.ErrorContains(t, err, "NICs 0..1")
}

// A QP to an unreachable NIC sends its packets (local completion comes)
// but none lands; the reachable QP beside it is unaffected, and both say
// whether their destination is reachable.
func TestUnreachableLosesPackets(t *testing.T) {
	m := nic.DefaultModel()
	s, net := newNet(t, m, 3)
	net.SetUnreachable(func(src, dst int) bool { return dst == 2 }, "no path to nic2")
	lost, err := net.NewQP(0, 2, "lost")
	require.NoError(t, err)
	ok, err := net.NewQP(0, 1, "ok")
	require.NoError(t, err)
	var sent, landed, done int
	for _, qp := range []*nic.QP{lost, ok} {
		qp.Post(&nic.Message{Bytes: 3 * m.MTU, Sent: func() { sent++ }, Land: func(lo, hi uint64) { landed++ }, Done: func() { done++ }})
	}
	require.NoError(t, s.Run())
	require.Equal(t, 2, sent, "both messages left their NIC")
	require.Equal(t, 3, landed, "only the reachable QP's packets land")
	require.Equal(t, 1, done)
	why, unreachable := lost.Unreachable()
	require.True(t, unreachable)
	require.Equal(t, "no path to nic2", why)
	_, unreachable = ok.Unreachable()
	require.False(t, unreachable)
	require.Len(t, lost.Inflight(), 1, "the lost message stays in flight, for the hang report")
}
