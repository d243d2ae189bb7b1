package job

import (
	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// FabricConfig describes a ready-to-run CFT fabric system (package
// fabric): every rank's communicator, a
// CFT dev comm and the same list of symmetric windows on every rank.
type FabricConfig struct {
	Seed     uint64
	Topology fabric.Topology
	Caps     fabric.CftCap // 0 means CapCft | CapCftMultimem
	Barriers int           // cftBarrierCount; 0 means 1
	Windows  []uint64
	// WinFlags, if set, are the windows' registration flags (0:
	// fabric.WinCollSymmetric), e.g. with fabric.WinCftCounted for
	// counted writes' counters.
	WinFlags []fabric.WinFlags
	Debug    bool
	Faults   fabric.FaultPlan
	Model    *fabric.Model
	Watchdog sim.Time // sim.Config.Watchdog
	Phantom  bool     // Config.Phantom: windows without bytes
	// Sched is the rest of the run's sim.Config: timing perturbation (the
	// kernels' launch and block skew) and the scheduling strategy.
	Sched    Sched
	MemBytes uint64 // Config.MemBytes
	Race     bool   // Config.Race: the race detector
}

// Sched is how a run's seed makes its choices beyond tie-breaks: the
// fields of sim.Config of those names.
type Sched struct {
	Perturb  sim.Level
	Strategy sim.Strategy
	PCT      sim.PCT
	Stop     *sim.Stopper // sim.Config.Stop: stops the run from outside
}

// Fabric is a built CFT system: Windows[k][r] is rank r's copy of
// window k.
type Fabric struct {
	Sim      *sim.Sim
	Sys      *fabric.System
	Comms    []*fabric.Comm
	DevComms []fabric.DevComm
	Windows  [][]fabric.Window
}

// NewFabric builds a system of cfg.Topology.NRanks ranks on a new simulator
// seeded with cfg.Seed: comms, dev comms and windows, ready for kernels.
func NewFabric(cfg FabricConfig) (*Fabric, error) {
	s := sim.New(sim.Config{Seed: cfg.Seed, Watchdog: cfg.Watchdog, Perturb: cfg.Sched.Perturb, Strategy: cfg.Sched.Strategy, PCT: cfg.Sched.PCT, Stop: cfg.Sched.Stop})
	sys, err := fabric.NewSystem(s, fabric.Config{Topology: cfg.Topology, Debug: cfg.Debug, Faults: cfg.Faults, Model: cfg.Model, Env: map[string]string{},
		Phantom: cfg.Phantom, MemBytes: cfg.MemBytes, Race: cfg.Race})
	if err != nil {
		return nil, err
	}
	comms, err := sys.CommInitAll(fabric.CommConfig{})
	if err != nil {
		return nil, err
	}
	j := &Fabric{Sim: s, Sys: sys, Comms: comms, Windows: make([][]fabric.Window, len(cfg.Windows))}
	caps := cfg.Caps
	if caps == 0 {
		caps = fabric.CapCft | fabric.CapCftMultimem
	}
	nB := cfg.Barriers
	if nB == 0 {
		nB = 1
	}
	for _, c := range comms {
		for k, n := range cfg.Windows {
			fl := fabric.WinCollSymmetric
			if k < len(cfg.WinFlags) && cfg.WinFlags[k] != 0 {
				fl = cfg.WinFlags[k]
			}
			w, err := fabric.CommWindowRegister(c, n, fl)
			if err != nil {
				return nil, err
			}
			j.Windows[k] = append(j.Windows[k], w)
		}
		dc, err := fabric.DevCommCreate(c, fabric.DevCommRequirements{CftCaps: caps, CftBarrierCount: nB})
		if err != nil {
			return nil, err
		}
		j.DevComms = append(j.DevComms, dc)
	}
	return j, nil
}

// Launch starts fn on every rank: one block of threads (a single wave of
// 32 lanes when threads is 32) on GPU r, with shared bytes of shared memory.
func (j *Fabric) Launch(name string, threads, shared int, fn func(t *kernel.Thread, dc fabric.DevComm)) error {
	for r, dc := range j.DevComms {
		if _, err := kernel.Launch(j.Sim, kernel.Config{Name: name, GPU: r, Grid: 1, Block: threads, WaveSize: 32, SharedBytes: shared},
			func(t *kernel.Thread) { fn(t, dc) }); err != nil {
			return err
		}
	}
	return nil
}
