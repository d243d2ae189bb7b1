// Command emud runs emud's emulated MI355X node from the command line and
// as a daemon.
//
// Subcommands:
//
//	emud run [SCENARIO]      run a scenario once and print per-rank results
//	emud explore [SCENARIO]  run it under many seeds, stop at the first hang or failed check
//	emud replay [SCENARIO]   rerun one seed and write its Chrome trace
//	emud hunt [BUG...]       run every planted bug (package scenario's registry) under each exploration strategy
//	emud hunt -- BUG[:FIXED]...  the same for C++ programs (emud c++) with their fixed twins
//	emud serve               HTTP daemon: submit runs, fetch reports and traces, /metrics, /healthz
//	emud perf [SCENARIO]     sweep message sizes, nccl-tests' columns (size, count, type, redop, time, algbw, busbw, #wrong)
//	emud calibrate           the calibration report, the parameter table, the fit from the priors, cross-validation
//	emud fit FILE            fit model parameters to measurements (name,src,dst,ops,bytes,queues,time_us); --predict
//	emud bench               the emulator's own speed and the scale runs' cost, one table
//	emud version             print the module version and the Go toolchain
//
// # Scenarios
//
// The commands are thin: flags, one library call, print. The scenarios, their
// registry, admission, reports, exploration, the hunt and the perf sweep are
// package scenario's (and scenario/sdma, scenario/cft, scenario/planted); the
// daemon is package daemon, the bench package bench.
//
// Each scenario is a collective written against the public cco API the way
// a user's kernel would be, with a host side (comms, windows, dev comms) and
// one kernel per rank, on one deterministic emulated node sized by --ranks,
// --bytes and --queues. After the run it checks every byte it moved and
// every signal slot it touched:
//
//   - alltoall (the default): each rank puts a block to every rank, itself
//     included, with put + remote signal, quiet, waitSignal (the seed
//     document's worked example);
//   - alltoall-mq: every rank sends 8 messages to every other rank,
//     round-robin over --queues queue ids per peer (many small messages, as
//     an MoE dispatch; with 2 engines per peer link, more than 2 queues buy
//     no packet rate);
//   - allgather-ring: ranks−1 steps of put-to-successor, with running
//     signal totals per (source, queue id) as steps rotate over the queues;
//   - relay: rank 0's buffer forwarded along a chain in four pipelined
//     chunks by the engines themselves (postWaitSignal, then put), the
//     kernels returning at once;
//   - broadcast-tree: a binary tree where each parent reaches both children
//     with one putBroadcast;
//   - alltoall-split: an all-to-all in rounds, each block in two halves on
//     queue ids 0 and 1 moved by two kernels per rank whose launches are
//     skewed by the seed (host launches never land together);
//   - alltoall-shared-expected: a planted bug for explore to find, the same
//     exchange with one expected counter per source shared by both queue
//     ids. It hangs only when the seed's launch skew lets one kernel finish a
//     round before its sibling starts (about one seed in five at the
//     defaults, most seeds at 4 ranks × 4 KiB), and the hang report names
//     the cause: "expected looks shared across queues".
//
// Two scenarios run NCCL's CFT device API (package fabric) instead of SDMA:
// cft-allreduce (--bytes per rank, pullRed + redMultimem between multimem
// barriers) and cft-alltoall (--bytes per pair, put + a unicast barrier).
// They take --ranks up to 4096 and the fabric's topology: --lsa-size,
// --cft-size and --mc-size.
//
// --perturb sets the timing perturbation level (sim.Level: 0, exact, is
// run's and replay's default; 1, realistic, explore's), --strategy the
// scheduling strategy (random tie-breaks, or pct: explore's default) and
// --faults the SDMA faults injected (engine.ParseInject's spec, or "seed"
// for a fault drawn from the seed). All come from the seed, so explore's
// reproduce line carries them and replay gives the same digest.
//
// --phantom runs any scenario on memory without bytes: nothing stored, the
// data checks skipped (signal slots, in real memory, are still checked),
// and the output says so. SDMA scenarios give the real run's times and
// digest; CFT runs whose operations span several 4 KiB granules land each
// in one step, so their tie-breaks, digest and possibly times differ (see
// package fabric).
//
// # Output
//
// run prints one row per rank (finish time in emulated µs, bytes sent and
// received, bandwidth = the larger of the two over the finish time), or the
// same as JSON with --json, and ends with two lines that pin the run down:
//
//	seed: 1
//	digest: <64 hex digits>
//
// Re-running with the same seed and flags gives the same digest; replay
// does, and writes the trace besides (attaching the recorder does not change
// the digest). A hang prints the simulator's report instead: every blocked
// wave and queue, what it waits for, the likely causes, then seed and
// digest; --json gives the same as JSON.
//
// explore hands out seeds in order to --jobs workers and reports the
// lowest failing seed of the range, so its answer does not depend on the
// number of jobs. Its progress bar is a \r-redrawn line on stderr, drawn
// only when stderr is a terminal or with --progress.
//
// After --, explore, replay and hunt run C++ programs built with emud c++
// in a scenario's place (program.go, program_hunt.go): each run is one
// process, its schedule in its environment (EMUD_SEED, EMUD_PERTURB,
// EMUD_STRATEGY, EMUD_PCT_*, EMUD_RACE), its status the run's. PCT's k is
// the program's own step count, read from one run of the first seed
// without PCT (EMUD_STEPS=1), as a scenario's is measured. --shard and
// merge work as for scenarios; a program's record names its argv (or
// hunt's pairs) and the SHA-256 of each executable, and merge refuses
// records whose programs differ from the ones at those paths.
//
// --model takes a preset name (model.Load); the placeholder model's numbers
// are right in shape only and the header says so. --debug turns on
// MORI_CCO_SDMA_DEBUG's misuse checks (the environment variable works too).
//
// # Daemon
//
// serve's API is described in "emud serve --help". Runs execute on at most
// --max-runs goroutines (a golang.org/x/sync semaphore); engine counters of
// every run are summed into the daemon's /metrics next to emud_runs_total,
// emud_run_duration_seconds, emud_runs_in_flight and emud_runs_queued. A
// panicking run is an error report; SIGINT/SIGTERM drains, and runs still
// in flight when --shutdown-timeout expires make the exit status 1.
//
// A finished run keeps only its request, status, report (as JSON) and, if
// asked, its serialized trace, all traces together within --trace-budget;
// after a big run the freed heap goes back to the system at once. Requests
// are strict (exact field names, one JSON object) and must arrive within
// --read-timeout. The daemon listens on loopback unless --token-file gives
// a Bearer token; Host must name it and POSTs must be JSON, so a web page
// cannot start runs. DELETE /runs/{id} cancels a run (sim.Stopper); records count
// against --mem-budget and their ids never repeat across restarts.
//
// # Memory budget
//
// run, explore, replay and serve estimate a run's footprint from its flags
// before it starts (budget.go: emulated and host bytes, SDMA queues and
// their rings, lanes, fabric operations, a trace) and refuse one over
// --mem-budget (default a quarter of the memory the process may use:
// physical, or its cgroup's limit where lower) with the estimate
// item by item; the budget is also the Go runtime's soft memory limit.
// explore runs at most budget / estimate jobs at once (and 4 per
// processor); the daemon answers 422 and holds each running run's estimate
// from the budget. The estimate is built from measured per-item costs with
// margin; it is not a bound on peak RSS, which the collector's headroom can
// take above the estimate up to the limit.
//
// # bench
//
// emud bench times the emulator itself (engine packets/s, an 8 MiB COPY
// against copy(), puts/s, fabric ops/s, explore seeds/s at 1 and N jobs)
// and the scale runs in child processes (wall time, peak RSS).
//
// Exit status: 0 on success, 1 on bad flags or a failed run (engine fault,
// debug trap, internal error), 2 when the run hung, 3 when the data check
// found a wrong byte. explore exits with the status of the seed it found.
package main
