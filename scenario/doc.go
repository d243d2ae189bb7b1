// Package scenario is emud's one home for runnable workloads: the registry
// every front end lists and runs from ("emud run", explore, replay, perf,
// hunt, the daemon, emutest), the Scenario type, the options every
// scenario takes, the environment an SDMA scenario runs in (Env, over
// package job's Job), the one data pattern (Pattern) and receive check
// (Checker, Env.CheckBlocks, Env.CheckSignals), admission (Admit:
// Options.Validate, then the scenario's Check, then the memory budget,
// CheckBudget over Footprint), one run classified into a Report (RunOnce),
// the report's text and JSON (Report.Write, WriteTable, Summarize), seed
// exploration (Explore), the hunt over planted bugs (Hunt) and the perf
// sweep (PerfSweep).
//
// Explore's workers each keep an engine.Scratch (Options.Scratch) across
// their seeds: the seeds' small regions, simulator event stores, trace
// buffers, write logs, event lists, actors and watches, the node's queue
// objects, the kernels' lanes, argument buffers and ccoSdma handles and
// cco's diagnosis records are reused, zeroed as the next seed takes
// them (names are interned), and so are the kernels' idle lane workers
// (goroutines, ended when the worker closes its Scratch), so a seed's
// digest and report do not depend on what its worker ran before
// (TestScratchSeedsIndependent), and a report explore keeps copies what
// it says. RunOnce reads a run's digest and reports before the worker's
// next seed takes its state. While it runs the
// collector's target is ExploreGCPercent unless GOGC is set.
//
// The receive check reads each received block at most once: a block of
// 64 KiB or more is hashed (blockSum, which no single wrong byte or word
// can leave unchanged) and its sum compared with the expected block's,
// kept for the process; a smaller one is compared with the cached
// expected block. An all-to-all's receive blocks of 64 KiB or more are
// hashed as their copies land (Env.TrackBlocks, lsa.Space.TrackSum), and
// the check reads only those that something else wrote too, or that were
// not landed once and in order. Only a mismatch is compared byte by
// byte, to name the first wrong byte.
// The cached blocks and sums are an immutable snapshot the workers read
// without a lock.
//
// The scenarios themselves live in subpackages that register them in
// init: scenario/sdma (the SDMA collectives and their planted variants),
// scenario/cft (the CFT fabric collectives) and scenario/planted (the
// planted-bug corpus, each bug with its fixed twin NAME-fixed). Import
// scenario/all for the whole registry.
//
// # Adding a scenario
//
// A new scenario is one file in one of those packages (or a package of
// its own, imported from scenario/all):
//
//	func init() {
//		scenario.Register(&scenario.Scenario{
//			Name:    "my-collective",
//			Summary: "what it does, in one line",
//			Check:   func(o scenario.Options) error { ... }, // optional: flags it cannot run
//			Usage:   func(o scenario.Options) scenario.Usage { ... }, // its footprint
//			Run: func(o scenario.Options) (*scenario.Outcome, error) {
//				e, err := scenario.NewEnv(o) // node, comms; then e.Window, e.SetupDevComms
//				... launch kernels (e.LaunchRank), e.Sim.Run(), check with a scenario.Checker ...
//				return e.Outcome(sent, received), nil
//			},
//		})
//	}
//
// It is then listed and run by every front end, and its digest joins
// scenario/all's golden file (go test ./scenario/all -run TestDigests
// -update). A planted bug sets Planted (with the name of its fixed twin)
// and is hunted by "emud hunt".
package scenario
