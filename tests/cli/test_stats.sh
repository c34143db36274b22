#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima stats` on a small handmade store (tests/data/store/small.sql) whose
# figures were computed by hand, and on missing, foreign and too-new files.
. "$(dirname "$0")/lib.sh"
DATA="$(cd "$(dirname "$0")/../data/store" && pwd)"

expect_status 0 "stats --help" "$PROXIMA" stats --help
expect_match '^usage: proxima stats --db FILE' "$OUT" "help shows the usage"
expect_status 2 "stats without a store is a usage error" "$PROXIMA" stats
expect_match 'no store given' "$ERR" "usage error says what is missing"
expect_status 2 "stats with two stores is a usage error" "$PROXIMA" stats a.db b.db

# a missing file: exit 1, named, and not created
expect_status 1 "stats on a missing file fails" "$PROXIMA" stats --db "$TMP/none.db"
expect_match "error: '$TMP/none.db': No such file" "$ERR" "missing file is named"
if [ -e "$TMP/none.db" ]; then not_ok "stats created the missing file"; else ok "stats created no file"; fi

# not a database
printf 'qa,answer\n1,A\n%.0s' $(seq 1 200) >"$TMP/garbage.db"
expect_status 1 "stats on a text file fails" "$PROXIMA" stats --db "$TMP/garbage.db"
expect_match "'$TMP/garbage.db'.*not a database" "$ERR" "text file is named and refused"

if ! command -v sqlite3 >/dev/null 2>&1; then
	not_ok "the sqlite3 shell is needed to load tests/data/store/small.sql"
	done_testing
	exit 0
fi
sqlite3 "$TMP/s.db" <"$DATA/small.sql"

expect_status 0 "stats table" "$PROXIMA" stats --db "$TMP/s.db"
expect_match '^QAs: 10 \(pending 8, approved 2, rejected 0, edited 0, conflict 0, superseded 0, dropped 0\)' \
	"$OUT" "status totals"
expect_match '^intention\.head_turn/approx +6 +4 +2 +0 +0 +0 +0 +0 +1\.00 +0\.12 +2$' "$OUT" \
	"head_turn row: total, statuses, acceptance, mean z, drops"
expect_match '^exploration\.navigate/relative +4 +4 +0 +0 +0 +0 +0 +0 +- +0\.12 +1$' "$OUT" \
	"navigate row: no decisions, so no acceptance"
expect_match '^dropped candidates: 3$' "$OUT" "drops total"
expect_match '^  ambiguous_margin +2$' "$OUT" "drops by reason"
# A 5 B 2 C 1 D 1 E 1 against 2 each: chi2 = (9 + 0 + 1 + 1 + 1) / 2 = 6, p = 4 e^-3
expect_match '^  all +5 options, n=10 +A 5 +B 2 +C 1 +D 1 +E 1 +chi2 6\.00 df 4 p 0\.1991$' \
	"$OUT" "letter balance and chi-square"
# A 3 B 1 against 0.8 each: (2.2^2 + 0.2^2 + 3 * 0.8^2) / 0.8 = 8.5
expect_match '^  exploration\.navigate/relative +5 options, n=4 .*chi2 8\.50 df 4 p 0\.0749$' \
	"$OUT" "per-group chi-square"
expect_match '^mean answer-length z: 0\.125 over 10 QAs$' "$OUT" "mean z"
# times: alice 4 s and 6 s, bob 2 s and 2 s
expect_match '^reviews: 4, acceptance 1\.00, median time per item 3\.0 s$' "$OUT" "review totals"
expect_match '^  alice +2 reviews of 2 items, median 5\.0 s$' "$OUT" "reviewer median"
expect_match '^  blind answers: 3 of 4 agree with the key \(0\.75\)$' "$OUT" "blind agreement"
# c0 both accept, c1 alice rejects and bob accepts: po 0.5, pe 0.5 * 1 + 0.5 * 0
expect_match '^  kappa alice / bob: 0\.000 over 2 items \(1 agree\)$' "$OUT" "kappa"

expect_status 0 "stats --json" "$PROXIMA" stats --db "$TMP/s.db" --json
expect_match '"intention\.head_turn/approx":' "$OUT" "json groups keyed CATEGORY.SUBTASK/METRIC"
expect_match '"chi2":[[:space:]]+6,' "$OUT" "json chi-square"
expect_match '"ambiguous_margin":[[:space:]]+2' "$OUT" "json drops by reason"
if command -v python3 >/dev/null 2>&1; then
	if printf '%s\n' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["groups"]["exploration.navigate/relative"]["letters"][0]["counts"]["A"] == 3 else 1)'; then
		ok "json parses and holds the counts"
	else
		not_ok "json parses and holds the counts"
	fi
fi

# a store from a newer proxima is refused, naming both versions
cp "$TMP/s.db" "$TMP/new.db"
sqlite3 "$TMP/new.db" 'PRAGMA user_version = 9;'
expect_status 1 "stats on a newer schema fails" "$PROXIMA" stats "$TMP/new.db"
expect_match "'$TMP/new.db': schema version 9 is newer than version 3" "$ERR" \
	"newer schema names the file and both versions"

# another program's SQLite database
sqlite3 "$TMP/other.db" 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
expect_status 1 "stats on a foreign database fails" "$PROXIMA" stats "$TMP/other.db"
expect_match "not a proxima store" "$ERR" "foreign database is refused"

done_testing
