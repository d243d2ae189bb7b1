package peakrss

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Self is this process's status file.
const Self = "/proc/self/status"

// Read returns the VmHWM of a status file in bytes; ok is false if the
// file does not exist (not Linux) or has no such line.
func Read(status string) (peak uint64, ok bool, err error) {
	f, err := os.Open(status)
	if os.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !found {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: VmHWM %q: %v", status, strings.TrimSpace(rest), err)
		}
		return kb << 10, true, nil
	}
	return 0, false, sc.Err()
}
