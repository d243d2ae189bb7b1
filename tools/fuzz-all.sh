#!/usr/bin/env bash
# fuzz-all.sh: build emud's fuzz targets as self-contained test binaries
# on a machine with Go, then run them all at once, one process each, on a
# machine without Go.
#
#   tools/fuzz-all.sh build [OUT [K/N]]
#                                   in an emud checkout (default OUT:
#                                   /tmp/emud-fuzz); with K/N, only the
#                                   K-th of N groups of packages (round
#                                   robin), so that each group's binaries
#                                   fit a transfer limit
#   [SRC=CHECKOUT] OUT/run.sh DUR [RESULTS]
#                                   on the fuzzing machine (DUR: 20s, 10m, 1h;
#                                   default RESULTS: OUT/results-<date>;
#                                   default SRC: OUT/src)
#
# build finds every `func FuzzX` in the checkout's *_test.go files, builds
# each package's test binary with `go test -c -fuzz=.` (with -fuzz the
# binary gets the coverage instrumentation fuzzing needs; without it the
# fuzzer runs blind and says so), CGO_ENABLED=0, checked with
# ldd: a package that needs cgo is reported and left out), stripped
# (-ldflags='-s -w', -trimpath) and packed with xz (OUT/bin/PKG.test.xz,
# ~70 MB for all; run.sh unpacks them where it runs), copies the
# checkout's tracked files to OUT/src (targets read testdata and docs
# relative to their package, and write new crashers to
# testdata/fuzz/FuzzX there), and writes OUT/targets.txt (PKG NAME, one
# target a line) and OUT/run.sh.
#
# run.sh starts every target at once, each as
#   PKG.test -test.run=^$ -test.fuzz=^NAME$ -test.fuzztime=DUR
#            -test.fuzzcachedir=RESULTS/cache/PKG/NAME -test.parallel=1
# in its package's directory, with a wall-clock limit of DUR plus 10
# minutes. It writes RESULTS/logs/PKG.NAME.log, RESULTS/summary.txt (one
# line a target: status, exit code, executions, log), copies each new
# crasher to RESULTS/crashers/PKG/testdata/fuzz/NAME/ (put that under the
# package in a checkout and `go test -run NAME/ID ./PKG` replays it), and
# exits 1 if any target failed. A target that exits 1 with "context
# deadline exceeded" as its only failure and no new crasher is DEADLINE,
# not FAIL: Go 1.26's fuzz coordinator reports its own shutdown at the
# -fuzztime deadline that way when a worker answers late on a loaded
# machine (go.dev/issue/75804, fixed in Go 1.27); its executions count.
set -euo pipefail

cmd=${1:-}
case "$cmd" in
build) ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac

out=${2:-/tmp/emud-fuzz}
group=${3:-1/1}
gk=${group%/*}
gn=${group#*/}
case "$gk/$gn" in
[1-9]*/[1-9]*) [ "$gk" -le "$gn" ] || { echo "fuzz-all: group $group: want K/N with 1 <= K <= N" >&2; exit 2; } ;;
*) echo "fuzz-all: group $group: want K/N, such as 1/2" >&2; exit 2 ;;
esac
root=$(git rev-parse --show-toplevel)
mod=$(cd "$root" && go list -m)
rm -rf "$out/bin" "$out/src"
mkdir -p "$out/bin"
mkdir -p "$out/src"
(cd "$root" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$out/src"

: >"$out/targets.txt"
failed=0
i=0
for pkg in $(cd "$root" && grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sed 's#^\./##' | sort -u); do
	i=$((i + 1))
	[ $(((i - 1) % gn + 1)) -eq "$gk" ] || continue
	name=${pkg//\//_}
	bin="$out/bin/$name.test"
	echo "build $pkg -> $bin"
	if ! (cd "$root" && CGO_ENABLED=0 nice go test -c -fuzz=. -trimpath -ldflags="-s -w" -o "$bin" "./$pkg"); then
		echo "fuzz-all: $pkg does not build with CGO_ENABLED=0: left out" >&2
		failed=1
		continue
	fi
	if ldd "$bin" >/dev/null 2>&1; then # "not a dynamic executable" fails
		echo "fuzz-all: $bin is dynamically linked (ldd: $(ldd "$bin" | tr '\n' ' ')): left out" >&2
		rm -f "$bin"
		failed=1
		continue
	fi
	xz -9 -T0 -f "$bin" # ~30% of the stripped size: the device tool carries 64 MiB in all; run.sh unpacks
	for f in $(cd "$root/$pkg" && grep -ho '^func Fuzz[A-Za-z0-9_]*' ./*_test.go | sed 's/^func //' | sort); do
		echo "$pkg $f" >>"$out/targets.txt"
	done
done

cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# run.sh DUR [RESULTS]: run every fuzz target of targets.txt for DUR (20s,
# 10m, 1h), all at once, one process each; see fuzz-all.sh for what it
# writes and what DEADLINE means.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dur=${1:?usage: run.sh DUR [RESULTS]}
res=${2:-$here/results-$(date -u +%Y%m%dT%H%M%SZ)}
# SRC: the tree the targets run in (their testdata; new crashers land
# there too): the copy beside this script, or an emud checkout of the
# same commit (SRC=/path/to/emud), so the copy need not travel.
src=${SRC:-$here/src}
for z in "$here"/bin/*.test.xz; do
	[ -e "$z" ] || continue
	{ xz -d -k -f "$z" && chmod +x "${z%.xz}"; } || { echo "run.sh: cannot unpack $z (xz)" >&2; exit 2; }
done
case "$dur" in
*h) secs=$((${dur%h} * 3600)) ;;
*m) secs=$((${dur%m} * 60)) ;;
*s) secs=${dur%s} ;;
*) echo "run.sh: DUR $dur: want a whole number of s, m or h" >&2; exit 2 ;;
esac
mkdir -p "$res/logs" "$res/cache" "$res/crashers"
: >"$res/summary.txt"
pids=()
while read -r pkg name; do
	[ -n "$pkg" ] || continue
	key=${pkg//\//_}.$name
	dir="$src/$pkg"
	corpus="$dir/testdata/fuzz/$name"
	mkdir -p "$corpus"
	ls "$corpus" | sort >"$res/cache/$key.before"
	(
		cd "$dir" || exit 1
		timeout --kill-after=30s $((secs + 600)) "$here/bin/${pkg//\//_}.test" \
			-test.run='^$' -test.fuzz="^$name\$" -test.fuzztime="$dur" \
			-test.fuzzcachedir="$res/cache/$pkg/$name" -test.parallel=1 \
			>"$res/logs/$key.log" 2>&1
		rc=$?
		ls "$corpus" | sort >"$res/cache/$key.after"
		new=$(comm -13 "$res/cache/$key.before" "$res/cache/$key.after")
		for f in $new; do
			mkdir -p "$res/crashers/$pkg/testdata/fuzz/$name"
			cp "$corpus/$f" "$res/crashers/$pkg/testdata/fuzz/$name/"
		done
		execs=$(grep -o 'execs: [0-9]*' "$res/logs/$key.log" | tail -1 | cut -d' ' -f2)
		status=ok
		if [ -n "$new" ]; then
			status=FAIL
		elif [ "$rc" -ne 0 ]; then
			status=FAIL
			# Go 1.26's coordinator shutdown race (go.dev/issue/75804):
			# the test's only failure line, no input written.
			if [ "$(grep -c -e '^--- FAIL' -e 'Failing input written' -e '^panic' "$res/logs/$key.log")" = 1 ] &&
				grep -A1 '^--- FAIL' "$res/logs/$key.log" | tail -1 | grep -qx '    context deadline exceeded'; then
				status=DEADLINE
			fi
		fi
		printf '%s\t%s %s\texit %d\texecs %s\tnew crashers %d\tlog %s\n' "$status" "$pkg" "$name" "$rc" "${execs:-?}" \
			"$(printf '%s' "$new" | grep -c . || true)" "$res/logs/$key.log" >>"$res/summary.txt"
	) &
	pids+=($!)
done <"$here/targets.txt"
for p in "${pids[@]}"; do wait "$p"; done
sort -k2 "$res/summary.txt" -o "$res/summary.txt"
cat "$res/summary.txt"
n=$(wc -l <"$res/summary.txt")
bad=$(grep -c '^FAIL' "$res/summary.txt" || true)
late=$(grep -c '^DEADLINE' "$res/summary.txt" || true)
echo "run.sh: $n targets for $dur each: $bad failed, $late ended by the coordinator's deadline race (no input); results in $res"
[ "$bad" -eq 0 ]
RUN
chmod +x "$out/run.sh"
echo "fuzz-all: $(wc -l <"$out/targets.txt") targets in $(ls "$out/bin" | wc -l) binaries; run: $out/run.sh 10m"
exit $failed
