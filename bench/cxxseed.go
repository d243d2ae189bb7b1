package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// benchCxxSeed is issue 43's C++ line: what a seed of a C++ program costs
// in a sweep (emud explore -- PROGRAM), warm (in a seed server: the
// program's seed form loaded, run and unloaded in a process that stays)
// and as a process per seed (--process-per-seed), against a Go seed of
// the same shape (the alltoall scenario, 8 ranks, 64 KiB a pair, in this
// process on one P, as a worker of emud explore runs it). The programs:
// examples/cxx/bench/alltoall_sum.cpp, whose host check is a word-wise
// block hash like the Go seed's, and examples/cxx/alltoall_put.cpp, whose
// check adds a byte-wise FNV-1a over the 4 MiB received. The warm
// alltoall_sum seed is split by its parts (the program's argv[1]), each
// timed in a server of its own: an empty main (what the server pays a
// seed: the request, the environment, dlopen, exit handlers, dlclose and
// the reset), eight rank threads started and joined (the join's emud call
// starts the emulation: the node is built), the emulation without the
// host's fill and check loops, and the whole program; each part is the
// difference to the one before. Every seed runs with explore's default
// perturbation (--perturb 1) and the random strategy (no PCT step probe).
// A figure is wall (CPU) per seed; a server's CPU is read from /proc
// around the timed seeds (in 10 ms ticks), after two seeds not timed, so
// the server's start is not in it. Without emud's source tree, a C++
// compiler or /proc, the row says so.
func benchCxxSeed(seeds int) (benchRow, error) {
	const what = "C++ seed under explore vs Go seed (8 ranks, 64 KiB a pair)"
	if seeds == 0 {
		return benchRow{what, "skipped", "not with --quick (building the C++ programs takes most of a minute)"}, nil
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return benchRow{what, "skipped", "no /proc: a seed server's CPU time is read there"}, nil
	}
	load0 := loadAverage()
	sum, cleanupS, skip := buildCxx(filepath.Join("bench", "alltoall_sum.cpp"))
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanupS()
	put, cleanupP, skip := buildCxx("alltoall_put.cpp")
	if skip != "" {
		return benchRow{what, "skipped", skip}, nil
	}
	defer cleanupP()

	// The parts by the program's argv[1], the whole program last.
	var part [4]procTimes
	for i, args := range [][]string{{"empty"}, {"threads"}, {"nohost"}, nil} {
		t, err := warmSeeds(sum, args, seeds, args == nil)
		if err != nil {
			return benchRow{}, err
		}
		part[i] = t
	}
	sumWarm := part[3]
	putWarm, err := warmSeeds(put, nil, seeds, true)
	if err != nil {
		return benchRow{}, err
	}
	sumProc, err := processSeeds(sum, seeds)
	if err != nil {
		return benchRow{}, err
	}
	putProc, err := processSeeds(put, seeds)
	if err != nil {
		return benchRow{}, err
	}
	goSeed, err := goSeeds(seeds)
	if err != nil {
		return benchRow{}, err
	}
	ratio := func(a procTimes) string {
		return fmt.Sprintf("%.1f× (%.1f× CPU)", a.per().Seconds()/goSeed.per().Seconds(), a.cpuPer().Seconds()/goSeed.cpuPer().Seconds())
	}
	diff := func(a, b procTimes) string {
		r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
		return fmt.Sprintf("%v (%v)", r(a.per()-b.per()), r(a.cpuPer()-b.cpuPer()))
	}
	return benchRow{what,
		fmt.Sprintf("warm: alltoall_sum %s, alltoall_put %s; as processes %s and %s",
			ratio(sumWarm), ratio(putWarm), ratio(sumProc), ratio(putProc)),
		fmt.Sprintf("%d seeds each (Go %d), wall (CPU) per seed: Go %s; alltoall_sum warm %s: the server's own per seed (empty main) %s, "+
			"eight rank threads and the node %s, the emulation with its hipMemcpys (no host loops) %s, the host's fill and check loops %s; "+
			"alltoall_put warm %s; as processes alltoall_sum %s, alltoall_put %s; "+
			"alltoall_sum does more than the Go seed: it fills and copies its send buffers every seed (the Go windows keep their pattern), "+
			"copies the received blocks back and hashes them on the host (the Go check hashes them as they land); load average %s, then %s",
			seeds, goSeed.n, goSeed, sumWarm, part[0], diff(part[1], part[0]), diff(part[2], part[1]), diff(part[3], part[2]),
			putWarm, sumProc, putProc, load0, loadAverage())}, nil
}

// sweepEnv is a swept seed's environment (seed 0: the server's):
// explore's default perturbation with the random strategy, the summary
// line, and this process's environment less what explore sets itself.
func sweepEnv(seed int) []string {
	set := []string{"EMUD_PERTURB=1", "EMUD_STRATEGY=random", "EMUD_SUMMARY=1"}
	if seed > 0 {
		set = append(set, "EMUD_SEED="+strconv.Itoa(seed))
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "EMUD_SEED", "EMUD_PERTURB", "EMUD_STRATEGY", "EMUD_SUMMARY", "EMUD_RACE", "EMUD_TRACE", "EMUD_PCT_DEPTH", "EMUD_PCT_STEPS", "GOMAXPROCS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, set...)
}

// warmSeeds runs prog with args on seeds seeds in one seed server of its
// seed form, after two seeds not timed; each must exit 0 and, with pass,
// say PASS.
func warmSeeds(prog string, args []string, seeds int, pass bool) (procTimes, error) {
	form, err := cxx.ReadSeedForm(prog)
	if err != nil {
		return procTimes{}, fmt.Errorf("bench: %w", err)
	}
	srv, err := cxx.NewSeedServer(form.Server, form.Object, sweepEnv(0))
	if err != nil {
		return procTimes{}, fmt.Errorf("bench: %w", err)
	}
	argv := append([]string{prog}, args...)
	run := func(seed int) error {
		var out, errb bytes.Buffer
		end, err := srv.Run(argv, sweepEnv(seed), &out, &errb)
		if err != nil {
			return fmt.Errorf("bench: %s: %w", strings.Join(argv, " "), err)
		}
		if end.Code != 0 || (pass && !bytes.Contains(out.Bytes(), []byte(": PASS"))) {
			return fmt.Errorf("bench: %s, seed %d in a seed server: %v\n%s%s", strings.Join(argv, " "), seed, end, out.Bytes(), errb.Bytes())
		}
		return nil
	}
	var t procTimes
	err = func() error {
		for s := 1; s <= 2; s++ {
			if err := run(1000 + s); err != nil {
				return err
			}
		}
		pid := srv.Pid()
		cpu0, err := procCPU(pid)
		if err != nil {
			return err
		}
		start := time.Now()
		for s := 1; s <= seeds; s++ {
			if err := run(s); err != nil {
				return err
			}
		}
		t.wall = time.Since(start)
		if srv.Starts() != 1 || srv.Pid() != pid {
			return fmt.Errorf("bench: %s: the seed server was started %d times in %d seeds: not one warm server", strings.Join(argv, " "), srv.Starts(), seeds+2)
		}
		cpu1, err := procCPU(pid)
		t.cpu, t.n = cpu1-cpu0, seeds
		return err
	}()
	if cerr := srv.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("bench: %w", cerr)
	}
	return t, err
}

// processSeeds runs prog as a process on each of seeds seeds.
func processSeeds(prog string, seeds int) (procTimes, error) {
	var t procTimes
	for s := 1; s <= seeds; s++ {
		c := exec.Command(prog)
		c.Env = sweepEnv(s)
		start := time.Now()
		out, err := c.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte(": PASS")) {
			return t, fmt.Errorf("bench: %s, seed %d as a process: %v\n%s", prog, s, err, out)
		}
		t.add(time.Since(start), c.ProcessState)
	}
	return t, nil
}

// goSeeds times the alltoall scenario of the C++ programs' shape with
// the same perturbation, in this process on one P: an explore of at least
// 40 seeds (they cost milliseconds), after one of ten not timed, which
// warms what the process keeps between explores (the pattern cache, the
// kept mappings).
func goSeeds(seeds int) (procTimes, error) {
	sc, err := scenario.Lookup("alltoall")
	if err != nil {
		return procTimes{}, err
	}
	o := scenario.Options{Ranks: 8, Bytes: 64 << 10, Queues: cco.DefaultSdmaQueues, Perturb: 1, Strategy: sim.StrategyRandom}
	defer oneProc()()
	var t procTimes
	for _, n := range []int{10, max(seeds, 40)} {
		cpu0, start := selfCPU(), time.Now()
		x := scenario.Explore(sc, o, 1, n, 1, nil)
		t = procTimes{wall: time.Since(start), cpu: selfCPU() - cpu0, n: n}
		if f := x.Found(); f != nil {
			return procTimes{}, fmt.Errorf("bench: alltoall: seed %d %s", f.O.Seed, f.Status)
		}
	}
	return t, nil
}

// procCPU is process pid's user and system time (/proc/PID/stat, in the
// kernel's 100 Hz ticks).
func procCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, errors.New("bench: no seed server process to read the CPU time of")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime from a /proc/PID/stat line: the
// 14th and 15th fields, counted past the command's parenthesis (a
// command may hold spaces and parentheses).
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("bench: /proc stat line without a command: %.40q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("bench: /proc stat line with %d fields past the command, not 13 or more", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14 and 15: the 3rd is the state
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("bench: /proc stat CPU time %q", s)
		}
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
