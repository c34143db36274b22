#!/bin/sh
# SPDX-License-Identifier: MIT
# proxima review list|show|approve|reject|edit|flag|note|answer|serve on a
# store built with the store functions (test_review --fixture), checked
# with sqlite3.
. tests/cli/lib.sh

: "${PROXIMA_BUILD:=$(pwd)/build}"
mkdir -p "$TMP/fx"
"$PROXIMA_BUILD/tests/test_review" --fixture "$TMP/fx" 3 >/dev/null 2>"$TMP/fx.err" ||
	{ not_ok "the fixture store is built"; cat "$TMP/fx.err"; done_testing; exit 0; }
DB="$TMP/fx/r.db"
q() { sqlite3 -batch -noheader "$DB" "$1"; }
# the serve checks talk HTTP with the curl program, which a plain Debian 12
# does not have (build-essential brings only the library's dependencies)
command -v curl >/dev/null 2>&1 || sh scripts/setup.sh curl >"$TMP/setup.log" 2>&1
if command -v curl >/dev/null 2>&1; then ok "curl is installed"; else
	not_ok "curl is installed"; sed 's/^/# /' "$TMP/setup.log"; fi

# ---- usage
expect_status 2 "no subcommand is a usage error" "$PROXIMA" review
expect_status 0 "--help" "$PROXIMA" review --help
expect_match 'answer ID --option LETTER' "$OUT" "the help lists the subcommands"
expect_status 2 "an unknown subcommand is a usage error" "$PROXIMA" review frobnicate --db "$DB"
expect_match "unknown subcommand 'frobnicate'" "$ERR" "and names it"
expect_status 2 "list without --db is a usage error" "$PROXIMA" review list
expect_status 1 "a missing store fails" "$PROXIMA" review list --db "$TMP/none.db"
expect_match "none.db" "$ERR" "and names the file"
[ ! -e "$TMP/none.db" ] && ok "a missing store is not created" || not_ok "a missing store is not created"

# ---- list (12 QAs: 9 of the fixture, 3 extra in rec_zbulk)
expect_status 0 "list" "$PROXIMA" review list --db "$DB"
expect_match '^12 of 12 QAs$' "$OUT" "list counts every QA"
expect_match '^a000000000000006 +pending +intention\.head_turn/relative' \
	"$(printf '%s\n' "$OUT" | sed -n 2p)" "list starts with the first item in review order"
expect_status 0 "list with filters" "$PROXIMA" review list --db "$DB" --recording rec_video --category intention
expect_match '^4 of 4 QAs$' "$OUT" "filters by recording and category"
expect_status 0 "list by status" "$PROXIMA" review list --db "$DB" --status approved,rejected --json
expect_match '"total":[[:space:]]*2,' "$OUT" "--json gives the total"
expect_match '"id":[[:space:]]*"a000000000000008"' "$OUT" "--json lists the approved item"
expect_status 0 "list a page" "$PROXIMA" review list --db "$DB" --limit 2 --offset 1
expect_match '^2 of 12 QAs$' "$OUT" "--limit and --offset page the list"
expect_match 'a000000000000007' "$OUT" "the page starts at the second item"
expect_status 2 "a bad --limit is a usage error" "$PROXIMA" review list --db "$DB" --limit -3

# ---- show
expect_status 0 "show" "$PROXIMA" review show a000000000000001 --db "$DB"
expect_match '^question: +Where will the wearer turn to look at the mug\?$' "$OUT" "show prints the question"
expect_match '^  \* B\. Turn left ~65' "$OUT" "show marks the key"
expect_match '^video: +video\.mp4 \[1\.000, 9\.000\] s$' "$OUT" "show gives the clip in video seconds"
expect_status 0 "show --json" "$PROXIMA" review show a000000000000005 --db "$DB" --json
expect_match '"target":[[:space:]]*"<script>alert\(1\)</script>"' "$OUT" "show --json keeps the stored text"
expect_match '"next":[[:space:]]*"a000000000000001"' "$OUT" "show --json gives the next id"
expect_status 1 "show an unknown id fails" "$PROXIMA" review show ffffffffffffffff --db "$DB"
expect_match "no QA 'ffffffffffffffff'" "$ERR" "and names the id"
expect_status 2 "show without an id is a usage error" "$PROXIMA" review show --db "$DB"

# ---- actions
expect_status 0 "approve" "$PROXIMA" review approve a000000000000001 --db "$DB" --reviewer carol
expect_match '^approved$' "$(q "SELECT status FROM qa WHERE id = 'a000000000000001'")" "db: approved"
expect_match '^carol\|approve$' "$(q "SELECT reviewer, decision FROM reviews WHERE qa_id = 'a000000000000001'")" \
	"db: the review names the reviewer"
expect_status 1 "approve an unknown id fails" "$PROXIMA" review approve ffffffffffffffff --db "$DB" --reviewer carol
expect_match "no QA 'ffffffffffffffff'" "$ERR" "and names the id"

expect_status 2 "reject needs a reason" "$PROXIMA" review reject a000000000000003 --db "$DB"
expect_match '^0$' "$(q "SELECT count(*) FROM reviews WHERE qa_id = 'a000000000000003'")" "db: nothing written"
expect_status 0 "reject with a reason" "$PROXIMA" review reject a000000000000003 --db "$DB" --reviewer carol \
	--reason "the kettle is hidden"
expect_match '^rejected\|the kettle is hidden$' \
	"$(q "SELECT q.status, r.reason FROM qa q JOIN reviews r ON r.qa_id = q.id WHERE q.id = 'a000000000000003'")" \
	"db: rejected with the reason"

expect_status 2 "edit needs the wording" "$PROXIMA" review edit a000000000000002 --db "$DB"
expect_status 0 "edit" "$PROXIMA" review edit a000000000000002 --db "$DB" --reviewer carol \
	--question "Which way does the wearer walk to the door?"
expect_match '^edited\|Which way does the wearer walk to the door\?\|How does the wearer walk to the door\?\|0$' \
	"$(q "SELECT status, question_edited, question, answer_index FROM qa WHERE id = 'a000000000000002'")" \
	"db: edited wording, original question and key kept"
expect_status 0 "show after the edit" "$PROXIMA" review show a000000000000002 --db "$DB"
expect_match '^question: +Which way does the wearer walk to the door\?$' "$OUT" "show prints the edited wording"
expect_match '^generated: +How does the wearer walk to the door\?$' "$OUT" "and the generated one"

expect_status 0 "flag" "$PROXIMA" review flag a000000000000004 --db "$DB" --reviewer carol
expect_status 0 "note" "$PROXIMA" review note a000000000000004 --db "$DB" --reviewer carol --note "edge 2?"
expect_status 2 "note needs text" "$PROXIMA" review note a000000000000004 --db "$DB"
expect_match '^flag\|ambiguous\|$' "$(q "SELECT decision, reason, note FROM reviews WHERE qa_id = 'a000000000000004' ORDER BY id LIMIT 1")" \
	"db: flag with the default reason"
expect_match '^note\|\|edge 2\?$' "$(q "SELECT decision, reason, note FROM reviews WHERE qa_id = 'a000000000000004' ORDER BY id DESC LIMIT 1")" \
	"db: the note"
expect_match '^pending$' "$(q "SELECT status FROM qa WHERE id = 'a000000000000004'")" "db: flag and note keep the status"

expect_status 0 "answer with a letter" "$PROXIMA" review answer a000000000000007 --db "$DB" --reviewer carol --option c
expect_status 0 "answer with a number" "$PROXIMA" review answer a000000000000007 --db "$DB" --reviewer dave --option 5
expect_match '^carol\|2 dave\|4$' \
	"$(q "SELECT reviewer, blind_answer_index FROM reviews WHERE qa_id = 'a000000000000007' AND decision = 'answer' ORDER BY id" | tr '\n' ' ' | sed 's/ $//')" \
	"db: blind answers C and E"
expect_status 1 "an answer past the options fails" "$PROXIMA" review answer a000000000000007 --db "$DB" --option H
expect_status 2 "a bad option is a usage error" "$PROXIMA" review answer a000000000000007 --db "$DB" --option "A1"

# ---- two reviewers: each verdict counts; a disagreement waits for an adjudication
C1=c000000000000000
expect_status 0 "ana approves" "$PROXIMA" review approve $C1 --db "$DB" --reviewer ana
expect_match "status approved" "$OUT" "approve says the status"
expect_status 0 "bob rejects" "$PROXIMA" review reject $C1 --db "$DB" --reviewer bob --reason "wrong turn"
expect_match "status conflict" "$OUT" "a disagreement is a conflict"
expect_match '^conflict$' "$(q "SELECT status FROM qa WHERE id = '$C1'")" "db: ana's approval was not overwritten"
expect_status 0 "list the conflicts" "$PROXIMA" review list --db "$DB" --status conflict
expect_match '^1 of 1 QAs$' "$OUT" "one conflict"
expect_status 0 "show the conflict" "$PROXIMA" review show $C1 --db "$DB"
expect_match '^verdicts: +ana approve, bob reject$' "$OUT" "show lists each reviewer's verdict"
expect_status 2 "adjudicate needs a decision" "$PROXIMA" review adjudicate $C1 --db "$DB"
expect_status 2 "adjudicate refuses other decisions" "$PROXIMA" review adjudicate $C1 --db "$DB" --decision flag
expect_status 2 "an adjudicated rejection needs a reason" "$PROXIMA" review adjudicate $C1 --db "$DB" --decision reject
expect_status 0 "adjudicate" "$PROXIMA" review adjudicate $C1 --db "$DB" --reviewer lead --decision approve
expect_match "status approved" "$OUT" "the adjudication settles it"
expect_match '^approved\|1\|lead$' \
	"$(q "SELECT q.status, r.adjudication, r.reviewer FROM qa q JOIN reviews r ON r.qa_id = q.id WHERE q.id = '$C1' ORDER BY r.id DESC LIMIT 1")" \
	"db: the adjudication is marked and decides"
expect_status 0 "show after adjudication" "$PROXIMA" review show $C1 --db "$DB"
expect_match '^adjudged: +approve by lead$' "$OUT" "show names the adjudication"

# export follows the derived status: a conflict stays out until it is settled
C2=c000000000000001
"$PROXIMA" review approve $C2 --db "$DB" --reviewer ana >/dev/null
"$PROXIMA" review reject $C2 --db "$DB" --reviewer bob --reason "no" >/dev/null
expect_status 0 "export the reviewed set" "$PROXIMA" export --db "$DB" --format jsonl -o "$TMP/exp"
expect_match "\"$C1\"" "$(cat "$TMP/exp/records.jsonl")" "export holds the adjudicated item"
if grep -q "\"$C2\"" "$TMP/exp/records.jsonl"; then not_ok "export leaves the conflict out"; else ok "export leaves the conflict out"; fi
expect_status 0 "export the conflicts" "$PROXIMA" export --db "$DB" --format jsonl -o "$TMP/exp2" --status conflict
expect_match "^1\$" "$(grep -c '"id"' "$TMP/exp2/records.jsonl")" "--status conflict exports the one conflict"

# ---- stats see what was written: 2 fixture reviews + 7 above + 5 here
expect_status 0 "stats" "$PROXIMA" stats --db "$DB"
expect_match '^reviews: 14,' "$OUT" "stats count every review"

# ---- serve: --port 0 prints a free port; SIGTERM stops it
serve_start "$TMP/serve.log" --db "$DB" --port 0 --reviewer erin
expect_match '^http://127\.0\.0\.1:[0-9]+/$' "$url" "serve prints the URL with the chosen port"
session=$(curl -s "${url}api/session")
expect_match '"reviewer":"erin"' "$session" "the server answers with the reviewer"
expect_match '"token":"[0-9a-f]{32}"' "$session" "and a 32-hex token"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' \
	"${url}api/qa/a000000000000005/approve")
expect_match '^403$' "$code" "a POST without the token is refused"
token=$(printf '%s' "$session" | sed -n 's/.*"token":"\([0-9a-f]*\)".*/\1/p')
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-H "X-Proxima-Token: $token" -d '{"note":"from curl"}' "${url}api/qa/a000000000000005/note")
expect_match '^200$' "$code" "a POST with the token is accepted"
kill -TERM "$srv"
wait "$srv"
rc=$?
if [ "$rc" -eq 0 ]; then ok "serve exits 0 on SIGTERM"; else not_ok "serve exits 0 on SIGTERM (exit $rc)"; fi
expect_match 'stopped \(SIGTERM\)' "$(cat "$TMP/serve.log")" "serve says it stopped"
expect_match '^erin\|from curl$' "$(q "SELECT reviewer, note FROM reviews WHERE qa_id = 'a000000000000005'")" \
	"db: the note from the server"

"$PROXIMA" review serve --db "$DB" --port 0 >"$TMP/serve2.log" 2>&1 &
srv=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'http://' "$TMP/serve2.log"; do sleep 0.1; i=$((i + 1)); done
kill -INT "$srv"
wait "$srv"
rc=$?
if [ "$rc" -eq 0 ]; then ok "serve exits 0 on SIGINT"; else not_ok "serve exits 0 on SIGINT (exit $rc)"; fi
expect_status 1 "serve on a missing store fails" "$PROXIMA" review serve --db "$TMP/none.db" --port 0
expect_status 2 "serve on a host name is a usage error" "$PROXIMA" review serve --db "$DB" --bind example.org --port 0
expect_match "numeric" "$ERR" "and says the address must be numeric"
expect_status 2 "--bind localhost is a usage error" "$PROXIMA" review serve --db "$DB" --bind localhost --port 0
expect_match "not 'localhost' \(127\.0\.0\.1 or ::1" "$ERR" "and says what to use"

# ---- off loopback: a warning, an access link, a cookie, the Host allow-list
# (bound to every interface, reached only through 127.0.0.1 here)
"$PROXIMA" review serve --db "$DB" --port 0 --bind 0.0.0.0 --allow-host review.lab --reviewer far \
	>"$TMP/serve3.log" 2>"$TMP/serve3.err" &
srv=$!
link=""
i=0
while [ $i -lt 100 ] && [ -z "$link" ]; do
	link=$(grep -o 'http://[^ ]*/access/[0-9a-f]*' "$TMP/serve3.log" | head -n 1)
	[ -n "$link" ] || sleep 0.1
	i=$((i + 1))
done
expect_match '^http://[^/]+:[0-9]+/access/[0-9a-f]{32}$' "$link" "serve on 0.0.0.0 prints an access link"
expect_match '^warning: review serve: bound to 0\.0\.0\.0, not loopback' "$(cat "$TMP/serve3.err")" \
	"and warns that it is reachable from other machines"
case "$link" in *0.0.0.0*) not_ok "the link does not name 0.0.0.0" ;; *) ok "the link does not name 0.0.0.0" ;; esac
port=$(printf '%s' "$link" | sed -n 's|^http://.*:\([0-9]*\)/access/.*|\1|p')
secret=${link##*/}
base="http://127.0.0.1:$port"
expect_match '^403$' "$(curl -s -o /dev/null -w '%{http_code}' "$base/api/session")" "without the link nothing is served"
expect_match '^303 .*proxima_access='"$secret"'; Path=/; HttpOnly; SameSite=Lax' \
	"$(curl -s -o /dev/null -D - "$base/access/$secret" | tr -d '\r' | awk '/^HTTP/{c=$2} /^Set-Cookie/{s=$0} END{print c " " s}')" \
	"the link answers 303 with the access cookie"
expect_match '"reviewer":"far"' "$(curl -s -b "proxima_access=$secret" "$base/api/session")" "with the cookie the page works"
expect_match '^403$' "$(curl -s -o /dev/null -w '%{http_code}' -b "proxima_access=$secret" -H 'Host: attacker.example' "$base/api/session")" \
	"a foreign Host is refused even with the cookie"
expect_match '^200$' "$(curl -s -o /dev/null -w '%{http_code}' -b "proxima_access=$secret" -H "Host: review.lab:$port" "$base/api/session")" \
	"an --allow-host name is answered"
kill -TERM "$srv"
wait "$srv"
expect_status 2 "serve with a bad port is a usage error" "$PROXIMA" review serve --db "$DB" --port 99999

done_testing
