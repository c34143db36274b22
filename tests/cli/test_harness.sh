#!/bin/sh
# SPDX-License-Identifier: MIT
# Exports loaded under the rules of the harnesses that read them
# (tests/cli/harness_check.py follows their code rule by rule): lmms-eval's
# task folder copied elsewhere, its hooks run on adversarial responses and
# scoring as proxima eval and EgoProx; LLaVA-NeXT's LazySupervisedDataset;
# VLMEvalKit's ImageMCQDataset with the export folder as LMUData; Label
# Studio's config and its local-files route, and the URLs of `proxima review
# serve`'s media route fetched from a running server. The recording's video
# is made with ffmpeg's testsrc.
. "$(dirname "$0")/lib.sh"
HERE="$(cd "$(dirname "$0")" && pwd)"
DATA="$HERE/../data"

command -v python3 >/dev/null 2>&1 || sh scripts/setup.sh python3 >"$TMP/setup.log" 2>&1
command -v ffmpeg >/dev/null 2>&1 || sh scripts/setup.sh ffmpeg >"$TMP/setup.log" 2>&1
for prog in python3 ffmpeg sqlite3; do
	if ! command -v "$prog" >/dev/null 2>&1; then
		not_ok "$prog is needed (scripts/setup.sh installs it)"
		done_testing
		exit 0
	fi
done

sqlite3 "$TMP/s.db" <"$DATA/eval/store.sql"
mkdir "$TMP/rec"
cp "$DATA"/native/* "$TMP/rec/"
sqlite3 "$TMP/s.db" "UPDATE recordings SET root = '$TMP/rec'"
# the recording's video starts at 1.0 s; its QAs' clips are 1.0 s to 1.5 s
ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc=size=640x480:rate=10 -t 3 \
	-pix_fmt yuv420p "$TMP/rec/video.mp4"
# the harnesses that read frames get them; the EgoProx key and Label Studio need none
for f in lmms-eval llava vlmevalkit; do
	expect_status 0 "export --format $f --frames 2" "$PROXIMA" export --db "$TMP/s.db" --format "$f" -o "$TMP/$f" --frames 2
done
for f in egoprox labelstudio; do
	expect_status 0 "export --format $f" "$PROXIMA" export --db "$TMP/s.db" --format "$f" -o "$TMP/$f"
done

# ------------------------------------------------------------ lmms-eval
# the task folder is self-contained: copied elsewhere, the original gone
cp -r "$TMP/lmms-eval" "$TMP/moved-task"
rm -rf "$TMP/lmms-eval"
expect_match '^    test: proxima\.jsonl$' "$(cat "$TMP/moved-task/proxima.yaml")" "data_files is relative to the yaml"
if grep -q "$TMP" "$TMP/moved-task/proxima.yaml" "$TMP/moved-task/proxima.jsonl" "$TMP/moved-task/utils.py"; then
	not_ok "the task folder names no absolute path"
else
	ok "the task folder names no absolute path"
fi
for seed in 21 22 23; do
	python3 "$HERE/eval_adversarial.py" respond "$TMP/egoprox/egoprox.json" "$seed" "$TMP/r$seed.jsonl"
	if python3 "$HERE/harness_check.py" lmms "$TMP/moved-task" "$TMP/r$seed.jsonl" >"$TMP/lmms$seed.json" 2>"$TMP/err"; then
		ok "seed $seed: lmms-eval loads the moved task, its frames, and runs every hook"
	else
		not_ok "seed $seed: lmms-eval loading"; sed 's/^/# /' "$TMP/err"
	fi
	"$PROXIMA" eval --export "$TMP/egoprox" --predictions "$TMP/r$seed.jsonl" --json >"$TMP/ev$seed.json"
	python3 "$HERE/egoprox_ref.py" pipeline "$TMP/egoprox/egoprox.json" "$TMP/r$seed.jsonl" >"$TMP/ref$seed.json"
	if python3 - "$TMP/lmms$seed.json" "$TMP/ev$seed.json" "$TMP/ref$seed.json" >"$TMP/diff" <<'EOF'
import json, sys
lm, ev, ref = (json.load(open(p)) for p in sys.argv[1:4])
e = ev["egoprox"]
want = {"mc_accuracy": ev["overall_mc"]["accuracy"],
        "mc_lenient_accuracy": ev["overall_mc"]["lenient_accuracy"],
        "act_acc": ref["Chain of Actions"]["act_acc"], "rel_acc_s": ref["Chain of Actions"]["rel_acc_s"],
        "rel_acc_l": ref["Chain of Actions"]["rel_acc_l"],
        "strict_act_acc": e["Chain of Actions"]["strict_act_acc"]}
for src in ("Intention_Approx", "Intention_Relative", "Exploration_Relative"):
    want[src.lower()] = ref[src]["correct"] / ref[src]["total"]
bad = [k for k in want if abs(lm[k] - round(want[k], 6)) > 1e-9]
print("\n".join("%s: lmms-eval %s, EgoProx %s" % (k, lm[k], want[k]) for k in bad))
sys.exit(1 if bad or set(lm) != set(want) else 0)
EOF
	then ok "seed $seed: lmms-eval's metrics are EgoProx's (and proxima eval's)"
	else not_ok "seed $seed: lmms-eval's metrics differ"; sed 's/^/# /' "$TMP/diff"; fi
done

# ------------------------------------------------------------ LLaVA-NeXT
if python3 "$HERE/harness_check.py" llava "$TMP/llava" >"$TMP/out" 2>"$TMP/err"; then
	ok "LLaVA-NeXT: every sample's images load, one <image> token each"
else
	not_ok "LLaVA-NeXT loading"; sed 's/^/# /' "$TMP/err"
fi
expect_match '^llava: 12 samples, 24 images$' "$(cat "$TMP/out")" "LLaVA-NeXT: 12 samples of 2 frames"

# ------------------------------------------------------------ VLMEvalKit
if python3 "$HERE/harness_check.py" vlmevalkit "$TMP/vlmevalkit" "$TMP/egoprox/egoprox.json" >"$TMP/out" 2>"$TMP/err"; then
	ok "VLMEvalKit: rows, options, images under LMUData/images/Proxima read back"
else
	not_ok "VLMEvalKit loading"; sed 's/^/# /' "$TMP/err"
fi
expect_match '^vlmevalkit: 9 rows' "$(cat "$TMP/out")" "VLMEvalKit: the 9 multiple-choice QAs"
expect_status 0 "export vlmevalkit without frames" "$PROXIMA" export --db "$TMP/s.db" --format vlmevalkit -o "$TMP/vnf"
expect_match '^index	image_path	question	A' "$(head -n 1 "$TMP/vnf/Proxima.tsv")" "without frames there is no image column"

# ------------------------------------------------------------ Label Studio
if python3 "$HERE/harness_check.py" labelstudio "$TMP/labelstudio" / >"$TMP/out" 2>"$TMP/err"; then
	ok "Label Studio: local-files URLs under the default root, opening at the clip"
else
	not_ok "Label Studio local files"; sed 's/^/# /' "$TMP/err"
fi
expect_match '"video":"/data/local-files/\?d=' "$(cat "$TMP/labelstudio/tasks.json")" "no absolute file path as the video"
expect_status 0 "labelstudio --local-files-root" "$PROXIMA" export --db "$TMP/s.db" --format labelstudio -o "$TMP/ls2" --local-files-root "$TMP"
expect_match '"video":"/data/local-files/\?d=rec/video\.mp4#t=0\.000,0\.500"' "$(cat "$TMP/ls2/tasks.json")" "the path is relative to the root"
if python3 "$HERE/harness_check.py" labelstudio "$TMP/ls2" "$TMP" >"$TMP/out" 2>"$TMP/err"; then
	ok "Label Studio: local-files URLs under --local-files-root"
else
	not_ok "Label Studio --local-files-root"; sed 's/^/# /' "$TMP/err"
fi
mkdir "$TMP/elsewhere"
expect_status 1 "a video outside --local-files-root is an error" "$PROXIMA" export --db "$TMP/s.db" --format labelstudio -o "$TMP/ls3" --local-files-root "$TMP/elsewhere"
expect_match "is not under --local-files-root" "$ERR" "the error says why"
expect_status 2 "--media-url needs labelstudio" "$PROXIMA" export --db "$TMP/s.db" --format jsonl -o "$TMP/x" --media-url http://127.0.0.1:1

# proxima review serve's media route, as --media-url points at it
cp "$TMP/s.db" "$TMP/serve.db"
"$PROXIMA" review serve --db "$TMP/serve.db" --port 0 --reviewer ls >"$TMP/serve.log" 2>&1 &
serve_pid=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'http://' "$TMP/serve.log"; do sleep 0.1; i=$((i + 1)); done
url=$(grep -o 'http://[0-9.:]*/' "$TMP/serve.log" | head -n 1)
if [ -n "$url" ]; then
	expect_status 0 "labelstudio --media-url" "$PROXIMA" export --db "$TMP/s.db" --format labelstudio -o "$TMP/ls4" --media-url "$url"
	if python3 "$HERE/harness_check.py" labelstudio "$TMP/ls4" "$url" >"$TMP/out" 2>"$TMP/err"; then
		ok "Label Studio: every task's URL is served by the review server's media route"
	else
		not_ok "Label Studio --media-url"; sed 's/^/# /' "$TMP/err"
	fi
else
	not_ok "proxima review serve did not start"; sed 's/^/# /' "$TMP/serve.log"
fi
kill "$serve_pid" 2>/dev/null
wait "$serve_pid" 2>/dev/null

done_testing
