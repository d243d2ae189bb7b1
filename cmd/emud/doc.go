// Command emud runs emud's emulated MI355X node from the command line.
//
// Subcommands:
//
//	emud run      run a scenario on an emulated node and print per-rank results
//	emud version  print the module version and the Go toolchain
//
// "emud run [SCENARIO]" runs one scenario (also --scenario; the default
// and, for now, only one is alltoall, an all-to-all over raw SDMA queues) on
// one deterministic simulation, sized by --ranks, --bytes and --queues. It checks every byte
// the scenario moved, prints one row per rank (finish time, bytes,
// bandwidth), or the same as JSON with --json, and ends with two lines that
// pin the run down:
//
//	seed: 1
//	digest: <64 hex digits>
//
// Re-running with the same seed (and the same flags) gives the same digest.
//
// Timing comes from model.Placeholder, which is uncalibrated: the numbers
// have the right shape, not MI355X accuracy.
//
// Exit status: 0 on success, 1 on bad flags or a failed run (engine fault,
// internal error), 2 when the run hung (the hang report is printed: who
// waits on what), 3 when the data check found a wrong byte.
package main
