#!/bin/sh
# SPDX-License-Identifier: MIT
# proxima check, and regenerate under kill -9. A sound store checks clean;
# each kind of damage is found and named (a superseded category with
# nothing in its place, a review of no QA, a corrupted page, JSON that does
# not parse, a count that disagrees); a negative schema version is refused.
# Then regenerate is killed with SIGKILL at random moments: after every
# kill the category holds exactly the old or exactly the new QAs, the
# reviews are as they were, and check finds nothing.
. tests/cli/lib.sh

if ! command -v sqlite3 >/dev/null 2>&1; then
	not_ok "the sqlite3 shell is needed"
	done_testing
	exit 0
fi
q() { sqlite3 -readonly "$@"; }

expect_status 2 "check without --db" "$PROXIMA" check
expect_status 1 "check of a missing store" "$PROXIMA" check --db "$TMP/none.db"
expect_match "none\.db" "$ERR" "the missing store is named"

"$PROXIMA" synth --scene kitchen --minutes 4 --seed 21 --no-video -o "$TMP/k" >/dev/null 2>&1
expect_status 0 "generate" "$PROXIMA" generate "$TMP/k" --db "$TMP/a.db" --per-task 12 --seed 1 \
	--jobs 2 --quiet --no-audit
expect_status 0 "check of a sound store" "$PROXIMA" check --db "$TMP/a.db"
expect_match '^0 problems found \([0-9]+ checks\)$' "$OUT" "no problem found"
expect_match "^$TMP/a.db: [1-9][0-9]* QAs" "$OUT" "it says what it read"

# every kind of damage, each on its own copy
damage() { # NAME SQL: a copy of a.db with SQL applied (foreign keys off)
	cp "$TMP/a.db" "$TMP/$1.db"
	sqlite3 "$TMP/$1.db" "PRAGMA foreign_keys = OFF; $2" || not_ok "damage $1"
}
damage lost "UPDATE qa SET status = 'superseded' WHERE category = 'exploration'"
expect_status 1 "a category superseded with nothing in its place" "$PROXIMA" check --db "$TMP/lost.db"
expect_match "^problem: superseded_without_replacement: recording .*, exploration: [0-9]+ superseded QAs" \
	"$OUT" "the lost replacements are named"
damage orphan "INSERT INTO reviews (qa_id, reviewer, decision, started_at, decided_at)
	VALUES ('ffffffffffffffff', 'x', 'approve', '2026-01-01', '2026-01-01')"
expect_status 1 "a review of no QA" "$PROXIMA" check --db "$TMP/orphan.db"
expect_match "^problem: foreign_key: reviews row [0-9]+ refers to a missing row of qa" "$OUT" \
	"the orphaned review is named"
damage json "UPDATE qa SET options_json = '[\"a\",' WHERE rowid = (SELECT min(rowid) FROM qa)"
expect_status 1 "options that do not parse" "$PROXIMA" check --db "$TMP/json.db"
expect_match "^problem: bad_json: qa [0-9a-f]+: options_json is not valid JSON" "$OUT" "the QA is named"
damage counts "UPDATE qa_counts SET n = n + 5 WHERE category = 'intention'
	AND subtask = 'head_turn' AND metric = 'approx' AND status = 'pending'"
expect_status 1 "counts that disagree" "$PROXIMA" check --db "$TMP/counts.db"
expect_match "^problem: counts_differ: qa_counts says [0-9]+, the qa table [0-9]+ for " "$OUT" \
	"the group is named"
expect_match '^1 problem found' "$OUT" "one problem, counted"
# a page of the traces table overwritten with garbage
cp "$TMP/a.db" "$TMP/page.db"
page=$(q "$TMP/page.db" "SELECT rootpage FROM sqlite_master WHERE name = 'traces'")
size=$(q "$TMP/page.db" "PRAGMA page_size")
dd if=/dev/urandom of="$TMP/page.db" bs="$size" seek=$((page - 1)) count=1 conv=notrunc 2>/dev/null
expect_status 1 "a corrupted traces page" "$PROXIMA" check --db "$TMP/page.db"
expect_match "^problem: integrity: " "$OUT$ERR" "SQLite's integrity check reports it"
# a negative schema version is refused, not used as an index
cp "$TMP/a.db" "$TMP/neg.db"
sqlite3 "$TMP/neg.db" "PRAGMA user_version = -1"
expect_status 1 "a negative schema version" "$PROXIMA" check --db "$TMP/neg.db"
expect_match "schema version -1 is negative" "$ERR" "it is named"
expect_status 1 "generate on it" "$PROXIMA" generate "$TMP/k" --db "$TMP/neg.db" --quiet --no-audit
expect_match "schema version -1 is negative" "$ERR" "generate refuses it too"

# ---- regenerate under kill -9
ia=$(q "$TMP/a.db" "select id from qa where category = 'exploration' and status = 'pending' order by id limit 1")
expect_status 0 "approve one exploration QA" "$PROXIMA" review approve "$ia" --db "$TMP/a.db" --reviewer tester
live() { q "$1" "select id from qa where category = 'exploration' and status <> 'superseded' order by id"; }
live "$TMP/a.db" >"$TMP/old"
reviews=$(q "$TMP/a.db" "select group_concat(id || qa_id || decision, '|') from reviews")
regen="$PROXIMA regenerate --task exploration --seed 7 --per-task 12 --jobs 2 --quiet --no-audit"
cp "$TMP/a.db" "$TMP/new.db"
t0=$(date +%s.%N)
expect_status 0 "a clean regenerate" $regen --db "$TMP/new.db"
span=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
live "$TMP/new.db" >"$TMP/new"
cmp -s "$TMP/old" "$TMP/new" && not_ok "the new set differs from the old" ||
	ok "the new set differs from the old ($(wc -l <"$TMP/new") QAs)"
old=0 new=0 bad=0
for try in 1 2 3 4 5 6 7 8; do
	cp "$TMP/a.db" "$TMP/kill.db"
	$regen --db "$TMP/kill.db" >/dev/null 2>&1 &
	pid=$!
	# a moment from 0 to 1.2 times a clean run's length, spread over the tries
	sleep "$(awk -v s="$try" -v d="$span" 'BEGIN { srand(s * 7919); printf "%.3f", d * 1.2 * ((s - 1) + rand()) / 8 }')"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	live "$TMP/kill.db" >"$TMP/got"
	if cmp -s "$TMP/got" "$TMP/old"; then
		old=$((old + 1))
	elif cmp -s "$TMP/got" "$TMP/new"; then
		new=$((new + 1))
	else
		bad=$((bad + 1))
		echo "# try $try: $(wc -l <"$TMP/got") live QAs, neither the old nor the new set"
	fi
	[ "$(q "$TMP/kill.db" "select group_concat(id || qa_id || decision, '|') from reviews")" = "$reviews" ] ||
		{ bad=$((bad + 1)); echo "# try $try: the reviews changed"; }
	"$PROXIMA" check --db "$TMP/kill.db" --quiet >"$TMP/chk" 2>&1 ||
		{ bad=$((bad + 1)); sed "s/^/# try $try: /" "$TMP/chk"; }
done
[ "$bad" -eq 0 ] && ok "8 kills: the old set $old times, the new set $new times, reviews kept, check clean" ||
	not_ok "8 kills: $bad problems"
# ---- one rule for every command: a bad value of an option is a usage error (exit 2)
for cmd in "review list --db $TMP/a.db" "export --db $TMP/a.db -o $TMP/ex --format jsonl" \
	"audit --db $TMP/a.db"; do
	# shellcheck disable=SC2086
	expect_status 2 "${cmd%% *} --status bogus" "$PROXIMA" $cmd --status bogus
	expect_match "^error: --status: unknown status 'bogus' \(pending, approved" "$ERR" \
		"${cmd%% *} names the unknown status"
done
[ -e "$TMP/ex" ] && not_ok "export with a bad status wrote its folder" || ok "export wrote nothing"
expect_status 2 "stats with an extra argument" "$PROXIMA" stats "$TMP/a.db" extra
expect_match "^error: stats: unexpected argument 'extra'" "$ERR" "the extra argument is named"
expect_status 2 "generate --db ''" "$PROXIMA" generate "$TMP/k" --db ""
done_testing
