package planted_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/scenario"
)

// A call that refuses the program's misuse (destroy-before-quiet's
// ccoCommDestroy with a put in flight) gives the run its own status,
// "misuse", a detection, with a *cco.MisuseError naming the call; before,
// it was "error", the status of emud's own failures, and tests exempted
// the planted scenario by name.
func TestRefusedMisuseStatus(t *testing.T) {
	b, err := scenario.Lookup("destroy-before-quiet")
	require.NoError(t, err)
	def, err := scenario.LookupStrategy(scenario.DefaultStrategy)
	require.NoError(t, err)
	var rep *scenario.Report
	for seed := uint64(1); seed <= 12 && (rep == nil || rep.Status == scenario.StatusOK); seed++ {
		rep, err = scenario.HuntRun(b, def, seed, 0, false)
		require.NoError(t, err)
	}
	require.Equal(t, scenario.StatusMisuse, rep.Status, "%s", rep.Error)
	assert.True(t, scenario.Detected(rep.Status))
	var refused *cco.MisuseError
	require.True(t, errors.As(rep.Err, &refused), "%v", rep.Err)
	assert.Equal(t, "ccoCommDestroy", refused.Call)
	assert.Contains(t, rep.Error, "work in flight")
	assert.Contains(t, scenario.Explain(rep.Err), "misuse: ccoCommDestroy (rank 0)")
	assert.Error(t, rep.ExitErr())

	for _, c := range []struct {
		status string
		want   bool
	}{{scenario.StatusOK, false}, {scenario.StatusError, false}, {scenario.StatusHang, true}, {scenario.StatusMismatch, true}, {scenario.StatusRace, true}, {scenario.StatusMisuse, true}} {
		assert.Equal(t, c.want, scenario.Detected(c.status), c.status)
	}
}
