// Package race is a happens-before race detector for emulated runs, in the
// manner of ThreadSanitizer, over the lanes, SDMA engines and fabric
// endpoints of a run.
//
// A [Detector] keeps a vector clock per [Thread] (a wave of lanes, an SDMA
// queue, a rank's fabric endpoint, a host actor) and, for every byte range
// of every memory space ([Detector.Space]), the last write and the reads since, each with
// the epoch (thread, clock) it happened at. Synchronisation is a release of
// a thread's clock into a [Sync] (or a [VC] snapshot) and an acquire from
// it. Packages above say which operations synchronise: package kernel
// (launch, kernel end, Wait, SyncThreads), engine (doorbells and packet
// writes released to the queue, ATOMIC releases, POLL acquires, quiet),
// cco (waitSignal, the memory API's release stores and acquire loads),
// fabric (submit, flushSmem, flush, barriers, MemFence by proxy type).
//
// An access conflicts with an earlier one to an overlapping range when at
// least one writes, they are not both atomic (an atomic load of a plain
// write races it: a COPY's or a HIP copy's bytes polled as a flag), and
// the earlier one is not ordered before it: its epoch is not in the
// accessor's clock. A conflict is
// reported whether or not the schedule of this run corrupted data, naming
// both accesses (who, what range, read or write, when) and, in plain words,
// the edge that is missing. A report is kept once per pair of access
// sites; [Detector.Err] returns them as an *[Error].
//
// The missing edge's advice comes from the layer that knows the two
// operations, not from this package: each access's [Info] carries an
// [OpKind] (a lane's access, an SDMA packet's, a fabric operation's on a
// rank's memory or on shared memory), and packages kernel, cco and fabric
// register the words for the pairs they know ([RegisterAdvice]; the fabric
// also for a missing proxy crossing, [RegisterProxyAdvice]). A pair with
// no advisor linked in gets generic words.
//
// Proxies: fabric memory is reached by two proxies, the SM's Generic proxy
// and the Fabric proxy. A write through one proxy and a read through the
// other are ordered only when, besides happening before, the write was
// made visible across the proxies: the writer released it
// ([Thread.FenceRelease], producer → consumer, after the write) and the
// reader acquired that release ([Thread.FenceAcquire] of the same pair,
// after the release reached it by happens-before), or the writer is the
// reader's own endpoint (its own rank's fabric operations), whose writes
// the reader's acquire fence alone makes visible. Accesses with ProxyNone (SDMA and CU accesses to LSA
// memory, shared memory) need happens-before only.
//
// Relaxed loads ([Detector.AcquireRelaxed], [Thread.AcquirePending])
// collect the clocks (and cross-proxy releases) of the writes they read,
// which take effect at the thread's next acquire fence, as a relaxed load
// followed by an acquire fence synchronises in C++.
//
// Signal lifecycle (lifecycle.go, signals.go): besides data races the
// detector reports misuses of signal slots, each a [Report] with a Class:
// a plain store over a signal, a slot whose waits cannot tell two
// producers apart, a wait that counted an earlier epoch's signal, a
// counter or 32-bit wait that wrapped, a wait counting from a baseline read
// of its slot that raced a signal. They come from the happens-before
// state and the values the layers pass ([Detector.Signal],
// [Detector.WaitHeld], [Detector.SignalRead], [Detector.Poll32]);
// [Detector.SetLifecycleOnly] keeps only them (debug mode). The fabric's
// GIN signals, ncclGin::waitSignal and ncclGin::readSignal record theirs
// too (not the GIN barrier's own waits); GIN compares modulo 2^64, so its
// adds are not checked for a wrap.
//
// Thread slots (retire.go): a vector clock has an entry per slot, and a
// thread that ends ([Detector.Retire]; package sim retires a finished
// actor's) leaves its slot to a later thread forked from a parent that
// already knows its last clock, whose clocks start above it, as
// ThreadSanitizer reuses a finished thread's slot. Memory is then bounded
// by the threads alive at once plus the shadow, not by every wave of every
// launch; a thread that nothing orders after the retired one gets a slot
// of its own, so unordered launches still race.
//
// Approximations, for speed: the lanes of one wave are one thread (they
// run in lock-step, so their accesses are ordered by program order and
// conflicts between lanes of one wave are not reported); a rank's fabric
// operations share one thread, each with the clock of its submit, so two
// of its own operations are never reported against each other; and
// shadow state keeps the last write, the atomic writes since and one read
// per thread, per byte range.
package race
