#!/usr/bin/env bash
# scaling.sh EMUD [CXX_PROGRAM] [OLD_EMUD] [OLD_CXX_PROGRAM]
#
# Issue 43's figures on a many-core machine, in one run (about 2-4 minutes
# on 16 cores; every command is bounded by `timeout`):
#   1. emud bench --only scaling: both explore shapes at 1, 2, 4 ... nproc
#      jobs in one process (seeds/s, efficiency, per-seed CPU, bytes,
#      allocations, GC share) and as nproc processes x --shard k/nproc.
#   2. emud bench --only explore --jobs 2 (GC share at 2 jobs) and
#      --only copy (8 MiB COPY against Go's copy()).
#   3. The issue's own table with the CLI's defaults (--perturb 1,
#      --strategy pct): alltoall 4 ranks x 4 KiB, 20 000 seeds, and the
#      8-rank 1 MiB default, $S1 seeds, at --jobs 1, --jobs nproc and nproc
#      processes x --shard k/nproc; efficiency = T(1) / (nproc x T(n)).
#      With OLD_EMUD (the build before), the same commands for it, right
#      after, so that the ratios come from one run.
#   4. GODEBUG=gctrace=1 of the 4 KiB sweep at --jobs nproc: collections
#      and the collector's share of CPU at the end.
#   5. With CXX_PROGRAM (alltoall_put built by emud c++: 8 ranks, 64 KiB),
#      its per-seed cost under emud explore against the Go seed of the
#      same shape, at --jobs 1 and --jobs nproc; with OLD_EMUD too, the
#      old emud runs OLD_CXX_PROGRAM (the program linked with the old
#      library) or, without it, CXX_PROGRAM. An emud with seed servers
#      (--process-per-seed) runs the program both ways; the program's seed
#      form (PROG.emud-seeds.so) must sit beside it and the server at the
#      path its .emud_seeds section names (readelf -p .emud_seeds PROG).
# EMUD must be a Linux amd64 emud binary (CGO_ENABLED=0 go build
# ./cmd/emud makes a static one); nothing else is needed.
set -u
E=${1:?usage: scaling.sh EMUD [CXX_PROGRAM] [OLD_EMUD] [OLD_CXX_PROGRAM]}
P=${2:-}
OLD=${3:-}
OLDP=${4:-$P}
N=$(nproc)
TO=${TO:-150} # seconds a command may take
S4=${S4:-20000} # seeds of the 4 KiB sweep (the issue's)
S1=${S1:-800}   # seeds of the 1 MiB sweep (the issue's)
SC=${SC:-40}    # seeds of the C++ and Go per-seed comparison at --jobs 1
export LC_ALL=C
TIMEFORMAT='%R %U %S'

echo "== machine: $(nproc) CPUs, $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg), $(free -g | awk '/Mem:/ {print $2 " GiB memory"}')"
echo "== date: $(date -u +%FT%TZ)"
# The CPU time the hypervisor gave other guests (a VM's steal column of
# /proc/stat, in clock ticks), read again at the end: a run whose cores
# were taken away scales worse for reasons that are not emud's.
STEAL0=$(awk '/^cpu / {print $9}' /proc/stat)

# run LABEL CMD...: the command's wall and CPU time (its children's too).
run() {
	local label=$1
	shift
	local t
	t=$({ time {
		timeout "$TO" "$@" >/tmp/speed-dev.out 2>/tmp/speed-dev.err
		echo $? >/tmp/speed-dev.rc
	}; } 2>&1 | tail -1)
	if [ "$(cat /tmp/speed-dev.rc)" = 0 ]; then
		set -- $t
		printf '%-66s wall %7.2f s  CPU %7.2f s\n' "$label" "$1" "$(awk -v u="$2" -v s="$3" 'BEGIN {print u + s}')"
		echo "$1" >/tmp/speed-dev.wall
	else
		echo "$label: failed (exit $(cat /tmp/speed-dev.rc)): $(tail -3 /tmp/speed-dev.err)"
		echo 0 >/tmp/speed-dev.wall
	fi
}

# shards LABEL EMUD ARGS...: N processes of emud explore ARGS --shard k/N.
shards() {
	local label=$1 emud=$2
	shift 2
	local t
	t=$({ time (
		for ((k = 0; k < N; k++)); do
			timeout "$TO" "$emud" explore "$@" --jobs 1 --shard "$k/$N" --shard-out /dev/null >/dev/null 2>/tmp/speed-dev.shard$k &
		done
		wait
	); } 2>&1 | tail -1)
	set -- $t
	printf '%-66s wall %7.2f s  CPU %7.2f s\n' "$label" "$1" "$(awk -v u="$2" -v s="$3" 'BEGIN {print u + s}')"
	echo "$1" >/tmp/speed-dev.wall
	cat /tmp/speed-dev.shard* | grep -iv '^$' | grep -i 'error\|hang\|fail' | head -3
	rm -f /tmp/speed-dev.shard*
}

wall() { cat /tmp/speed-dev.wall; }
eff() { awk -v a="$1" -v b="$2" -v n="$N" 'BEGIN { if (b > 0) printf "  efficiency %.0f%% (%.2f s at 1 job / (%d x %.2f s))\n", 100 * a / (n * b), a, n, b }'; }

if [ -z "${NOBENCH:-}" ]; then
	echo
	echo "== 1, 2. emud bench (scaling, explore at --jobs 2, copy)"
	timeout 300 "$E" bench --only scaling 2>/dev/null || echo "bench --only scaling failed"
	timeout 120 "$E" bench --only explore --jobs 2 2>/dev/null | tail -n +2 || echo "bench --only explore failed"
	timeout 120 "$E" bench --only copy 2>/dev/null | tail -n +2 || echo "bench --only copy failed"
fi

table() {
	local emud=$1 tag=$2
	echo
	echo "== 3. the issue's table, $tag ($emud)"
	local A=(alltoall --ranks 4 --bytes 4KiB --seeds "$S4")
	run "alltoall 4 x 4 KiB, $S4 seeds, --jobs 1" "$emud" explore "${A[@]}" --jobs 1
	local t1
	t1=$(wall)
	run "alltoall 4 x 4 KiB, $S4 seeds, --jobs $N" "$emud" explore "${A[@]}" --jobs "$N"
	eff "$t1" "$(wall)"
	shards "alltoall 4 x 4 KiB, $S4 seeds, $N x --shard k/$N" "$emud" "${A[@]}"
	eff "$t1" "$(wall)"
	local B=(alltoall --seeds "$S1")
	run "alltoall defaults (8 x 1 MiB), $S1 seeds, --jobs 1" "$emud" explore "${B[@]}" --jobs 1
	t1=$(wall)
	run "alltoall defaults (8 x 1 MiB), $S1 seeds, --jobs $N" "$emud" explore "${B[@]}" --jobs "$N"
	eff "$t1" "$(wall)"
	shards "alltoall defaults (8 x 1 MiB), $S1 seeds, $N x --shard k/$N" "$emud" "${B[@]}"
	eff "$t1" "$(wall)"
	echo "-- 4. GODEBUG=gctrace=1, alltoall 4 x 4 KiB, $S4 seeds, --jobs $N"
	GODEBUG=gctrace=1 timeout "$TO" "$emud" explore "${A[@]}" --jobs "$N" 2>/tmp/speed-dev.gc >/dev/null
	echo "  $(grep -c '^gc ' /tmp/speed-dev.gc) collections; last: $(grep '^gc ' /tmp/speed-dev.gc | tail -1 | cut -d: -f1) (the % is the collector's share of CPU since start)"
}
table "$E" "new"
[ -n "$OLD" ] && table "$OLD" "old (baseline)"

if [ -n "$P" ]; then
	echo
	echo "== 5. C++ per seed under emud explore ($P) against the Go seed of the same shape"
	for emud in "$E" ${OLD:+"$OLD"}; do
		prog=$P
		[ "$emud" = "$OLD" ] && prog=$OLDP
		echo "-- $emud, $prog"
		run "Go: explore alltoall --ranks 8 --bytes 64KiB, $SC seeds, --jobs 1" "$emud" explore alltoall --ranks 8 --bytes 64KiB --seeds "$SC" --jobs 1
		g1=$(wall)
		run "C++: explore -- alltoall_put, $SC seeds, --jobs 1" "$emud" explore --seeds "$SC" --jobs 1 -- "$prog"
		c1=$(wall)
		grep -i 'warning' /tmp/speed-dev.err | head -2 # a seed server that could not serve
		awk -v c="$c1" -v g="$g1" -v n="$SC" 'BEGIN { if (g > 0) printf "  C++ / Go per seed at --jobs 1: %.1fx (%.1f ms against %.1f ms a seed)\n", c / g, 1000 * c / n, 1000 * g / n }'
		# An emud with seed servers runs the program's seeds in them when
		# it has emud c++'s seed form: the process per seed, for the ratio.
		if "$emud" explore --help 2>/dev/null | grep -q -- --process-per-seed; then
			run "C++: the same, --process-per-seed" "$emud" explore --seeds "$SC" --jobs 1 --process-per-seed -- "$prog"
			awk -v c="$(wall)" -v g="$g1" -v n="$SC" 'BEGIN { if (g > 0) printf "  C++ / Go per seed at --jobs 1, a process a seed: %.1fx (%.1f ms a seed)\n", c / g, 1000 * c / n }'
		fi
		run "Go: the same, $((10 * N)) seeds, --jobs $N" "$emud" explore alltoall --ranks 8 --bytes 64KiB --seeds $((10 * N)) --jobs "$N"
		gn=$(wall)
		run "C++: the same, $((10 * N)) seeds, --jobs $N" "$emud" explore --seeds $((10 * N)) --jobs "$N" -- "$prog"
		cn=$(wall)
		awk -v c="$cn" -v g="$gn" 'BEGIN { if (g > 0) printf "  C++ / Go per seed at --jobs N: %.1fx\n", c / g }'
		if "$emud" explore --help 2>/dev/null | grep -q -- --process-per-seed; then
			run "C++: the same, --process-per-seed" "$emud" explore --seeds $((10 * N)) --jobs "$N" --process-per-seed -- "$prog"
			awk -v c="$(wall)" -v g="$gn" 'BEGIN { if (g > 0) printf "  C++ / Go per seed at --jobs N, a process a seed: %.1fx\n", c / g }'
		fi
	done
fi
echo
echo "== steal: $(awk -v s0="$STEAL0" -v hz="$(getconf CLK_TCK)" '/^cpu / {printf "%.2f s", ($9 - s0) / hz}' /proc/stat) of CPU time taken by the hypervisor during the run"
echo "== done: $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
