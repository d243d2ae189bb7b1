package bench

import (
	"fmt"
	"time"
)

// benchCxxProcs times the 8-rank all-to-all with its ranks as 8 forked
// processes (examples/cxx/procs/fork_alltoall.cpp, MORI's fork harness
// shape) against the same ranks as 8 threads (thread_alltoall.cpp), on
// the same seeds, each run a whole process: what ranks as processes cost
// (every call of a forked rank, host or device, is a round trip on its
// socket to the coordinator). Both must end at the same emulated time.
func benchCxxProcs(runs int) (benchRow, error) {
	const what = "C++ alltoall, 8 processes vs 8 threads (fork_alltoall.cpp)"
	if runs == 0 {
		return benchRow{what, "skipped", "not with --quick (building the C++ programs takes most of a minute)"}, nil
	}
	forked, cleanupF, skip := buildCxx("procs/fork_alltoall.cpp")
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanupF()
	threads, cleanupT, skip := buildCxx("procs/thread_alltoall.cpp")
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanupT()
	var fP, tP procTimes
	var fIn, tIn time.Duration
	for i := range runs {
		start := time.Now()
		f, err := runCxx(forked, i+1)
		if err != nil {
			return benchRow{}, err
		}
		fP.add(time.Since(start), f.ps)
		fIn += f.wall
		start = time.Now()
		th, err := runCxx(threads, i+1)
		if err != nil {
			return benchRow{}, err
		}
		tP.add(time.Since(start), th.ps)
		tIn += th.wall
		if f.end != th.end {
			return benchRow{}, fmt.Errorf("bench: seed %d: the processes end at %v, the threads at %v", i+1, f.end, th.end)
		}
	}
	n := time.Duration(runs)
	return benchRow{what,
		fmt.Sprintf("%.1f× (%.1f× from the first call)", fP.per().Seconds()/tP.per().Seconds(), (fIn/n).Seconds()/(tIn/n).Seconds()),
		fmt.Sprintf("%d seeds, wall (CPU) per run as a whole process: processes %s, threads %s; from the first emud call to exit %v and %v",
			runs, fP, tP, (fIn / n).Round(time.Millisecond), (tIn / n).Round(time.Millisecond))}, nil
}
