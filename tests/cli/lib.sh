# SPDX-License-Identifier: MIT
# Helpers for the CLI tests: each test script sources this file, calls
# ok/fail through the check functions and ends with `done_testing`, which
# prints "cli: N passed, N failed"; a script that cannot run here at all calls
# `skip_all REASON` instead (tests/run.sh counts it as skipped, neither a pass
# nor a failure).
: "${PROXIMA:=$(pwd)/build/proxima}"
cli_pass=0
cli_fail=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok() { cli_pass=$((cli_pass + 1)); echo "ok - $1"; }
not_ok() { cli_fail=$((cli_fail + 1)); echo "not ok - $1"; }

# expect_status WANT NAME CMD...: runs CMD, keeps its output in $OUT/$ERR
expect_status() {
	want=$1; name=$2; shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	OUT=$(cat "$TMP/out"); ERR=$(cat "$TMP/err")
	if [ "$got" -eq "$want" ]; then ok "$name"; else
		not_ok "$name (exit $got, wanted $want)"; sed 's/^/# /' "$TMP/err" | head -n 10; fi
}

# expect_match PATTERN TEXT NAME: grep -E PATTERN in TEXT
expect_match() {
	if printf '%s\n' "$2" | grep -Eq -- "$1"; then ok "$3"; else
		not_ok "$3 (no match for '$1')"; printf '%s\n' "$2" | head -n 10 | sed 's/^/# /'; fi
}

done_testing() { echo "cli: $cli_pass passed, $cli_fail failed"; }

# skip_all REASON: the whole script cannot run here (say, the daemons it needs
# cannot start); prints "cli: skipped: REASON" as the closing line. Checks
# already counted are not hidden: then it prints the reason as a comment and
# closes with done_testing.
skip_all() {
	if [ $((cli_pass + cli_fail)) -gt 0 ]; then
		echo "# skip: $1"
		done_testing
	else
		echo "cli: skipped: $1"
	fi
}

# serve_start LOG ARGS...: starts `proxima review serve ARGS` in the
# background, its output in LOG; sets $srv (its pid) and $url (the URL it
# printed, or "" when none came within 10 s)
serve_start() {
	serve_log=$1; shift
	"$PROXIMA" review serve "$@" >"$serve_log" 2>&1 &
	srv=$!
	url=""
	serve_i=0
	while [ $serve_i -lt 100 ] && [ -z "$url" ]; do
		url=$(grep -o 'http://[0-9.:]*/' "$serve_log" | head -n 1)
		[ -n "$url" ] || sleep 0.1
		serve_i=$((serve_i + 1))
	done
}
