package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// Model is the fabric's timing: a few named physical parameters. There is
// no documented calibration for CFT; DefaultModel takes public NVLink 5
// figures (see the package doc) and round numbers for the rest.
type Model struct {
	Name string
	// InjectionGBps is each GPU's fabric bandwidth per direction in GB/s
	// (bytes per ns). A GPU's outgoing ops share its egress port, incoming
	// writes share its ingress port.
	InjectionGBps float64
	// Latency is the one-way fabric latency, GPU to GPU through the switch.
	Latency sim.Time
	// IssueCost is the SM time to issue one fabric instruction.
	IssueCost sim.Time
	// McFanout is the switch's extra cost per multicast member (replication
	// of a multimem write, gathering for a pullRed).
	McFanout sim.Time
	// ClockGHz is the SM clock: it turns barrier timeoutCycles into time.
	ClockGHz float64
}

// DefaultModel is the NVLink 5 (GB200 NVL72) preset: 1.8 TB/s bidirectional
// per GPU, so 900 GB/s per direction. Latency, issue and fan-out costs are
// uncalibrated round numbers; the clock is B200's ~1.9 GHz boost.
func DefaultModel() Model {
	return Model{
		Name:          "nvlink5-default",
		InjectionGBps: 900,
		Latency:       1 * sim.Microsecond,
		IssueCost:     20 * sim.Nanosecond,
		McFanout:      5 * sim.Nanosecond,
		ClockGHz:      1.9,
	}
}

func (m Model) check() error {
	switch {
	case !(m.InjectionGBps > 0):
		return fmt.Errorf("fabric model %q: InjectionGBps %v must be positive", m.Name, m.InjectionGBps)
	case m.Latency < 0 || m.IssueCost < 0 || m.McFanout < 0:
		return fmt.Errorf("fabric model %q: negative latency, issue or fan-out cost", m.Name)
	case !(m.ClockGHz > 0):
		return fmt.Errorf("fabric model %q: ClockGHz %v must be positive", m.Name, m.ClockGHz)
	}
	return nil
}

// serialize is the time bytes take through one port.
func (m Model) serialize(bytes uint64) sim.Time {
	return sim.Time(float64(bytes) / m.InjectionGBps * float64(sim.Nanosecond))
}

// cycles turns SM cycles into virtual time.
func (m Model) cycles(n uint64) sim.Time {
	ps := float64(n) / m.ClockGHz * float64(sim.Nanosecond)
	if ps > float64(1<<62) {
		return 1 << 62
	}
	return sim.Time(ps)
}
