#!/bin/sh
# SPDX-License-Identifier: MIT
# The `make bench` driver. Installs the anchor packages when run as root,
# compiles every anchor in bench/anchors/ it can into $BENCH_ANCHORS
# (missing libraries are reported, not fatal), runs every benchmark program
# in $BUILD/bench/, ends with a summary (one line per comparison, "NAME:
# ours X, ANCHOR Y, ratio Z" as the programs printed it, and every target
# with PASS or FAIL) and writes the tables it measured into $PERF_DOC
# (default docs/performance.md) with bench/report.sh.
set -u
BUILD=${BUILD:-build}
BENCH_ANCHORS=${BENCH_ANCHORS:-$BUILD/bench/anchors}
BENCH_WORK=${BENCH_WORK:-$BUILD/bench/work}
BENCH_SCRIPTS=${BENCH_SCRIPTS:-bench/anchors}
PERF_DOC=${PERF_DOC:-docs/performance.md}
export BENCH_ANCHORS BENCH_WORK BENCH_SCRIPTS
mkdir -p "$BENCH_ANCHORS" "$BENCH_WORK"

# 1. anchor packages (Boost.Graph, Embree, networkx)
if [ "$(id -u)" = 0 ]; then
	sh scripts/setup.sh libboost-graph-dev libembree-dev python3-networkx ||
		echo "bench: could not install every anchor package; going on"
else
	echo "bench: not root, anchor packages not installed (run: sudo sh scripts/setup.sh libboost-graph-dev libembree-dev python3-networkx)"
fi

# 2. anchors: one compile line per kind, keyed on the file name
have_header() {
	printf '#include <%s>\n' "$1" | ${CXX:-g++} -x c++ -E - >/dev/null 2>&1
}
for src in bench/anchors/*.cpp bench/anchors/*.c; do
	[ -f "$src" ] || continue
	name=$(basename "$src")
	out="$BENCH_ANCHORS/${name%.*}"
	case "$name" in
	astar_boost.cpp)
		need=boost/graph/astar_search.hpp
		cmd="${CXX:-g++} -O2 -std=c++17 -o $out $src" ;;
	embree_*.cpp)
		need=embree3/rtcore.h
		cmd="${CXX:-g++} -O2 -o $out $src -lembree3 -lpthread" ;;
	embree_*.c)
		need=embree3/rtcore.h
		cmd="${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o $out $src -lembree3 -lpthread" ;;
	*.cpp)
		need=
		cmd="${CXX:-g++} -O2 -std=c++17 -o $out $src" ;;
	*)
		need=
		cmd="${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o $out $src -lm" ;;
	esac
	case "$src" in
	*.cpp) command -v "${CXX:-g++}" >/dev/null 2>&1 || {
		echo "bench: anchor $name skipped: no C++ compiler (${CXX:-g++})"
		continue; } ;;
	esac
	if [ -n "$need" ] && ! have_header "$need"; then
		echo "bench: anchor $name missing: header <$need> not installed"
		continue
	fi
	if [ -x "$out" ] && [ "$out" -nt "$src" ]; then
		continue
	fi
	if ! $cmd 2>"$BENCH_WORK/anchor.log"; then
		echo "bench: anchor $name failed to compile:"
		head -n 20 "$BENCH_WORK/anchor.log"
		rm -f "$out"
	fi
done
if command -v python3 >/dev/null 2>&1 && python3 -c 'import networkx' 2>/dev/null; then
	:
else
	echo "bench: anchor networkx missing (python3-networkx)"
fi

# 3. every benchmark program, after a record of the machine
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: $(nproc) cores, $cpu, load $load0"
log="$BENCH_WORK/bench.log"
{
	echo "head: machine | item | value"
	echo "row: machine | CPU | $cpu ($(nproc) cores)"
	echo "row: machine | memory | $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "row: machine | system | $(uname -sr), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
	echo "row: machine | compiler | $(${CC:-cc} --version | head -n 1), flags of the Makefile (-O2 -g, no -march)"
	# the code measured: changes to the document itself (the last run's) do not count
	commit=$(git describe --always --abbrev=10 2>/dev/null || echo unknown)
	if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- . ":(exclude)$PERF_DOC" 2>/dev/null; then
		commit="$commit with uncommitted changes"
	fi
	echo "row: machine | commit | $commit"
	echo "row: machine | started | $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "row: machine | load average at the start | $load0 (1, 5, 15 min)"
	echo "row: machine | command | make bench (bench/run.sh)"
} >"$log"
status=0
for b in "$BUILD"/bench/*; do
	[ -f "$b" ] && [ -x "$b" ] || continue
	echo "== $(basename "$b")"
	echo "program: $(basename "$b")" >>"$log"
	{ "$b"; echo $? >"$BENCH_WORK/rc"; } | tee -a "$log"
	rc=$(cat "$BENCH_WORK/rc")
	if [ "$rc" -ne 0 ]; then
		echo "bench: $(basename "$b") exited $rc"
		status=1
	fi
done

echo "row: machine | load average at the end | $(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"

# 4. summary, and the document
echo "== summary"
grep -E '^[^:]+: ours [^,]+, [^,]+, ratio [0-9.]+' "$log"
grep -E '(missing|failed|n/a)' "$log" | grep -E '^[^:]+: ours' || true
grep -E '^target: ' "$log" | awk -F ' [|] ' '{ sub(/^target: /, "", $1); printf "%s: %s: %s (goal %s)\n", $NF, $1, $2, $6 }'
sh bench/report.sh "$log" "$PERF_DOC" || status=1
exit $status
