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
// spreads, the default, 2 = stress); -emutest.race turns on the race
// detector (package race) in NewJob's runs, so that a seed whose lanes,
// engines or fabric accesses conflict without an ordering fails with a
// report naming both accesses, whether or not the data came out wrong
// (NewJobWith takes it as Options.Race). Find is the same search without a
// testing.T.
//
// Every run is deterministic: one seed and level fix every scheduling and
// timing choice, so a seed that fails once fails every time, with the same
// digest.
package emutest
