package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -O2
#cgo LDFLAGS: -ldl -lpthread
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lane.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/issuer"
	emujob "github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
	"github.com/emud-dev/emud/trace"
)

func main() {}

// Exit statuses of a C++ program whose emulation failed (as emud's).
const (
	exitFailed = 1
	exitHang   = 2
	exitRace   = 5
)

// rt is the process's one emulation: every rank thread of the program
// shares it.
var rt emulation

// srvScratch is a seed server's engine.Scratch, lent to each seed's
// simulator and node in turn (start).
var srvScratch *engine.Scratch

// emulation is rt's type: a seed server's reset (seedsrv.go) makes it
// anew between seeds.
type emulation struct {
	once  sync.Once
	mu    sync.Mutex // hosts: exported calls arrive from real threads at once
	hosts []*host
	err   error // from start

	j    *emujob.Job
	s    *sim.Sim
	mem  *engine.Memory
	gpus int
	pool *kernel.Pool // the lanes alive at once of every launch (resident.go)
	// announced: every device store since the last wake of every watcher
	// (notifyAll) was announced by a Notify: a host's code has not run
	// since (its next call clears it: flushStores), and no lane's code
	// called memcpy, memmove or memset on device memory (emud_lane's
	// unlogged). A lane's fence then need not wake every watcher
	// (fenceWakesAll).
	announced bool
	ran       chan error // sim.Run's result
	// adopted is closed when the main thread's first call has adopted
	// the threads it started before it (adoptEarly).
	adopted chan struct{}
	seed    uint64
	stop    chan struct{} // closed by a seed server's reset: the spin watch ends

	count     *counter        // EMUD_SUMMARY: packets retired (not with EMUD_TRACE, whose recorder observes the node)
	trace     *trace.Recorder // EMUD_TRACE's recorder, written at exit
	tracePath string
	profile   *os.File  // EMUD_CPUPROFILE's file, written at exit
	began     time.Time // the first call, for EMUD_SUMMARY's wall time
	// EMUD_USAGE's split of the process's CPU time: at the first call
	// and when the node was built.
	atCall, atBuilt usage

	// Emulation state: touched only by the running actor.
	comms    []*cco.Comm
	windows  map[uintptr]cco.Window
	devcomms []cco.DevComm
	devDead  []bool // by dev comm handle - 1: ccoDevCommDestroy'd
	// devDying holds, by comm id, the NCCL dev comms whose ranks called
	// ncclDevCommDestroy from a thread that drives several of the comm's
	// ranks, before the comm's last rank did (devCommDestroyAll).
	devDying map[cco.UniqueId][]devDying
	streams  []*stream
	events   []*event
	hostFns  []*hostFn // hipLaunchHostFunc's stream work, by token - 1 (hostfunc.go)
	commUID  []cco.UniqueId
	commSite []string   // the file:line of each comm's ccoCommCreate
	nccl     *ncclState // NCCL's host collectives in flight (nccl_coll.go)
	barriers map[cco.UniqueId]*barrier
	budget   launchBudget                 // a launch's memory budget (budget.go)
	splits   map[splitKey]*commSplitState // ncclCommSplit's rendezvous in progress (split.go)
	splitSeq map[uint64]int               // by comm handle: the ncclCommSplit calls its rank made
	lastErr  []string
}

func envInt(name string, def int) (int, error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a non-negative integer", name, v)
	}
	return n, nil
}

// nodeGPUs is the GPU count of the node preset (cco.MI355X: the eight
// OAM GPUs of one MI355X platform; the gfx1250 preset keeps its node):
// EMUD_GPUS may ask for fewer, never more, since one node's GPUs are
// all a comm's LSA ranks.
const nodeGPUs = 8

// DefaultBase is where a C++ program's device memory starts: GPU g's
// slice is [DefaultBase + g·64 GiB, …). engine.DefaultBase (0x7f00…)
// lies in the range where Linux places a process's own mmaps (malloc of
// large buffers, libraries, thread stacks), so a host buffer could sit
// inside a GPU slice; 32 TiB is far below that and far above the
// executable and its malloc heap. The Go runtime's heap can be anywhere
// in the low 64 TiB, so lane.c reserves the range for 64 GPUs before the
// runtime starts (mapDevice). EMUD_BASE (hex, a multiple of 4 GiB) moves it.
const DefaultBase = 0x2000_0000_0000

func envBase() (uint64, error) {
	v := os.Getenv("EMUD_BASE")
	if v == "" {
		return DefaultBase, nil
	}
	b, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
	if err != nil || b == 0 || b%(4<<30) != 0 {
		return 0, fmt.Errorf("EMUD_BASE=%q: want a hex address, a non-zero multiple of 4 GiB", v)
	}
	return b, nil
}

// mapDevice is the node's Backing: each region mapped at its device
// address inside the range lane.c reserved before the Go runtime started
// (so the Go heap, placed at random, is never there), or as engine.MapAt
// maps it when the range could not be reserved.
func mapDevice(base, size uint64) ([]byte, error) {
	switch rc := C.emud_map_device(C.uint64_t(base), C.uint64_t(size)); {
	case rc == 0:
		return unsafe.Slice((*byte)(ptr(base)), size), nil
	case rc < 0:
		return engine.MapAt(base, size)
	default:
		return nil, fmt.Errorf("map at %#x (%d B): %w", base, size, syscall.Errno(rc))
	}
}

// oneProc runs the emulator's Go code on one P, unless GOMAXPROCS is set:
// the simulation is sequential (one actor at a time), and with a second P
// every handoff between actors woke an idle thread to steal the goroutine
// just readied, a futex wake and a thread switch each (alltoall_rounds.cpp
// at 801 rounds: 12,900 context switches and ~750 ms CPU on 2 cores, 760
// and ~500 ms on one P; packets.cpp at 2000 rounds: 2.5 s CPU, 1.9 s).
// Host threads lose nothing: they take turns, and a lane spinning in C
// holds no P (sysmon hands it on, as for any long C call).
func oneProc() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// start builds the emulation from the environment: EMUD_SEED (1),
// EMUD_GPUS (8), EMUD_PERTURB (0), EMUD_RACE, and MORI_* as a MORI program
// reads them.
func start() error {
	rt.atCall = usageNow()
	if seedServing {
		// The object's constructors may have set variables in C's
		// environ (--offload-arch's EMUD_ARCH) that Go's copy lacks.
		syncEnvFromC()
	}
	oneProc()
	seed, err := envInt("EMUD_SEED", 1)
	if err != nil {
		return err
	}
	gpus, err := envInt("EMUD_GPUS", 8)
	if err != nil {
		return err
	}
	if gpus < 1 || gpus > nodeGPUs {
		return fmt.Errorf("EMUD_GPUS=%d: the emulated node (the MI355X platform preset, also under EMUD_ARCH=gfx1250) has %d GPUs: need 1..%d", gpus, nodeGPUs, nodeGPUs)
	}
	sc, err := schedule(uint64(seed))
	if err != nil {
		return err
	}
	laneCycles, err := laneCostFromEnv()
	if err != nil {
		return err
	}
	if err := hostCostFromEnv(); err != nil {
		return err
	}
	base, err := envBase()
	if err != nil {
		return err
	}
	spin, err := spinLimit()
	if err != nil {
		return err
	}
	if _, err := freeGrace(); err != nil {
		return err
	}
	// Switches must read as on or off: MORI would take a typo
	// (MORI_ENABLE_SDMA=ture) as on, and EMUD_RACE=maybe ran without the
	// detector without a word.
	for _, k := range []string{"EMUD_RACE", "MORI_ENABLE_SDMA", "EMUD_USAGE"} {
		if _, err := cco.ParseTruth(os.Getenv(k)); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	env := cco.OSEnv()
	if _, ok := env["MORI_ENABLE_SDMA"]; !ok {
		env["MORI_ENABLE_SDMA"] = "1"
	}
	var m model.Model
	switch v := os.Getenv("EMUD_ARCH"); v {
	case "":
	case "gfx1250", "gfx950":
		if m, err = model.Load(v); err != nil {
			return err
		}
	default:
		return fmt.Errorf("EMUD_ARCH=%q: want gfx950 or gfx1250", v)
	}
	var nodeScratch *engine.Scratch
	if seedServing {
		// A seed server's seeds run one after another, as an explore
		// worker's do: they borrow one Scratch, its event store, idle
		// lane coroutines and interned names (sim.Scratch) and the
		// node's queue, ring and engine objects (engine.Scratch; the
		// device memory stays lane.c's), each handed out cleared, so a
		// seed runs as in a fresh process (TestSeedServerEquivalence).
		// 300 seeds of examples/cxx/bench/alltoall_sum.cpp nohost took
		// 3548-3604 ms of CPU against 3766-3851 without, and a quarter
		// fewer page faults.
		if srvScratch == nil {
			srvScratch = engine.NewScratch()
		}
		sc.Scratch, nodeScratch = srvScratch.Sim, srvScratch
	}
	j, err := emujob.New(emujob.Config{Sim: sc, Ranks: gpus, Env: env, Model: m, Scratch: nodeScratch,
		Race:      cco.Truthy(os.Getenv("EMUD_RACE")),
		Configure: func(c *engine.Config) { c.Backing, c.Base = mapDevice, base }})
	if err != nil {
		return err
	}
	rt.j, rt.s, rt.mem, rt.gpus, rt.seed = j, j.Sim, j.Node.Memory(), gpus, uint64(seed)
	if rt.pool, err = lanePool(); err != nil {
		return err
	}
	rt.s.OnQuiescent(rt.pool.Overflow) // a budget's wait is no hang (resident.go)
	setLaneCost(laneCycles, j.Node.Model().CUClockGHz())
	// What a Go test reads from Host.Warnings (queue-count clamps,
	// ignored requests, comms that may leak queues, SDMA off) a C++
	// program's user reads on stderr, as each is issued.
	j.Host.Warnf = func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "emud: warning: "+format+"\n", args...)
	}
	rt.began = time.Now()
	if p := os.Getenv("EMUD_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("EMUD_CPUPROFILE: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("EMUD_CPUPROFILE=%s: %w", p, err)
		}
		rt.profile = f
	}
	if p := os.Getenv("EMUD_TRACE"); p != "" {
		// As emud run --trace: the file is made now, so a bad path costs
		// no run, and written when the run ends, whatever its outcome.
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("EMUD_TRACE: %w", err)
		}
		f.Close()
		rt.trace, rt.tracePath = trace.Attach(j.Node, j.Host), p
	}
	if cco.Truthy(os.Getenv("EMUD_SUMMARY")) && j.Node.Observer() == nil {
		rt.count = &counter{}
		j.Node.SetObserver(rt.count)
	}
	rt.windows = map[uintptr]cco.Window{}
	rt.barriers = map[cco.UniqueId]*barrier{}
	rt.splits, rt.splitSeq = map[splitKey]*commSplitState{}, map[uint64]int{}
	rt.streams = []*stream{nil} // stream 0: the null stream of each device, made on use
	rt.events = []*event{nil}
	rt.ran = make(chan error, 1)
	rt.atBuilt = usageNow()
	newHost(-1).late = true // host 0: the main thread
	// The threads the main thread started before its first call are
	// adopted when it makes that call (host.attach), not now: this build
	// may come from one of them, at a moment the OS picks.
	rt.adopted = make(chan struct{})
	// The goroutines take this run's channel and sim, not rt's fields:
	// a seed server's reset (seedsrv.go) makes rt anew for the next seed.
	ran, s := rt.ran, rt.s
	// Host threads wait for their turns on turnstiles (host.go), and
	// turns cross to the lanes' goroutines through the gate.
	s.SetGate(new(turnstile))
	go func() { ran <- s.Run() }()
	go watch(ran)
	rt.stop = make(chan struct{})
	if spin > 0 {
		go watchSpins(spin, rt.stop)
	}
	callLoopLimit = spin
	return nil
}

// adoptEarly makes a host, a thread of the main thread's, of each thread
// the main thread started before its first HIP/cco call (or pthread_join
// or exit) and that still runs (lane.c records them), in the order they
// were created: called in the main thread's first turn, when it makes
// that call. Which threads these are, and their order, is the program's
// doing, not the OS's: the emulation may have been built earlier, by one
// of them, but each waits for the adoption at its first call (emudGoHost),
// and the main thread keeps making early threads until it calls in.
func adoptEarly() {
	C.emud_early_lock()
	defer C.emud_early_unlock()
	defer close(rt.adopted)
	for {
		i := C.emud_early_next()
		if i < 0 {
			return
		}
		h := newHost(0)
		h.late = true
		C.emud_early_adopt(i, C.int(h.id))
	}
}

// init runs on the Go runtime's first thread, which lane.c recorded as
// an early thread of the main thread's: it is the runtime's, not a host.
func init() { C.emud_early_runtime() }

// watch ends the process when the run ends badly (hang, lane failure,
// race) while host threads still wait on it: the report goes to stderr
// and the status says which.
func watch(ran chan error) {
	err := <-ran
	ran <- err // for the exit path
	if err != nil {
		fail(err)
	}
}

// failing is held by the first fail for good: a run that ends badly can
// reach fail twice, from watch and from the main thread's exit
// (emudGoExit reads the run's error that watch put back), and under load
// both wrote the report before either's os.Exit (cxx TestErrors/lane_race
// printed its race twice in CI's -race run). The second caller waits for
// the first's exit.
var failing sync.Mutex

func fail(err error) {
	failing.Lock() // never unlocked: the process exits with this report
	// The program's own output first: os.Exit skips C's exit, which
	// would flush stdio (a PASS/FAIL line printed before a race at exit).
	C.fflush(nil)
	writeTrace()
	var hang *sim.HangError
	var races *race.Error
	code := exitFailed
	switch {
	case errors.As(err, &hang):
		fmt.Fprintf(os.Stderr, "emud: seed %d: hang\n%s", rt.seed, hang.Text())
		code = exitHang
	case errors.As(err, &races):
		fmt.Fprintf(os.Stderr, "emud: seed %d: %d data race(s)\n%s", rt.seed, len(races.Reports)+races.Dropped, races.Text())
		code = exitRace
	default:
		fmt.Fprintf(os.Stderr, "emud: seed %d: %v\n", rt.seed, err)
	}
	exitRun(code)
}

// exitRun ends a failed emulated run, its report written: the forked
// ranks' notes, the summary line with the digest (EMUD_SUMMARY: emud
// replay compares it, and explore and hunt read it as the run's end, so
// a failure without it is a crash, not a detection), the steps, and the
// rank processes' status.
func exitRun(code int) {
	fmt.Fprint(os.Stderr, procNotes()) // the forked rank processes, if any (coord.go)
	if cco.Truthy(os.Getenv("EMUD_SUMMARY")) {
		fmt.Fprintf(os.Stderr, "emud: seed %d: end %d ps, digest %s\n", rt.seed, int64(rt.s.Now()), rt.s.Digest())
	}
	printSteps()
	C.emud_procs_status(C.int(code)) // the rank processes exit with it (procs.c)
	os.Exit(code)
}

// summary is the line EMUD_SUMMARY=1 prints at exit: what one compares
// across runs, seeds and compilers.
func summary() {
	writeTrace()
	if rt.profile != nil {
		pprof.StopCPUProfile()
		rt.profile.Close()
	}
	printSteps()
	printUsage()
	if !cco.Truthy(os.Getenv("EMUD_SUMMARY")) {
		return
	}
	fmt.Fprintf(os.Stderr, "emud: seed %d: end %d ps, digest %s\n", rt.seed, int64(rt.s.Now()), rt.s.Digest())
	if c := rt.count; c != nil {
		fmt.Fprintf(os.Stderr, "emud: %d packets retired (%d COPY_LINEAR, %d ATOMIC, %d other); %v wall time since the first call\n",
			c.copies+c.atomics+c.other, c.copies, c.atomics, c.other, time.Since(rt.began).Round(time.Millisecond))
	}
}

// printUsage is the line EMUD_USAGE=1 prints at a clean exit: the
// process's CPU time and page faults up to the first call (process
// start, the Go runtime's, the program's code before it), building the
// node, and from there to exit (what is left after it, the process's
// teardown, the parent sees: bench's C++ row).
func printUsage() {
	if !cco.Truthy(os.Getenv("EMUD_USAGE")) {
		return
	}
	end := usageNow()
	fmt.Fprintf(os.Stderr, "emud: usage: CPU time %v to the first call, %v building the node, %v from there to exit; %d, %d and %d page faults\n",
		rt.atCall.cpu, rt.atBuilt.cpu-rt.atCall.cpu, end.cpu-rt.atBuilt.cpu, rt.atCall.faults, rt.atBuilt.faults-rt.atCall.faults, end.faults-rt.atBuilt.faults)
}

// usage is the process's CPU time (user and system, every thread) and
// its page faults so far: where a C++ run's cost goes (process start and
// Go runtime, the node, the program), what explore pays per seed.
type usage struct {
	cpu    time.Duration
	faults int64
}

func usageNow() usage {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return usage{}
	}
	return usage{time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt + ru.Majflt}
}

// writeTrace writes EMUD_TRACE's file (emud run --trace's Chrome
// trace-event JSON) once, at the run's end; a failure to write it is
// said on stderr.
func writeTrace() {
	r := rt.trace
	if r == nil {
		return
	}
	rt.trace = nil
	var b bytes.Buffer
	err := r.WriteJSON(&b)
	if err == nil {
		err = os.WriteFile(rt.tracePath, b.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "emud: EMUD_TRACE=%s: %v\n", rt.tracePath, err)
	}
}

// schedule reads the run's scheduling from the environment, as emud
// run's and hunt's flags mean it: EMUD_STRATEGY names one of hunt's
// strategies (scenario.Strategies: ties = seeded tie-breaks at exact
// timing, perturb = the same under realistic timing perturbation, pct =
// PCT under realistic perturbation) or run's random (the default, at
// EMUD_PERTURB's level); EMUD_PERTURB (0, 1, 2 or a name), when set,
// overrides the strategy's level; EMUD_PCT_DEPTH and EMUD_PCT_STEPS are
// --pct-depth and --pct-steps.
func schedule(seed uint64) (sim.Config, error) {
	c := sim.Config{Seed: seed, Perturb: sim.LevelExact, Strategy: sim.StrategyRandom}
	switch v := os.Getenv("EMUD_STRATEGY"); v {
	case "", "random", "ties":
	case "perturb":
		c.Perturb = sim.LevelRealistic
	case "pct":
		c.Perturb, c.Strategy = sim.LevelRealistic, sim.StrategyPCT
	default:
		return c, fmt.Errorf("EMUD_STRATEGY=%q: want ties, perturb, pct or random", v)
	}
	if v := os.Getenv("EMUD_PERTURB"); v != "" {
		lvl, err := sim.ParseLevel(v)
		if err != nil {
			return c, fmt.Errorf("EMUD_PERTURB: %w", err)
		}
		c.Perturb = lvl
	}
	var err error
	if c.PCT.Depth, err = envInt("EMUD_PCT_DEPTH", 0); err != nil {
		return c, err
	}
	if c.PCT.Steps, err = envInt("EMUD_PCT_STEPS", 0); err != nil {
		return c, err
	}
	if err := c.PCT.Check(); err != nil {
		return c, fmt.Errorf("EMUD_PCT_DEPTH/EMUD_PCT_STEPS: %w", err)
	}
	return c, nil
}

// counter counts the packets the engines retire (EMUD_SUMMARY's second
// line): what a program posted, to set beside its wall time.
type counter struct{ copies, atomics, other int }

func (c *counter) Running(*sim.Actor)             {}
func (c *counter) Doorbell(*issuer.Queue, uint64) {}
func (c *counter) Retired(_ *issuer.Queue, _ uint64, _ sim.Time, p *ring.Packet) {
	switch p.Kind {
	case ring.KindNop:
	case ring.KindCopy:
		c.copies++
	case ring.KindAtomic:
		c.atomics++
	default:
		c.other++
	}
}

// ensureStarted builds the emulation on the first call into emud, from
// whichever thread makes it; the main thread is a host thread from then
// on, and the threads it started before its own first call are from that
// call on (adoptEarly).
func ensureStarted() {
	rt.once.Do(func() {
		rt.err = start()
		if rt.err == nil {
			if d := rt.s.Race(); d != nil && !d.LifecycleOnly() {
				C.emud_set_race(1)
				if C.emud_instrumented() == 0 {
					fmt.Fprintln(os.Stderr, "emud: warning: EMUD_RACE: this program was built without lane instrumentation (emud c++ -fno-sanitize=thread): "+
						"the race detector does not see its lanes' own loads and stores, only its cco and HIP calls and the engines' accesses; rebuild without -fno-sanitize=thread")
				}
			}
			C.emud_install_fault_handlers()
			C.emud_register_exit()
			C.emud_set_started()
		}
	})
	if rt.err != nil {
		fmt.Fprintf(os.Stderr, "emud: cannot start: %v\n", rt.err)
		os.Exit(exitFailed)
	}
}

//export emudGoHost
func emudGoHost(op C.int, a *C.uint64_t, file *C.char, line C.int) C.int {
	args := unsafe.Slice((*uint64)(unsafe.Pointer(a)), 16)
	ensureStarted()
	id := int(C.emud_host_id())
	if id < 0 {
		if C.emud_early_pending() != 0 {
			// An early thread calling in before the main thread has: it
			// is adopted when the main thread calls in (the spin watch
			// names the main thread if it never does).
			<-rt.adopted
		}
		id = int(C.emud_early_id()) // a thread adopted at the main thread's first call, calling in for the first time
	}
	h := hostByID(id)
	if h == nil {
		fmt.Fprintf(os.Stderr, "emud: %s:%d: a HIP/cco call from a thread emud does not know (started by a library, or before the first HIP call by a thread other than the main thread?): ranks must be threads the program starts\n", C.GoString(file), int(line))
		os.Exit(exitFailed)
	}
	h.attach()
	h.flushStores()
	if op == C.EMUD_H_START {
		return 0
	}
	hostStops()
	var rc int
	h.do(func(a *sim.Actor) { payHostCode(a); rc = hostCall(h, a, int(op), args, C.GoString(file), int(line)) })
	hostRuns(h, file, "", int(line))
	return C.int(rc)
}

//export emudGoExit
func emudGoExit() {
	h := hostByID(0)
	if h == nil {
		return
	}
	h.attach()
	h.flushStores()
	hostStops()
	live := 0 // in the main thread's turn: the others' exited flags hold still
	rt.mu.Lock()
	for _, o := range rt.hosts {
		if o != h && !o.exited {
			live++
		}
	}
	rt.mu.Unlock()
	h.exit()
	if live > 0 {
		return // threads the program never joined: no end to wait for
	}
	if err := <-rt.ran; err != nil {
		fail(err)
	}
	summary()
}

// cstr reads a C string argument.
func cstr(p uint64) string {
	if p == 0 {
		return ""
	}
	return C.GoString((*C.char)(unsafe.Add(unsafe.Pointer(nil), uintptr(p))))
}

// ptr turns a device or host address into a pointer for native copies.
func ptr(p uint64) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), uintptr(p)) }
