#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima tool`: the tool list, a tool run on a bundled recording, and the
# errors a person sees (schema violations naming the field, bad JSON).
. tests/cli/lib.sh

expect_status 0 "tool list exits 0" "$PROXIMA" tool list
for t in describe_recording spatial_relation find_interactions extract_keysteps build_chain; do
	expect_match "^$t " "$OUT" "tool list names $t"
done
expect_status 0 "tool list --json exits 0" "$PROXIMA" tool list --json
expect_match '"name":[[:space:]]*"build_chain"' "$OUT" "the OpenAI tools array holds build_chain"
expect_match '"additionalProperties":[[:space:]]*false' "$OUT" "the schemas are strict"
expect_status 0 "a tool's --help exits 0" "$PROXIMA" tool spatial_relation --help
expect_match 'counter-clockwise = to the LEFT' "$OUT" "the help gives the yaw sign"
expect_status 2 "an unknown tool is a usage error" "$PROXIMA" tool teleport .
expect_match "'teleport' is not a tool" "$ERR" "the error names the unknown tool"
expect_status 2 "a tool without a recording is a usage error" "$PROXIMA" tool describe_recording
expect_status 0 "tool astar dispatches to the A* runner" "$PROXIMA" tool astar --help
expect_match 'Moving AI' "$OUT" "tool astar prints the runner's help"

# a recording to run the tools on: the bundled example, else the loader test sample
REC=""
for d in examples/tiny tests/data/native; do
	if [ -f "$d/recording.json" ]; then REC=$d; break; fi
done
if [ ! -d examples/tiny ]; then
	echo "# skip: examples/tiny does not exist yet; using ${REC:-nothing}"
fi
if [ -n "$REC" ]; then
	expect_status 0 "describe_recording on $REC" "$PROXIMA" tool describe_recording "$REC" --compact
	expect_match '^\{"ok":true,' "$OUT" "the result is ok"
	t0=$(printf '%s\n' "$OUT" | sed -n 's/.*"t0_ns":\([0-9]*\).*/\1/p')
	expect_match '^[0-9]+$' "$t0" "the summary gives t0_ns"

	expect_status 0 "spatial_relation to a point" "$PROXIMA" tool spatial_relation "$REC" \
		--args "{\"t\":$t0,\"point\":[100,0,0]}" --compact
	expect_match '"direction":"[a-z-]+","letter":"[A-H]"' "$OUT" "it gives a direction and a letter"

	expect_status 1 "a schema violation exits 1" "$PROXIMA" tool spatial_relation "$REC" \
		--args '{"t":"now","point":[1,2],"object":null}'
	expect_match '"error":[[:space:]]*"invalid_arguments"' "$OUT" "the result says invalid_arguments"
	expect_match '^  /t: must be of type integer, got string "now"$' "$ERR" "stderr names the field /t"
	expect_match '^  /point: must have at least 3 items, got 2$' "$ERR" "stderr names the field /point"

	expect_status 1 "a time outside the recording exits 1" "$PROXIMA" tool spatial_relation "$REC" \
		--args '{"t":-5000000000000,"point":[1,2,3]}'
	expect_match '^  /t: must be within the recording' "$ERR" "stderr names /t and the span"

	expect_status 1 "trailing garbage is invalid JSON" "$PROXIMA" tool describe_recording "$REC" \
		--args '{} {}'
	expect_match 'unexpected characters after the JSON value at byte 3' "$ERR" "stderr gives the byte"

	printf '{"t0":0,"t1":1}\n' >"$TMP/args.json"
	expect_status 1 "--strict requires every listed field" "$PROXIMA" tool find_interactions "$REC" \
		--strict --args "@$TMP/args.json"
	expect_match '^  /object: is required$' "$ERR" "stderr names the missing field"
	expect_status 0 "without --strict the nullable fields default" "$PROXIMA" tool find_interactions \
		"$REC" --args "@$TMP/args.json"
	expect_status 1 "a missing @file fails" "$PROXIMA" tool find_interactions "$REC" \
		--args "@$TMP/none.json"
else
	echo "# skip: no native recording to run the tools on"
fi
expect_status 1 "a missing recording fails" "$PROXIMA" tool describe_recording "$TMP/none"
done_testing
