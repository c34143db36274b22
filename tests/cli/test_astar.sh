#!/bin/sh
# SPDX-License-Identifier: MIT
# `proxima tool astar` on the two Moving AI benchmarks and on broken inputs.
. tests/cli/lib.sh
D=tests/data/movingai

expect_status 0 "arena: every scenario matches" \
	"$PROXIMA" tool astar --map $D/arena.map --scen $D/arena.map.scen
expect_match '^130 scenarios, 0 mismatches$' "$OUT" "arena summary line"
expect_match '^0 3\.00000000 3\.00000000$' "$OUT" "arena first scenario"
expect_match '^129 [0-9.]+ [0-9.]+$' "$OUT" "arena last scenario id"

expect_status 0 "maze: every scenario matches" \
	"$PROXIMA" tool astar --map $D/maze-100-1.map --scen $D/maze-100-1.map.scen
expect_match '^2430 scenarios, 0 mismatches$' "$OUT" "maze summary line"
expect_match '^0 5\.00000000 5\.00000000$' "$OUT" "maze first scenario"

# a wrong expected length is a mismatch and exits 1
sed '2s/3\.00000000$/4.00000000/' $D/arena.map.scen >"$TMP/bad.scen"
expect_status 1 "mismatch exits 1" \
	"$PROXIMA" tool astar -q --map $D/arena.map --scen "$TMP/bad.scen"
expect_match '^130 scenarios, 1 mismatches$' "$OUT" "mismatch counted"

# the maze scenarios do not fit the arena map
expect_status 1 "map size mismatch" \
	"$PROXIMA" tool astar --map $D/arena.map --scen $D/maze-100-1.map.scen
expect_match 'maze-100-1\.map\.scen:2: scenario map is 100x100 but the map is 49x49' \
	"$ERR" "size mismatch names file and line"

expect_status 1 "missing map file" \
	"$PROXIMA" tool astar --map "$TMP/none.map" --scen $D/arena.map.scen
expect_match 'none\.map' "$ERR" "missing file is named"

head -n 20 $D/arena.map >"$TMP/short.map"
expect_status 1 "short map" \
	"$PROXIMA" tool astar --map "$TMP/short.map" --scen $D/arena.map.scen
expect_match 'short\.map:21: expected 49 map rows, found 16' "$ERR" "row count error"

sed '1s/.*/tipe octile/' $D/arena.map >"$TMP/hdr.map"
expect_status 1 "bad header" \
	"$PROXIMA" tool astar --map "$TMP/hdr.map" --scen $D/arena.map.scen
expect_match 'hdr\.map:1:' "$ERR" "header error names line 1"

sed '3s/\t/ /g' $D/arena.map.scen >"$TMP/line.scen"
expect_status 1 "bad scenario line" \
	"$PROXIMA" tool astar --map $D/arena.map --scen "$TMP/line.scen"
expect_match 'line\.scen:3: expected 9 tab-separated fields' "$ERR" "scen error names line 3"

tr -d '\r' <$D/arena.map | sed 's/$/\r/' >"$TMP/crlf.map"
expect_status 0 "CRLF map" \
	"$PROXIMA" tool astar -q --map "$TMP/crlf.map" --scen $D/arena.map.scen

expect_status 2 "missing --scen is a usage error" "$PROXIMA" tool astar --map $D/arena.map
expect_status 0 "help" "$PROXIMA" tool astar --help
expect_match '^usage: proxima tool astar' "$OUT" "help text"

done_testing
