package lsa

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A queue's name is the same whether it comes from the table made once
// per process or is formatted, and a name from the table costs no
// allocation (a seed names each of its queues several times).
func TestQueueIDString(t *testing.T) {
	tests := []struct {
		id     QueueID
		tabled bool
	}{
		{QueueID{0, 0, 0}, true},
		{QueueID{3, 5, 1}, true},
		{QueueID{nameGPUs - 1, nameGPUs - 1, DefaultQueuesPerPeer - 1}, true},
		{QueueID{nameGPUs, 0, 0}, false},
		{QueueID{0, 63, 0}, false},
		{QueueID{1, 2, DefaultQueuesPerPeer}, false},
		{QueueID{-1, 0, 0}, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.id.GPU, tc.id.Peer, tc.id.Q), func(t *testing.T) {
			assert.Equal(t, fmt.Sprintf("sdma gpu%d→gpu%d q%d", tc.id.GPU, tc.id.Peer, tc.id.Q), tc.id.String())
			if tc.tabled {
				assert.Zero(t, testing.AllocsPerRun(10, func() { _ = tc.id.String() }))
			}
		})
	}
}
