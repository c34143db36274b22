#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima report` on a store generated from a synthetic kitchen, with a few
# reviews and one object renamed to hostile markup: usage errors; then every
# chart is read back from its SVG file and compared with counts made again
# in python3 from the store's tables (tests/cli/report_check.py), the audit
# charts with `proxima audit --json`, and the page is checked for scripts,
# outside addresses and escaping.
. "$(dirname "$0")/lib.sh"
HERE="$(cd "$(dirname "$0")" && pwd)"

expect_status 0 "report --help" "$PROXIMA" report --help
expect_match '^usage: proxima report --db F -o DIR' "$OUT" "help shows the usage"
expect_status 2 "report without a store is a usage error" "$PROXIMA" report -o "$TMP/x"
expect_match 'no store given' "$ERR" "the missing --db is named"
expect_status 2 "report without a folder is a usage error" "$PROXIMA" report --db a.db
expect_match 'no output folder' "$ERR" "the missing -o is named"
expect_status 2 "report with an unknown status" "$PROXIMA" report --db a.db -o "$TMP/x" --status pending,finished
expect_match "finished" "$ERR" "the unknown status is named"
expect_status 2 "report with a stray argument" "$PROXIMA" report --db a.db -o "$TMP/x" extra
expect_status 1 "report of a missing store fails" "$PROXIMA" report --db "$TMP/none.db" -o "$TMP/x"
expect_match "none\.db" "$ERR" "the missing store is named"
[ -e "$TMP/none.db" ] && not_ok "report created the missing store" || ok "report created no store"

if ! command -v sqlite3 >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	not_ok "the sqlite3 shell and python3 are needed to check the charts"
	done_testing
	exit 0
fi
expect_status 0 "synth a kitchen" "$PROXIMA" synth --scene kitchen --minutes 2 --seed 7 --no-video -o "$TMP/rec"
expect_status 0 "generate 6 per task" "$PROXIMA" generate "$TMP/rec" --db "$TMP/q.db" --per-task 6 --quiet --no-audit
DB="$TMP/q.db"
q() { sqlite3 -batch -noheader "$DB" "$1"; }
XSS='<script>alert(1)</script>'
q "UPDATE qa SET answer_json = json_set(answer_json, '\$.object', '$XSS') WHERE id = (SELECT id FROM qa WHERE subtask = 'gaze_target' AND metric = 'approx' ORDER BY id LIMIT 1)"
expect_match "^1\$" "$(q "SELECT count(*) FROM qa WHERE answer_json LIKE '%<script>%'")" "one object is renamed to markup"
# reviews: ana approves two and rejects one, bob agrees on one and not on the other
set -- $(q "SELECT id FROM qa WHERE subtask = 'head_turn' ORDER BY id LIMIT 3")
"$PROXIMA" review approve "$1" --db "$DB" --reviewer ana >/dev/null &&
	"$PROXIMA" review approve "$2" --db "$DB" --reviewer ana >/dev/null &&
	"$PROXIMA" review reject "$3" --db "$DB" --reviewer ana --reason "hidden" >/dev/null &&
	"$PROXIMA" review approve "$1" --db "$DB" --reviewer bob >/dev/null &&
	"$PROXIMA" review reject "$2" --db "$DB" --reviewer bob --reason "no" >/dev/null &&
	ok "five reviews by two reviewers" || not_ok "five reviews by two reviewers"

expect_status 0 "report" "$PROXIMA" report --db "$DB" -o "$TMP/rep"
expect_match "^wrote '$TMP/rep/index.html', report.json and [0-9]+ charts for [0-9]+ QAs" "$OUT" "report says what it wrote"
for f in index.html report.json all.status.svg all.direction.svg all.audit.svg all.kappa.svg; do
	[ -s "$TMP/rep/$f" ] && ok "$f written" || not_ok "$f written"
done
expect_status 0 "audit --json for the comparison" "$PROXIMA" audit --db "$DB" --json
printf '%s\n' "$OUT" >"$TMP/audit.json"
python3 "$HERE/report_check.py" "$DB" "$TMP/rep" "$TMP/audit.json" >"$TMP/check.log" 2>&1
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) echo "# $line" ;;
	esac
done <"$TMP/check.log"
grep -q '^ok - \|^not ok - ' "$TMP/check.log" || not_ok "report_check.py ran"
page=$(cat "$TMP/rep/index.html")
expect_match '&lt;script&gt;alert\(1\)&lt;/script&gt;' "$page" "the hostile object name is on the page as text"
grep -q 'data-key="&lt;script&gt;alert(1)&lt;/script&gt;"' "$TMP/rep/all.object.svg" &&
	ok "the hostile name is escaped in its chart" || not_ok "the hostile name is escaped in its chart"

# --status: only the approved QAs are counted; the status chart still shows the store
expect_status 0 "report --status approved --no-audit" "$PROXIMA" report --db "$DB" -o "$TMP/appr" --status approved --no-audit
expect_match "for 1 QAs \(status approved\), without the blind audit" "$OUT" "one QA is approved (bob rejected the other)"
[ -e "$TMP/appr/all.audit.svg" ] && not_ok "--no-audit leaves the audit out" || ok "--no-audit leaves the audit out"
printf '{"groups": []}\n' >"$TMP/noaudit.json"
python3 "$HERE/report_check.py" "$DB" "$TMP/appr" "$TMP/noaudit.json" approved >"$TMP/check2.log" 2>&1
grep -q '^ok - report.json counts the QAs of the statuses asked (1)' "$TMP/check2.log" &&
	grep -q '^ok - the marks of [0-9]* counted charts equal' "$TMP/check2.log" &&
	ok "--status approved: the charts equal the tables' counts" ||
	{ not_ok "--status approved: the charts equal the tables' counts"; sed 's/^/# /' "$TMP/check2.log" | grep 'not ok' | head -5; }
# the output folder's parent must exist
expect_status 1 "report into a folder whose parent is missing fails" "$PROXIMA" report --db "$DB" -o "$TMP/no/such" --no-audit
expect_match "no/such" "$ERR" "the folder is named"
done_testing
