#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima frames`: the ADT sample's VRS frames at the ground truth's first
# three 214-1 times (tests/data/adt/2d_bounding_box_rgb3.csv) and the clip
# rule of a QA (8 times over [T - 8 s, T], the rule of frames_json); a native
# recording with a test video made by ffmpeg; usage errors (exit 2) and a
# recording without a video (exit 1); inspect's video line.
. tests/cli/lib.sh
ADT=tests/data/adt
t1=87551170910700 t2=87551204238700 t3=87551237566700

expect_status 0 "frames --help" "$PROXIMA" frames --help
expect_match '^usage: proxima frames REC' "$OUT" "help shows the usage"
expect_status 2 "frames without a recording" "$PROXIMA" frames --at 1 -o "$TMP/x"
expect_status 2 "frames with both --at and --clip" "$PROXIMA" frames $ADT --at 1 --clip 2 -o "$TMP/x"
expect_status 2 "frames without -o" "$PROXIMA" frames $ADT --at 1
expect_status 2 "frames with a bad time" "$PROXIMA" frames $ADT --at 12x -o "$TMP/x"
expect_match "device times in ns" "$ERR" "the bad time is explained"
expect_status 2 "frames with --n 1" "$PROXIMA" frames $ADT --clip 1 --n 1 -o "$TMP/x"
expect_status 2 "frames with --width 0" "$PROXIMA" frames $ADT --at 1 --width 0 -o "$TMP/x"
expect_status 1 "frames of a recording without a video" "$PROXIMA" frames tests/data/mps --at 1 -o "$TMP/x"
expect_match "has no video" "$ERR" "no video is a clear error"
expect_status 1 "frames of a missing folder" "$PROXIMA" frames "$TMP/nope" --at 1 -o "$TMP/x"

# the ADT ground truth's first three RGB times (from the CSV excerpt)
times=$(awk -F, 'NR > 1 && $1 == "214-1" { print $3 }' $ADT/2d_bounding_box_rgb3.csv | uniq | head -n 3 | paste -sd, -)
expect_match "^$t1,$t2,$t3\$" "$times" "the CSV's first three 214-1 times"
expect_status 0 "frames --at the three times" "$PROXIMA" frames $ADT --at "$times" -o "$TMP/adt"
for i in 1 2 3; do
	eval "t=\$t$i"
	expect_match "^$TMP/adt/00${i}_$t\\.jpg  t $t  frame $((i - 1)) at " "$OUT" "frame $i is the stream's frame $((i - 1))"
done
expect_match "frame 0 at 87551170813262 \\(-0\\.1 ms\\)  640x640" "$OUT" "its capture time and size"
if command -v ffprobe >/dev/null 2>&1; then
	dims=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 "$TMP/adt/002_$t2.jpg")
	expect_match '^640,640$' "$dims" "a 640x640 JPEG (ffprobe)"
fi
expect_status 0 "frames --json" "$PROXIMA" frames $ADT --at "$t3,87551000000000" -o "$TMP/adtj" --json
expect_match '"frame_ns":[[:space:]]*87551237472175' "$OUT" "JSON: the frame's device time"
expect_match '"outside":[[:space:]]*true' "$OUT" "JSON: a time before the first frame is flagged"
expect_match '"rotated":[[:space:]]*true' "$OUT" "JSON: the VRS frames are turned upright"
expect_status 0 "frames before the first frame" "$PROXIMA" frames $ADT --at 87551000000000 -o "$TMP/adtb"
expect_match "lie before the first frame" "$ERR" "a warning says the time is outside the video"

# the clip rule: T - 8 s + 8 s * i / 7, as frames_json stores it
expect_status 0 "frames --clip" "$PROXIMA" frames $ADT --clip 87551237566700 -o "$TMP/clip"
n=$(ls "$TMP/clip" | wc -l)
expect_match '^ *8$' "$n" "8 frames for a clip"
expect_match "^$TMP/clip/001_87543237566700\\.jpg" "$OUT" "the first at T - 8 s"
expect_match "$TMP/clip/002_87544380423842\\.jpg" "$OUT" "the second at T - 8 s + 8/7 s (whole ns)"
expect_match "$TMP/clip/008_87551237566700\\.jpg" "$OUT" "the last at T"
expect_status 0 "frames --clip --n 3 --window 2" "$PROXIMA" frames $ADT --clip 2000000000 --n 3 --window 2 -o "$TMP/clip3"
expect_match "001_0\\.jpg.*002_1000000000\\.jpg.*003_2000000000\\.jpg" "$(echo $OUT)" "3 frames over 2 s"

expect_status 0 "inspect lists the video stream" "$PROXIMA" inspect $ADT
expect_match '^video +"video\.vrs" \(vrs\), 3 frames, 0\.067 s \(87551170813262 \.\. 87551237472175 ns\), 1408x1408 upright, 30\.00 fps$' "$OUT" "inspect: source, count, times, size"
expect_status 0 "inspect --json lists the video stream" "$PROXIMA" inspect --json $ADT
expect_match '"frames":[[:space:]]*3' "$OUT" "inspect --json: frame count"

if command -v ffmpeg >/dev/null 2>&1; then
	mkdir -p "$TMP/nat"
	cp tests/data/native/* "$TMP/nat/"
	# frame N has luminance 16 + 6 N; 10 fps from t0 = 1 s (recording.json)
	ffmpeg -nostdin -loglevel error -y -f lavfi \
		-i "nullsrc=s=64x48:r=10:d=2,geq=lum='16+N*6':cb=128:cr=128,format=yuv420p" \
		-c:v mpeg4 -q:v 1 "$TMP/nat/video.mp4"
	expect_status 0 "frames of a native video" "$PROXIMA" frames "$TMP/nat" --at 1500000000,1260000000 -o "$TMP/natf"
	expect_match "001_1500000000\\.jpg  t 1500000000  frame 5 at 1500000000" "$OUT" "1.5 s is frame 5"
	expect_match "002_1260000000\\.jpg  t 1260000000  frame 3 at 1300000000" "$OUT" "1.26 s is frame 3 (nearest)"
	g=$(ffmpeg -nostdin -loglevel error -i "$TMP/natf/001_1500000000.jpg" -f rawvideo -pix_fmt gray - | od -An -tu1 -N1 -j 500 | tr -d ' ')
	# full range: 30 * 255 / 219 = 35
	if [ "$g" -ge 31 ] && [ "$g" -le 39 ]; then ok "its pixels are frame 5's (grey $g)"; else not_ok "its pixels are frame 5's (grey $g, wanted ~35)"; fi
	expect_status 0 "inspect of the native video" "$PROXIMA" inspect "$TMP/nat"
	expect_match '^video +"video\.mp4" \(mpeg4\), 20 frames, 1\.900 s \(1000000000 \.\. 2900000000 ns\), 64x48, 10\.00 fps$' "$OUT" "inspect: the container's stream"
else
	ok "native video skipped: ffmpeg is not installed"
fi
# times 9 s apart over the bundled kitchen: a seek per gap, each once (a
# landing before the keyframe the index names used to seek again for ever)
T=$(awk 'BEGIN { for (i = 0; i < 60; i++) printf "%s%d", i ? "," : "", (5 + i * 9) * 1000000000 + 33333333 }')
expect_status 0 "60 frames 9 s apart" timeout 120 "$PROXIMA" frames examples/kitchen-10min --at "$T" \
	-o "$TMP/gaps" --json
far=$(printf '%s\n' "$OUT" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(sum(abs(f["offset_ms"]) > 50 for f in d["frames"]), len(d["frames"]))')
[ "$far" = "0 60" ] && ok "each of the 60 is the nearest frame (within half a frame)" ||
	not_ok "frames 9 s apart: $far (far, written)"
done_testing
