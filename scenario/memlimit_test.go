package scenario

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
)

// The memory a process may use is its cgroup's limit where that is lower
// than the machine's: a daemon in a 4 GiB container sized its default
// budget by the host's memory and was killed running what it admitted.
func TestMemLimitFromCgroup(t *testing.T) {
	meminfo := &fstest.MapFile{Data: []byte("MemTotal:       67108864 kB\nMemFree: 1 kB\n")} // 64 GiB
	for _, tc := range []struct {
		name   string
		files  fstest.MapFS
		want   uint64
		source string
	}{
		{"no cgroup", fstest.MapFS{"proc/meminfo": meminfo}, 64 << 30, "physical memory"},
		{"v2 at its path", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("0::/box/job\n")},
			"sys/fs/cgroup/box/job/memory.max": {Data: []byte("4294967296\n")}}, 4 << 30, "sys/fs/cgroup/box/job/memory.max"},
		{"v2 namespace root", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("0::/\n")},
			"sys/fs/cgroup/memory.max": {Data: []byte("2147483648\n")}}, 2 << 30, "sys/fs/cgroup/memory.max"},
		{"v2 max", fstest.MapFS{"proc/meminfo": meminfo, "sys/fs/cgroup/memory.max": {Data: []byte("max\n")}}, 64 << 30, "physical memory"},
		{"v1", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("5:cpu,cpuacct:/x\n4:memory:/process/abc\n")},
			"sys/fs/cgroup/memory/process/abc/memory.limit_in_bytes": {Data: []byte("1073741824\n")}}, 1 << 30, "memory.limit_in_bytes"},
		{"v1 no limit", fstest.MapFS{"proc/meminfo": meminfo, "sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}}, 64 << 30, "physical memory"},
		{"limit over the machine", fstest.MapFS{"proc/meminfo": meminfo, "sys/fs/cgroup/memory.max": {Data: []byte("137438953472\n")}}, 64 << 30, "physical memory"},
		{"nothing readable", fstest.MapFS{}, 0, "physical memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memLimitFrom(tc.files)
			assert.Equal(t, tc.want, got.Bytes)
			assert.Contains(t, got.Source, tc.source)
		})
	}
}

// A budget over the machine's memory is refused, naming it.
func TestCheckMemBudget(t *testing.T) {
	lim := MachineMemory()
	if lim.Bytes == 0 {
		t.Skip("this machine's memory cannot be read")
	}
	assert.NoError(t, CheckMemBudget(lim.Bytes/2))
	err := CheckMemBudget(lim.Bytes + 1<<30)
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "invalid --mem-budget")
		assert.Contains(t, err.Error(), lim.Source)
	}
}

// Whatever the cgroup files hold, the limit read is the machine's or a
// lower one that a file states, never a panic.
func FuzzMemLimitFrom(f *testing.F) {
	f.Add("0::/box\n", "4294967296\n", "MemTotal: 1024 kB\n")
	f.Add("4:memory:/a/b\n5:cpu:/\n", "max", "MemTotal: x kB")
	f.Add("::\n0::/../..\n", "-1", "")
	f.Fuzz(func(t *testing.T, cgroup, limit, meminfo string) {
		fsys := fstest.MapFS{
			"proc/self/cgroup":             {Data: []byte(cgroup)},
			"proc/meminfo":                 {Data: []byte(meminfo)},
			"sys/fs/cgroup/memory.max":     {Data: []byte(limit)},
			"sys/fs/cgroup/box/memory.max": {Data: []byte(limit)},
		}
		total := memTotal(fsys)
		got := memLimitFrom(fsys)
		if total > 0 {
			assert.LessOrEqual(t, got.Bytes, total)
		}
		assert.NotEmpty(t, got.Source)
	})
}
