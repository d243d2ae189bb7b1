package bench

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/emud-dev/emud/internal/peakrss"
)

// A child's rusage says the wrong peak RSS: Go starts a child with vfork,
// and exec records the parent's high-water RSS as the child's (Linux's
// exec_mmap), so a shard process of 80 MiB read as the 3 GiB the bench
// had reached. A child of the bench prints its own peak instead, the
// high-water mark of the memory it exec'd into (/proc/self/status VmHWM),
// as the last line of its stderr.
const childPeakPrefix = "emud bench child: peak RSS "

// ReportChildPeak writes the process's own peak RSS to w when the bench
// started it (ChildEnv), for childPeak; otherwise nothing.
func ReportChildPeak(w io.Writer) {
	if os.Getenv(ChildEnv) == "" {
		return
	}
	if peak, ok, err := peakrss.Read(peakrss.Self); ok && err == nil {
		fmt.Fprintf(w, "%s%d KiB\n", childPeakPrefix, peak>>10)
	}
}

// childPeak is a finished child's peak RSS in bytes: the line
// ReportChildPeak wrote to its stderr, or else (a child that could not
// say) its rusage's, which may be the bench's own.
func childPeak(stderr string, ps *os.ProcessState) (uint64, bool) {
	for l := range strings.Lines(stderr) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), childPeakPrefix); ok {
			if kib, err := strconv.ParseUint(strings.TrimSuffix(v, " KiB"), 10, 64); err == nil {
				return kib << 10, true
			}
		}
	}
	if ps == nil {
		return 0, false
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return uint64(ru.Maxrss) << 10, true // Linux reports KiB
	}
	return 0, false
}
