package fabric_test

import (
	"errors"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/stretchr/testify/require"
)

// Every argument rule of spec §5 fails the kernel at the call with a
// *kernel.LaneError naming the rule.
func TestValidation(t *testing.T) {
	sum := fabric.RedOp{Op: redop.Sum, Type: redop.U32}
	type env struct {
		th  *kernel.Thread
		dc  fabric.DevComm
		cft *fabric.Cft
		w   fabric.Window
	}
	peerLe := func(e env, off uint64) (fabric.CftLeId, uint64) {
		return fabric.GetPeerLeInfo(e.w, off, 1, e.dc)
	}
	cases := []struct {
		name string
		caps fabric.CftCap
		call func(e env)
		want string
	}{
		{"bytes not a multiple of 16", 0, func(e env) { le, o := peerLe(e, 0); e.cft.Put(e.th.WarpGroup(), le, o, 16, 24) }, "multiple of 16"},
		{"zero bytes", 0, func(e env) { le, o := peerLe(e, 0); e.cft.Put(e.th.WarpGroup(), le, o, 16, 0) }, "multiple of 16"},
		{"smem misaligned", 0, func(e env) { le, o := peerLe(e, 0); e.cft.Put(e.th.WarpGroup(), le, o, 24, 16) }, "not 16-byte aligned"},
		{"smem out of range", 0, func(e env) { le, o := peerLe(e, 0); e.cft.Put(e.th.WarpGroup(), le, o, 1024, 32) }, "outside the block's"},
		{"smem overlaps ncclCftSmem", 0, func(e env) { le, o := peerLe(e, 0); e.cft.Put(e.th.WarpGroup(), le, o, 0, 32) }, "overlaps the ncclCftSmem"},
		{"leOffset misaligned", 0, func(e env) { le, o := peerLe(e, 8); e.cft.Put(e.th.WarpGroup(), le, o, 16, 16) }, "leOffset"},
		{"LE range past the window", 0, func(e env) { le, o := peerLe(e, 64<<10-16); e.cft.Put(e.th.WarpGroup(), le, o, 16, 32) }, "not inside any window"},
		{"LE never imported", 0, func(e env) { e.cft.Put(e.th.WarpGroup(), 7, 0, 16, 16) }, "is not an endpoint rank 0 imported"},
		{"get from the multicast LE", 0, func(e env) {
			le, o := fabric.GetMultimemLeInfo(e.w, 0, e.dc)
			e.cft.Get(e.th.WarpGroup(), le, o, 16, 16)
		}, "needs a unicast LE"},
		{"putMultimem to a unicast LE", 0, func(e env) { le, o := peerLe(e, 0); e.cft.PutMultimem(e.th.WarpGroup(), le, o, 16, 16) }, "needs the multicast LE"},
		{"multimem without NCCL_CFT_MULTIMEM", fabric.CapCft, func(e env) {
			le, o := fabric.GetMultimemLeInfo(e.w, 0, e.dc)
			e.cft.PutMultimem(e.th.WarpGroup(), le, o, 16, 16)
		}, "no multicast LE"},
		{"put to own LE", 0, func(e env) {
			le, o := fabric.GetPeerLeInfo(e.w, 0, 0, e.dc)
			e.cft.Put(e.th.WarpGroup(), le, o, 16, 16)
		}, "own LE"},
		{"pullRed from a thread group", 0, func(e env) {
			le, o := fabric.GetMultimemLeInfo(e.w, 0, e.dc)
			e.cft.PullRed(e.th.ThreadGroup(), le, o, sum, 16, 16)
		}, "must be ncclCoopWarp"},
		{"OpCoop wider than the coop", 0, func(e env) { le, o := peerLe(e, 0); e.cft.Put(e.th.BlockGroup(), le, o, 16, 16) }, "wider than"},
		{"reduction pair without a trait", 0, func(e env) {
			le, o := peerLe(e, 0)
			e.cft.Red(e.th.WarpGroup(), le, o, fabric.RedOp{Op: redop.Sum, Type: redop.S32}, 16, 16)
		}, "no trait"},
		{"cpMask splits an element", 0, func(e env) {
			le, o := peerLe(e, 0)
			e.cft.RedCpMask(e.th.WarpGroup(), le, o, sum, 16, 16, 0x0007)
		}, "enables part"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, job.FabricConfig{Caps: tc.caps})
			r.launch(t, 0, 32, 256, func(th *kernel.Thread, dc fabric.DevComm) {
				cft := fabric.NewCft(th.WarpGroup(), dc, 0)
				tc.call(env{th, dc, cft, r.W[0]})
			})
			err := r.Sim.Run()
			var le *kernel.LaneError
			require.ErrorAs(t, err, &le)
			require.ErrorContains(t, err, tc.want)
			require.Contains(t, le.Call, "ncclCft::")
		})
	}
}

// Reduction pairs NCCL has no trait for are refused with redop's error.
func TestValidationUnsupportedPairIsErrUnsupported(t *testing.T) {
	r := newRig(t, 1, job.FabricConfig{})
	r.launch(t, 0, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		cft := fabric.NewCft(th.WarpGroup(), dc, 0)
		le, o := fabric.GetMultimemLeInfo(r.W[0], 0, dc)
		cft.PullRed(th.WarpGroup(), le, o, fabric.RedOp{Op: redop.Sum, Type: redop.F64}, 16, 16)
	})
	err := r.Sim.Run()
	require.True(t, errors.Is(err, redop.ErrUnsupported), "%v", err)
	require.ErrorContains(t, err, "pullRed")
}

func TestNewCftRules(t *testing.T) {
	cases := []struct {
		name string
		caps fabric.CftCap
		smem fabric.CftSmem
		want string
	}{
		{"misaligned ncclCftSmem", 0, 8, "16-byte aligned"},
		{"ncclCftSmem outside shared memory", 0, 64, "inside the block's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, job.FabricConfig{Caps: tc.caps})
			r.launch(t, 0, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				fabric.NewCft(th.WarpGroup(), dc, tc.smem)
			})
			require.ErrorContains(t, r.Sim.Run(), tc.want)
		})
	}
}
