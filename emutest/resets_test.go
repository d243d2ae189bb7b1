package emutest_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/emutest"
	"github.com/emud-dev/emud/internal/racebuild"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// resetAlltoall is a user's all-to-all called twice, each call counting
// its signals from 0: between the calls every rank resets its own slots
// (12 on 4 ranks) with a lane store after its last wait (or, with host,
// from a host thread once its kernel has finished), and the second call's
// kernels start once every rank has reset (a host barrier). A correct
// program: the checks must stay quiet on it (issue 37).
func resetAlltoall(seed uint64, o emutest.Options, host bool) error {
	const ranks, n = 4, 1024
	j, err := emutest.NewJobWith(seed, ranks, o)
	if err != nil {
		return err
	}
	defer j.Close()
	w, err := j.Window(3 * ranks * n)
	if err != nil {
		return err
	}
	if err := j.CreateDevComms(1, o.Env["MORI_CCO_SDMA_DEBUG"] == "1"); err != nil {
		return err
	}
	block := func(src, dst, call int) []byte { return []byte(fmt.Sprintf("%d>%d#%d", src, dst, call)) }
	for r := range ranks {
		for p := range ranks {
			for call := range 2 {
				if err := j.Write(w[r], uint64((call*ranks+p)*n), block(r, p, call)); err != nil {
					return err
				}
			}
		}
	}
	kernelOf := func(r, call int) func(*kernel.Thread, *cco.Sdma) {
		return func(t *kernel.Thread, sdma *cco.Sdma) {
			base := uint64(2 * ranks * n) // receive blocks after both calls' send blocks
			for p := range ranks {
				if p != r {
					sdma.Put(p, w[p], base+uint64(r*n), w[r], uint64((call*ranks+p)*n), n, 0, cco.RemoteSignal)
				}
			}
			for p := range ranks {
				if p != r {
					sdma.Quiet(p)
					sdma.WaitSignal(p, 0, 1)
				}
			}
			if call == 0 && !host {
				m := cco.NewMem(sdma.Thread(), sdma.DevComm())
				for p := range ranks {
					sl, err := sdma.DevComm().SignalPool().Slot(p, 0)
					if err != nil {
						panic(err)
					}
					m.Store64(sl, 0) // this epoch's last wait is behind: reset
				}
			}
		}
	}
	var first []*kernel.Kernel
	for r := range ranks {
		k, err := j.LaunchNamed(fmt.Sprintf("call1-rank%d", r), r, 1, 1, kernelOf(r, 0))
		if err != nil {
			return err
		}
		first = append(first, k)
	}
	j.Sim.Spawn("host barrier", func(a *sim.Actor) {
		for r, k := range first {
			if k.Wait(a) != nil {
				return
			}
			if host {
				for p := range ranks {
					sl, err := j.DevComms[r].SignalPool().Slot(p, 0)
					if err == nil {
						err = emutest.Host(j, a).Store64(sl, 0)
					}
					if err != nil {
						j.Sim.Fail(err)
						return
					}
				}
			}
		}
		for r := range ranks {
			if _, err := j.LaunchNamed(fmt.Sprintf("call2-rank%d", r), r, 1, 1, kernelOf(r, 1)); err != nil {
				j.Sim.Fail(err)
				return
			}
		}
	})
	if err := j.Run(); err != nil {
		return err
	}
	for r := range ranks {
		for p := range ranks {
			if p == r {
				continue
			}
			b, err := j.Read(w[r], uint64(2*ranks*n+p*n), 8)
			if err != nil {
				return err
			}
			if want := block(p, r, 1); !bytes.HasPrefix(b, want) {
				return emutest.WrongData("rank %d's block from rank %d: %q, want %q", r, p, b, want)
			}
		}
	}
	return nil
}

// The reset shape stays quiet in Go on every seed, level and strategy,
// with the race detector and with the debug checks (before issue 37's fix
// each run reported a stale epoch on all 12 slots).
func TestResetBetweenCallsQuiet(t *testing.T) {
	seeds := 50
	if racebuild.Enabled || testing.Short() {
		seeds = 3
	}
	for _, host := range []bool{false, true} {
		for _, st := range []sim.Strategy{sim.StrategyRandom, sim.StrategyPCT} {
			for lvl := sim.LevelExact; lvl <= sim.MaxLevel; lvl++ {
				for _, mode := range []string{"race", "debug"} {
					t.Run(fmt.Sprintf("host=%v/%v/level%d/%s", host, st, lvl, mode), func(t *testing.T) {
						o := emutest.Options{Perturb: lvl, Strategy: st, Race: mode == "race", Env: cco.Env{"MORI_ENABLE_SDMA": "1"}}
						if mode == "debug" {
							o.Env["MORI_CCO_SDMA_DEBUG"] = "1"
						}
						f := emutest.Find(seeds, func(seed uint64) error { return resetAlltoall(seed, o, host) })
						require.Nil(t, f, "%v", f)
					})
				}
			}
		}
	}
}
