package hostmem

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A KeptList gives back a buffer of the asked length: one kept under the
// asked content (a hit), else preferably one of no content, so that those
// holding a content last for the callers that ask for it; Drain empties it.
func TestKeptList(t *testing.T) {
	bufs := make([][]byte, 4)
	for i := range bufs {
		bufs[i] = make([]byte, 4096)
	}
	var k KeptList
	k.Put(bufs[0], "send-0")
	k.Put(bufs[1], "")
	k.Put(bufs[2], "send-1")
	k.Put(make([]byte, 8192), "")
	assert.Equal(t, uint64(3*4096+8192), k.Bytes())

	for _, tc := range []struct {
		name string
		key  string
		want []byte
		hit  bool
	}{
		{"a hit", "send-0", bufs[0], true},
		{"no content asked: the one with none", "", bufs[1], false},
		{"a content nobody kept: the last", "send-9", bufs[2], false},
		{"none of the length left", "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, hit := k.Take(4096, tc.key)
			assert.Equal(t, tc.hit, hit)
			if tc.want == nil {
				assert.Nil(t, b)
				return
			}
			assert.Same(t, &tc.want[0], &b[0])
		})
	}
	assert.Equal(t, uint64(8192), k.Bytes())
	var drained []int
	k.Drain(func(b []byte, key string) { drained = append(drained, len(b)) })
	assert.Equal(t, []int{8192}, drained)
	assert.Zero(t, k.Bytes())
	b, _ := k.Take(8192, "")
	assert.Nil(t, b)
}

// Kept and taken with no content, a KeptList is a stack a length: the
// last buffer kept of the asked length first, none of another length
// (engine's zeroed buffers and rings).
func TestKeptListStack(t *testing.T) {
	var k KeptList
	bufs := [][]byte{make([]byte, 4096), make([]byte, 4096), make([]byte, 8192), make([]byte, 4096)}
	for _, b := range bufs {
		k.Put(b, "")
	}
	for _, tc := range []struct {
		name string
		n    uint64
		want []byte
	}{
		{"the last of 4 KiB", 4096, bufs[3]},
		{"the one before", 4096, bufs[1]},
		{"the 8 KiB one", 8192, bufs[2]},
		{"the first", 4096, bufs[0]},
		{"none left", 4096, nil},
		{"no length kept", 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, hit := k.Take(tc.n, "")
			assert.False(t, hit, "no content asked: never a hit")
			if tc.want == nil {
				assert.Nil(t, b)
				return
			}
			assert.Same(t, &tc.want[0], &b[0])
		})
	}
	assert.Zero(t, k.Bytes())
}
