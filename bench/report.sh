#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the tables a `make bench` run measured into docs/performance.md.
#
# usage: sh bench/report.sh LOG DOC
#
# LOG is everything the benchmark programs printed (bench/run.sh collects
# it). Besides their own lines they print machine-readable ones:
#   head: TABLE | column | column ...     declares a table and its columns
#   row: TABLE | value | value ...        one row of it
#   target: SECTION | what | ours | anchor or target | ratio | goal | PASS/FAIL
# DOC keeps its prose as it is; only the text between a marker pair
#   <!-- bench:NAME -->  and  <!-- /bench:NAME -->
# is replaced: by every table named NAME or NAME-something, in the order
# they were declared, for NAME = targets by all target lines, and for
# NAME = others by the figure lines (those with "ours" or "target") of
# every program that printed no table (bench/run.sh writes "program: NAME"
# before each one's output). A marker whose tables did not appear in LOG
# says so, so the file is always the output of the last run.
set -u
log=$1
doc=$2
[ -f "$log" ] || { echo "error: no bench log '$log'" >&2; exit 1; }
[ -f "$doc" ] || { echo "error: no document '$doc'" >&2; exit 1; }
tmp="$doc.tmp.$$"
awk '
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function cells(line, out,    n, i, parts) {
	n = split(line, parts, / \| /)
	for (i = 1; i <= n; i++)
		out[i] = trim(parts[i])
	return n
}
function table_row(n, a,    s, i) {
	s = "|"
	for (i = 1; i <= n; i++)
		s = s " " a[i] " |"
	return s
}
function render(name,    t, k, shown, n, i, h, sep) {
	shown = 0
	if (name == "others") {
		for (k = 1; k <= nprog; k++) {
			if (tabled[k] || !nline[k])
				continue
			if (shown)
				print ""
			print "`" prog[k] "`:"
			print ""
			print "```"
			for (i = 1; i <= nline[k]; i++)
				print line[k, i]
			print "```"
			shown = 1
		}
		if (!shown)
			print "_No other benchmark printed figures in this run._"
		return
	}
	if (name == "targets") {
		if (!ntarget) {
			print "_Not measured in this run._"
			return
		}
		print "| section | what | ours | anchor or target | ratio | goal | result |"
		print "|---|---|---|---|---|---|---|"
		for (k = 1; k <= ntarget; k++)
			print target[k]
		return
	}
	for (t = 1; t <= ntab; t++) {
		if (tab[t] != name && index(tab[t], name "-") != 1)
			continue
		if (shown)
			print ""
		print head[t]
		n = headn[t]
		sep = "|"
		for (i = 1; i <= n; i++)
			sep = sep "---|"
		print sep
		for (k = 1; k <= nrow[t]; k++)
			print row[t, k]
		shown = 1
	}
	if (!shown)
		print "_Not measured in this run (its benchmark did not run or printed no table)._"
}
FNR == NR {
	if ($0 ~ /^program: /) {
		prog[++nprog] = substr($0, 10)
		next
	}
	if ($0 ~ /^(head|row|target): /)
		tabled[nprog] = 1
	else if (nprog && ($0 ~ / ours / || $0 ~ /target/) && nline[nprog] < 40)
		line[nprog, ++nline[nprog]] = $0
	if ($0 ~ /^head: /) {
		n = cells(substr($0, 7), c)
		t = id[c[1]]
		if (!t) {
			t = ++ntab
			id[c[1]] = t
			tab[t] = c[1]
		}
		for (i = 2; i <= n; i++)
			h[i - 1] = c[i]
		head[t] = table_row(n - 1, h)
		headn[t] = n - 1
		nrow[t] = 0
	} else if ($0 ~ /^row: /) {
		n = cells(substr($0, 6), c)
		t = id[c[1]]
		if (!t)
			next
		for (i = 2; i <= n; i++)
			v[i - 1] = c[i]
		row[t, ++nrow[t]] = table_row(n - 1, v)
	} else if ($0 ~ /^target: /) {
		n = cells(substr($0, 9), c)
		if (c[n] == "PASS")
			c[n] = "**PASS**"
		else if (c[n] == "FAIL")
			c[n] = "**FAIL**"
		target[++ntarget] = table_row(n, c)
	}
	next
}
{
	if (skip) {
		if ($0 == "<!-- /bench:" skip " -->") {
			skip = ""
			print
		}
		next
	}
	print
	if (match($0, /^<!-- bench:[a-z0-9-]+ -->$/)) {
		skip = substr($0, 12, length($0) - 15)
		render(skip)
	}
}
END {
	if (skip)
		print "error: marker <!-- bench:" skip " --> has no end" > "/dev/stderr"
}
' "$log" "$doc" >"$tmp" || { rm -f "$tmp"; exit 1; }
mv "$tmp" "$doc"
echo "bench: wrote $doc"
