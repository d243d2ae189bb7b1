package engine

import (
	"fmt"

	"github.com/emud-dev/emud/signal"
	"github.com/emud-dev/emud/sim"
)

// AllocSignalPool allocates and zeroes GPU gpu's signal pool of
// lsaSize × queues 64-bit slots (signal.Pool describes the layout).
func (n *Node) AllocSignalPool(gpu, lsaSize, queues int) (signal.Pool, error) {
	if lsaSize < 1 || queues < 1 {
		return signal.Pool{}, fmt.Errorf("engine: signal pool on GPU %d: lsaSize %d × queues %d: both must be ≥ 1", gpu, lsaSize, queues)
	}
	base, err := n.mem.Alloc(gpu, uint64(lsaSize*queues)*signal.SlotBytes, fmt.Sprintf("signals gpu%d", gpu))
	if err != nil {
		return signal.Pool{}, err
	}
	return signal.NewPool(gpu, base, lsaSize, queues)
}

// Signal reads slot (sender, q) of pool p.
func (n *Node) Signal(p signal.Pool, sender, q int) (uint64, error) {
	addr, err := p.Slot(sender, q)
	if err != nil {
		return 0, err
	}
	return n.mem.Load64(addr)
}

// AwaitSignal blocks actor a until slot (sender, q) of pool p reaches
// expected (a >= comparison, so no increment can be missed): the emulated
// waitSignal. The hang report shows the slot and its value.
func (n *Node) AwaitSignal(a *sim.Actor, p signal.Pool, sender, q int, expected uint64) error {
	addr, err := p.Slot(sender, q)
	if err != nil {
		return err
	}
	if err := n.mem.Check("signal read", addr, signal.SlotBytes); err != nil {
		return err
	}
	load := func() uint64 { v, _ := n.mem.Load64(addr); return v }
	n.mem.Await(a, addr, signal.SlotBytes, func() bool { return signal.Reached(load(), expected) },
		func() string {
			return fmt.Sprintf("signal gpu%d[sender %d, queue %d] @%#x ≥ %d, value now %d",
				p.GPU, sender, q, addr, expected, load())
		})
	return nil
}
