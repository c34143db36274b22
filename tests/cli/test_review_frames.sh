#!/bin/sh
# SPDX-License-Identifier: MIT
# The review server's frames: an item of the bundled kitchen lists the 8
# frames of its clip (frames_json) with URLs, blind mode keeps them, each
# URL answers the JPEG that `proxima frames --at` writes for that time
# (byte for byte) with the frame's device time, and bad frame paths are
# 404s. The pixels themselves are checked in test_video and test_framecache.
. tests/cli/lib.sh
command -v curl >/dev/null 2>&1 || sh scripts/setup.sh curl >"$TMP/setup.log" 2>&1
if ! command -v curl >/dev/null 2>&1; then
	not_ok "curl is installed"; done_testing; exit 0
fi
DB="$TMP/k.db"
expect_status 0 "generate head_turn on the kitchen" "$PROXIMA" generate examples/kitchen-10min \
	--db "$DB" --tasks intention.head_turn --no-audit
id=$(sqlite3 -batch -noheader "$DB" "SELECT id FROM qa ORDER BY id LIMIT 1")
fj=$(sqlite3 -batch -noheader "$DB" "SELECT frames_json FROM qa WHERE id = '$id'")

mkdir -p "$TMP/t"
# the server keeps its frames in a folder under TMPDIR
export TMPDIR="$TMP/t"
serve_start "$TMP/serve.log" --db "$DB" --port 0 --reviewer fr
curl -s "${url}api/qa/$id" >"$TMP/item.json"
curl -s "${url}api/qa/$id?blind=1" >"$TMP/blind.json"
check=$(python3 - "$TMP/item.json" "$TMP/blind.json" "$fj" <<'PY'
import json, sys
item = json.load(open(sys.argv[1]))
blind = json.load(open(sys.argv[2]))
want = json.loads(sys.argv[3])
fi = item.get("frame_images") or []
print("n", len(fi))
print("times", [f["t_ns"] for f in fi] == want)
print("urls", all(f["url"] == "/media/%s/frame/%d" % (item["id"], k) for k, f in enumerate(fi)))
src = item.get("frame_source") or {}
print("source", src.get("file"), src.get("kind"), src.get("width"), src.get("height"))
print("blind", blind.get("blind"), len(blind.get("frame_images") or []), "answer_index" in blind)
PY
)
expect_match '^n 8$' "$(printf '%s\n' "$check" | sed -n 1p)" "the item lists its 8 frames"
expect_match '^times True$' "$(printf '%s\n' "$check" | sed -n 2p)" "at the times frames_json stores"
expect_match '^urls True$' "$(printf '%s\n' "$check" | sed -n 3p)" "each with its /media/ID/frame/K URL"
expect_match '^source video\.mp4 h264 640 480$' "$(printf '%s\n' "$check" | sed -n 4p)" "and names the video they come from"
expect_match '^blind True 8 False$' "$(printf '%s\n' "$check" | sed -n 5p)" "blind mode keeps the frames and hides the key"

# frames 0 and 7 against `proxima frames --at`, byte for byte
t0=$(printf '%s' "$fj" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0])')
t7=$(printf '%s' "$fj" | python3 -c 'import json,sys; print(json.load(sys.stdin)[7])')
expect_status 0 "frames --at the first and last times" "$PROXIMA" frames examples/kitchen-10min \
	--at "$t0,$t7" -o "$TMP/ref" --json
f7ns=$(printf '%s\n' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["frames"][1]["frame_ns"])')
curl -s -D "$TMP/h7" -o "$TMP/f7.jpg" "${url}media/$id/frame/7"
curl -s -o "$TMP/f0.jpg" "${url}media/$id/frame/0"
expect_match '^Content-Type: image/jpeg' "$(tr -d '\r' <"$TMP/h7" | grep -i '^content-type')" "a frame is image/jpeg"
expect_match "^X-Proxima-Frame-Ns: $f7ns\$" "$(tr -d '\r' <"$TMP/h7" | grep -i '^x-proxima-frame-ns')" \
	"with the device time of the frame written"
cmp -s "$TMP/f7.jpg" "$TMP/ref/002_$t7.jpg" && ok "frame 7 is the JPEG frames --at writes" ||
	not_ok "frame 7 is the JPEG frames --at writes"
cmp -s "$TMP/f0.jpg" "$TMP/ref/001_$t0.jpg" && ok "frame 0 too" || not_ok "frame 0 too"
code=$(curl -s -o "$TMP/e8" -w '%{http_code}' "${url}media/$id/frame/8")
expect_match '^404$' "$code" "frame 8 of 8 is a 404"
expect_match 'has 8 frames' "$(cat "$TMP/e8")" "which says how many there are"
for bad in "frame/-1" "frame/x" "frame/" "frames/1" "frame/1/2"; do
	code=$(curl -s -o /dev/null -w '%{http_code}' "${url}media/$id/$bad")
	expect_match '^404$' "$code" "/media/ID/$bad is a 404"
done
code=$(curl -s -o /dev/null -w '%{http_code}' "${url}media/ffffffffffffffff/frame/0")
expect_match '^404$' "$code" "a frame of an unknown QA is a 404"
expect_match '^1$' "$(ls -d "$TMP"/t/proxima-frames-* | wc -l)" "the frames are kept in one folder under TMPDIR"
kill -TERM "$srv"
wait "$srv"
expect_match '^0$' "$(ls -d "$TMP"/t/proxima-frames-* 2>/dev/null | wc -l)" "which the server removes when it stops"
done_testing
