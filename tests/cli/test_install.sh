#!/bin/sh
# SPDX-License-Identifier: MIT
# make install with PREFIX and DESTDIR: the binary, a man page generated
# from the --help texts (it renders without groff warnings and holds every
# command's help), the review page's files; the installed binary works
# from another folder and names the version the build does.
. tests/cli/lib.sh
: "${PROXIMA_BUILD:=$(pwd)/build}"
sh scripts/setup.sh groff-base >/dev/null 2>&1
root=$TMP/root
expect_status 0 "make install DESTDIR PREFIX" \
	make -s --no-print-directory BUILD="$PROXIMA_BUILD" DESTDIR="$root" PREFIX=/usr install
bin=$root/usr/bin/proxima
man=$root/usr/share/man/man1/proxima.1
[ -x "$bin" ] && ok "the binary is installed" || not_ok "no $bin"
[ -f "$man" ] && ok "the man page is installed" || not_ok "no $man"
for f in review.html review.css review.js; do
	cmp -s "web/$f" "$root/usr/share/proxima/web/$f" && ok "web/$f installed" ||
		not_ok "web/$f not installed as it is"
done
want=$("$PROXIMA" --version)
got=$(cd "$TMP" && "$bin" --version)
[ -n "$want" ] && [ "$got" = "$want" ] && ok "installed --version is the build's ($got)" ||
	not_ok "installed --version '$got', build '$want'"
expect_match "^proxima [0-9]+\.[0-9]+\.[0-9]+" "$got" "the version has a release number"
( cd "$TMP" && "$bin" tool list >"$TMP/tools" 2>&1 )
expect_match "^sample_clips " "$(cat "$TMP/tools")" "the installed binary runs from another folder"
if command -v groff >/dev/null 2>&1; then
	warn=$(groff -man -ww -z "$man" 2>&1)
	[ -z "$warn" ] && ok "the man page renders without groff warnings" ||
		not_ok "groff warns: $(printf '%s' "$warn" | head -n 3)"
	text=$(groff -man -Tutf8 -P-c -P-b -P-u "$man" 2>/dev/null)
	expect_match "--per-task N" "$text" "the page holds generate's --help"
	expect_match "--allow-failures N" "$text" "the page holds the newest option"
else
	echo "# skip: groff is not installed, the page is not rendered"
fi
for c in $("$PROXIMA" help | sed -n 's/^  \([a-z][a-z-]*\)  .*$/\1/p'); do
	grep -q "^\.SS \"proxima $c\"" "$man" && ok "man page section for $c" ||
		not_ok "no man page section for $c"
done
done_testing
