#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima tool` for sample_clips, visible_objects, cast_gaze,
# build_occupancy and plan_path: a walled room with known answers, the
# bundled synthetic example, determinism across runs, and the errors.
. tests/cli/lib.sh
W=tests/data/tools2/walled
HERE=$(pwd)

expect_status 0 "tool list" "$PROXIMA" tool list
for t in sample_clips visible_objects cast_gaze build_occupancy plan_path; do
	expect_match "^$t " "$OUT" "tool list names $t"
done
expect_status 0 "sample_clips --help" "$PROXIMA" tool sample_clips --help
expect_match 'intention.head_turn' "$OUT" "the help lists the sub-tasks"

# the walled room: camera at (0.03, 0.02) facing +X, a wall at x = 1.5
# from y = -0.48 to 1.52, a bin at x = 3.03 behind it
expect_status 0 "visible_objects in the walled room" "$PROXIMA" tool visible_objects $W \
	--args '{"t":0,"include_hidden":true}' --compact
expect_match '"total":1,' "$OUT" "one object in view"
expect_match '"objects":\[\{"id":"wall"' "$OUT" "the wall is in view"
expect_match '"hidden":\[\{"id":"bin","name":"bin","reason":"occluded"' "$OUT" "the bin is hidden"
expect_match '"occluder":\{"id":"wall"' "$OUT" "by the wall"

expect_status 0 "plan_path around the wall" "$PROXIMA" tool plan_path $W \
	--args '{"t":0,"target":"bin"}' --compact
expect_match '"reachable":true,"status":"ok"' "$OUT" "the bin is reachable"
expect_match '"legs":\[\{[^}]*"direction":"front-right"' "$OUT" "the first leg goes front-right"
len=$(printf '%s\n' "$OUT" | sed -n 's/.*"length_m":\([0-9.]*\),"cells".*/\1/p')
# around the lower wall end: at least 1.698 + 1.750 m, at most 8.3% more + 0.3 m
expect_match '^3\.[4-9][0-9]*$' "$len" "the path length is about 3.4-4.0 m ($len)"

expect_status 0 "build_occupancy writes a PGM" sh -c "cd '$TMP' && '$PROXIMA' tool build_occupancy \
	'$HERE/$W' --args '{\"t\":0,\"target\":\"bin\",\"pgm_path\":\"occ.pgm\"}' --compact"
expect_match '"pgm_path":"occ.pgm"' "$OUT" "the result names the file"
expect_match '^P5$' "$(head -n 1 "$TMP/occ.pgm")" "the file is a binary PGM"
wh=$(printf '%s\n' "$OUT" | sed -n 's/.*"w":\([0-9]*\),"h":\([0-9]*\),.*/\1 \2/p')
expect_match "^$wh\$" "$(sed -n 2p "$TMP/occ.pgm")" "the PGM has the grid's size ($wh)"
expect_status 1 "a PGM path outside the folder is refused" "$PROXIMA" tool build_occupancy $W \
	--args '{"t":0,"pgm_path":"../occ.pgm"}' --compact
expect_match '"path":"/pgm_path"' "$OUT" "the violation names pgm_path"

expect_status 0 "cast_gaze on the wall" "$PROXIMA" tool cast_gaze $W \
	--args '{"t0":0,"t1":4000000000,"step":20}' --compact
expect_match '"samples_total":21,"samples_hit":21' "$OUT" "every ray hits"
expect_match '"distance_m":1\.621' "$OUT" "at 1.42 / 0.876 m"
expect_match '"fixations":\[\{"start_ns":0,"end_ns":2000000000,"duration_ms":2000' "$OUT" \
	"one 2-second fixation"

expect_status 1 "an unknown target is refused" "$PROXIMA" tool plan_path $W \
	--args '{"t":0,"target":"sofa"}' --compact
expect_match '"path":"/target","message":"no object with id' "$OUT" "the violation names target"

# the synthetic example
E=examples/tiny
if [ -f $E/recording.json ]; then
	for s in intention.head_turn intention.gaze_target exploration.navigate \
		exploitation.next_interaction chain.actions; do
		expect_status 0 "sample_clips $s" "$PROXIMA" tool sample_clips $E \
			--args "{\"subtask\":\"$s\",\"seed\":5,\"count\":3}" --compact
		expect_match '"total":[1-9][0-9]*,' "$OUT" "$s has candidates"
		expect_match '"frames_ns":\[[0-9]+(,[0-9]+){7}\]' "$OUT" "$s clips have 8 frames"
	done
	"$PROXIMA" tool sample_clips $E --args '{"subtask":"exploration.navigate","seed":9,"count":5}' \
		--compact >"$TMP/a.json" 2>&1
	"$PROXIMA" tool sample_clips $E --args '{"subtask":"exploration.navigate","seed":9,"count":5}' \
		--compact >"$TMP/b.json" 2>&1
	if cmp -s "$TMP/a.json" "$TMP/b.json"; then ok "the same seed gives the same clips"; else
		not_ok "the same seed gives the same clips"; fi
	"$PROXIMA" tool sample_clips $E --args '{"subtask":"exploration.navigate","seed":10,"count":5}' \
		--compact >"$TMP/c.json" 2>&1
	if cmp -s "$TMP/a.json" "$TMP/c.json"; then not_ok "another seed gives other clips"; else
		ok "another seed gives other clips"; fi
	expect_status 0 "visible_objects on the example" "$PROXIMA" tool visible_objects $E \
		--args '{"t":30000000000}' --compact
	expect_match '"objects":\[\{"id":"[a-z_0-9]+"' "$OUT" "something is in view at 30 s"
	expect_status 0 "cast_gaze on the example" "$PROXIMA" tool cast_gaze $E \
		--args '{"t0":0,"t1":10000000000,"step":60}' --compact
	expect_match '"fixations_total":[1-9]' "$OUT" "the first 10 s hold fixations"
else
	echo "# skip: $E is missing"
fi

expect_status 1 "an unknown sub-task is refused" "$PROXIMA" tool sample_clips $W \
	--args '{"subtask":"intention.look"}' --compact
expect_match '"path":"/subtask"' "$OUT" "the violation names subtask"
expect_status 1 "chains have no approx metric" "$PROXIMA" tool sample_clips $W \
	--args '{"subtask":"chain.actions","metric":"approx"}' --compact
expect_match '"path":"/metric"' "$OUT" "the violation names metric"
expect_status 0 "no candidates is not an error" "$PROXIMA" tool sample_clips $W \
	--args '{"subtask":"exploitation.next_interaction"}' --compact
expect_match '"total":0,"index":0,"candidates":\[\]' "$OUT" "total 0 and no candidates"

done_testing
