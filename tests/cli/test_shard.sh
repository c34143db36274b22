#!/bin/sh
# SPDX-License-Identifier: MIT
# Sharded generation and the merge of shard stores: generate --shard i/n
# sends each recording to exactly the shard its id's SHA-256 names,
# whatever the order of the arguments; proxima merge of the shards gives
# the QA set of one unsharded run, keeps the reviews made in each shard,
# prefers a reviewed row, then the later one, adds nothing when repeated,
# leaves a sound file, and refuses missing, foreign and newer stores.
. tests/cli/lib.sh

if ! command -v sqlite3 >/dev/null 2>&1 || ! command -v sha256sum >/dev/null 2>&1; then
	not_ok "the sqlite3 shell and sha256sum are needed"
	done_testing
	exit 0
fi
q() { sqlite3 -readonly "$@"; }

# ---- three small recordings
expect_status 0 "synth kitchen" "$PROXIMA" synth --scene kitchen --minutes 0.5 --seed 1 --no-video -o "$TMP/r1"
expect_status 0 "synth apartment" "$PROXIMA" synth --scene apartment --minutes 0.5 --seed 2 --no-video -o "$TMP/r2"
expect_status 0 "synth office" "$PROXIMA" synth --scene office --minutes 0.5 --seed 3 --no-video -o "$TMP/r3"
ids=""
for r in r1 r2 r3; do
	ids="$ids $(sed -n 's/^ *"id": *"\([^"]*\)".*/\1/p' "$TMP/$r/recording.json" | head -n 1)"
done
# the shard of an id under n = 2: the parity of the 16th hex digit of its SHA-256
want0=""
want1=""
for id in $ids; do
	d=$(printf %s "$id" | sha256sum | cut -c16)
	if [ $((0x$d & 1)) -eq 0 ]; then want0="$want0$id "; else want1="$want1$id "; fi
done
[ -n "$want0" ] && [ -n "$want1" ] && ok "both shards get a recording (0: $want0, 1: $want1)" ||
	not_ok "the recordings do not spread over two shards (0: $want0, 1: $want1)"

# ---- usage errors
for bad in 2/2 1 a/2 -1/2 0/0 1/2/3 0/ /2 "0 /2" 0/2x; do
	expect_status 2 "--shard '$bad' is refused" "$PROXIMA" generate "$TMP/r1" --db "$TMP/bad.db" \
		--shard "$bad"
done
expect_match "^error: --shard: '0/2x' is not I/N" "$ERR" "the bad value is named"
expect_status 2 "regenerate --shard" "$PROXIMA" regenerate --db "$TMP/bad.db" --task intention \
	--shard 0/2
[ -e "$TMP/bad.db" ] && not_ok "usage errors create no store" || ok "usage errors create no store"
expect_status 0 "generate --help" "$PROXIMA" generate --help
expect_match '^  --shard I/N' "$OUT" "help describes --shard"
expect_status 0 "merge --help" "$PROXIMA" merge --help
expect_match '^usage: proxima merge --db OUT IN\.db\.\.\.' "$OUT" "merge help shows the usage"
expect_status 2 "merge without --db" "$PROXIMA" merge "$TMP/a.db"
expect_status 2 "merge without inputs" "$PROXIMA" merge --db "$TMP/bad.db"
[ -e "$TMP/bad.db" ] && not_ok "merge usage errors create no store" ||
	ok "merge usage errors create no store"

# ---- two shards and one unsharded run, same arguments otherwise
gen="$PROXIMA generate $TMP/r1 $TMP/r2 $TMP/r3 --per-task 4 --seed 1 --jobs 2 --quiet"
expect_status 0 "shard 0/2" $gen --db "$TMP/a.db" --shard 0/2
n0=$(echo $want0 | wc -w)
expect_match "^  shard 0/2: $n0 of 3 recordings, $((3 - n0)) left to other shards\$" "$OUT" \
	"shard 0/2 says what it took"
expect_status 0 "shard 1/2" $gen --db "$TMP/b.db" --shard 1/2
expect_status 0 "unsharded" $gen --db "$TMP/u.db"
got0=$(q "$TMP/a.db" "select id from recordings order by id" | tr '\n' ' ')
got1=$(q "$TMP/b.db" "select id from recordings order by id" | tr '\n' ' ')
s0=$(printf '%s\n' $want0 | sort | tr '\n' ' ')
s1=$(printf '%s\n' $want1 | sort | tr '\n' ' ')
[ "$got0" = "$s0" ] && ok "shard 0 holds the recordings whose hash is even" ||
	not_ok "shard 0 holds '$got0', wanted '$s0'"
[ "$got1" = "$s1" ] && ok "shard 1 holds the recordings whose hash is odd" ||
	not_ok "shard 1 holds '$got1', wanted '$s1'"
for db in a b; do
	n=$(q "$TMP/$db.db" "select count(*) from qa where recording_id not in (select id from recordings)")
	m=$(q "$TMP/$db.db" "select count(distinct recording_id) from qa")
	[ "$n" -eq 0 ] && [ "$m" -eq "$(q "$TMP/$db.db" "select count(*) from recordings")" ] &&
		ok "$db.db: QAs only of its own recordings, every one with QAs" ||
		not_ok "$db.db: $n QAs of other recordings, $m recordings with QAs"
done
s=$(q "$TMP/a.db" "select json_extract(config_json, '\$.shard') from runs")
[ "$s" = 0/2 ] && ok "the run's config records the shard" || not_ok "config shard is '$s'"
s=$(q "$TMP/u.db" "select json_type(config_json, '\$.shard') from runs")
[ "$s" = null ] && ok "an unsharded run records shard null" || not_ok "unsharded config shard is '$s'"
# the order of the arguments does not matter
expect_status 0 "shard 0/2, arguments reversed" "$PROXIMA" generate "$TMP/r3" "$TMP/r2" "$TMP/r1" \
	--per-task 4 --seed 1 --jobs 2 --quiet --db "$TMP/a2.db" --shard 0/2
a=$(q "$TMP/a.db" "select group_concat(id, ' ') from (select id from qa order by id)")
b=$(q "$TMP/a2.db" "select group_concat(id, ' ') from (select id from qa order by id)")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "reversed arguments give shard 0 the same QAs" ||
	not_ok "reversed arguments change shard 0"
# three shards partition the recordings too
for i in 0 1 2; do
	expect_status 0 "shard $i/3" $gen --db "$TMP/t$i.db" --shard $i/3
done
all=$(for i in 0 1 2; do q "$TMP/t$i.db" "select id from recordings"; done | sort | tr '\n' ' ')
[ "$all" = "$(printf '%s\n' $ids | sort | tr '\n' ' ')" ] &&
	ok "three shards hold each recording exactly once" || not_ok "three shards hold '$all'"
expect_status 1 "a missing recording fails in a shard" "$PROXIMA" generate "$TMP/r1" "$TMP/nowhere" \
	--db "$TMP/x.db" --shard 1/2 --quiet
expect_match "error: .*'$TMP/nowhere'" "$ERR" "the missing recording is named"

# ---- reviews in both shards, then merge
x=$(q "$TMP/a.db" "select id from qa order by id limit 1")
y=$(q "$TMP/b.db" "select id from qa order by id limit 1")
expect_status 0 "approve a QA in a.db" "$PROXIMA" review approve "$x" --db "$TMP/a.db" --reviewer ana
expect_status 0 "reject a QA in b.db" "$PROXIMA" review reject "$y" --db "$TMP/b.db" --reviewer ben \
	--reason "too easy"
na=$(q "$TMP/a.db" "select count(*) from qa")
nb=$(q "$TMP/b.db" "select count(*) from qa")
nu=$(q "$TMP/u.db" "select count(*) from qa")
expect_status 0 "merge a.db b.db" "$PROXIMA" merge --db "$TMP/m.db" "$TMP/a.db" "$TMP/b.db"
expect_match "^$TMP/a.db: $na QAs \\($na added, 0 replaced, 0 kept\\), 1 review added" "$OUT" \
	"a.db: every QA and the review added"
expect_match "^$TMP/b.db: $nb QAs \\($nb added, 0 replaced, 0 kept\\), 1 review added" "$OUT" \
	"b.db: every QA and the review added"
expect_match "integrity_check ok\$" "$OUT" "merge checks the output"
q "$TMP/u.db" "select id from qa order by id" >"$TMP/ids.u"
q "$TMP/m.db" "select id from qa order by id" >"$TMP/ids.m"
cmp -s "$TMP/ids.u" "$TMP/ids.m" && ok "merged ids equal the unsharded run's ($nu)" ||
	not_ok "merged ids differ from the unsharded run's"
cols="id || '|' || question || '|' || options_json || '|' || answer_index || '|' || coalesce(answer_json, '') || '|' || coalesce(gt_json, '')"
q "$TMP/u.db" "select $cols from qa order by id" >"$TMP/c.u"
q "$TMP/m.db" "select $cols from qa order by id" >"$TMP/c.m"
cmp -s "$TMP/c.u" "$TMP/c.m" && ok "and the same questions, options, keys, answers and truth" ||
	not_ok "merged contents differ from the unsharded run's"
s=$(q "$TMP/m.db" "select status from qa where id = '$x'")
[ "$s" = approved ] && ok "the approval made in a.db stands" || not_ok "the approved QA is '$s'"
s=$(q "$TMP/m.db" "select status from qa where id = '$y'")
[ "$s" = rejected ] && ok "the rejection made in b.db stands" || not_ok "the rejected QA is '$s'"
s=$(q "$TMP/m.db" "select group_concat(qa_id || ':' || reviewer || ':' || decision || ':' || coalesce(reason, ''), ',') from (select * from reviews order by id)")
[ "$s" = "$x:ana:approve:,$y:ben:reject:too easy" ] && ok "both reviews are kept with their reasons" ||
	not_ok "reviews are '$s'"
n=$(q "$TMP/m.db" "select count(*) from qa where status = 'pending'")
[ "$n" -eq $((nu - 2)) ] && ok "the other $n QAs are pending" || not_ok "$n pending of $nu"
# runs are renumbered and the QAs and drops follow them
s=$(q "$TMP/m.db" "select group_concat(id || ':' || json_extract(config_json, '\$.shard'), ',') from (select * from runs order by id)")
[ "$s" = "1:0/2,2:1/2" ] && ok "runs renumbered: 1 from a.db, 2 from b.db" || not_ok "runs are '$s'"
n=$(q "$TMP/m.db" "attach '$TMP/b.db' as b; select count(*) from qa where run_id = 2 and id in (select id from b.qa)")
[ "$n" -eq "$nb" ] && ok "b.db's QAs name run 2" || not_ok "$n of b.db's $nb QAs name run 2"
n=$(q "$TMP/m.db" "select count(*) from qa where run_id not in (1, 2) or run_id is null")
[ "$n" -eq 0 ] && ok "every QA names a merged run" || not_ok "$n QAs name another run"
da=$(q "$TMP/a.db" "select count(*) from drops")
db=$(q "$TMP/b.db" "select count(*) from drops")
n=$(q "$TMP/m.db" "select count(*) from drops where run_id = 1")
m=$(q "$TMP/m.db" "select count(*) from drops where run_id = 2")
[ "$n" -eq "$da" ] && [ "$m" -eq "$db" ] && ok "drops follow their runs ($da + $db)" ||
	not_ok "drops by run: $n and $m, wanted $da and $db"
du=$(q "$TMP/u.db" "select count(*) from drops")
[ "$((da + db))" -eq "$du" ] && ok "as many drops as the unsharded run ($du)" ||
	not_ok "$((da + db)) drops, the unsharded run has $du"
t=$(q "$TMP/m.db" "select count(*) from traces")
a=$(q "$TMP/m.db" "attach '$TMP/a.db' as a; attach '$TMP/b.db' as b; select count(*) from traces t
	where t.trace_json = coalesce((select trace_json from a.traces where qa_id = t.qa_id),
	(select trace_json from b.traces where qa_id = t.qa_id))")
[ "$t" -eq "$nu" ] && [ "$a" -eq "$nu" ] && ok "every QA has the trace it had in its shard" ||
	not_ok "$t traces, $a equal to the shard's, of $nu"
expect_match '^ok$' "$(sqlite3 "$TMP/m.db" 'PRAGMA integrity_check')" "integrity_check is ok"
s=$(q "$TMP/m.db" "PRAGMA journal_mode")
[ "$s" = wal ] && ok "the merged store is in WAL mode" || not_ok "journal_mode is '$s'"

# ---- merging again adds nothing
snap() {
	q "$1" "select (select count(*) from qa), (select count(*) from reviews),
		(select count(*) from runs), (select count(*) from drops),
		(select count(*) from recordings), (select count(*) from traces),
		(select group_concat(id || status || updated_at, ',') from (select * from qa order by id))"
}
before=$(snap "$TMP/m.db")
expect_status 0 "merge the same inputs again" "$PROXIMA" merge --db "$TMP/m.db" "$TMP/a.db" "$TMP/b.db"
expect_match "^$TMP/a.db: $na QAs \\(0 added, 0 replaced, $na kept\\), 0 reviews added \\(1 already there\\), 0 runs added \\(1 already there\\), 0 recordings added, 0 drops added" \
	"$OUT" "a.db again: nothing added"
expect_match "^merged 2 stores into $TMP/m.db: 0 QAs added, 0 replaced, $nu kept, 0 reviews added, 0 runs added" \
	"$OUT" "the total line says nothing was added"
[ "$before" = "$(snap "$TMP/m.db")" ] && ok "the second merge changed nothing" ||
	not_ok "the second merge changed the store"

# ---- a reviewed row wins over a pending one, in either order
# u.db was generated last: its pending rows are newer and replace the
# shards' pending ones, but not the two reviewed ones
expect_status 0 "merge the unsharded store into m.db" "$PROXIMA" merge --db "$TMP/m.db" "$TMP/u.db"
expect_match "^$TMP/u.db: $nu QAs \\(0 added, $((nu - 2)) replaced, 2 kept\\), 0 reviews added \\(0 already there\\), 1 run added" \
	"$OUT" "u.db: its newer pending rows replace, the reviewed ones are kept, its run added"
n=$(q "$TMP/m.db" "select count(*) from qa where run_id = 3")
[ "$n" -eq $((nu - 2)) ] && ok "the replaced rows name u.db's run, now run 3" ||
	not_ok "$n rows name run 3"
expect_status 0 "merge u.db first, then the shards" "$PROXIMA" merge --db "$TMP/n.db" "$TMP/u.db" \
	"$TMP/a.db" "$TMP/b.db"
expect_match "^$TMP/a.db: $na QAs \\(0 added, 1 replaced, $((na - 1)) kept\\)" "$OUT" \
	"a.db's approved row replaces u.db's pending one"
st="select group_concat(id || status, ',') from (select * from qa order by id)"
[ "$(q "$TMP/m.db" "$st")" = "$(q "$TMP/n.db" "$st")" ] &&
	ok "both orders give the same statuses" || not_ok "the order of the inputs changed the statuses"
s=$(q "$TMP/n.db" "select status from qa where id = '$x'")
[ "$s" = approved ] && ok "the approval survives a pending copy merged first" || not_ok "it is '$s'"

# ---- reviewed in two stores: the later review wins, both are kept
expect_status 0 "reject in u.db the QA approved in a.db" "$PROXIMA" review reject "$x" \
	--db "$TMP/u.db" --reviewer cy --reason "ambiguous"
for order in "a b u" "u b a"; do
	set -- $order
	out="$TMP/p$1.db"
	expect_status 0 "merge $order" "$PROXIMA" merge --db "$out" "$TMP/$1.db" "$TMP/$2.db" "$TMP/$3.db"
	s=$(q "$out" "select status from qa where id = '$x'")
	# ana's approval and cy's rejection are both verdicts: a conflict, not the later one winning
	[ "$s" = conflict ] && ok "$order: the two reviewers' disagreement is a conflict" || not_ok "$order: the QA is '$s'"
	s=$(q "$out" "select group_concat(reviewer || ':' || decision, ',') from (select * from reviews where qa_id = '$x' order by decided_at)")
	[ "$s" = "ana:approve,cy:reject" ] && ok "$order: both reviews of it are kept" ||
		not_ok "$order: its reviews are '$s'"
done

# ---- bad inputs: named, and the output is left alone
before=$(snap "$TMP/m.db")
expect_status 1 "merge a missing input" "$PROXIMA" merge --db "$TMP/m.db" "$TMP/a.db" "$TMP/nowhere.db"
expect_match "^error: cannot open '$TMP/nowhere.db'" "$ERR" "the missing input is named"
expect_status 1 "merge into a new store with a missing input" "$PROXIMA" merge --db "$TMP/none.db" \
	"$TMP/nowhere.db"
[ -e "$TMP/none.db" ] && not_ok "a failed merge created its output" || ok "a failed merge creates no output"
sqlite3 "$TMP/a.db" ".backup '$TMP/newer.db'"
sqlite3 "$TMP/newer.db" "PRAGMA user_version = 4"
expect_status 1 "merge a store of a newer schema" "$PROXIMA" merge --db "$TMP/m.db" "$TMP/newer.db"
expect_match "'$TMP/newer.db': schema version 4 is newer than version 3" "$ERR" "the newer input is named"
printf 'not a database\n' >"$TMP/junk.db"
expect_status 1 "merge a file that is no database" "$PROXIMA" merge --db "$TMP/m.db" "$TMP/junk.db"
expect_match "'$TMP/junk.db'" "$ERR" "the junk input is named"
sqlite3 "$TMP/other.db" "create table t (x); insert into t values (1)"
expect_status 1 "merge a database of another program" "$PROXIMA" merge --db "$TMP/m.db" "$TMP/other.db"
expect_match "'$TMP/other.db': a SQLite database that is not a proxima store" "$ERR" \
	"the foreign input is named"
expect_status 1 "merge a store into itself" "$PROXIMA" merge --db "$TMP/m.db" "$TMP/m.db"
expect_match "'$TMP/m.db' is the output store" "$ERR" "merging into itself is refused"
[ "$before" = "$(snap "$TMP/m.db")" ] && ok "failed merges left m.db as it was" ||
	not_ok "a failed merge changed m.db"
expect_match '^ok$' "$(sqlite3 "$TMP/m.db" 'PRAGMA integrity_check')" "integrity_check is still ok"

done_testing
