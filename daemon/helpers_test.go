package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/scentest"
	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/all"
)

// The registry helpers the CLI's tests share (package scentest).
var (
	withScenario = scentest.Register
	mustScenario = scentest.Lookup
	hangingSeed  = scentest.HangingSeed
)

// runDigest is the digest of the run "emud run" makes with o (the
// library call it makes, without the daemon).
func runDigest(t *testing.T, name string, o scenario.Options) string {
	t.Helper()
	rep := scenario.RunOnce(mustScenario(t, name), o)
	require.NotEmpty(t, rep.Digest(), rep.Error)
	return rep.Digest()
}
