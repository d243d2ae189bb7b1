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
