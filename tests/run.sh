#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every unit test binary and every CLI test script, then prints one
# closing line "N passed, N failed" that sums them all. A CLI script that
# could not run here at all (it closed with "cli: skipped: REASON") is named
# on a line of its own before that, counted neither as passed nor failed.
set -u
BUILD=${BUILD:-build}
export PROXIMA="$(pwd)/$BUILD/proxima"
export PROXIMA_BUILD="$(pwd)/$BUILD"
pass=0
fail=0
skip=0
log=$(mktemp)
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	"$t" >"$log" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | tail -n 1)
	p=${p:-0}
	f=${f:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "$(basename "$t"): crashed (exit $rc)"
		tail -n 20 "$log"
	fi
	[ "$f" -gt 0 ] && grep -E '^\[  (FAILED|ERROR)|error:|Failure' "$log" | head -n 40
	echo "$(basename "$t"): $p passed, $f failed"
	pass=$((pass + p))
	fail=$((fail + f))
done
for t in tests/cli/test_*.sh; do
	[ -f "$t" ] || continue
	sh "$t" >"$log" 2>&1
	why=$(sed -n 's/^cli: skipped: //p' "$log" | tail -n 1)
	if [ -n "$why" ]; then
		echo "$(basename "$t"): skipped: $why"
		skip=$((skip + 1))
		continue
	fi
	p=$(sed -n 's/^cli: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^cli: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | tail -n 1)
	if [ -z "$p" ]; then
		p=0
		f=1
		echo "$(basename "$t"): did not finish"
		tail -n 20 "$log"
	fi
	[ "$f" -gt 0 ] && grep '^not ok' "$log" | head -n 40
	echo "$(basename "$t"): $p passed, $f failed"
	pass=$((pass + p))
	fail=$((fail + f))
done
rm -f "$log"
# the last line stays exactly "N passed, N failed" for CI; skips come before it
[ "$skip" -gt 0 ] && echo "$skip test scripts skipped (see the lines above)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
