// Package sim is emud's deterministic discrete-event core.
//
// Virtual time is an integer count of picoseconds ([Time]). Work happens in
// two forms:
//
//   - events: callbacks scheduled at a virtual time ([Sim.At], [Sim.After]).
//     The emulated SDMA engines are pure event machines, so a packet costs no
//     goroutine switch.
//   - actors: goroutines ([Sim.Spawn]) that model code running on a GPU or
//     host. Exactly one actor or event runs at a time; control passes between
//     goroutines through channels, so emulated state needs no locks and the
//     race detector sees every hand-off. A foreign actor, whose turns a
//     thread the simulator did not start takes (a C++ program's host
//     thread), may wait for them on a [Turnstile] instead, a futex word
//     in a cgo call: turns between such threads, and through the gate
//     ([Sim.SetGate]) between them and the goroutines, cost one thread's
//     wake each (turnstile.go). Only how a turn reaches its thread
//     changes, never which actor runs next.
//
// A layer with many steps per object schedules them as a [Handler]'s steps
// ([Sim.AtWorkStep]) instead of a closure each; many steps at once
// ([Sim.AtWorkSteps], a multicast's deliveries) hold one queue entry and
// run exactly as that many AtWorkStep events would. Events are ordered by
// (time, sequence); the queue keeps time-ordered runs beside a heap, which
// changes what a pop costs, not the order. When several are due at the same
// virtual time, a PRNG seeded from the run's seed picks which runs first:
// that choice is what a seed fixes and what exploring seeds varies.
//
// A Sim given a [Scratch] (Config.Scratch) borrows its event store from
// it and gives it back when Run returns, so that a caller running seeds
// one after another (an explore worker) does not make it again; what a
// run takes is cleared as it is taken, so the run is a fresh Sim's. The
// next Sim to borrow it also takes the last one's trace buffers and
// write logs, its event lists, the actors whose goroutines ended (their
// channels kept), the watches, page lists and page maps its watch lists
// dropped, its map of [RunLocal] values (emptied), and its buffers, so
// read a run's digest and reports before that. The names [Sim.Intern] makes stay in the Scratch for later runs
// (a writer's name, a region's). Layers above keep their own per-run
// makings there too ([WorkerLocal], ended by [Scratch.Close]), and per-run
// state with the run ([RunLocal]), each under a typed [LocalKey] that a
// layer makes once, so that what it reads back is of the key's type. A
// writer ([Writer]), a wait's condition ([Cond]), an actor's code
// ([Body]) and label ([Labeler]) may be values of the caller's that are
// already made, so that a frequent call makes no closure.
//
// Actors block only through this package: [Actor.Sleep], [Actor.Yield] and
// [Actor.Await]. Await is a subscription, never a spin: the waiter registers a
// predicate on a [WatchList] range and is woken by the write ([WatchList.Notify])
// that can satisfy it. The woken actor re-checks its predicate when it runs,
// so a value that flips back before the waiter runs is missed, as a sampling
// poller on hardware would miss it.
//
// A run ends in one of three ways: every actor returned and nothing is
// pending (success); something failed ([Sim.Fail], a panic in an actor or an
// event); or a hang. Before a run with nothing pending ends, its
// [Sim.OnQuiescent] hooks may start work a higher layer held back (package
// kernel's lane budget), and the run goes on. Hangs are detected two ways: deadlock (no event pending,
// no actor runnable, yet an actor is blocked or a diagnoser reports stuck
// work) and the progress watchdog (a span of virtual time in which nothing
// counted as progress happened, which catches pollers that retry forever).
// Either way Run returns a *[HangError] listing every waiter and what it waits
// for; diagnosers registered by higher layers ([Sim.AddDiagnoser]: the SDMA
// engine, cco, the fabric) return their queues and plain-words causes, each
// cause with a typed kind ([CauseKind]) and its [Layer], and
// [MergeCauses] puts them together in one place by one rule: for the same
// condition on the same queue the higher layer's words win, causes that
// differ only in their ranks join, and the list is ordered by layer, then
// kind, whatever order the layers were set up in.
//
// Beyond tie-breaks, a seed can fix two more kinds of choice. A timing
// perturbation level (Config.Perturb, [Level]; 0 = exact) makes the
// [Perturber] spread durations, launches and poll phases within measured
// hardware spreads; the engine, the model and the kernel launcher consult
// it. The PCT strategy (Config.Strategy, [PCT]) replaces uniform
// tie-breaks by random actor priorities with change points that preempt.
//
// Every scheduling decision and every traced event is folded into a SHA-256
// digest ([Sim.Digest]): the same seed and configuration give the same
// digest.
//
// A run can carry a happens-before race detector (package race):
// [Sim.EnableRace] turns it on, every actor has a detector thread
// ([Actor.RaceThread]), the packages above record accesses and
// synchronisation through it, and Run returns its *race.Error when it
// found races and the run did not fail otherwise. Off, it is one nil
// check per instrumented point.
//
// Nothing in this package reads the wall clock.
package sim
