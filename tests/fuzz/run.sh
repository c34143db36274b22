#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds every tests/fuzz/fuzz_*.c with clang and libFuzzer against the
# library compiled with the same sanitizers (in build-fuzz/), runs each for
# FUZZ_SECONDS (default 20) from its seeds in tests/fuzz/corpus/<target>/
# and prints, per target, the executions and the exit status. Fails when a
# target does not build or finds a crash, a leak or a sanitizer report; the
# input that did it is left in build-fuzz/artifacts/<target>/.
# Usage: sh tests/fuzz/run.sh [target ...]   (e.g. fuzz_csv; default: all)
set -u
cd "$(dirname "$0")/../.."
sh scripts/setup.sh clang libclang-rt-14-dev || exit 1

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
CLANG=${CLANG:-clang}
B=build-fuzz
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
OPT="-O1 -g -fsanitize=fuzzer-no-link $SAN"
CPPFLAGS="-D_GNU_SOURCE $(make -s --no-print-directory print-inc)"
WARN="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
-Wmissing-prototypes -Wwrite-strings -Wvla -Wcast-qual -Wundef -Wno-unused-parameter"
LIBS="$(make -s --no-print-directory print-libs)"

mkdir -p $B
if ! make --no-print-directory -j2 BUILD=$B CC="$CLANG" OPT="$OPT" CI= \
	$B/libproxima.a >$B/build.log 2>&1; then
	tail -n 30 $B/build.log
	echo "fuzz: the library does not build with $CLANG"
	exit 1
fi

if [ $# -gt 0 ]; then
	targets=$*
else
	targets=$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c; done)
fi
failed=0
for t in $targets; do
	mkdir -p $B/fuzz $B/corpus/$t $B/artifacts/$t tests/fuzz/corpus/$t
	if ! $CLANG $CPPFLAGS $WARN -O1 -g -fsanitize=fuzzer $SAN -o $B/fuzz/$t \
		tests/fuzz/$t.c $B/libproxima.a $LIBS; then
		echo "$t: does not build"
		failed=$((failed + 1))
		continue
	fi
	log=$B/fuzz/$t.log
	# new inputs go to build-fuzz/corpus/<target>; the seeds stay as they are
	$B/fuzz/$t -max_total_time="$FUZZ_SECONDS" -timeout=10 -print_final_stats=1 \
		-artifact_prefix=$B/artifacts/$t/ $B/corpus/$t tests/fuzz/corpus/$t \
		>"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	echo "$t: ${execs:-?} executions (${rate:-?}/s) in ${FUZZ_SECONDS}s, exit $rc"
	if [ "$rc" -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 10
		failed=$((failed + 1))
	fi
done
if [ "$failed" -gt 0 ]; then
	echo "fuzz: $failed target(s) failed (inputs in $B/artifacts/)"
	exit 1
fi
echo "fuzz: every target ran clean"
