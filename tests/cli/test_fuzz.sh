#!/bin/sh
# SPDX-License-Identifier: MIT
# The fuzz targets of tests/fuzz/ (run by `make fuzz`) stay buildable: each
# compiles with clang and -fsanitize=fuzzer when clang is installed, and
# each is linked with tests/fuzz/replay.c against the library of this build
# and run over its seed corpus, which holds the inputs that once crashed.
. tests/cli/lib.sh
: "${PROXIMA_BUILD:=$(pwd)/build}"
LIB=$PROXIMA_BUILD/libproxima.a
CC=${CC:-cc}
FLAGS="-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
-Wwrite-strings -Wvla -Wcast-qual -Wundef -Wno-unused-parameter -Werror \
-D_GNU_SOURCE $(make -s --no-print-directory print-inc)"
LIBS="$(make -s --no-print-directory print-libs)"

if command -v clang >/dev/null 2>&1; then
	for f in tests/fuzz/fuzz_*.c; do
		t=$(basename "$f" .c)
		expect_status 0 "$t compiles with clang -fsanitize=fuzzer" \
			clang $FLAGS -fsanitize=fuzzer,address,undefined -c -o "$TMP/$t.o" "$f"
	done
else
	echo "# skip: clang is not installed, the libFuzzer build is not checked"
fi

# the library of a `make check` build carries ASan and UBSan
SAN=""
if nm "$LIB" 2>/dev/null | grep -q __asan_; then
	SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
fi
[ -f "$LIB" ] || not_ok "no $LIB to replay the seeds against (run make test)"
[ -f "$LIB" ] && for f in tests/fuzz/fuzz_*.c; do
	t=$(basename "$f" .c)
	expect_status 0 "$t builds with the replay driver" \
		$CC $FLAGS $SAN -O1 -g -o "$TMP/$t" "$f" tests/fuzz/replay.c "$LIB" $LIBS
	n=$(ls tests/fuzz/corpus/$t | wc -l)
	expect_status 0 "$t replays its $n seeds" "$TMP/$t" tests/fuzz/corpus/$t/*
	expect_match "^replayed $n inputs$" "$OUT" "$t: every seed ran"
done
done_testing
