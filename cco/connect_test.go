package cco_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// ignoredQueueFailure: a program makes a comm that owns and connects its
// queues (6 queue ids per peer: 6 loopback queues on each GPU's engine 0),
// never destroys it, and makes a second one: engine 0 takes only 2 more of
// its loopback queues (8 per engine on gfx950) and refuses queue ids 2..5.
// The program ignores ccoDevCommCreate's error and runs a loopback put
// with a signal on queue 3 of the second comm, then waits for it. With
// destroy, the first comm is destroyed before the second is made (the
// fix).
func ignoredQueueFailure(t *testing.T, destroy bool) (created []error, run error) {
	r := newRig(t, 1, rigOpts{ranks: 2, racy: true})
	r.s.Spawn("host", func(a *sim.Actor) {
		mk := func() []cco.DevComm {
			comms, err := cco.CommCreateAll(r.h, 2, 0)
			require.NoError(t, err)
			var dcs []cco.DevComm
			for _, c := range comms {
				reqs := cco.DevCommRequirementsInitializer()
				reqs.SdmaQueueCount, reqs.PerCommQueues, reqs.ConnectQueues = 6, true, true
				dc, err := cco.DevCommCreate(c, &reqs)
				created = append(created, err) // the program does not check it
				dcs = append(dcs, dc)
			}
			if destroy && len(created) == 2 {
				for _, c := range comms {
					require.NoError(t, cco.CommDestroy(c))
				}
			}
			return dcs
		}
		mk()
		dcs := mk()
		dc := dcs[0]
		_, err := kernel.Launch(r.s, kernel.Config{Name: "self", GPU: 0, Grid: 1, Block: 1}, func(th *kernel.Thread) {
			s := cco.NewSdma(th, dc)
			s.PutPtr(0, r.recv[0].LocalPtr(0), r.send[0].LocalPtr(0), 64, 3, cco.RemoteSignal)
			s.WaitSignal(0, 3, 1)
		})
		require.NoError(t, err)
	})
	return created, r.s.Run()
}

// A queue creation the program ignores is the hang's cause: the report
// names the failed creation, its engine and cap, and the posts that went
// nowhere, not a signal that was never posted. The fixed program (the
// first comm destroyed) runs.
func TestIgnoredQueueCreationFailure(t *testing.T) {
	created, err := ignoredQueueFailure(t, false)
	require.Len(t, created, 4)
	assert.NoError(t, created[0])
	var qe *cco.QueueCreateError
	require.True(t, errors.As(created[2], &qe), "the second comm's creation fails: %v", created[2])
	assert.Equal(t, 0, qe.Rank)
	assert.ErrorContains(t, created[2], "already holds 8 queues, the most one engine holds")
	var h *sim.HangError
	require.ErrorAs(t, err, &h)
	text := h.Text()
	assert.Contains(t, text, "rank 0's queue (peer 0, queueId 3), which carries this slot's signals, was never created")
	assert.Contains(t, text, "1 post(s) on that queue went nowhere")
	assert.NotContains(t, text, "never posted a signal")
	require.NotEmpty(t, h.Causes)
	assert.Equal(t, cco.CauseQueueCreateFailed, h.Causes[0].Kind)
	golden.Check(t, "diag-ignored-queue-failure.txt", text)

	created, err = ignoredQueueFailure(t, true)
	require.NoError(t, err)
	for _, e := range created {
		assert.NoError(t, e)
	}
}

// Debug mode stops the lane at the post on a queue that was never created.
func TestIgnoredQueueCreationFailureDebug(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 1, racy: true})
	comms, err := cco.CommCreateAll(r.h, 1, 0)
	require.NoError(t, err)
	var dc cco.DevComm
	for i := 0; i < 2; i++ {
		reqs := cco.DevCommRequirementsInitializer()
		reqs.SdmaQueueCount, reqs.PerCommQueues, reqs.ConnectQueues, reqs.Debug = 6, true, true, true
		if i == 1 {
			comms, err = cco.CommCreateAll(r.h, 1, 0)
			require.NoError(t, err)
		}
		dc, err = cco.DevCommCreate(comms[0], &reqs)
	}
	require.Error(t, err)
	_, err = kernel.Launch(r.s, kernel.Config{Name: "self", GPU: 0, Grid: 1, Block: 1}, func(th *kernel.Thread) {
		cco.NewSdma(th, dc).PutPtr(0, r.recv[0].LocalPtr(0), r.send[0].LocalPtr(0), 64, 5, cco.RemoteSignal)
	})
	require.NoError(t, err)
	err = r.s.Run()
	var le *kernel.LaneError
	require.ErrorAs(t, err, &le)
	assert.ErrorContains(t, err, "queue (peer 0, queueId 5) does not exist: ccoDevCommCreate failed to create it")
}
