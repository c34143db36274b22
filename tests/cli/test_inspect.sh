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
done_testing
