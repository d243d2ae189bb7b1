// Package shard splits an explore, hunt or perf sweep into shards that run anywhere (a
// Slurm job array, a Kubernetes Indexed Job, several shells) and merges
// their results back into the single run's answer.
//
// A shard is K/N, 0 ≤ K < N (Slurm's SLURM_ARRAY_TASK_ID and Kubernetes'
// JOB_COMPLETION_INDEX count from 0). Shard K of a sweep of seeds
// first..first+n−1 runs the contiguous range Spec.Range gives: the seeds
// are split into N ranges whose sizes differ by at most one. Each shard
// explores its range as explore does (stopping at its own first failing
// seed) and writes an Explore record as JSON: a Header naming the build
// (Version), the command, the scenario, every flag that shapes the result
// and the sweep (first seed, seeds, N), and what the range found: its
// lowest failing seed and status, or, all passed, the end times and
// digests of its runs.
//
// MergeExplore checks that the records belong to one sweep and are
// complete: the same version, command, scenario, flags, range and shard
// count (an error names the first difference, with both files), every K
// in 0..N−1 present once (missing and duplicated shards are errors naming
// them). The merged answer is the single run's: the lowest failing seed
// over all shards (each shard ran every seed of its range below its own
// failure, and the lowest failure is below every other shard's, so every
// seed under it has run and passed), or, with none, the union of the end
// times and digests. The command line (cmd/emud's merge) re-runs that one
// failing seed to print its report (runs are deterministic: same seed,
// same report), so the merged output is byte for byte what one explore
// over the whole range prints.
//
// hunt shards the same way: shard K runs every (bug, strategy) pair over
// its range (PCT's steps measured at the sweep's first seed, as a single
// hunt does) and records per pair the detections and the first detecting
// seed; the merge sums the detections, takes the first detecting seed of
// the lowest shard that has one, and runs that seed again for the table's
// example.
//
// perf shards its sizes, not seeds: the header's range is 0..n−1 over the
// n sizes its flags give, shard K runs the sizes of its range exactly as
// one sweep runs them and records each size's line (a row, or the reason
// it was skipped) and its range's worst failure (exit status and text);
// the merge concatenates the lines in shard order and keeps the first
// most severe failure, so cmd/emud prints the single sweep's table and
// exits as it does, with nothing run again.
//
// A C++ program's sweep (cmd/emud's explore or hunt after --) shards the
// same way; its header has no scenario but the program's argv (hunt: its
// BUG[:FIXED] pairs) and the SHA-256 of each executable (Header.Program,
// Sums), which merge compares like a flag; a program hunt's cells also
// count the fixed twin's failures (HuntCell.TwinFailed, TwinFirst), summed
// and first-taken as the bug's are. The farm helpers put a task's --shard
// flags before the "--" that starts a program's own arguments.
//
// A record is a file anyone can write, so Decode also refuses one at odds
// with itself (a found seed or first detection outside its own range,
// counts beyond its seeds, names with control characters) and escapes the
// control characters of the free text merge prints. ReadFiles reads at
// most MaxRecordBytes of a file and refuses one that does not start as a
// JSON object at its first byte; Record.Write writes a file whole or not
// at all (internal/fileio). The farm helpers quote what goes into shell
// steps; cmd/emud's farm checks names and #SBATCH lines before writing.
package shard
