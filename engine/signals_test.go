package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

func TestSignalPoolsAndWaits(t *testing.T) {
	r := newRig(t, 2, Config{GPUs: 2})
	pool, err := r.n.AllocSignalPool(1, 2, 4)
	require.NoError(t, err)
	src, dst := r.alloc(0, 4096), r.alloc(1, 4096)
	q := r.queue(0, 1, 3)
	slot, err := pool.Slot(0, 3)
	require.NoError(t, err)
	r.s.Spawn("rank0", func(a *sim.Actor) {
		for range 3 {
			require.NoError(t, post(a, q, ring.Copy(dst, src, 64), ring.AtomicAdd64(slot, 1)))
		}
	})
	var woke sim.Time
	r.s.Spawn("rank1", func(a *sim.Actor) {
		require.NoError(t, r.n.AwaitSignal(a, pool, 0, 3, 3))
		woke = a.Now()
		err := r.n.AwaitSignal(a, pool, 2, 0, 1)
		assert.ErrorContains(t, err, "sender rank 2 outside [0, 2)")
	})
	require.NoError(t, r.s.Run())
	v, err := r.n.Signal(pool, 0, 3)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), v)
	assert.Positive(t, woke)
	other, _ := r.n.Signal(pool, 0, 2)
	assert.Zero(t, other, "other slots untouched")
	_, err = r.n.AllocSignalPool(0, 0, 1)
	assert.Error(t, err)
}

// The classic misuse: expected counted across two queues. The hang report
// shows the slot, the value there and the expected count; the JSON has the
// queue detail a tool needs.
func TestSharedExpectedAcrossQueuesHangReport(t *testing.T) {
	r := newRig(t, 3, Config{GPUs: 2})
	pool, err := r.n.AllocSignalPool(1, 2, 2)
	require.NoError(t, err)
	src, dst, flag := r.alloc(0, 4096), r.alloc(1, 4096), r.alloc(0, 64)
	s0, _ := pool.Slot(0, 0)
	s1, _ := pool.Slot(0, 1)
	q0, q1 := r.queue(0, 1, 0), r.queue(0, 1, 1)
	r.s.Spawn("rank0", func(a *sim.Actor) {
		require.NoError(t, post(a, q0, ring.Copy(dst, src, 64), ring.AtomicAdd64(s0, 1)))
		require.NoError(t, post(a, q1, ring.Copy(dst+64, src, 64), ring.AtomicAdd64(s1, 1)))
		// And a queue parked forever on a flag nobody sets.
		require.NoError(t, post(a, q1, ring.Poll(flag, 1, 0xff, ring.CmpGE, 4, ring.RetryForever)))
	})
	r.s.Spawn("rank1", func(a *sim.Actor) {
		require.NoError(t, r.n.AwaitSignal(a, pool, 0, 0, 2)) // wrong: 2 across queues
	})
	var h *sim.HangError
	require.ErrorAs(t, r.s.Run(), &h)
	golden.Check(t, "hang-signal-and-parked-poll.txt", h.Text())
	js, err := h.JSON()
	require.NoError(t, err)
	var back struct {
		Waiters []struct {
			Kind   string
			Detail map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(js, &back))
	require.Len(t, back.Waiters, 2)
	d := back.Waiters[1].Detail
	assert.Equal(t, "queue", back.Waiters[1].Kind)
	assert.Equal(t, "parked", d["state"])
	assert.Equal(t, float64(3*ring.Unit), d["doorbell"])
	poll := d["poll"].(map[string]any)
	assert.Equal(t, float64(flag), poll["addr"])
	assert.Equal(t, ">=", poll["func"])
	assert.Equal(t, float64(0xff), poll["mask"])
	assert.Equal(t, float64(1), poll["ref"])
	assert.Equal(t, float64(0), poll["value"])
	assert.Contains(t, d["head"], "POLL_REGMEM")
}

// A CU-side poller that re-reads a signal forever never blocks, so only the
// watchdog can stop it; the report still shows the parked queue that would
// have produced the signal.
func TestWatchdogReportsSpinningPollerAndParkedQueue(t *testing.T) {
	s := sim.New(sim.Config{Seed: 1, Watchdog: 200 * sim.Microsecond})
	n, err := NewNode(s, Config{GPUs: 2})
	require.NoError(t, err)
	flag, _ := n.Memory().Alloc(1, 64, "flag")
	pool, err := n.AllocSignalPool(1, 2, 1)
	require.NoError(t, err)
	slot, _ := pool.Slot(0, 0)
	q, _ := n.Queue(1, 0, 0)
	s.Spawn("rank0", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 4, ring.RetryForever), ring.AtomicAdd64(slot, 1)))
		a.SetLabel("spinning on signal slot [0][0]")
		for {
			if v, _ := n.Signal(pool, 0, 0); v >= 1 {
				return
			}
			a.Sleep(sim.Microsecond)
		}
	})
	var h *sim.HangError
	require.ErrorAs(t, s.Run(), &h)
	assert.Equal(t, sim.HangWatchdog, h.Kind)
	golden.Check(t, "hang-watchdog-spinning.txt", h.Text())
}
