package rocm

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/sim"
)

// Memory is the device memory of the backend: the flat LSA space laid out
// by lsa.Space as the emulator lays it out (GPU g's slice at Base +
// g·Stride, page bump allocation), each allocation backed by the driver.
// Addresses are the same on the CPU and on every GPU, so the packet bytes
// carry them as they are. The engine writes this memory outside the
// simulator: loads and stores of 4 and 8 aligned bytes are atomic, and
// Await polls.
type Memory struct {
	*lsa.Space
	d *Device
}

var _ cco.Memory = (*Memory)(nil)

func newMemory(d *Device) *Memory {
	return &Memory{Space: lsa.NewSpace(d.cfg.GPUs, d.cfg.Base, d.cfg.Stride, d.s.NewWatchList("rocm memory")), d: d}
}

// Alloc backs size bytes (rounded up to a page) of GPU g's slice through
// the driver and returns the address: the same address engine.Memory would
// return for the same sequence of allocations.
func (m *Memory) Alloc(g int, size uint64, name string) (uint64, error) {
	if m.d.closed {
		return 0, fmt.Errorf("hw/rocm: alloc %q: device closed", name)
	}
	base, err := m.Space.Alloc(g, size, name, m.back)
	if err != nil {
		return 0, fmt.Errorf("hw/rocm: %w", err)
	}
	return base, nil
}

// AllocPhantom is refused: real memory always has bytes, and a timing-only
// run is the emulator's.
func (m *Memory) AllocPhantom(_ int, size uint64, name string) (uint64, error) {
	return 0, fmt.Errorf("hw/rocm: alloc %q (%d B): phantom memory (timing only, no bytes) is the emulator's; the hardware backend backs every allocation", name, size)
}

// AllocAt backs [addr, addr+size) at that fixed address, as
// engine.Memory.AllocAt does in the emulator.
func (m *Memory) AllocAt(addr, size uint64, name string) (uint64, error) {
	if m.d.closed {
		return 0, fmt.Errorf("hw/rocm: alloc %q: device closed", name)
	}
	base, err := m.Space.AllocAt(addr, size, name, m.back)
	if err != nil {
		return 0, fmt.Errorf("hw/rocm: %w", err)
	}
	return base, nil
}

// back backs a region of the space through the driver.
func (m *Memory) back(base, rounded uint64) ([]byte, error) {
	data, err := m.d.drv.Back(m.HomeOf(base), base, rounded) // a GPU, or lsa.Host
	if err == nil && data == nil {
		err = fmt.Errorf("driver %s backed nothing", m.d.drv.Name())
	}
	return data, err
}

// Await blocks a until pred holds. Stores from inside the simulator wake it
// at once; what the engine writes is seen at the next poll (see Pace).
func (m *Memory) Await(a *sim.Actor, addr, n uint64, pred func() bool, what func() string) {
	m.d.poll(a, sim.Wait{List: m.Watch(), Lo: addr, Hi: addr + n, Pred: pred, Text: what})
}
