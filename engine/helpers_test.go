package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

type rig struct {
	t *testing.T
	s *sim.Sim
	n *Node
}

func newRig(t *testing.T, seed uint64, cfg Config) *rig {
	t.Helper()
	s := sim.New(sim.Config{Seed: seed})
	n, err := NewNode(s, cfg)
	require.NoError(t, err)
	return &rig{t: t, s: s, n: n}
}

func (r *rig) alloc(gpu int, size uint64) uint64 {
	r.t.Helper()
	a, err := r.n.Memory().Alloc(gpu, size, "buf")
	require.NoError(r.t, err)
	return a
}

func (r *rig) queue(gpu, peer, q int) *Queue {
	r.t.Helper()
	qu, err := r.n.Queue(gpu, peer, q)
	require.NoError(r.t, err)
	return qu
}

// post reserves one unit per packet, writes them and rings them: the shape
// of a MORI solo post. Packets must each fit one unit.
func post(a *sim.Actor, q *Queue, pkts ...ring.Packet) error {
	base, err := q.Reserve(a, uint64(len(pkts))*ring.Unit)
	if err != nil {
		return err
	}
	for i := range pkts {
		if err := q.WriteUnit(base+uint64(i)*ring.Unit, &pkts[i]); err != nil {
			return err
		}
	}
	return q.Submit(a, base, base+uint64(len(pkts))*ring.Unit)
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}
