#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima eval` gives EgoProx's figures exactly: on a results file, what
# evaluate.py prints (answer == correct_option, nothing parsed); on raw
# responses, what parse_answer_letter then evaluate.py gives. Checked on a
# small file whose figures were worked out by hand (tests/data/eval/
# freetext_results.json), then on generated adversarial answers against a
# second implementation in Python (tests/cli/egoprox_ref.py), which uses
# Python's own json, str and re.
. "$(dirname "$0")/lib.sh"
HERE="$(cd "$(dirname "$0")" && pwd)"
EVAL="$HERE/../data/eval"

command -v python3 >/dev/null 2>&1 || sh scripts/setup.sh python3 >"$TMP/setup.log" 2>&1
if ! command -v python3 >/dev/null 2>&1; then
	not_ok "python3 is needed to run the reference implementation (scripts/setup.sh python3)"
	done_testing
	exit 0
fi

# ------------------------------------------------------------ by hand
# 8 MC answers stored as free text in a results file. evaluate.py compares them
# as they are: only f1 ("B" against B) is right: 1 of 8. Through
# parse_answer_letter they are: f2 C, f4 D, f5 E (the last match), f8 C (U+017F
# folds into s), so 4 of 8; "B" and "b" carry no match, F is past E, None is None.
# Chains: f9 holds a raw TAB inside an edge string, so json.loads fails and the
# fallback takes the A of "1 a" before B: edges A B against B E, 0 of 2; f10 is
# right; f11 has 2 nodes of 3 and is dropped: Act-Acc 2/2, Rel-Acc-S (0 + 1) / 2.
R="$EVAL/freetext_results.json"
expect_status 0 "eval a results file with free-text answers" "$PROXIMA" eval --predictions "$R"
expect_match '^Intention_Approx +ACC: 12\.50%$' "$OUT" "evaluate.py: 1 of 8"
expect_match '^Intention_Approx +8 +1 +12\.50% +20\.00% +0 +1 +62\.50%$' "$OUT" "the lenient parse is its own column (5 of 8)"
expect_match '^Chain of Actions +Act-Acc: 100\.00%, Rel-Acc-S: 50\.00%, Rel-Acc-L: 50\.00%$' "$OUT" "chains: the raw TAB sends the answer to the fallback"
expect_match 'strict over 3: Act-Acc 66\.67%, Rel-Acc-S 33\.33%, Rel-Acc-L 33\.33%' "$OUT" "strict chain score counts the dropped answer"
python3 "$HERE/egoprox_ref.py" results "$R" >"$TMP/ref.json"
expect_match '"correct": 1,' "$(cat "$TMP/ref.json")" "the reference agrees: 1 of 8"

# the same texts as raw responses, against the key alone
mkdir -p "$TMP/key"
python3 - "$R" "$TMP" <<'EOF'
import json, sys
items = json.load(open(sys.argv[1], encoding="utf-8"))
with open(sys.argv[2] + "/responses.jsonl", "w", encoding="utf-8") as f:
    for it in items:
        f.write(json.dumps({"id": it["id"], "response": it.pop("answer")}) + "\n")
json.dump(items, open(sys.argv[2] + "/key/egoprox.json", "w", encoding="utf-8"))
json.dump({"format": "egoprox"}, open(sys.argv[2] + "/key/manifest.json", "w"))
EOF
expect_status 0 "eval raw responses" "$PROXIMA" eval --export "$TMP/key" --predictions "$TMP/responses.jsonl"
expect_match '^Intention_Approx +ACC: 50\.00%$' "$OUT" "parse_answer_letter then evaluate.py: 4 of 8"
expect_match 'responses through parse_answer_letter first' "$OUT" "the EgoProx lines say which input they scored"
python3 "$HERE/egoprox_ref.py" pipeline "$TMP/key/egoprox.json" "$TMP/responses.jsonl" >"$TMP/ref.json"
expect_match '"correct": 4,' "$(cat "$TMP/ref.json")" "the reference agrees: 4 of 8"

# ------------------------------------------------------------ generated
for seed in 11 12 13 14; do
	d="$TMP/adv$seed"
	python3 "$HERE/eval_adversarial.py" make "$d" "$seed" 300
	"$PROXIMA" eval --export "$d/key" --predictions "$d/responses.jsonl" --json >"$d/p.json" 2>"$d/err"
	python3 "$HERE/egoprox_ref.py" pipeline "$d/key/egoprox.json" "$d/responses.jsonl" >"$d/r.json"
	if python3 "$HERE/eval_adversarial.py" compare "$d/p.json" "$d/r.json" >"$d/diff"; then
		ok "seed $seed: 375 raw responses score as parse_answer_letter + evaluate.py"
	else
		not_ok "seed $seed: raw responses differ from the reference"; sed 's/^/# /' "$d/diff" | head
	fi
	"$PROXIMA" eval --predictions "$d/results.json" --json >"$d/p2.json" 2>"$d/err"
	python3 "$HERE/egoprox_ref.py" results "$d/results.json" >"$d/r2.json"
	if python3 "$HERE/eval_adversarial.py" compare "$d/p2.json" "$d/r2.json" >"$d/diff"; then
		ok "seed $seed: the results file scores as evaluate.py"
	else
		not_ok "seed $seed: the results file differs from evaluate.py's rules"; sed 's/^/# /' "$d/diff" | head
	fi
done

# ------------------------------------------------------------ files Python refuses
printf '[{"id":"x","source":"Intention_Approx","correct_option":"A","answer":"A\t"}]' >"$TMP/tab.json"
expect_status 1 "a raw TAB in a results file is refused, as json.load refuses it" "$PROXIMA" eval --predictions "$TMP/tab.json"
expect_match "tab\.json:1:72: Invalid control character at" "$ERR" "the place is named as Python names it"
printf '[{"id":"x","source":"Intention_Approx","answer":"A"}, 7]' >"$TMP/seven.json"
expect_status 1 "an item that is not an object stops evaluate.py; eval refuses it" "$PROXIMA" eval --predictions "$TMP/seven.json"
expect_match "\[1\]: not an object" "$ERR" "the item is named"
printf '\377[]' >"$TMP/latin.json"
expect_status 1 "bytes that are not UTF-8 are refused" "$PROXIMA" eval --predictions "$TMP/latin.json"
expect_match "can't decode byte 0xff in position 0" "$ERR" "with the byte and its position"

done_testing
