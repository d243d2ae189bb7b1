package issuer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetReset: a Set made again after Reset holds only what was made
// since, in the order made, and a failed make keeps nothing.
func TestSetReset(t *testing.T) {
	var s Set[string]
	mk := func(v string) func() (string, error) { return func() (string, error) { return v, nil } }
	for _, id := range []QueueID{{GPU: 0, Peer: 1}, {GPU: 1, Peer: 0}, {GPU: 0, Peer: 1, Q: 1}} {
		_, err := s.Make(id, mk(id.String()))
		require.NoError(t, err)
	}
	s.Reset()
	assert.Empty(t, s.All())
	_, ok := s.Get(QueueID{GPU: 0, Peer: 1, Q: 0})
	assert.False(t, ok, "a queue made before Reset is gone")
	_, err := s.Make(QueueID{GPU: 2, Peer: 3, Q: 0}, func() (string, error) { return "", errors.New("no") })
	require.Error(t, err)
	got, err := s.Make(QueueID{GPU: 1, Peer: 0, Q: 0}, mk("again"))
	require.NoError(t, err)
	assert.Equal(t, "again", got, "made anew, not the one before Reset")
	assert.Equal(t, []string{"again"}, s.All())
}
