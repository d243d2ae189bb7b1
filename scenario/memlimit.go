package scenario

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
)

// MemLimit is the memory this process may use: the machine's physical
// memory or, when lower, its cgroup's limit (a container's), and which of
// the two it is.
type MemLimit struct {
	Bytes  uint64 // 0: unknown
	Source string // "physical memory" or the cgroup file that set it
}

// MachineMemory is the memory this process may use, read once: a daemon in
// a 4 GiB container must size its budget by the 4 GiB, not by the host's
// memory (it was killed by the kernel after admitting a run the host could
// hold).
var MachineMemory = sync.OnceValue(func() MemLimit { return memLimitFrom(os.DirFS("/")) })

// noCgroupLimit is the value from which a cgroup v1 limit means none (the
// kernel writes the largest page multiple under 2^63).
const noCgroupLimit = 1 << 62

// memLimitFrom reads MemTotal in proc/meminfo and the memory cgroup of
// proc/self/cgroup under sys/fs/cgroup (v2's memory.max, v1's
// memory.limit_in_bytes) from fsys, the root file system, and keeps the
// lower. Files it cannot read are skipped.
func memLimitFrom(fsys fs.FS) MemLimit {
	lim := MemLimit{Bytes: memTotal(fsys), Source: "physical memory"}
	for _, file := range cgroupFiles(fsys) {
		b, err := fs.ReadFile(fsys, file)
		if err != nil || len(b) > 64 {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v == 0 || v >= noCgroupLimit { // "max", or v1's "no limit"
			continue
		}
		if lim.Bytes == 0 || v < lim.Bytes {
			lim = MemLimit{Bytes: v, Source: "memory (the cgroup limit in /" + file + ")"}
		}
	}
	return lim
}

// cgroupFiles are the limit files of this process's memory cgroup, v2
// and v1, at its own path and at the mount's root (a container sees its
// cgroup as the root of its namespace).
func cgroupFiles(fsys fs.FS) []string {
	files := []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"}
	f, err := fsys.Open("proc/self/cgroup")
	if err != nil {
		return files
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controllers:path; v2's line is "0::/path".
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") || parts[2] == "/" {
			continue
		}
		p := strings.TrimPrefix(path.Clean(parts[2]), "/")
		switch {
		case parts[1] == "":
			files = append(files, path.Join("sys/fs/cgroup", p, "memory.max"))
		case containsField(parts[1], "memory"):
			files = append(files, path.Join("sys/fs/cgroup/memory", p, "memory.limit_in_bytes"))
		}
	}
	return files
}

func containsField(list, name string) bool {
	for f := range strings.SplitSeq(list, ",") {
		if f == name {
			return true
		}
	}
	return false
}

// memTotal is MemTotal in proc/meminfo, 0 where it cannot be read.
func memTotal(fsys fs.FS) uint64 {
	f, err := fsys.Open("proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kib, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kib << 10
		}
	}
	return 0
}

// CheckMemBudget refuses a --mem-budget over the memory this process may
// use (MachineMemory): runs admitted by it would be killed by the kernel
// instead of refused.
func CheckMemBudget(budget uint64) error {
	if lim := MachineMemory(); lim.Bytes > 0 && budget > lim.Bytes {
		return fmt.Errorf("invalid --mem-budget %s: over this machine's %s of %s; runs it admits would be killed, not refused",
			ApproxBytes(budget), ApproxBytes(lim.Bytes), lim.Source)
	}
	return nil
}
