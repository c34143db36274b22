#!/bin/sh
# SPDX-License-Identifier: MIT
# proxima inspect on every sample recording in tests/data and on bad input.
. tests/cli/lib.sh
D=tests/data

# every real sample folder and the native one: exit 0, layout named
for case in "native proxima-recording/1" "adt adt" "mps aria-mps" \
	"egoexo/takes/cmu_bike01_2 egoexo4d" "egoexo/takes/solo_take_3 egoexo4d"; do
	dir=${case% *}
	layout=${case##* }
	expect_status 0 "inspect $dir" "$PROXIMA" inspect "$D/$dir"
	expect_match "^layout +$layout\$" "$OUT" "inspect $dir names layout $layout"
done

# text: the counts the sample files really hold
expect_status 0 "inspect adt" "$PROXIMA" inspect "$D/adt"
expect_match "^objects +349 \(304 static, 45 dynamic\)" "$OUT" "adt: 349 objects with boxes"
expect_match "^trajectory +6 poses, 0\.167 s, 30\.00 Hz \(aria_trajectory\.csv\)" "$OUT" "adt: 6 poses at 30 Hz"
expect_match "6 rows in the source, 6 rays with a pose, schema v1" "$OUT" "adt: 6 gaze rows"
expect_match "^camera +fisheye 1408x1408, fov 110\.0 deg" "$OUT" "adt: default Aria camera"
expect_status 0 "inspect mps" "$PROXIMA" inspect "$D/mps"
expect_match "^trajectory +1152 poses" "$OUT" "mps: 1152 closed-loop poses"
expect_match "123 rows in the source, 114 rays with a pose, schema v2" "$OUT" "mps: rows without a pose skipped"
expect_match "9 of 123 gaze rows lie outside the trajectory" "$OUT" "mps: skipped rows warned"
expect_status 0 "inspect egoexo take" "$PROXIMA" inspect "$D/egoexo/takes/cmu_bike01_2"
expect_match "^actions +4 actions" "$OUT" "egoexo: 4 keysteps"
expect_match '^goals +3: "Fix the flat", "Inflate", "Bike Repair"$' "$OUT" "egoexo: goals"

# JSON
expect_status 0 "inspect --json native" "$PROXIMA" inspect --json "$D/native"
expect_match '"layout":[[:space:]]*"proxima-recording/1"' "$OUT" "json: layout"
expect_match '"id":[[:space:]]*"hand-kitchen-01"' "$OUT" "json: id"
expect_match '"t0_ns":[[:space:]]*1000000000,' "$OUT" "json: exact int64 times"
# gaze rows 1 and 2 hit the mug and the table; rows 3 and 4 run level at 1.6 m over everything
expect_match '"rays_on_object":[[:space:]]*2,' "$OUT" "json: 2 of 4 native rays hit a box"
expect_match '"share_on_object":[[:space:]]*0\.5' "$OUT" "json: hit share"
expect_match '"goals":[[:space:]]*\["make tea"\]' "$OUT" "json: goals"
expect_match '"warnings":[[:space:]]*\[\]' "$OUT" "json: no warnings"
expect_status 0 "inspect adt --json --objects" "$PROXIMA" inspect "$D/adt" --json --objects
expect_match '"total":[[:space:]]*349,' "$OUT" "json: object total"
expect_match '"name":[[:space:]]*"Hook_4",' "$OUT" "json --objects: Hook_4 listed"
# Hook_4's world centre (see tests/unit/test_recording_aria.c): (2.0187387, -0.0317043, 1.5132921)
expect_match '"center":[[:space:]]*\[2\.01873[0-9]*, -0\.03170[0-9]*, 1\.51329[0-9]*\]' "$OUT" "json --objects: Hook_4 centre"
expect_match '"motion":[[:space:]]*"dynamic"' "$OUT" "json --objects: dynamic objects"
n=$(printf '%s\n' "$OUT" | grep -c '"half_extents"')
if [ "$n" -eq 349 ]; then ok "json --objects: 349 boxes"; else not_ok "json --objects: $n boxes"; fi
expect_status 0 "inspect --json without --objects" "$PROXIMA" inspect --json "$D/adt"
if printf '%s\n' "$OUT" | grep -q '"objects":'; then not_ok "no objects array without --objects"; else ok "no objects array without --objects"; fi

# hostile names stay data: escaped in JSON and in text
expect_status 0 "inspect hostile names" "$PROXIMA" inspect --json --objects "$D/bad/hostile-name"
expect_match '"name":[[:space:]]*"mug \\"quoted\\" <script>alert\(1\)</script>\\nsecond line\\t\\\\end"' "$OUT" "json escapes the hostile name"
expect_status 0 "inspect hostile names (text)" "$PROXIMA" inspect --objects "$D/bad/hostile-name"
expect_match '"mug \\"quoted\\" <script>alert\(1\)</script>\\nsecond line\\t\\\\end"' "$OUT" "text escapes the hostile name"
if printf '%s\n' "$OUT" | grep -q '^second line'; then not_ok "no raw newline from a name"; else ok "no raw newline from a name"; fi

# bad input: exit 1 and "error: <file:line: what>"
expect_status 1 "truncated row" "$PROXIMA" inspect "$D/bad/truncated-row"
expect_match '^error: tests/data/bad/truncated-row/trajectory\.csv:3: 6 cells, the header has 8 \(truncated row\)$' "$ERR" "truncated row message"
expect_status 1 "malformed json" "$PROXIMA" inspect "$D/bad/malformed-json"
expect_match '^error: tests/data/bad/malformed-json/recording\.json: parse error near line 4$' "$ERR" "malformed json message"
expect_status 1 "nan value" "$PROXIMA" inspect "$D/bad/nan-value"
expect_match "^error: .*nan-value/trajectory\.csv:3: column 'ty': 'nan' is not a finite number" "$ERR" "nan message"
expect_status 1 "unknown object id" "$PROXIMA" inspect "$D/bad/unknown-object-id"
expect_match "^error: .*actions\.json: actions\[1\]\.object: unknown object id 'ghost-7'$" "$ERR" "unknown object id message"
expect_status 1 "unknown layout" "$PROXIMA" inspect "$D/bad/unknown-layout"
expect_match "^error: 'tests/data/bad/unknown-layout': unknown layout" "$ERR" "unknown layout message"
expect_status 1 "missing folder" "$PROXIMA" inspect "$D/no-such-folder"
expect_match "^error: cannot open 'tests/data/no-such-folder'" "$ERR" "missing folder message"
expect_status 1 "adt zero quaternion" "$PROXIMA" inspect "$D/bad/adt-zero-quaternion"
expect_match "^error: .*scene_objects\.csv:2: zero quaternion" "$ERR" "adt zero quaternion message"

# usage
expect_status 0 "inspect --help" "$PROXIMA" inspect --help
expect_match "share_on_object" "$OUT" "help documents the JSON keys"
expect_status 2 "inspect without PATH" "$PROXIMA" inspect
expect_status 2 "inspect with two PATHs" "$PROXIMA" inspect "$D/adt" "$D/mps"
expect_status 2 "inspect --bogus" "$PROXIMA" inspect --bogus "$D/adt"
# bounded input (examples/tiny, one change each): a clear error, or a documented warning
bad() { # NAME SHELL: a copy of examples/tiny with SHELL run in it
	rm -rf "$TMP/$1"
	cp -r examples/tiny "$TMP/$1"
	(cd "$TMP/$1" && sh -c "$2")
}
bad tmax 'echo "9223372036854775807,4.65,3.55,1.6,-0.81,-0.13,0.09,0.55" >> trajectory.csv'
expect_status 1 "a last trajectory row at INT64_MAX" timeout 20 "$PROXIMA" inspect "$TMP/tmax"
expect_match "trajectory time 9223372036854775807 ns is beyond \+-2\^62 ns" "$ERR" "the time is named"
# the streams are read on three threads; the error is the first stream's in file order
bad twobad 'sed -i "3s/,[^,]*,/,nan,/" trajectory.csv; sed -i "3s/,[^,]*,/,x,/" gaze.csv
	sed -i "2s/,[^,]*,/,y,/" object_poses.csv'
expect_status 1 "bad rows in the trajectory, the gaze and the object poses" "$PROXIMA" inspect "$TMP/twobad"
expect_match "^error: .*twobad/trajectory\.csv:3: column 'tx': 'nan' is not a finite number" "$ERR" \
	"the trajectory's error is reported, as a reading one by one would"
bad gazebad 'sed -i "3s/,[^,]*,/,x,/" gaze.csv; sed -i "2s/,[^,]*,/,y,/" object_poses.csv'
expect_status 1 "bad rows in the gaze and the object poses" "$PROXIMA" inspect "$TMP/gazebad"
expect_match "^error: .*gazebad/gaze\.csv:3: column 'ox': 'x' is not a number" "$ERR" "then the gaze's"
bad tmin 'sed -i "2s/^0,/-9223372036854775808,/" trajectory.csv'
expect_status 1 "a first trajectory row at INT64_MIN" timeout 20 "$PROXIMA" inspect "$TMP/tmin"
expect_match "trajectory time -9223372036854775808 ns is beyond" "$ERR" "the time is named"
bad week 'echo "700000000000000,4.65,3.55,1.6,-0.81,-0.13,0.09,0.55" >> trajectory.csv'
expect_status 1 "a trajectory of eight days" "$PROXIMA" inspect "$TMP/week"
expect_match "the trajectory spans 700000 s .* more than the 604800 s" "$ERR" "the span is named"
bad stray 'l=$(sed -n 3p object_poses.csv); sed -i 3d object_poses.csv
	echo "$l" | sed "s/^\([^,]*\),[0-9]*,/\1,995000000000,/" >/tmp/.stray.$$
	sed -i "5r /tmp/.stray.$$" object_poses.csv; rm -f /tmp/.stray.$$'
expect_status 1 "an object pose row out of order" "$PROXIMA" inspect "$TMP/stray"
expect_match "object_poses\.csv:[0-9]+: object 'mug_1': timestamps out of order \(.*995000000000 on line 6\)" \
	"$ERR" "the object and both lines are named"
bad late 'l=$(sed -n 3p object_poses.csv); sed -i 3d object_poses.csv
	echo "$l" | sed "s/^\([^,]*\),[0-9]*,/\1,995000000000,/" >> object_poses.csv'
expect_status 0 "an object pose long after the trajectory" "$PROXIMA" inspect "$TMP/late"
expect_match "1 object pose samples lie more than 60 s outside the trajectory \[0, 60000000000\] ns" \
	"$OUT" "a warning says so"
bad dupgaze 'sed -n 2p gaze.csv >/tmp/.g.$$; sed -i "2r /tmp/.g.$$" gaze.csv; rm -f /tmp/.g.$$'
expect_status 1 "two gaze samples at one time" "$PROXIMA" inspect "$TMP/dupgaze"
expect_match "gaze\.csv:3: a second gaze sample at t_ns 0" "$ERR" "the line is named"
bad cy 'sed -i "s/\"cy\": *240\.0/\"cy\": 1e308/" recording.json'
expect_status 1 "an absurd principal point" "$PROXIMA" inspect "$TMP/cy"
expect_match "recording\.json: camera\.cy: 1e\+308 is not in \[-height, 2 x height\]" "$ERR" "cy is named"
done_testing
