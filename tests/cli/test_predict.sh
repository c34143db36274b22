#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima predict` then `proxima eval`, end to end against the loopback stub
# (tests/stub/llm_stub.c in --strict mode, which checks every image part it
# receives): the requests carry EgoProx's prompt and each frame's bytes as a
# base64 JPEG data URL (compared with the exported files), replies chosen per
# QA give scores worked out by hand, a rerun sends no request, a killed run
# resumes with only what it had not finished, failed calls are retried by
# the next run, and missing frames stop the run before anything is sent.
. "$(dirname "$0")/lib.sh"
HERE="$(cd "$(dirname "$0")" && pwd)"
DATA="$HERE/../data"
: "${PROXIMA_BUILD:=$(pwd)/build}"
STUB="$PROXIMA_BUILD/tests/llm_stub"

command -v python3 >/dev/null 2>&1 || sh scripts/setup.sh python3 >"$TMP/setup.log" 2>&1
command -v ffmpeg >/dev/null 2>&1 || sh scripts/setup.sh ffmpeg >"$TMP/setup.log" 2>&1
for prog in python3 ffmpeg sqlite3 "$STUB"; do
	if ! command -v "$prog" >/dev/null 2>&1; then
		not_ok "$prog is needed"
		done_testing
		exit 0
	fi
done

expect_status 0 "predict --help" "$PROXIMA" predict --help
expect_match '^usage: proxima predict --export DIR --base-url URL --model M -o FILE' "$OUT" "predict help shows the usage"
expect_status 2 "predict without a model is a usage error" "$PROXIMA" predict --export d --base-url http://127.0.0.1:1/v1 -o p
expect_status 2 "predict --jobs 0 is a usage error" "$PROXIMA" predict --export d --base-url http://x/v1 --model m -o p --jobs 0

# twelve QAs, each question made unique so that each gets its own reply
sqlite3 "$TMP/s.db" <"$DATA/eval/store.sql"
mkdir "$TMP/rec"
cp "$DATA"/native/* "$TMP/rec/"
sqlite3 "$TMP/s.db" "UPDATE recordings SET root = '$TMP/rec';
	UPDATE qa SET question = question || ' (' || id || ')', question_edited =
	CASE WHEN question_edited IS NULL THEN NULL ELSE question_edited || ' (' || id || ')' END"
ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc=size=640x480:rate=10 -t 3 \
	-pix_fmt yuv420p "$TMP/rec/video.mp4"
expect_status 0 "export egoprox --frames 2" "$PROXIMA" export --db "$TMP/s.db" --format egoprox -o "$TMP/ego" --frames 2
expect_status 0 "export egoprox without frames" "$PROXIMA" export --db "$TMP/s.db" --format egoprox -o "$TMP/nof"

# replies by QA (keys: a0 A, a1 B, a2 C, a3 D, a4 E, a5 A, a6 B, b0 H of 8, b1 D)
python3 - "$TMP/script.json" "$TMP/script_fail.json" <<'EOF'
import json, sys
replies = {
    "a0": "The mug was on the left. Therefore, The correct answer is A.",
    "a1": "The correct answer is B",
    "a2": "C",                                    # bare: no match for EgoProx
    "a3": "The correct answer is <D>.",
    "a4": "the correct answer is e",              # IGNORECASE, upper-cased
    "a5": "The correct answer is A. No wait: The correct answer is B",  # last one: B
    "a6": "I cannot tell from these frames.",
    "b0": "The correct answer is H",              # past E: none for EgoProx
    "b1": "The correct answer is D",
    "c0": '[[1,2,3,4],["B","E","G"]]',            # right, edges right
    "c1": '[[2,1,3,4],["E","C","D"]]',            # the other order; neighbours only
    "c2": 'Let me think. [[1,2,3],["B"]]',        # 3 nodes of 4: dropped
}
match = [{"contains": "(00000000000000%s)" % k, "content": v} for k, v in replies.items()]
json.dump({"strict": True, "match": match}, open(sys.argv[1], "w"))
fail = [{"contains": "(00000000000000c2)", "status": 400,
         "error": {"message": "stub: refused", "type": "invalid_request_error"}}] + match
json.dump({"strict": True, "match": fail}, open(sys.argv[2], "w"))
EOF

# start_stub SCRIPT LOG [ARGS]: sets $stub_pid and $url
start_stub() {
	script=$1; log=$2; shift 2
	rm -f "$TMP/port"
	"$STUB" --script "$script" --log "$log" --timeout-s 300 "$@" >"$TMP/port" 2>>"$TMP/stub.err" &
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

# ------------------------------------------------------------ first run
start_stub "$TMP/script.json" "$TMP/log1"
expect_status 0 "predict --jobs 2" "$PROXIMA" predict --export "$TMP/ego" --base-url "$url" --model vision-stub -o "$TMP/p.jsonl" --jobs 2
expect_match '^predicted 12 samples: 12 answered \(0 from the cache\), 0 failed; 12 requests sent' "$OUT" "12 requests, one per sample"
expect_match '^12$' "$(requests "$TMP/log1")" "the stub received 12 requests"
if python3 - "$TMP/log1" "$TMP/ego" <<'EOF'
import base64, json, sys
log, d = sys.argv[1], sys.argv[2]
samples = {s["id"]: s for s in json.load(open(d + "/egoprox.json"))}
for line in open(log):
    e = json.loads(line)
    assert e["status"] == 200 and "rejected" not in e, e.get("rejected")
    body = e["body"]
    # max_tokens 500 (infer_gpt.py MAX_TOKENS), in the field the profile uses
    assert body["model"] == "vision-stub" and body.get("max_tokens", body.get("max_completion_tokens")) == 500, body.keys()
    assert "temperature" not in body and "tools" not in body
    msgs = body["messages"]
    user = msgs[-1]["content"]
    text = [p["text"] for p in user if p["type"] == "text"]
    sid = next(i for i in samples if "(%s)" % i in "".join(text))
    s = samples[sid]
    if s["source"] == "Chain of Actions":
        # infer_gpt.py build_messages_long_term: system prompt, then frames + user prompt
        assert msgs[0]["role"] == "system" and msgs[0]["content"] == s["system_prompt"]
        frames, want_text = s["image"], s["user_prompt"]
    else:
        # build_messages_short_term: one user message, the sample's content in order
        assert len(msgs) == 1
        frames = [p["image"] for p in s["data"][0]["content"] if p["type"] == "image"]
        want_text = s["data"][0]["content"][-1]["text"]
    assert [p["type"] for p in user] == ["image_url"] * len(frames) + ["text"], [p["type"] for p in user]
    assert text == [want_text]
    assert e["images"] == len(frames) == 2
    for p, f in zip(user, frames):
        url = p["image_url"]["url"]
        assert url.startswith("data:image/jpeg;base64,"), url[:40]
        assert base64.b64decode(url.split(",", 1)[1]) == open(d + "/" + f, "rb").read(), f
EOF
then ok "each request: EgoProx's messages, the frames' exact bytes as JPEG data URLs"
else not_ok "the requests are not EgoProx's inference requests"; fi
expect_match '"id":"00000000000000a5","source":"Intention_Approx","response":"The correct answer is A. No wait: The correct answer is B","answer":"B"' "$(cat "$TMP/p.jsonl")" "predictions hold the response and parse_answer_letter's answer"

# ------------------------------------------------------------ scores
# Intention_Approx: a0, a1, a3, a4 right; a2 bare, a5 last B, a6 none: 4 of 7.
# Lenient: also a2: 5 of 7. b0's H is no EgoProx match. b1 right.
# Chains: c0 S 1 L 1, c1 S 0 L 1 (E C D are neighbours of A F G), c2 dropped.
expect_status 0 "eval the predictions" "$PROXIMA" eval --export "$TMP/ego" --predictions "$TMP/p.jsonl"
expect_match '^Intention_Approx +ACC: 57\.14%$' "$OUT" "Intention_Approx 4 of 7"
expect_match '^Intention_Relative +ACC: 100\.00%$' "$OUT" "Intention_Relative 1 of 1"
expect_match '^Exploration_Relative +ACC: 0\.00%$' "$OUT" "Exploration_Relative: H is past E"
expect_match '^Intention_Approx +7 +4 +57\.14% +20\.00% +0 +2 +71\.43%$' "$OUT" "lenient: 5 of 7"
expect_match '^Chain of Actions +Act-Acc: 100\.00%, Rel-Acc-S: 50\.00%, Rel-Acc-L: 100\.00%$' "$OUT" "chains as evaluate.py"
expect_match 'strict over 3: Act-Acc 66\.67%, Rel-Acc-S 33\.33%, Rel-Acc-L 66\.67%' "$OUT" "strict chain score"
python3 "$HERE/egoprox_ref.py" pipeline "$TMP/ego/egoprox.json" "$TMP/p.jsonl" >"$TMP/ref.json"
"$PROXIMA" eval --export "$TMP/ego" --predictions "$TMP/p.jsonl" --json >"$TMP/ev.json"
if python3 "$HERE/eval_adversarial.py" compare "$TMP/ev.json" "$TMP/ref.json" >"$TMP/diff"; then
	ok "the same figures as parse_answer_letter + evaluate.py (reference)"
else
	not_ok "figures differ from the reference"; sed 's/^/# /' "$TMP/diff"
fi

# ------------------------------------------------------------ rerun: all cached
cp "$TMP/p.jsonl" "$TMP/p.first"
: >"$TMP/log1"
expect_status 0 "predict again" "$PROXIMA" predict --export "$TMP/ego" --base-url "$url" --model vision-stub -o "$TMP/p.jsonl" --jobs 2
expect_match '12 answered \(12 from the cache\), 0 failed; 0 requests sent' "$OUT" "a rerun sends 0 requests"
expect_match '^0$' "$(requests "$TMP/log1")" "the stub received nothing"
python3 -c "
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]; b = [json.loads(l) for l in open(sys.argv[2])]
for x in a + b: x.pop('cached')
sys.exit(a != b)" "$TMP/p.first" "$TMP/p.jsonl" && ok "the same predictions" || not_ok "the same predictions"
stop_stub

# ------------------------------------------------------------ a killed run resumes
start_stub "$TMP/script.json" "$TMP/log2" --latency-ms 300
"$PROXIMA" predict --export "$TMP/ego" --base-url "$url" --model vision-stub -o "$TMP/k.jsonl" --jobs 1 >/dev/null 2>&1 &
pred_pid=$!
i=0
while [ $i -lt 200 ] && [ "$(requests "$TMP/k.jsonl.cache")" -lt 3 ]; do sleep 0.05; i=$((i + 1)); done
kill -KILL "$pred_pid" 2>/dev/null
wait "$pred_pid" 2>/dev/null
stop_stub
done_before=$(requests "$TMP/k.jsonl.cache")
[ ! -e "$TMP/k.jsonl" ] && ok "a killed run leaves no predictions file" || not_ok "a killed run leaves no predictions file"
if [ "$done_before" -ge 3 ] && [ "$done_before" -lt 12 ]; then ok "the killed run cached $done_before replies"; else not_ok "the killed run cached $done_before replies"; fi
start_stub "$TMP/script.json" "$TMP/log3"
expect_status 0 "predict resumes" "$PROXIMA" predict --export "$TMP/ego" --base-url "$url" --model vision-stub -o "$TMP/k.jsonl" --jobs 2
expect_match "^$((12 - done_before))\$" "$(requests "$TMP/log3")" "the resumed run sends only the $((12 - done_before)) missing requests"
cmp -s "$TMP/k.jsonl" "$TMP/p.jsonl" && ok "resumed predictions equal the uninterrupted ones" || \
	python3 -c "
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]; b = [json.loads(l) for l in open(sys.argv[2])]
for x in a + b: x.pop('cached')
sys.exit(a != b)" "$TMP/k.jsonl" "$TMP/p.first" && ok "resumed predictions equal the uninterrupted ones" || \
	not_ok "resumed predictions equal the uninterrupted ones"
stop_stub

# ------------------------------------------------------------ failures are retried by the next run
start_stub "$TMP/script_fail.json" "$TMP/log4"
expect_status 1 "a refused call fails the run" "$PROXIMA" predict --export "$TMP/ego" --base-url "$url" --model vision-stub -o "$TMP/f.jsonl"
expect_match '11 answered \(0 from the cache\), 1 failed' "$OUT" "one failure counted"
expect_match "sample '00000000000000c2'.*400" "$ERR" "the failure is named"
expect_match '"id":"00000000000000c2","source":"Chain of Actions","response":null' "$(cat "$TMP/f.jsonl")" "its response is null"
stop_stub
start_stub "$TMP/script.json" "$TMP/log5"
expect_status 0 "the next run retries it" "$PROXIMA" predict --export "$TMP/ego" --base-url "$url" --model vision-stub -o "$TMP/f.jsonl"
expect_match '^1$' "$(requests "$TMP/log5")" "only the failed call is sent again"

# ------------------------------------------------------------ bad input
: >"$TMP/log5"
expect_status 1 "predict on an export without frames" "$PROXIMA" predict --export "$TMP/nof" --base-url "$url" --model vision-stub -o "$TMP/n.jsonl"
expect_match "frame '.*/Frames/0000000000000.*/001\.jpg' is missing \(export with --frames N" "$ERR" "the missing frame is named"
expect_match '^0$' "$(requests "$TMP/log5")" "nothing is sent"
mkdir "$TMP/jl"
"$PROXIMA" export --db "$TMP/s.db" --format jsonl -o "$TMP/jl" >/dev/null
expect_status 1 "predict on a jsonl export" "$PROXIMA" predict --export "$TMP/jl" --base-url "$url" --model vision-stub -o "$TMP/n.jsonl"
expect_match "predict reads an egoprox export" "$ERR" "the format is named"

# the stub checks image parts as a strict vision server: a PNG's bytes sent as a JPEG
python3 - "$url" >"$TMP/out" 2>&1 <<'EOF'
import json, sys, urllib.request, urllib.error
body = {"model": "m", "messages": [{"role": "user", "content": [
    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,iVBORw0KGgo="}},
    {"type": "text", "text": "?"}]}]}
req = urllib.request.Request(sys.argv[1] + "/chat/completions", json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
try:
    urllib.request.urlopen(req, timeout=10)
    print("accepted")
except urllib.error.HTTPError as e:
    print(e.code, json.loads(e.read())["error"]["message"])
EOF
expect_match '^400 Invalid image: the data is not a image/jpeg image\.$' "$(cat "$TMP/out")" "the stub refuses an image whose bytes are not its type"
stop_stub

done_testing
