#!/bin/sh
# SPDX-License-Identifier: MIT
# proxima generate and regenerate with the local brain on synthetic
# recordings: every group gets QAs, a rerun adds nothing and keeps the ids,
# --jobs does not change the ids, regenerate replaces only the unreviewed
# QAs of its category, a generate killed with SIGKILL and run again ends
# with a sound store holding exactly a clean run's QAs, and usage errors.
. tests/cli/lib.sh

if ! command -v sqlite3 >/dev/null 2>&1; then
	not_ok "the sqlite3 shell is needed to read the stores"
	done_testing
	exit 0
fi
q() { sqlite3 -readonly "$@"; }

# ---- usage errors: nothing is generated
expect_status 0 "generate --help" "$PROXIMA" generate --help
expect_match '^usage: proxima generate REC\.\.\. --db F' "$OUT" "help shows the usage"
expect_status 0 "two-minute kitchen" "$PROXIMA" synth --scene kitchen --minutes 2 --seed 3 --no-video -o "$TMP/k"
expect_status 2 "no --db" "$PROXIMA" generate "$TMP/k"
expect_match '^error: --db is required' "$ERR" "missing --db is named"
expect_status 2 "unknown task" "$PROXIMA" generate "$TMP/k" --db "$TMP/u.db" --tasks intention,cooking
expect_match "--tasks: 'cooking' is not a category" "$ERR" "bad task is named"
expect_status 2 "unknown metric" "$PROXIMA" generate "$TMP/k" --db "$TMP/u.db" --tasks exploration.navigate/exact
expect_status 2 "nine options" "$PROXIMA" generate "$TMP/k" --db "$TMP/u.db" --options 9
expect_match 'between 2 and 8' "$ERR" "option range is named"
expect_status 2 "options not a number" "$PROXIMA" generate "$TMP/k" --db "$TMP/u.db" --options five
expect_match "--options: 'five'" "$ERR" "bad option value is named"
expect_status 2 "no recording" "$PROXIMA" generate --db "$TMP/u.db"
expect_status 2 "unknown brain" "$PROXIMA" generate "$TMP/k" --db "$TMP/u.db" --brain oracle
expect_status 2 "regenerate without --task" "$PROXIMA" regenerate --db "$TMP/u.db"
expect_status 2 "regenerate with a sub-task" "$PROXIMA" regenerate --db "$TMP/u.db" --task intention.head_turn
[ -e "$TMP/u.db" ] && not_ok "usage errors create no store" || ok "usage errors create no store"
expect_status 1 "missing recording" "$PROXIMA" generate "$TMP/nowhere" --db "$TMP/m.db" --quiet
expect_match "error: .*'$TMP/nowhere'" "$ERR" "missing recording is named"

# ---- every group, from the local brain
gen="$PROXIMA generate $TMP/k --per-task 12 --seed 1 --quiet"
expect_status 0 "generate, local brain" $gen --db "$TMP/a.db" --jobs 2
expect_match '^run 1: [0-9]+ sessions, [0-9]+ QAs \([0-9]+ new, 0 already stored, 0 replaced\)' "$OUT" \
	"summary line"
expect_match '^  time: brain [0-9]+%, tools [0-9]+%, truth\+qc [0-9]+%, store [0-9]+%$' "$OUT" \
	"time shares per stage"
expect_status 0 "stats --json" "$PROXIMA" stats --db "$TMP/a.db" --json
stats=$OUT
for g in intention.head_turn/approx intention.head_turn/relative \
	intention.gaze_target/approx intention.gaze_target/relative \
	exploration.navigate/approx exploration.navigate/relative \
	exploitation.next_interaction/approx exploitation.next_interaction/relative \
	chain.actions/relative; do
	expect_match "\"$g\":" "$stats" "stats has group $g"
	n=$(q "$TMP/a.db" "select count(*) from qa where category || '.' || subtask || '/' || metric = '$g'")
	[ "$n" -gt 0 ] && ok "$g has $n QAs" || not_ok "$g has no QA"
done
total=$(q "$TMP/a.db" "select count(*) from qa")
expect_match "^\"total\":[[:space:]]+$total,?\$" "$(printf '%s\n' "$stats" | sed 's/^[[:space:]]*//')" \
	"stats total is the row count ($total)"
n=$(q "$TMP/a.db" "select count(*) from qa where status != 'pending'")
[ "$n" -eq 0 ] && ok "new QAs are pending" || not_ok "$n new QAs are not pending"
n=$(q "$TMP/a.db" "select count(*) from qa q left join traces t on t.qa_id = q.id where t.qa_id is null")
[ "$n" -eq 0 ] && ok "every QA has its trace" || not_ok "$n QAs without a trace"
n=$(q "$TMP/a.db" "select count(*) from qa where answer_index is not null and
	(answer_index < 0 or answer_index >= json_array_length(options_json))")
[ "$n" -eq 0 ] && ok "every key is one of the options" || not_ok "$n keys outside the options"
# the stored head turns agree with spatial_relation run on its own
q -separator ' ' "$TMP/a.db" "select t_ns, target, json_extract(answer_json, '\$.yaw_deg'),
	json_extract(answer_json, '\$.turn') from qa where subtask = 'head_turn' and metric = 'approx'
	order by id limit 6" >"$TMP/turns"
bad=0
checked=0
while read -r t target said turn; do
	r=$("$PROXIMA" tool spatial_relation "$TMP/k" --args "{\"t\":$t,\"object\":\"$target\"}" --compact)
	yaw=$(printf '%s\n' "$r" | sed -n 's/.*"yaw_deg":\([-0-9.]*\),"direction".*/\1/p')
	if ! awk -v y="$yaw" -v s="$said" -v turn="$turn" 'BEGIN {
		d = y - s; if (d < 0) d = -d
		a = y < 0 ? -y : y
		want = a < 15 ? "forward" : a > 165 ? "around" : y < 0 ? "right" : "left"
		near = want == "forward" ? s == 0 : want == "around" ? (s == 180 || s == -180) : d <= 2.5
		exit !(y != "" && near && turn == want) }'; then
		bad=$((bad + 1))
		echo "# $t $target: stored $said $turn, spatial_relation yaw $yaw"
	fi
	checked=$((checked + 1))
done <"$TMP/turns"
[ "$checked" -eq 6 ] && [ "$bad" -eq 0 ] && ok "6 stored head turns agree with spatial_relation" ||
	not_ok "$bad of $checked stored head turns disagree with spatial_relation"
q "$TMP/a.db" "select id from qa order by id" >"$TMP/ids.a"

# ---- the same command twice adds nothing and keeps the ids
expect_status 0 "the same command again" $gen --db "$TMP/a.db" --jobs 2
expect_match "^run 2: [0-9]+ sessions, $total QAs \\(0 new, $total already stored, 0 replaced\\)" "$OUT" \
	"rerun: every QA already stored, none new"
q "$TMP/a.db" "select id from qa order by id" >"$TMP/ids.a2"
cmp -s "$TMP/ids.a" "$TMP/ids.a2" && ok "rerun keeps the same ids" || not_ok "rerun changed the ids"
n=$(q "$TMP/a.db" "select count(*) from runs where status = 'ok'")
[ "$n" -eq 2 ] && ok "both runs recorded as ok" || not_ok "$n runs ok"

# ---- --jobs does not change what is generated
expect_status 0 "generate --jobs 1" $gen --db "$TMP/j1.db" --jobs 1
q "$TMP/j1.db" "select id from qa order by id" >"$TMP/ids.j1"
cmp -s "$TMP/ids.a" "$TMP/ids.j1" && ok "--jobs 1 and --jobs 2 give the same ids" ||
	not_ok "--jobs 1 and --jobs 2 differ"
a=$(q "$TMP/a.db" "select group_concat(id || answer_index || options_json || answer_json, '|') from (select * from qa order by id)")
b=$(q "$TMP/j1.db" "select group_concat(id || answer_index || options_json || answer_json, '|') from (select * from qa order by id)")
[ "$a" = "$b" ] && ok "--jobs 1 and --jobs 2 give the same options and keys" ||
	not_ok "options or keys differ between --jobs 1 and 2"

# ---- regenerate: reviewed QAs stay, pending ones are replaced, other categories untouched
expect_status 1 "regenerate on a missing store" "$PROXIMA" regenerate --db "$TMP/none.db" --task intention
expect_match "error: cannot open '$TMP/none.db'" "$ERR" "the missing store is named"
[ -e "$TMP/none.db" ] && not_ok "regenerate created a store" || ok "regenerate created no store"
expect_status 1 "regenerate an unknown recording" "$PROXIMA" regenerate --db "$TMP/a.db" \
	--task intention --recording synth-garage
expect_match "no recording 'synth-garage'" "$ERR" "the unknown recording is named"
n=$(q "$TMP/a.db" "select count(*) from qa where status = 'superseded'")
[ "$n" -eq 0 ] && ok "an unknown recording supersedes nothing" || not_ok "$n QAs superseded"
ia=$(q "$TMP/a.db" "select id from qa where category = 'intention' and status = 'pending' order by id limit 1")
ir=$(q "$TMP/a.db" "select id from qa where category = 'intention' and status = 'pending' order by id limit 1 offset 1")
expect_status 0 "approve one intention QA" "$PROXIMA" review approve "$ia" --db "$TMP/a.db" --reviewer tester
expect_status 0 "reject another" "$PROXIMA" review reject "$ir" --db "$TMP/a.db" --reviewer tester --reason "too easy"
pending=$(q "$TMP/a.db" "select count(*) from qa where category = 'intention' and status = 'pending'")
kept_before=$(q "$TMP/a.db" "select group_concat(id || status || updated_at || question || options_json, '|') from (select * from qa where id in ('$ia', '$ir') order by id)")
others_before=$(q "$TMP/a.db" "select group_concat(id || status || updated_at, '|') from (select * from qa where category != 'intention' order by id)")
last=$(q "$TMP/a.db" "select max(updated_at) from qa")
sleep 0.01
expect_status 0 "regenerate --task intention" "$PROXIMA" regenerate --db "$TMP/a.db" --task intention \
	--per-task 12 --seed 1
expect_match "^run 3: [0-9]+ sessions, [0-9]+ QAs \\(0 new, 2 already stored, $pending replaced\\)" "$OUT" \
	"regenerate replaced the $pending pending QAs and kept the 2 reviewed ones"
expect_match "$pending unreviewed intention QAs superseded" "$ERR" "regenerate says what it superseded"
kept_after=$(q "$TMP/a.db" "select group_concat(id || status || updated_at || question || options_json, '|') from (select * from qa where id in ('$ia', '$ir') order by id)")
[ "$kept_before" = "$kept_after" ] && ok "the approved and rejected QAs are untouched" ||
	not_ok "a reviewed QA changed"
s=$(q "$TMP/a.db" "select group_concat(status, ',') from (select status from qa where id in ('$ia', '$ir') order by id = '$ir')")
[ "$s" = "approved,rejected" ] && ok "their statuses stand" || not_ok "statuses are '$s'"
n=$(q "$TMP/a.db" "select count(*) from reviews where qa_id in ('$ia', '$ir')")
[ "$n" -eq 2 ] && ok "their reviews are kept" || not_ok "$n reviews left"
n=$(q "$TMP/a.db" "select count(*) from qa where status = 'superseded'")
[ "$n" -eq 0 ] && ok "nothing left superseded" || not_ok "$n QAs left superseded"
n=$(q "$TMP/a.db" "select count(*) from qa where category = 'intention' and status = 'pending' and updated_at > '$last'")
[ "$n" -eq "$pending" ] && ok "the $pending pending QAs were rewritten" || not_ok "$n of $pending pending QAs rewritten"
others_after=$(q "$TMP/a.db" "select group_concat(id || status || updated_at, '|') from (select * from qa where category != 'intention' order by id)")
[ "$others_before" = "$others_after" ] && ok "other categories are untouched" ||
	not_ok "other categories changed"
q "$TMP/a.db" "select id from qa order by id" >"$TMP/ids.a3"
cmp -s "$TMP/ids.a" "$TMP/ids.a3" && ok "regenerate with the same seed keeps the id set" ||
	not_ok "regenerate changed the id set"

# ---- crash safety: kill -9 mid-run, run again, compare with a clean run
expect_status 0 "ten-minute kitchen" "$PROXIMA" synth --scene kitchen --minutes 10 --seed 5 --no-video -o "$TMP/big"
big="$PROXIMA generate $TMP/big --per-task 40 --seed 1 --jobs 2 --quiet"
expect_status 0 "clean run" $big --db "$TMP/clean.db"
q "$TMP/clean.db" "select id from qa order by id" >"$TMP/ids.clean"
clean=$(wc -l <"$TMP/ids.clean")
$big --db "$TMP/crash.db" >/dev/null 2>&1 &
pid=$!
n=0
i=0
while [ "$i" -lt 400 ]; do
	if [ -f "$TMP/crash.db" ]; then
		n=$(q "$TMP/crash.db" "select count(*) from qa" 2>/dev/null || echo 0)
		[ "${n:-0}" -ge 30 ] && break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.02
	i=$((i + 1))
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
n=$(q "$TMP/crash.db" "select count(*) from qa" 2>/dev/null || echo 0)
if [ "$n" -gt 0 ] && [ "$n" -lt "$clean" ]; then
	ok "killed after $n of $clean QAs"
else
	not_ok "the kill did not land mid-run ($n of $clean QAs)"
fi
expect_status 0 "the same command after the kill" $big --db "$TMP/crash.db"
expect_match "^run 2: .* QAs \\([0-9]+ new, $n already stored, 0 replaced\\)" "$OUT" \
	"the rerun keeps the $n QAs written before the kill"
expect_match '^ok$' "$(sqlite3 "$TMP/crash.db" 'PRAGMA integrity_check')" "integrity_check is ok"
d=$(q "$TMP/crash.db" "select count(*) - count(distinct id) from qa")
[ "$d" -eq 0 ] && ok "no duplicate ids" || not_ok "$d duplicate ids"
d=$(q "$TMP/crash.db" "select count(*) from (select 1 from drops group by recording_id, category, subtask, metric, reason, t_ns, target having count(*) > 1)")
[ "$d" -eq 0 ] && ok "no duplicate drops" || not_ok "$d duplicate drops"
s=$(q "$TMP/crash.db" "select status from runs order by id desc limit 1")
[ "$s" = ok ] && ok "the second run completed" || not_ok "the second run is '$s'"
s=$(q "$TMP/crash.db" "select status from runs order by id limit 1")
[ "$s" = interrupted ] && ok "the killed run is marked interrupted" ||
	not_ok "the killed run is '$s'"
q "$TMP/crash.db" "select id from qa order by id" >"$TMP/ids.crash"
cmp -s "$TMP/ids.clean" "$TMP/ids.crash" && ok "the id set equals a clean run's ($clean)" ||
	not_ok "the id set differs from a clean run's"
a=$(q "$TMP/clean.db" "select group_concat(id || answer_index || options_json || answer_json || gt_json, '|') from (select * from qa order by id)")
b=$(q "$TMP/crash.db" "select group_concat(id || answer_index || options_json || answer_json || gt_json, '|') from (select * from qa order by id)")
[ "$a" = "$b" ] && ok "and the same contents" || not_ok "contents differ from a clean run"
n=$(q "$TMP/crash.db" "select count(*) from qa q left join traces t on t.qa_id = q.id where t.qa_id is null")
[ "$n" -eq 0 ] && ok "every QA kept its trace through the kill" || not_ok "$n QAs without a trace"

# ---- regenerate reuses the latest generate's --per-task, --options and --seed
expect_status 0 "generate with --per-task 3 --options 8 --seed 9" "$PROXIMA" generate "$TMP/k" \
	--db "$TMP/reuse.db" --per-task 3 --options 8 --seed 9 --quiet --tasks intention
q "$TMP/reuse.db" "select id from qa order by id" >"$TMP/reuse.before"
expect_status 0 "regenerate without those options" "$PROXIMA" regenerate --db "$TMP/reuse.db" \
	--task intention --quiet
q "$TMP/reuse.db" "select id from qa where status = 'pending' order by id" >"$TMP/reuse.after"
cmp -s "$TMP/reuse.before" "$TMP/reuse.after" &&
	ok "the replacements are the same QAs (same count, seed and ids)" ||
	not_ok "regenerate did not make the QAs the generate made"
n=$(q "$TMP/reuse.db" "select count(*) from qa where json_array_length(options_json) = 8")
[ "$n" -eq "$(wc -l <"$TMP/reuse.before")" ] && ok "with 8 options each, as before" ||
	not_ok "$n of the QAs have 8 options"

done_testing
