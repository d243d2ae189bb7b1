package kernel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/sim"
)

// Config.Between runs on the wave before each group's call, with every
// lane of the group (the idle ones of a leader-only call too), and once
// at the wave's end with all its lanes; what it sleeps delays the call
// and the kernel's end, once per wave, not once per lane.
func TestBetween(t *testing.T) {
	type visit struct {
		at    sim.Time
		lanes int
	}
	var visits []visit
	var callAt []sim.Time
	leaderOnly := &Call[None]{Name: "leader", Run: func(g *Active, _ []None) error {
		callAt = append(callAt, g.Actor().Now())
		return nil
	}}
	cfg := Config{Grid: 1, Block: 4, WaveSize: 32, Between: func(a *sim.Actor, lanes []*Thread) {
		visits = append(visits, visit{a.Now(), len(lanes)})
		a.Sleep(sim.Microsecond)
	}}
	k, err := run(t, 1, cfg, func(th *Thread) {
		th.SyncWarp()
		ConvergeIf(th, leaderOnly, None{}, th.Lane() == 0)
	})
	require.NoError(t, err)
	require.True(t, k.Done())
	assert.Equal(t, []visit{{0, 4}, {sim.Microsecond, 4}, {2 * sim.Microsecond, 4}}, visits,
		"before __syncwarp, before the leader-only call (idle lanes included), at the wave's end")
	assert.Equal(t, []sim.Time{2 * sim.Microsecond}, callAt, "the call runs after the wave slept")

	// Without it, nothing changes: the calls run at 0.
	callAt = nil
	cfg.Between = nil
	_, err = run(t, 1, cfg, func(th *Thread) { ConvergeIf(th, leaderOnly, None{}, th.Lane() == 0) })
	require.NoError(t, err)
	assert.Equal(t, []sim.Time{0}, callAt)
}
