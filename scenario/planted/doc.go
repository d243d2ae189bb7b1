// Package planted registers the planted-bug corpus: small MORI-style
// programs on emud's ccoSdma API, each with one real bug class (a hang or
// a data race seen in RCCL, ROCr or MORI, or a misuse the seed document
// warns about), each registered as a planted scenario NAME with its fixed
// twin NAME-fixed (package scenario's registry, so "emud run", explore,
// the daemon and emutest see them too). Each program fixes its own ranks,
// queue ids and sizes (Scenario.Shape). It is the yardstick of emud's
// exploration: scenario.Hunt runs a bug under many seeds with a
// scenario.Strategy (seeded tie-breaks only, timing perturbation, PCT) and
// says how soon and how often the bug shows; "emud hunt" prints the table.
//
// A new bug is one entry in corpus.go's table (name, shape, faults,
// class, source) and its program, a function of a *prog (prog.go: the
// environment, windows, fills, launches and checks every program shares,
// each host step's error kept until the runner reports it) that runs the
// bug, or its twin when p.fixed, and returns the data check.
//
// A bug is detected when its run hangs, fails, or leaves wrong data. The
// fixed twins pass under every strategy, so a detection is the bug's and
// not the exploration's: a strategy that made correct programs fail would
// be worthless.
//
// Some bugs show under any schedule (a waitSignal on the wrong slot), some
// only under timing that hardware produces but the calibrated model alone
// never does (a rank launched late, an engine a little slow, a poll at
// another phase): those are what the tie-only strategy misses. Bugs that
// are hardware incidents (lost completion signals, a stalled or dead
// engine) run under the fault injection that reproduces the incident;
// their twin is the same program on healthy hardware, or with the
// workaround that avoids the fault.
//
// The signal-lifecycle bugs (lifecycle.go, epochs.go: a slot zeroed after a
// peer's signal, a stale epoch across calls, one slot shared by two
// kernels, an asynchronous memset before a peer's put, a 64-bit counter
// wrapped from a sentinel) are what the race detector's lifecycle checks
// are pinned on (lifecycle_test.go, with golden reports under testdata/),
// with the SDMA and GIN scenarios' slot bugs (bcast-per-queue,
// aliased-slot, gin-shared-signal, and gin-bcast-block-barrier, whose
// baseline readSignal races the root's signal).
package planted
