#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima export` and `proxima eval` on a small store (tests/data/eval/store.sql):
# usage errors, every format, the manifest's id digest against sha256sum, scores
# of prediction files whose values were worked out by hand (and checked once
# against EgoProx's evaluate.py, with the letter range widened to A-H for the
# 8-option QA), frames extracted from a luminance-ramp video made by ffmpeg.
. "$(dirname "$0")/lib.sh"
DATA="$(cd "$(dirname "$0")/../data" && pwd)"
EVAL="$DATA/eval"

expect_status 0 "export --help" "$PROXIMA" export --help
expect_match '^usage: proxima export --db FILE --format FMT -o DIR' "$OUT" "export help shows the usage"
expect_status 0 "eval --help" "$PROXIMA" eval --help
expect_match '^usage: proxima eval \(--export DIR \| --db FILE' "$OUT" "eval help shows the usage"
expect_status 2 "export without a store is a usage error" "$PROXIMA" export --format jsonl -o "$TMP/x"
expect_match 'no store given' "$ERR" "the missing store is named"
expect_status 2 "export with an unknown format" "$PROXIMA" export --db a.db --format csv -o "$TMP/x"
expect_match "unknown format 'csv'" "$ERR" "the unknown format is named"
expect_status 2 "export --frames 0 is a usage error" "$PROXIMA" export --db a.db --format jsonl -o "$TMP/x" --frames 0
expect_status 2 "export with a bad task list" "$PROXIMA" export --db a.db --format jsonl -o "$TMP/x" --tasks 'intention.head_turn/exact'
expect_match "'intention.head_turn/exact' is not CATEGORY" "$ERR" "the bad task is named"
expect_status 1 "export from a missing store fails" "$PROXIMA" export --db "$TMP/none.db" --format jsonl -o "$TMP/x"
expect_match "'$TMP/none.db': No such file" "$ERR" "the missing store file is named"
expect_status 2 "eval without predictions" "$PROXIMA" eval --db a.db
expect_status 2 "eval with two keys" "$PROXIMA" eval --db a.db --export d --predictions p

if ! command -v sqlite3 >/dev/null 2>&1; then
	not_ok "the sqlite3 shell is needed to load tests/data/eval/store.sql"
	done_testing
	exit 0
fi
sqlite3 "$TMP/s.db" <"$EVAL/store.sql"
mkdir "$TMP/rec"
cp "$DATA"/native/* "$TMP/rec/"
sqlite3 "$TMP/s.db" "UPDATE recordings SET root = '$TMP/rec'"

# ---------------------------------------------------------------- formats
for f in egoprox jsonl lmms-eval vlmevalkit labelstudio llava; do
	expect_status 0 "export --format $f" "$PROXIMA" export --db "$TMP/s.db" --format "$f" -o "$TMP/$f"
done
expect_status 0 "export egoprox again" "$PROXIMA" export --db "$TMP/s.db" --format egoprox -o "$TMP/egoprox"
expect_match '^exported 12 QAs as egoprox' "$OUT" "approved and edited QAs are exported, the rejected one is not"
[ -s "$TMP/egoprox/egoprox.json" ] && ok "egoprox.json written" || not_ok "egoprox.json written"
[ -s "$TMP/jsonl/records.jsonl" ] && ok "records.jsonl written" || not_ok "records.jsonl written"
[ -s "$TMP/lmms-eval/proxima.yaml" ] && [ -s "$TMP/lmms-eval/utils.py" ] && ok "lmms-eval task written" || not_ok "lmms-eval task written"
[ -s "$TMP/labelstudio/config.xml" ] && ok "label studio config written" || not_ok "label studio config written"
expect_match "^12$" "$(wc -l <"$TMP/jsonl/records.jsonl" | tr -d ' ')" "one JSONL record per QA"
# 9 MC rows + the header; the 3 chains are not multiple choice
expect_match "^10$" "$(wc -l <"$TMP/vlmevalkit/Proxima.tsv" | tr -d ' ')" "VLMEvalKit rows"
expect_match '"chain_not_multiple_choice":[[:space:]]+3' "$(cat "$TMP/vlmevalkit/manifest.json")" "skipped chains are counted"

# the manifest's digest equals sha256sum over the sorted exported ids
want=$(sqlite3 "$TMP/s.db" "SELECT id FROM qa WHERE status IN ('approved','edited')" | LC_ALL=C sort | sha256sum | cut -d' ' -f1)
man=$(cat "$TMP/egoprox/manifest.json")
expect_match "\"ids_sha256\":[[:space:]]+\"$want\"" "$man" "ids_sha256 = sha256sum of the sorted ids"
expect_match '"intention.head_turn/approx":[[:space:]]+7' "$man" "manifest counts by group"
expect_match '"status":[[:space:]]+"approved,edited"' "$man" "manifest filters"
expect_match '"extracted":[[:space:]]+false' "$man" "frames not extracted without --frames"

if command -v python3 >/dev/null 2>&1; then
	if python3 - "$TMP" <<'EOF'
import json, sys
d = sys.argv[1]
ego = json.load(open(d + "/egoprox/egoprox.json"))
assert [x["source"] for x in ego].count("Intention_Approx") == 7
mc = [x for x in ego if x["source"] != "Chain of Actions"]
assert all(set(x) == {"id", "source", "data", "correct_option"} for x in mc)
assert all(x["data"][0]["content"][-1]["text"].endswith('"The correct answer is <X>", where X is the letter of the correct option.') for x in mc)
ch = [x for x in ego if x["source"] == "Chain of Actions"]
assert len(ch) == 3 and all(set(x) == {"id", "source", "system_prompt", "user_prompt", "image", "correct_answer"} for x in ch)
assert ch[0]["correct_answer"][1] == {"node": [2, 1, 3, 4], "edge": ["A", "F", "G"]}
rec = [json.loads(l) for l in open(d + "/jsonl/records.jsonl")]
b1 = [r for r in rec if r["id"] == "00000000000000b1"][0]
assert b1["question"].startswith("In which direction") and b1["question_original"] == "Where is the mug?"
assert b1["review"]["status"] == "edited" and b1["review"]["notes"] == ["reworded"]
compile(open(d + "/lmms-eval/utils.py").read(), "utils.py", "exec")
lv = json.load(open(d + "/llava/llava.json"))
assert lv[0]["conversations"][0]["value"].startswith("<image>\n") and lv[0]["image"][0].startswith("Frames/")
EOF
	then ok "exports parse and hold the fields (python3)"; else not_ok "exports parse and hold the fields (python3)"; fi
fi

# ---------------------------------------------------------------- the dataset card
# every export writes README.md: YAML (Hugging Face fields) that parses, and
# tables whose numbers are manifest.json's (tests/cli/card_check.py)
YPY=/usr/bin/python3
if ! "$YPY" -c 'import yaml' >/dev/null 2>&1; then
	sh scripts/setup.sh python3-yaml >"$TMP/setup.log" 2>&1
fi
if "$YPY" -c 'import yaml' >/dev/null 2>&1; then
	expect_status 0 "audit --json of the exported statuses" "$PROXIMA" audit --db "$TMP/s.db" --status approved,edited --json
	printf '%s\n' "$OUT" >"$TMP/audit.json"
	for f in egoprox jsonl lmms-eval vlmevalkit labelstudio llava; do
		"$YPY" "$(dirname "$0")/card_check.py" "$TMP/$f" "$TMP/audit.json" >"$TMP/card.log" 2>&1
		n=$(grep -c '^ok - ' "$TMP/card.log")
		if grep -q '^not ok - \|Traceback' "$TMP/card.log" || [ "$n" -lt 20 ]; then
			not_ok "$f: the card's YAML and numbers ($n checks passed)"
			grep -v '^ok - ' "$TMP/card.log" | head -n 8 | sed 's/^/# /'
		else
			ok "$f: the card's YAML parses and its $n checks agree with manifest.json"
		fi
	done
	expect_match '"recordings":[[:space:]]+1' "$(cat "$TMP/egoprox/manifest.json")" "manifest counts the recordings"
	expect_match '"brain":[[:space:]]+"local"' "$(cat "$TMP/egoprox/manifest.json")" "manifest lists the generation run"
	expect_match 'path: "Proxima.tsv"' "$(cat "$TMP/vlmevalkit/README.md")" "the TSV export's card names the TSV"
	# vlmevalkit holds no chains: neither its counts nor its audit table has the chain group
	if grep -q 'chain\.actions' "$TMP/vlmevalkit/README.md"; then not_ok "vlmevalkit card leaves the chains out"
	else ok "vlmevalkit card leaves the chains out"; fi
	expect_status 0 "export --no-audit" "$PROXIMA" export --db "$TMP/s.db" --format jsonl -o "$TMP/na" --no-audit
	expect_match '"audit":[[:space:]]+null' "$(cat "$TMP/na/manifest.json")" "--no-audit: no audit in the manifest"
	"$YPY" "$(dirname "$0")/card_check.py" "$TMP/na" >"$TMP/card.log" 2>&1
	grep -q '^ok - no audit: the card says so' "$TMP/card.log" && ! grep -q '^not ok' "$TMP/card.log" &&
		ok "--no-audit: the card says it has no audit" ||
		{ not_ok "--no-audit: the card says it has no audit"; grep -v '^ok' "$TMP/card.log" | head -n 5 | sed 's/^/# /'; }
else
	not_ok "python3-yaml is needed to check the dataset card (scripts/setup.sh python3-yaml)"
fi

# ---------------------------------------------------------------- scores
# mix: head_turn/approx 3 of 7 under EgoProx's rules (the answer "A" as it is; B; C
# after a decoy A; wrong B; no letter; a5 missing; "c" is C against B), navigate's
# "the correct answer is H" is no match for EgoProx (A-E) but H for the lenient parse,
# the edited QA right; chains: one wrong edge of 3 (S 2/3, L 2/3), lenient neighbours
# (S 0, L 1), one unparsable (dropped by EgoProx, wrong in the strict score: 2 of 3).
check_mix() {
	expect_match '^intention\.head_turn/approx +7 +3 +42\.86% +20\.00% +1 +1 +42\.86%$' "$OUT" "$1: 3 of 7 right"
	expect_match '^exploration\.navigate/relative +1 +0 +0\.00% +12\.50% +0 +1 +100\.00%$' "$OUT" "$1: letter H only for the lenient parse"
	expect_match '^intention\.head_turn/relative +1 +1 +100\.00%' "$OUT" "$1: edited QA scored"
	expect_match '^chain\.actions/relative +3 +2 +100\.00% +33\.33% +83\.33% +1 +0 +0$' "$OUT" "$1: chain metrics"
	expect_match 'strict over 3: Act-Acc 66\.67%, Rel-Acc-S 22\.22%, Rel-Acc-L 55\.56%' "$OUT" "$1: strict chain score"
	expect_match 'chance: Act-Acc 0\.12%, Rel-Acc-S 12\.50%, Rel-Acc-L 37\.50%' "$OUT" "$1: chain chance levels"
	expect_match '^Intention_Approx +ACC: 42\.86%$' "$OUT" "$1: EgoProx group"
	expect_match '^Exploration_Relative +ACC: 0\.00%$' "$OUT" "$1: EgoProx group, 8 options"
	expect_match '^Chain of Actions +Act-Acc: 100\.00%, Rel-Acc-S: 33\.33%, Rel-Acc-L: 83\.33%$' "$OUT" "$1: EgoProx chain line"
	expect_match 'predictions read: 12 \(2 answers, 9 responses; 1 with ids not in the key, 0 repeated\); missing answers: 1' "$OUT" "$1: counts"
}
expect_status 0 "eval --db mix" "$PROXIMA" eval --db "$TMP/s.db" --predictions "$EVAL/mix.jsonl"
check_mix "db"
expect_status 0 "eval --export egoprox mix" "$PROXIMA" eval --export "$TMP/egoprox" --predictions "$EVAL/mix.jsonl"
expect_match '^Intention_Approx +7 +3 +42\.86% +20\.00% +1 +1 +42\.86%$' "$OUT" "egoprox key: groups by source"
expect_match '^Chain of Actions +3 +2 +100\.00% +33\.33% +83\.33% +1 +0 +0$' "$OUT" "egoprox key: chain metrics"
expect_status 0 "eval --export jsonl mix" "$PROXIMA" eval --export "$TMP/jsonl" --predictions "$EVAL/mix.jsonl"
check_mix "jsonl export"
expect_status 0 "eval --json" "$PROXIMA" eval --db "$TMP/s.db" --predictions "$EVAL/mix.jsonl" --json
expect_match '"rel_acc_l":[[:space:]]+0\.8333' "$OUT" "json chain score"
expect_match '"accuracy":[[:space:]]+0\.428571' "$OUT" "json MC accuracy"

expect_status 0 "eval all right" "$PROXIMA" eval --db "$TMP/s.db" --predictions "$EVAL/all_right.jsonl"
expect_match '^intention\.head_turn/approx +7 +7 +100\.00%' "$OUT" "all right: MC"
expect_match '^chain\.actions/relative +3 +3 +100\.00% +100\.00% +100\.00%' "$OUT" "all right: chains"
expect_status 0 "eval all wrong" "$PROXIMA" eval --db "$TMP/s.db" --predictions "$EVAL/all_wrong.jsonl"
expect_match '^intention\.head_turn/approx +7 +0 +0\.00% +20\.00% +0 +0 +0\.00%$' "$OUT" "all wrong: MC"
# a wrong action, a wrong order, a wrong node count (dropped)
expect_match '^chain\.actions/relative +3 +2 +0\.00% +0\.00% +0\.00% +0 +1 +0$' "$OUT" "all wrong: chains, one dropped for its length"

# an EgoProx results file is its own key, as for evaluate.py ...
expect_status 0 "eval a results file" "$PROXIMA" eval --predictions "$EVAL/results.json"
expect_match '^Intention_Approx +ACC: 50\.00%$' "$OUT" "results file: MC"
expect_match '^Chain of Actions +Act-Acc: 100\.00%, Rel-Acc-S: 100\.00%, Rel-Acc-L: 100\.00%$' "$OUT" "results file: chains"
# ... or answers against another key: 1 of 7 right, 5 missing, 1 null
expect_status 0 "eval a results file against the store" "$PROXIMA" eval --db "$TMP/s.db" --predictions "$EVAL/results.json"
expect_match '^intention\.head_turn/approx +7 +1 +14\.29% +20\.00% +5 +1 +14\.29%$' "$OUT" "results as predictions"
expect_status 0 "eval --db --tasks chain" "$PROXIMA" eval --db "$TMP/s.db" --tasks chain --predictions "$EVAL/mix.jsonl"
expect_match 'key items: 3;' "$OUT" "task filter on the key"

expect_status 1 "eval --export of a TSV export fails" "$PROXIMA" eval --export "$TMP/vlmevalkit" --predictions "$EVAL/mix.jsonl"
expect_match "format 'vlmevalkit' holds no answer key" "$ERR" "the reason is given"
printf '{"id":"00000000000000a0","answer":"A"}\nnot json\n' >"$TMP/bad.jsonl"
expect_status 1 "eval with a bad predictions line" "$PROXIMA" eval --db "$TMP/s.db" --predictions "$TMP/bad.jsonl"
expect_match "bad\.jsonl:2:1: Expecting value" "$ERR" "the bad line is named, with Python's message"

# ---------------------------------------------------------------- frames
expect_status 0 "export --frames without a video" "$PROXIMA" export --db "$TMP/s.db" --format jsonl -o "$TMP/nv" --frames 4 --tasks intention.head_turn/relative
expect_match 'no usable video' "$ERR" "no video is reported"
expect_match '"no_video":[[:space:]]+"video .*video\.mp4. cannot be read"' "$(cat "$TMP/nv/manifest.json")" "manifest says why"
expect_match '"frame_times_ns":\[1000000000,1166666667,1333333333,1500000000\]' "$(cat "$TMP/nv/records.jsonl")" "4 frame times uniform over the clip"

printf 'not a video' >"$TMP/rec/video.mp4"
expect_status 0 "export --frames with a broken video" "$PROXIMA" export --db "$TMP/s.db" --format jsonl -o "$TMP/nf" --frames 2 --tasks intention.head_turn/relative --ffmpeg "$TMP/no/ffmpeg"
expect_match "ffmpeg is no longer used" "$ERR" "--ffmpeg is ignored, with a warning"
expect_match 'no usable video' "$ERR" "the broken video is reported"
expect_match '"no_video":[[:space:]]+"[^"]*video\.mp4: cannot open the video' "$(cat "$TMP/nf/manifest.json")" "manifest names the broken file"

if command -v ffmpeg >/dev/null 2>&1; then
	# luminance 16 + 16 N at frame N (10 fps); the clip is 1.0 s to 1.5 s and the
	# video starts at 1.0 s, so frames at 0, 0.25 and 0.5 s show N = 0, 3, 5
	ffmpeg -nostdin -loglevel error -y -f lavfi \
		-i "nullsrc=s=64x48:r=10:d=2,geq=lum='16+N*16':cb=128:cr=128,format=yuv420p" \
		-c:v mpeg4 -q:v 2 "$TMP/rec/video.mp4"
	expect_status 0 "export --frames 3" "$PROXIMA" export --db "$TMP/s.db" --format egoprox -o "$TMP/fr" --frames 3 --tasks intention.head_turn/relative
	expect_match '^frames: 3 written$' "$OUT" "3 frames written"
	g1=$(ffmpeg -nostdin -loglevel error -i "$TMP/fr/Frames/00000000000000b1/001.jpg" -f rawvideo -pix_fmt gray - | od -An -tu1 -N1 -j 1000 | tr -d ' ')
	g2=$(ffmpeg -nostdin -loglevel error -i "$TMP/fr/Frames/00000000000000b1/002.jpg" -f rawvideo -pix_fmt gray - | od -An -tu1 -N1 -j 1000 | tr -d ' ')
	g3=$(ffmpeg -nostdin -loglevel error -i "$TMP/fr/Frames/00000000000000b1/003.jpg" -f rawvideo -pix_fmt gray - | od -An -tu1 -N1 -j 1000 | tr -d ' ')
	# full-range grey of Y: (Y - 16) * 255 / 219 -> 0, 56, 93
	if [ "$g1" -le 4 ] && [ "$g2" -ge 50 ] && [ "$g2" -le 62 ] && [ "$g3" -ge 88 ] && [ "$g3" -le 98 ]; then
		ok "frames come from the clip's times (grey $g1 $g2 $g3)"
	else
		not_ok "frames come from the clip's times (grey $g1 $g2 $g3, wanted ~0 56 93)"
	fi
	expect_match '"image":[[:space:]]*"Frames/00000000000000b1/003\.jpg"' "$(cat "$TMP/fr/egoprox.json")" "records list the extracted frames"
	expect_match '"extracted":[[:space:]]+true' "$(cat "$TMP/fr/manifest.json")" "manifest: frames extracted"
else
	ok "frame extraction skipped: ffmpeg is not installed"
fi

# ---------------------------------------------------------------- a VRS recording
# one QA moved to the ADT sample (its three RGB frames): Label Studio gets no
# video URL for a VRS file, which no browser plays, and the frames instead
cp "$TMP/s.db" "$TMP/adt.db"
sqlite3 "$TMP/adt.db" "INSERT INTO recordings (id, layout, root, t0_ns, t1_ns, summary_json, added_at)
	VALUES ('adt', 'adt', '$DATA/adt', 87551170813262, 87551237472175, '{}', '2026-01-01');
	UPDATE qa SET recording_id = 'adt', t_ns = 87551237566700, clip_start_ns = 87551170910700,
	clip_end_ns = 87551237566700, frames_json = '[87551170910700,87551204238700,87551237566700]'
	WHERE id = '00000000000000a0'"
expect_status 0 "labelstudio export of a VRS recording" "$PROXIMA" export --db "$TMP/adt.db" \
	--format labelstudio -o "$TMP/lsvrs" --frames 3 --tasks intention.head_turn --no-audit
rec=$(python3 -c 'import json, sys
for t in json.load(open(sys.argv[1])):
	d = t["data"]
	if d["qa_id"] == "00000000000000a0":
		print("video=%r clip=%s frames=%d" % (d["video"], "VRS" in d["clip_text"], len(d["frames"])))' \
	"$TMP/lsvrs/tasks.json" 2>&1)
expect_match "^video='' clip=True frames=3\$" "$rec" "no video URL for the VRS file, a note, and the 3 frames"
n=$(ls "$TMP/lsvrs/Frames/00000000000000a0" 2>/dev/null | wc -l)
expect_match '^ *3$' "$n" "the 3 VRS frames are written"

done_testing
