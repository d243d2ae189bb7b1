// Package emutest helps users test their own collective kernels on emud
// under many seeds, as "emud explore" does for the built-in scenarios.
//
// A test body takes a seed, builds its emulated node from it (NewJob gives
// an MI355X node with SDMA on and one comm per rank), launches its kernels,
// runs, checks its data, and returns an error when something is wrong.
// Seeds runs the body under seeds 1..k and fails the test at the first seed
// that fails, with the seed, the report (a hang's full who-waits-on-what
// report, with the cause cco recognised) and the go test command that
// reruns exactly that seed of exactly that test (each level of a subtest's
// name anchored, so its siblings do not run):
//
//	go test -run '^TestMyAlltoall$/^ranks=8$' ./mypkg -emutest.seed=17 -emutest.perturb=1
//
// Find is the same search without a testing.T. Rate (RateOf without a
// testing.T) runs every seed instead of stopping at the first failure and
// returns how many failed and, per kind (KindOf: hang, race, trap, wrong
// data, other error), how many and the first seed: a bug's detection
// rate. A data check marks its error as wrong data by wrapping
// ErrWrongData or building it with WrongData.
//
// Flags of the test binary: -emutest.seed=S runs only seed S;
// -emutest.seeds=K runs K seeds instead of the test's own count (for a
// longer soak in CI); -emutest.perturb=L sets NewJob's timing perturbation
// level (sim.Level: 0 = the model's exact timing, 1 = realistic hardware
// spreads, the default, 2 = stress); -emutest.race turns on the race
// detector (package race) in NewJob's runs, so that a seed whose lanes,
// engines, host threads or fabric accesses conflict without an ordering
// fails with a report naming both accesses, whether or not the data came
// out wrong (NewJobWith takes it as Options.Race). -emutest.strategy=pct
// schedules NewJob's runs by PCT (sim.StrategyPCT, as "emud explore
// --strategy pct": random priorities per wave, with change points that
// preempt a wave or an engine), with -emutest.pct-depth=D and
// -emutest.pct-steps=K setting sim.PCT's depth and step count (NewJobWith
// takes them as Options.Strategy and Options.PCT); a failure's message and
// reproduce command then name the strategy and those flags beside the
// level.
//
// The environment works as it does for a program built by "emud c++":
// EMUD_SEED, EMUD_PERTURB and EMUD_RACE (or MORI's MORI_CCO_SDMA_RACE) act
// as -emutest.seed, -emutest.perturb and -emutest.race (a flag given on the
// command line wins), EMUD_ARCH=gfx1250 builds a gfx1250 node (wave32
// kernels), and the MORI_* variables reach cco as a MORI program reads
// them: MORI_CCO_SDMA_DEBUG=1 turns on the debug checks of every dev comm.
// A reproduce command leads with the settings only the environment
// carries. EMUD_GPUS and EMUD_SUMMARY do not apply: a test names its ranks,
// and a failure prints its seed and digest.
//
// PCT spreads its change points over K scheduling steps; a fixed K longer
// than a short test's run puts them all past its end, where they change
// nothing. So under -emutest.strategy=pct without -emutest.pct-steps,
// Seeds, Find and Rate first run the body once on seed 1 with the random
// strategy and use that run's steps (the sum over the jobs NewJob built
// for it) as K, as explore measures its scenario; Scenario uses explore's
// own measurement. emutest's default strategy stays random (seeded
// tie-breaks), so a test's seeds and digests do not change under it.
//
// What the race detector sees is what goes through the emulator's own
// paths: lane code's loads and stores through cco.Mem, the engines and
// fabric, and host threads' through Host (a HostMem, for host code that
// runs while kernels do). Lane code that uses Node.Memory() instead is
// invisible to it: NewJob's jobs name the first such access once on
// stderr, and fail the lane when the detector is on. QuietAll quiets the
// queues toward every peer, for a kernel that put to many and then reuses
// its buffers.
//
// Every run is deterministic: one seed, level and strategy fix every
// scheduling and timing choice, so a seed that fails once fails every
// time, with the same digest.
package emutest
