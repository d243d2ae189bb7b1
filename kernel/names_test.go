package kernel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/emud-dev/emud/sim"
)

// TestBlockNames: the names made from one string are the ones Sprintf
// made before (traces, hang reports and digests name blocks and waves).
func TestBlockNames(t *testing.T) {
	tests := []struct {
		name         string
		gpu, b, wave int
	}{
		{"k", 0, 0, 1},
		{"alltoall", 7, 3, 2},
		{"a/b kernel", 12, 1023, 16},
		{"", 1, 10, 11},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d/%d/%d", tc.name, tc.gpu, tc.b, tc.wave), func(t *testing.T) {
			names, prefix := blockNames(sim.New(sim.Config{}), Config{Name: tc.name, GPU: tc.gpu}, tc.b, tc.wave)
			assert.Equal(t, fmt.Sprintf("%s/gpu%d/b%d", tc.name, tc.gpu, tc.b), names[:prefix])
			for wi := 0; wi < tc.wave; wi++ {
				assert.Equal(t, fmt.Sprintf("%s/gpu%d/b%d/w%d", tc.name, tc.gpu, tc.b, wi), waveName(names, prefix, wi))
			}
		})
	}
}
