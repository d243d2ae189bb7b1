package job_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// A hang's report does not depend on the order the layers were set up in:
// the fabric built before the engine node and cco host, between them (the
// node is built after job.Config.Inject runs), or after them, gives the
// same causes, in the same order, in the same words. The run has causes of
// three layers: cco's waitSignal cause, the engine's parked POLL with cco's
// note naming the postWaitMem row, the fabric's barrier cause.
func TestHangReportIndependentOfLayerOrder(t *testing.T) {
	run := func(t *testing.T, fabricFirst bool) *sim.HangError {
		var sys *fabric.System
		mkFabric := func(s *sim.Sim) {
			var err error
			sys, err = fabric.NewSystem(s, fabric.Config{Topology: fabric.Topology{NRanks: 2}, Env: map[string]string{}})
			require.NoError(t, err)
		}
		cfg := job.Config{Sim: sim.Config{Seed: 3}, Ranks: 2}
		if fabricFirst {
			cfg.Inject = func(s *sim.Sim) *engine.InjectPlan { mkFabric(s); return nil }
		}
		j, err := job.New(cfg)
		require.NoError(t, err)
		if !fabricFirst {
			mkFabric(j.Sim)
		}
		w, err := j.Window(4096)
		require.NoError(t, err)
		require.NoError(t, j.CreateDevComms(0, false))
		_, err = j.Launch(0, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
			sdma.PostWaitMem(1, 0, w[0], 0x100, 1, cco.SdmaCmpEq, 0xffffffff) // never set
			sdma.Put(1, w[0], 0, w[0], 64, 8, 0)
			sdma.QuietQueue(1, 0)
		})
		require.NoError(t, err)
		_, err = j.Launch(1, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) })
		require.NoError(t, err)

		comms, err := sys.CommInitAll(fabric.CommConfig{})
		require.NoError(t, err)
		for r, c := range comms {
			dc, err := fabric.DevCommCreate(c, fabric.DevCommRequirements{CftCaps: fabric.CapCft, CftBarrierCount: 2})
			require.NoError(t, err)
			_, err = kernel.Launch(j.Sim, kernel.Config{Name: "cft", GPU: r, Grid: 1, Block: 32, WaveSize: 32, SharedBytes: 64},
				func(th *kernel.Thread) {
					g := th.WarpGroup()
					fabric.NewCftBarrierSession(g, dc, uint32(r), false).Sync(g, fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric)
				})
			require.NoError(t, err)
		}
		var h *sim.HangError
		require.ErrorAs(t, j.Sim.Run(), &h)
		return h
	}
	first, last := run(t, true), run(t, false)
	assert.Equal(t, first.Text(), last.Text())
	a, err := first.JSON()
	require.NoError(t, err)
	b, err := last.JSON()
	require.NoError(t, err)
	assert.JSONEq(t, string(a), string(b))

	var kinds []sim.CauseKind
	for _, c := range first.Causes {
		kinds = append(kinds, c.Kind)
	}
	assert.Equal(t, []sim.CauseKind{fabric.CauseBarrierWaits, fabric.CauseBarrierWaits, cco.CauseSignalShort, engine.CausePollParked}, kinds,
		"by layer (api, then engine), then kind; report:\n%s", first.Text())
	last1 := first.Causes[len(first.Causes)-1]
	assert.Equal(t, sim.LayerEngine, last1.Layer, "the engine's words for its parked POLL")
	assert.Equal(t, cco.RowPostWaitMem, last1.Row, "with cco's note")
}
