package scenario_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
)

// A planted scenario that fails for a reason other than its bug (its
// setup, emud's own error) is not a detection: hunt counts it apart
// (Result.Failed) and its verdict is an error naming the seed and the
// failure, even where other seeds did detect the bug. Before, every
// failing status counted as found, so a broken setup read as a bug found
// on every seed. A detection (here wrong data) still counts.
func TestHuntDoesNotCountErrors(t *testing.T) {
	setup := errors.New("setup: cannot open the device")
	for _, c := range []struct {
		name     string
		run      func(o scenario.Options) (*scenario.Outcome, error)
		detected int
		failed   int
		verdict  string
	}{
		{"setup fails on every seed", func(scenario.Options) (*scenario.Outcome, error) { return nil, setup }, 0, 4,
			"hunt: broken under random failed on 4 of 4 seeds without a detection (not counted as found), first at seed 1: broken failed (seed 1): setup: cannot open the device"},
		{"setup fails on odd seeds, wrong data on even ones", func(o scenario.Options) (*scenario.Outcome, error) {
			if o.Seed%2 == 1 {
				return nil, setup
			}
			return nil, &scenario.MismatchError{Scenario: "broken", Seed: o.Seed, Detail: "block 0 wrong", Wrong: 1}
		}, 2, 2, "failed on 2 of 4 seeds without a detection"},
		{"wrong data on every seed", func(o scenario.Options) (*scenario.Outcome, error) {
			return nil, &scenario.MismatchError{Scenario: "broken", Seed: o.Seed, Detail: "block 0 wrong", Wrong: 1}
		}, 4, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := &scenario.Scenario{Name: "broken", Planted: &scenario.Planted{Fixed: "broken-fixed", Class: "test"}, Run: c.run}
			st := scenario.Strategy{Name: "random"}
			h := &scenario.Hunting{Bugs: []*scenario.Scenario{sc}, Strategies: []scenario.Strategy{st}, First: 1, Seeds: 4,
				Res: [][]scenario.Result{{scenario.Hunt(sc, st, 1, 4, false)}}}
			r := h.Res[0][0]
			assert.Equal(t, c.detected, r.Detected, "detections")
			assert.Equal(t, c.failed, r.Failed, "failures that are not detections")
			if c.verdict == "" {
				assert.NoError(t, h.ExitErr())
				return
			}
			require.Error(t, h.ExitErr())
			assert.Contains(t, h.ExitErr().Error(), c.verdict)
		})
	}
}
