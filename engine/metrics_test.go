//go:build !emud_nometrics

package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

func TestMetricsOnTheNodeRegistry(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	src, dst, flag := r.alloc(0, 4096), r.alloc(1, 4096), r.alloc(0, 64)
	q := r.queue(0, 1, 1)
	r.s.Spawn("k", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 1, ring.RetryForever),
			ring.Copy(dst, src, 1000), ring.AtomicAdd64(dst+1024, 1)))
		a.Sleep(10 * sim.Microsecond)
		require.NoError(t, r.n.Memory().Store32(flag, 1))
	})
	require.NoError(t, r.s.Run())
	fams, err := r.n.Registry().Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == "op" || l.GetName() == "queue" {
					key += "/" + l.GetValue()
				}
			}
			got[key] += m.GetCounter().GetValue()
		}
	}
	assert.Equal(t, 1.0, got["emud_sdma_packets_total/POLL_REGMEM/1"])
	assert.Equal(t, 1.0, got["emud_sdma_packets_total/COPY_LINEAR/1"])
	assert.Equal(t, 1.0, got["emud_sdma_packets_total/ATOMIC/1"])
	assert.Equal(t, 3.0, got["emud_sdma_packets_total/NOP/1"], "padding after COPY (1) and POLL (2)")
	assert.Equal(t, 1000.0, got["emud_sdma_bytes_copied_total/1"])
	assert.Equal(t, 1.0, got["emud_sdma_doorbells_total/1"])
	assert.Equal(t, 1.0, got["emud_sdma_poll_waits_total/1"])
	assert.Equal(t, 0.0, got["emud_sdma_ring_full_waits_total/1"])
	assert.Contains(t, got, "emud_sdma_ring_full_waits_total/1", "a queue's zero series are exported too")
	assert.Contains(t, got, "emud_sdma_packets_total/WRITE_LINEAR/1", "every opcode's series, zeros included")
	for _, f := range fams {
		assert.NotEmpty(t, f.GetHelp(), f.GetName())
	}

	// A second node has its own registry: no global state.
	r2 := newRig(t, 1, Config{GPUs: 2})
	fams, err = r2.n.Registry().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			assert.Zero(t, m.GetCounter().GetValue())
		}
	}
}

// Faults are counted per queue and kind (emud_sdma_faults_total), on a
// registry given to the node or on the one Node.Registry makes when first
// asked (a node nobody scrapes builds none).
func TestMetricsCountFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		reg  *Registry
	}{
		{"registry made when asked", nil},
		{"registry given", newRegistry()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, Config{GPUs: 2, KeepGoingOnFault: true, Registry: tc.reg})
			buf := r.alloc(0, 4096)
			q := r.queue(0, 1, 1)
			fill := ring.ConstFill(buf, 7, 15)
			fill.FillSize = 0 // byte fill: not emulated, ILLEGAL_INSTRUCTION
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Trap(1), fill))
			})
			var h *sim.HangError
			require.ErrorAs(t, r.s.Run(), &h)
			if tc.reg != nil {
				assert.Same(t, tc.reg, r.n.Registry())
			}
			fams, err := r.n.Registry().Gather()
			require.NoError(t, err)
			got := map[string]float64{}
			for _, f := range fams {
				if f.GetName() != "emud_sdma_faults_total" {
					continue
				}
				assert.NotEmpty(t, f.GetHelp())
				for _, m := range f.GetMetric() {
					key := ""
					for _, l := range m.GetLabel() {
						key += "/" + l.GetName() + "=" + l.GetValue()
					}
					got[key] += m.GetCounter().GetValue()
				}
			}
			assert.Equal(t, map[string]float64{
				"/gpu=0/kind=" + string(FaultTrap) + "/peer=1/queue=1":    1,
				"/gpu=0/kind=" + string(FaultIllegal) + "/peer=1/queue=1": 1,
			}, got)
		})
	}
}
