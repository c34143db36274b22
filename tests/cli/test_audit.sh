#!/bin/sh
# SPDX-License-Identifier: MIT
# The blind audit as a gate. Five synthetic scenes no other test uses
# (seeds 101-105, 40 minutes each) are generated at 5 and at 8 options;
# every group must hold at least 300 QAs, and no solver that reads only the
# question and the options may beat its gate: a rule no more than 5 points
# over chance, a learned solver no more than 10, judged on the one-sided
# 95% lower bound of its accuracy (proxima audit flags the group otherwise).
# Also: proxima audit's usage errors and its JSON.
. tests/cli/lib.sh

expect_status 2 "audit without --db" "$PROXIMA" audit
expect_status 1 "audit of a missing store" "$PROXIMA" audit --db "$TMP/none.db"
expect_match "none\.db" "$ERR" "the missing store is named"
expect_status 2 "audit --repeats 0" "$PROXIMA" audit --db "$TMP/none.db" --repeats 0
expect_match "repeats" "$ERR" "the bad --repeats is named"

recs=""
for s in kitchen:101 apartment:102 office:103 kitchen:104 apartment:105; do
	scene=${s%:*}
	seed=${s#*:}
	"$PROXIMA" synth --scene "$scene" --seed "$seed" --minutes 40 --no-video \
		-o "$TMP/r$seed" >/dev/null 2>"$TMP/err" ||
		{ not_ok "synth $scene seed $seed"; cat "$TMP/err"; }
	recs="$recs $TMP/r$seed"
done

for n in 5 8; do
	# shellcheck disable=SC2086
	expect_status 0 "generate at $n options" "$PROXIMA" generate $recs --db "$TMP/o$n.db" \
		--per-task 70 --options "$n" --seed 11 --quiet
	# generate ends with the same audit: a line per group, none flagged
	lines=$(printf '%s\n' "$OUT" | grep -c ', chance [0-9.]*%, [0-9]* QAs')
	[ "$lines" -eq 9 ] && ok "$n options: generate audits its nine groups" ||
		not_ok "$n options: generate audited $lines groups"
	case "$OUT$ERR" in
	*FLAGGED*) not_ok "$n options: generate flags a group" ;;
	*) ok "$n options: generate flags no group" ;;
	esac
	expect_status 0 "audit at $n options" "$PROXIMA" audit --db "$TMP/o$n.db"
	printf '%s\n' "$OUT" >"$TMP/audit$n"
	groups=$(grep -c ' QAs, ' "$TMP/audit$n")
	[ "$groups" -eq 9 ] && ok "$n options: nine groups audited" ||
		not_ok "$n options: $groups groups audited"
	grep ' QAs, ' "$TMP/audit$n" | while IFS= read -r line; do
		g=${line%%:*}
		qas=$(printf '%s\n' "$line" | sed 's/^[^:]*: \([0-9]*\) QAs.*/\1/')
		if [ "$qas" -ge 300 ]; then
			echo "ok - $n options, $g: $qas QAs"
		else
			echo "not ok - $n options, $g: only $qas QAs (300 wanted)"
		fi
		case $line in
		*FLAGGED*)
			echo "not ok - $n options, $g: a blind solver beats its gate"
			awk -v g="$g:" 'index($0, g) == 1 { p = 1; next } / QAs, / { p = 0 }
				p && /over the gate/ { print "# " $0 }' "$TMP/audit$n"
			;;
		*) echo "ok - $n options, $g: every blind solver within its gate" ;;
		esac
	done >"$TMP/checks$n"
	cat "$TMP/checks$n"
	cli_pass=$((cli_pass + $(grep -c '^ok' "$TMP/checks$n")))
	cli_fail=$((cli_fail + $(grep -c '^not ok' "$TMP/checks$n")))
done

# the JSON says the same: no group flagged at 5 options, chance 1/5 for the MC groups
expect_status 0 "audit --json" "$PROXIMA" audit --db "$TMP/o5.db" --json
flagged=$(printf '%s\n' "$OUT" | grep -c '"flagged":[[:space:]]*true')
[ "$flagged" -eq 0 ] && ok "the JSON flags no group" || not_ok "the JSON flags $flagged groups"
expect_match '"chance":[[:space:]]*0\.2[,0-9]' "$OUT" "five options: chance 0.2"
expect_match '"repeats":[[:space:]]*5,?$' "$OUT" "the JSON says five repeated splits"
done_testing
