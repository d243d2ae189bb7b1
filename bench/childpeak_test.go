package bench

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/peakrss"
)

func TestChildPeakParse(t *testing.T) {
	for _, tc := range []struct {
		name, stderr string
		want         uint64
		ok           bool
	}{
		{"the child's line", "progress\n" + childPeakPrefix + "81234 KiB\n", 81234 << 10, true},
		{"among other lines", "emud: something\n" + childPeakPrefix + "7 KiB\nmore\n", 7 << 10, true},
		{"no line, no process state", "progress\n", 0, false},
		{"a garbled line", childPeakPrefix + "lots KiB\n", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := childPeak(tc.stderr, nil)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// A child reports its own peak, not the one its rusage inherits from a
// parent that had grown: the parent here touches 256 MiB first, and the
// child (this test binary, which exits at once) reports far less.
func TestChildPeakIsTheChilds(t *testing.T) {
	if os.Getenv(ChildEnv) != "" {
		ReportChildPeak(os.Stderr)
		os.Exit(0)
	}
	if _, ok, _ := peakrss.Read(peakrss.Self); !ok {
		t.Skip("no /proc/self/status VmHWM here")
	}
	big := make([]byte, 256<<20)
	for i := range big {
		big[i] = 1
	}
	c := exec.Command(os.Args[0], "-test.run", "^TestChildPeakIsTheChilds$")
	c.Env = append(os.Environ(), ChildEnv+"=1")
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	peak, ok := childPeak(string(out), c.ProcessState)
	require.True(t, ok, string(out))
	assert.Less(t, peak, uint64(128<<20), "the child's own peak, not the parent's %d MiB: %s", len(big)>>20, out)
	assert.Equal(t, byte(1), big[len(big)-1])
}
