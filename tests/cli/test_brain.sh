#!/bin/sh
# SPDX-License-Identifier: MIT
# The openai brain as a schema-following model uses it, through the loopback
# stub (tests/stub/llm_stub.c, --strict: requests are checked as strict
# providers check them, image parts decoded):
# - a submit for another group than the session's comes back as a tool
#   error (wrong_group) and nothing is stored under the other group;
# - each session is offered only its sub-task's tools;
# - an argument that does not apply (k outside chains) is ignored with a
#   note in the result; an unknown object id names the nearest ids;
# - a drop carries the failed tool calls that led to it;
# - tool calls written as text get ids from the session and turn only: a
#   cassette recorded at --jobs 4 replays with no miss at --jobs 1, and a
#   rerun of the same command sends no request;
# - a cache write the store refuses fails the run and keeps its other
#   writes;
# - a server that is gone fails the run, whose error says why the first
#   session failed;
# - --brain-frames N sends the clip's N frames as JPEG data URLs; a
#   recording without video gets a line saying so.
. "$(dirname "$0")/lib.sh"
: "${PROXIMA_BUILD:=$(pwd)/build}"
STUB="$PROXIMA_BUILD/tests/llm_stub"
REC=examples/tiny

command -v python3 >/dev/null 2>&1 || sh scripts/setup.sh python3 >"$TMP/setup.log" 2>&1
for prog in python3 sqlite3 "$STUB"; do
	if ! command -v "$prog" >/dev/null 2>&1; then
		not_ok "$prog is needed"
		done_testing
		exit 0
	fi
done

# start_stub SCRIPT LOG [STUB OPTION...]: sets $stub_pid and $url
start_stub() {
	script=$1
	log=$2
	shift 2
	rm -f "$TMP/port"
	"$STUB" --script "$script" --log "$log" --strict --timeout-s 300 "$@" >"$TMP/port" \
		2>>"$TMP/stub.err" &
	stub_pid=$!
	i=0
	while [ $i -lt 100 ] && ! grep -q '^port ' "$TMP/port" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
	url="http://127.0.0.1:$(sed -n 's/^port //p' "$TMP/port")/v1"
}
stop_stub() {
	kill "$stub_pid" 2>/dev/null
	wait "$stub_pid" 2>/dev/null
}
requests() { if [ -s "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
gen() {
	"$PROXIMA" generate "$REC" --brain openai --base-url "$url" --model stub-model \
		--profile openai --no-audit --quiet "$@"
}

# ------------------------------------------------ a submit for another group
cat >"$TMP/wrong.json" <<'EOF'
{"strict": true, "loop": [
 {"tool_calls": [{"name": "submit_qa", "arguments": {"subtask": "intention.gaze_target",
   "metric": "approx", "t_ns": 1, "target": "x", "event_ns": 0, "reference": "",
   "actions": [], "question": "Where will the person look next?", "answer": "a",
   "distractors": []}}]}]}
EOF
start_stub "$TMP/wrong.json" "$TMP/wrong.log"
expect_status 0 "sessions that submit for another group" gen --db "$TMP/w.db" \
	--tasks intention.gaze_target/relative --max-sessions 2 --per-task 2 --jobs 1
stop_stub
# two sessions on the same submit (T, target) are one stored drop, and the run says so
expect_match '^run 1: 2 sessions, 0 QAs .* 1 dropped' "$OUT" "the run counts the one drop it stored"
expect_match 'dropped: wrong_group +1$' "$OUT" "the drop is wrong_group"
expect_match '^1$' "$(sqlite3 "$TMP/w.db" 'select count(*) from drops')" "stats and the run agree"
expect_match 'intention.gaze_target/relative +0$' "$OUT" "the run counts no QA for the group"
expect_match '^0$' "$(sqlite3 "$TMP/w.db" 'select count(*) from qa')" "nothing was stored"
python3 - "$TMP/wrong.log" >"$TMP/py.out" 2>&1 <<'EOF'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
# the second request of a session carries the rejection, which names the session's group
tool = [m for m in reqs[1]["body"]["messages"] if m["role"] == "tool"][-1]
r = json.loads(tool["content"])
assert r["reason"] == "wrong_group", r
assert '"subtask":"intention.gaze_target","metric":"relative"' in r["detail"], r["detail"]
EOF
[ $? -eq 0 ] && ok "the brain is told which sub-task and metric to submit" ||
	{ not_ok "the rejection names the session's group"; sed 's/^/# /' "$TMP/py.out"; }

# ------------------------------------------------ strict arguments, tools per sub-task
cat >"$TMP/strict.json" <<'EOF'
{"strict": true, "loop": [
 {"tool_calls": [{"name": "sample_clips", "arguments": {"subtask": "intention.head_turn",
   "metric": "approx", "index": 0, "count": 1, "seed": 1, "target": null, "t0": null,
   "t1": null, "frames": null, "window_s": null, "k": 3}}]},
 {"tool_calls": [{"name": "spatial_relation", "arguments": {"t": 0, "point": null,
   "object": "no_such_objekt", "t2": null, "reference": null}}]},
 {"content": "GIVE UP"}]}
EOF
start_stub "$TMP/strict.json" "$TMP/strict.log"
expect_status 0 "a model that fills every argument" gen --db "$TMP/s.db" \
	--tasks intention.head_turn/approx,exploration.navigate/approx --max-sessions 1 --jobs 1
stop_stub
python3 - "$TMP/strict.log" >"$TMP/py.out" 2>&1 <<'EOF'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["status"] == 200 for r in reqs), [r["status"] for r in reqs]
def tools(r):
    return sorted(t["function"]["name"] for t in r["body"]["tools"])
def task(r):
    return [m["content"] for m in r["body"]["messages"] if m["role"] == "user"][0]
seen = set()
for r in reqs:
    names = tools(r)
    if "Sub-task: intention.head_turn" in task(r):
        assert "plan_path" not in names and "build_chain" not in names, names
        seen.add("head_turn")
    if "Sub-task: exploration.navigate" in task(r):
        assert "plan_path" in names and "build_occupancy" in names, names
        assert "cast_gaze" not in names, names
        seen.add("navigate")
    assert "submit_qa" in names and len(names) <= 7, names
assert seen == {"head_turn", "navigate"}, seen
second = [r for r in reqs if len(r["body"]["messages"]) == 4][0]
res = json.loads(second["body"]["messages"][-1]["content"])
assert res["ignored"] == [{"argument": "k", "why": "applies only to chain.actions"}], res
assert res["candidates"], res
third = [r for r in reqs if len(r["body"]["messages"]) == 6][0]
res = json.loads(third["body"]["messages"][-1]["content"])
assert "nearest ids are" in json.dumps(res), res
print(max(len(json.dumps(r["body"])) for r in reqs))
EOF
[ $? -eq 0 ] && ok "k is ignored with a note, the tools are the sub-task's, an unknown id names the nearest" ||
	{ not_ok "strict arguments and tools per sub-task"; sed 's/^/# /' "$TMP/py.out"; }
echo "# largest request: $(tail -n 1 "$TMP/py.out") bytes"
expect_match 'after 1 failed tool call; the last: spatial_relation: /object: no object' \
	"$(sqlite3 "$TMP/s.db" "select group_concat(detail, '|') from drops")" \
	"the drop records the failed tool call behind it"

# ------------------------------------------------ text calls: replay and cache
cat >"$TMP/text.json" <<'EOF'
{"strict": true, "loop": [
 {"content": "<tool_call>{\"name\": \"describe_recording\", \"arguments\": {}}</tool_call>"},
 {"content": "<tool_call>{\"name\": \"sample_clips\", \"arguments\": {\"subtask\": \"chain.actions\", \"metric\": null, \"index\": 0, \"count\": 1, \"seed\": 1, \"target\": null, \"t0\": null, \"t1\": null, \"frames\": null, \"window_s\": null, \"k\": null}}</tool_call>"},
 {"content": "GIVE UP"}]}
EOF
# two pooled connection threads for four workers: the stub hands two
# connections to its pool and starts a thread for each of the others
start_stub "$TMP/text.json" "$TMP/text.log" --threads 2
expect_status 0 "text calls at --jobs 4, recorded" gen --db "$TMP/t.db" --max-sessions 3 \
	--per-task 3 --jobs 4 --record "$TMP/cassette.jsonl"
first=$(requests "$TMP/text.log")
expect_status 0 "the same command again" gen --db "$TMP/t.db" --max-sessions 3 --per-task 3 --jobs 4
stop_stub
expect_match "^$first\$" "$(requests "$TMP/text.log")" "the rerun sent no request ($first before)"
expect_status 0 "the cassette replayed at --jobs 1" "$PROXIMA" generate "$REC" --db "$TMP/r.db" \
	--brain "replay:$TMP/cassette.jsonl" --model stub-model --profile openai --no-audit --quiet \
	--max-sessions 3 --per-task 3 --jobs 1
expect_match ' 0 failed' "$OUT" "no session missed the cassette"

# ------------------------------------------------ sessions as fibers
# With more workers than cores, a remote brain's sessions run as fibers on
# one thread per core (llm_fibers_run): the requests of --jobs 64 are those
# of --jobs 1, one for one, and so is what the run stored.
start_stub "$TMP/text.json" "$TMP/fib1.log" --threads 2
expect_status 0 "text calls at --jobs 1" gen --db "$TMP/f1.db" --max-sessions 3 --per-task 3 --jobs 1
stop_stub
start_stub "$TMP/text.json" "$TMP/fib64.log" --threads 2
expect_status 0 "text calls at --jobs 64" gen --db "$TMP/f64.db" --max-sessions 3 --per-task 3 --jobs 64
stop_stub
python3 - "$TMP/fib1.log" "$TMP/fib64.log" >"$TMP/py.out" 2>&1 <<'EOF'
import json, sys
def bodies(path):
    return sorted(json.dumps(json.loads(l)["body"], sort_keys=True) for l in open(path))
a, b = bodies(sys.argv[1]), bodies(sys.argv[2])
assert len(a) == 75 and a == b, (len(a), len(b), sum(x != y for x, y in zip(a, b)))
EOF
[ $? -eq 0 ] && ok "the 75 requests of --jobs 64 are those of --jobs 1" ||
	{ not_ok "--jobs 64 sends what --jobs 1 sends"; sed 's/^/# /' "$TMP/py.out"; }
q="select recording_id, category, subtask, metric, reason, t_ns, target, detail from drops order by 1, 2, 3, 4, 5, 6, 7"
expect_match "^$(sqlite3 "$TMP/f1.db" "$q" | cksum)\$" "$(sqlite3 "$TMP/f64.db" "$q" | cksum)" \
	"and the two stores hold the same drops"

# ------------------------------------------------ a cache write that fails
# The answers are written to the llm_cache by a thread of their own, after
# the requests that got them went on: a write the store refuses still fails
# the run, names the table and SQLite's reason, and the run's other writes
# stay (the store checks clean).
cat >"$TMP/giveup.json" <<'EOF'
{"strict": true, "loop": [
 {"tool_calls": [{"name": "describe_recording", "arguments": {}}]},
 {"content": "GIVE UP"}]}
EOF
start_stub "$TMP/giveup.json" "$TMP/giveup.log"
expect_status 0 "a run that fills the cache" gen --db "$TMP/c.db" \
	--tasks intention.head_turn/approx --max-sessions 2 --jobs 2
expect_match '^4$' "$(sqlite3 "$TMP/c.db" 'select count(*) from llm_cache')" \
	"two sessions of two turns: four answers cached"
sqlite3 "$TMP/c.db" "CREATE TRIGGER no_cache BEFORE INSERT ON llm_cache
	BEGIN SELECT RAISE(ABORT, 'the cache refuses'); END;"
before=$(requests "$TMP/giveup.log")
expect_status 1 "a run whose cache writes fail" gen --db "$TMP/c.db" \
	--tasks intention.head_turn/approx,exploration.navigate/approx --max-sessions 2 --jobs 2
stop_stub
expect_match "llm cache: .*c\.db': writing the llm cache: the cache refuses" "$ERR" \
	"the error names the cache and SQLite's reason"
expect_match "^$((before + 4))\$" "$(requests "$TMP/giveup.log")" \
	"the head turns came from the cache, the navigation sessions asked the stub"
expect_match '^4 2$' "$(sqlite3 "$TMP/c.db" \
	'select (select count(*) from llm_cache), (select count(*) from runs)' | tr '|' ' ')" \
	"nothing more was cached, and both runs are stored"
expect_status 0 "the store checks clean" "$PROXIMA" check --db "$TMP/c.db"

# ------------------------------------------------ a server that is gone
# Sessions whose brain fails are counted, and the run's error line says why
# the first one failed (the stub stopped: its port refuses the connection).
start_stub "$TMP/giveup.json" "$TMP/gone.log"
stop_stub
expect_status 1 "a server that is gone fails the run" gen --db "$TMP/gone.db" \
	--tasks intention.head_turn/approx --max-sessions 2 --jobs 4 --timeout-ms 2000
expect_match "^error: 2 sessions failed \(--allow-failures 0\); the first: brain: llm: $url/chat/completions: .*\(3 attempts\)" \
	"$ERR" "the error names the first failure: its URL, the cause and the attempts"

# ------------------------------------------------ the clip's frames for the brain
cat >"$TMP/frames.json" <<'EOF'
{"strict": true, "loop": [
 {"tool_calls": [{"name": "sample_clips", "arguments": {"subtask": "intention.head_turn",
   "metric": "approx", "index": 0, "count": 1, "seed": 1, "target": null, "t0": null,
   "t1": null, "frames": null, "window_s": null, "k": null}}]},
 {"content": "GIVE UP"}]}
EOF
start_stub "$TMP/frames.json" "$TMP/frames.log"
expect_status 0 "--brain-frames 4" gen --db "$TMP/f.db" --tasks intention.head_turn/approx \
	--max-sessions 1 --jobs 1 --brain-frames 4 --brain-frame-width 320
"$PROXIMA" synth --scene kitchen --minutes 1 --seed 9 --no-video -o "$TMP/novid" >/dev/null 2>&1
"$PROXIMA" generate "$TMP/novid" --brain openai --base-url "$url" --model stub-model \
	--profile openai --no-audit --quiet --db "$TMP/n.db" --tasks intention.head_turn/approx \
	--max-sessions 1 --jobs 1 --brain-frames 4 >/dev/null 2>&1
stop_stub
python3 - "$TMP/frames.log" >"$TMP/py.out" 2>&1 <<'EOF'
import base64, json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["status"] == 200 for r in reqs), [r["status"] for r in reqs]
last = [r["body"]["messages"][-1] for r in reqs if len(r["body"]["messages"]) == 5]
assert len(last) == 2, len(last)
with_video, no_video = last
parts = with_video["content"]
assert isinstance(parts, list), parts
imgs = [p for p in parts if p["type"] == "image_url"]
assert len(imgs) == 4, len(imgs)
for p in imgs:
    url = p["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,"), url[:40]
    jpg = base64.b64decode(url.split(",", 1)[1])
    assert jpg[:3] == b"\xff\xd8\xff", jpg[:4]
    # the SOF0 marker's width is the asked 320
    i = jpg.find(b"\xff\xc0")
    assert i > 0 and int.from_bytes(jpg[i + 7:i + 9], "big") == 320, jpg[i:i + 9]
assert "oldest first" in parts[0]["text"], parts[0]
assert "No frames of the clip can be shown" in no_video["content"], no_video
EOF
[ $? -eq 0 ] && ok "four 320-pixel JPEG frames reach the brain; no video is said in words" ||
	{ not_ok "--brain-frames"; sed 's/^/# /' "$TMP/py.out"; }
expect_status 2 "--brain-frames 1 is a usage error" "$PROXIMA" generate "$REC" --db "$TMP/x.db" \
	--brain-frames 1
done_testing
