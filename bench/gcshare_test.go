package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// gcShare's words for a row's collections: a row that ran none says so
// (the old share, of runtime/metrics' lumpy estimate of the CPU used,
// read "0 GCs, GC 15553400% of CPU" there), and the collector's estimate,
// an overestimate, never makes a share over 100%.
func TestGCShare(t *testing.T) {
	for _, c := range []struct {
		name    string
		n       uint32
		gc, cpu time.Duration
		want    string
	}{
		{"no collection", 0, time.Millisecond, time.Nanosecond, "0 GCs"},
		{"a share", 3, 2 * time.Millisecond, 100 * time.Millisecond, "3 GCs, GC 2% of CPU"},
		{"estimate over the CPU time", 1, time.Second, time.Millisecond, "1 GCs, GC 100% of CPU"},
		{"negative estimate", 2, -time.Millisecond, time.Second, "2 GCs, GC 0% of CPU"},
		{"no CPU time read", 1, time.Millisecond, 0, "1 GCs (no CPU time read: no GC share)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, gcShare(c.n, c.gc, c.cpu))
		})
	}
}
