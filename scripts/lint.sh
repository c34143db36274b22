#!/bin/sh
# SPDX-License-Identifier: MIT
# `make lint`: clang-format in check mode over the files listed in
# .clang-format-files, cppcheck, then clang-tidy (checks in .clang-tidy)
# over engine/ tools/ geometry/, two files at a time. Exits 1 on any finding.
# A false positive is silenced on its line, with the reason:
#   /* cppcheck-suppress <id> ; why */ or /* NOLINTNEXTLINE(<check>): why */
# A layout finding is fixed with `clang-format -i FILE`.
set -u
cd "$(dirname "$0")/.."
sh scripts/setup.sh cppcheck clang-tidy clang-format || exit 1
BUILD=${BUILD:-build}
inc=$BUILD/lint/include
rooms=$(make -s --no-print-directory print-inc)
fail=0

# clang-format (.clang-format) in check mode, on the files listed in
# .clang-format-files only: the rest of the tree predates .clang-format and
# is not reformatted wholesale. A listed file that is gone is a finding.
echo "lint: clang-format"
fmt=""
for f in $(sed -e 's/#.*//' .clang-format-files); do
	if [ -f "$f" ]; then
		fmt="$fmt $f"
	else
		echo ".clang-format-files: '$f' does not exist"
		fail=1
	fi
done
if [ -n "$fmt" ] && ! clang-format --dry-run --Werror $fmt; then
	fail=1
fi

# cppcheck reads cJSON's and cglm's own headers (for cJSON_ArrayForEach and
# the vec3 array types) but not the rest of /usr/include, where it stops on
# glibc's attribute macros.
mkdir -p "$inc"
ln -sfn /usr/include/cjson "$inc/cjson"
ln -sfn /usr/include/cglm "$inc/cglm"
echo "lint: cppcheck"
cppcheck --quiet --error-exitcode=1 --inline-suppr \
	--enable=warning,performance,portability \
	--suppress=missingIncludeSystem --suppress="*:$inc/*" \
	--library=posix,gnu,libcurl,sqlite3,openssl,openmp \
	-D_GNU_SOURCE -I"$inc" $rooms \
	engine tools geometry || fail=1

# scripts/lint-models.h tells the analyser what err_set(), csv_err() and the
# cJSON type tests guarantee; the files that define them go without.
echo "lint: clang-tidy"
ls engine/*/*.c tools/*.c geometry/*.c | ROOMS="$rooms" xargs -P2 -n1 sh -c '
	case $1 in
	engine/base/err.c) m=-DLINT_NO_ERR_MODEL ;;
	engine/recording/csv.c) m=-DLINT_NO_CSV_MODEL ;;
	*) m= ;;
	esac
	clang-tidy --quiet "$1" -- -std=c11 -D_GNU_SOURCE $ROOMS \
		-fopenmp -include scripts/lint-models.h $m 2>&1 |
		grep -v "^[0-9]* warnings\? \(and [0-9]* errors\? \)\?generated\.$"
	exit 0' sh >"$BUILD/lint/tidy.log"
if grep -q "^[^ ].*: \(warning\|error\): " "$BUILD/lint/tidy.log"; then
	cat "$BUILD/lint/tidy.log"
	fail=1
fi
if [ "$fail" -ne 0 ]; then
	echo "lint: failed"
	exit 1
fi
echo "lint: clean"
