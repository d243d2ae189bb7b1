package cft

import (
	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
)

// PutWave is the fabric's steady put-rate workload, like cco's 64-lane
// SameQueue puts: one wave of 32 lanes on rank 0 of 2 posting rounds puts
// of 64 B each to rank 1, every lane its own thread group submitting
// after every put, one flush at the end. It returns the job ready to run
// (j.Sim.Run), for "emud bench" and fabric's BenchmarkPutsSteady to time;
// the caller closes j.Sys.
func PutWave(name string, rounds int) (*job.Fabric, error) {
	j, err := job.NewFabric(job.FabricConfig{Seed: 1, Topology: fabric.Topology{NRanks: 2}, Caps: fabric.CapCft, Windows: []uint64{32 * 64}})
	if err != nil {
		return nil, err
	}
	w := j.Windows[0]
	err = j.Launch(name, 32, 16+32*64, func(th *kernel.Thread, dc fabric.DevComm) {
		if dc.Rank != 0 {
			return
		}
		warp := th.WarpGroup()
		cft := fabric.NewCft(warp, dc, 0)
		off := uint64(th.Lane()) * 64
		le, leOff := fabric.GetPeerLeInfo(w[0], off, 1, dc)
		for range rounds {
			cft.Put(th.ThreadGroup(), le, leOff, 16+int(off), 64)
			cft.Submit(th.ThreadGroup())
		}
		cft.Flush(warp)
	})
	if err != nil {
		j.Sys.Close()
		return nil, err
	}
	return j, nil
}
