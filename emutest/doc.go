// Package emutest helps users test their own collective kernels on emud
// under many seeds, as "emud explore" does for the built-in scenarios.
//
// A test body takes a seed, builds its emulated node from it (NewJob gives
// an MI355X node with SDMA on and one comm per rank), launches its kernels,
// runs, checks its data, and returns an error when something is wrong.
// Seeds runs the body under seeds 1..k and fails the test at the first seed
// that fails, with the seed, the report (a hang's full who-waits-on-what
// report, with the cause cco recognised) and the go test command that
// reruns exactly that seed:
//
//	go test -run '^TestMyAlltoall$' ./mypkg -emutest.seed=17 -emutest.perturb=1
//
// Flags of the test binary: -emutest.seed=S runs only seed S;
// -emutest.seeds=K runs K seeds instead of the test's own count (for a
// longer soak in CI); -emutest.perturb=L sets NewJob's timing perturbation
// level (sim.Level: 0 = the model's exact timing, 1 = realistic hardware
// spreads, the default, 2 = stress); -emutest.race (or MORI_CCO_SDMA_RACE=1
// in the environment) turns on the race detector (package race) in NewJob's runs, so that a seed whose lanes,
// engines or fabric accesses conflict without an ordering fails with a
// report naming both accesses, whether or not the data came out wrong
// (NewJobWith takes it as Options.Race). -emutest.strategy=pct schedules
// NewJob's runs by PCT (sim.StrategyPCT, as "emud explore --strategy pct":
// random priorities per wave, with change points that preempt a wave or an
// engine), with -emutest.pct-depth=D and -emutest.pct-steps=K setting
// sim.PCT's depth and step count (NewJobWith takes them as
// Options.Strategy and Options.PCT); a failure's message and reproduce
// command then name the strategy and those flags beside the level. Find
// is the same search without a testing.T.
//
// emutest's default strategy stays random (seeded tie-breaks), unlike
// explore's PCT: so a test's seeds and digests do not change under it, and
// because PCT spreads its change points over K steps, which explore
// measures with one run of the scenario but emutest cannot measure for an
// arbitrary test body. The default K (sim.DefaultPCTSteps, 20000) suits
// long runs; for a short test set -emutest.pct-steps near one run's step
// count (Job.Sim.Steps()), or the change points fall after the run ends
// and PCT changes only the order of events due at the same instant.
//
// Every run is deterministic: one seed, level and strategy fix every
// scheduling and timing choice, so a seed that fails once fails every time, with the same
// digest.
package emutest
