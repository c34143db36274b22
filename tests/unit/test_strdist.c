/* SPDX-License-Identifier: MIT */
/*
 * strdist_lev against the textbook full-matrix Levenshtein programme
 * written here: random strings over small and full byte alphabets, every
 * length from 0 to 140 on either side (the bit-parallel path up to 64
 * bytes in the shorter, the row programme above), and hand-computed pairs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "strdist.h"

static size_t ref_lev(const unsigned char *a, size_t la, const unsigned char *b, size_t lb)
{
	size_t *d = malloc((la + 1) * (lb + 1) * sizeof(*d)), i, j, r;

	assert_non_null(d);
	for (i = 0; i <= la; i++)
		d[i * (lb + 1)] = i;
	for (j = 0; j <= lb; j++)
		d[j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t best = d[(i - 1) * (lb + 1) + j - 1] + (a[i - 1] != b[j - 1]);

			if (d[(i - 1) * (lb + 1) + j] + 1 < best)
				best = d[(i - 1) * (lb + 1) + j] + 1;
			if (d[i * (lb + 1) + j - 1] + 1 < best)
				best = d[i * (lb + 1) + j - 1] + 1;
			d[i * (lb + 1) + j] = best;
		}
	r = d[la * (lb + 1) + lb];
	free(d);
	return r;
}

static uint64_t st = 99;

static unsigned next(void)
{
	st = st * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(st >> 33);
}

static void test_hand(void **state)
{
	(void)state;
	assert_int_equal(strdist_lev("kitten", 6, "sitting", 7), 3);
	assert_int_equal(strdist_lev("sitting", 7, "kitten", 6), 3);
	assert_int_equal(strdist_lev("", 0, "abc", 3), 3);
	assert_int_equal(strdist_lev("abc", 3, "", 0), 3);
	assert_int_equal(strdist_lev("", 0, "", 0), 0);
	assert_int_equal(strdist_lev("flaw", 4, "lawn", 4), 2);
	assert_int_equal(strdist_lev("turn left ~95", 13, "turn right ~95", 14), 4);
	/* only the given lengths are read */
	assert_int_equal(strdist_lev("abcXYZ", 3, "abcQ", 3), 0);
}

static void test_random_vs_matrix(void **state)
{
	static unsigned char a[160], b[160];
	size_t la, lb, k, checked = 0;
	int alpha;

	(void)state;
	for (alpha = 0; alpha < 3; alpha++) {
		unsigned nsym = alpha == 0 ? 2 : alpha == 1 ? 5 : 256;

		for (la = 0; la <= 140; la += 1 + (la > 70) * 6) {
			for (lb = 0; lb <= 140; lb += 1 + (lb > 70) * 6) {
				for (k = 0; k < la; k++)
					a[k] = (unsigned char)('a' + next() % nsym);
				/* b: a mutation of a, or independent */
				for (k = 0; k < lb; k++)
					b[k] = next() % 3 && k < la ? a[k] : (unsigned char)('a' + next() % nsym);
				assert_int_equal(strdist_lev((const char *)a, la, (const char *)b, lb),
						 ref_lev(a, la, b, lb));
				checked++;
			}
		}
	}
	/* the 64-byte edge of the bit-parallel path */
	for (k = 0; k < 200; k++) {
		la = 60 + next() % 9;
		lb = 60 + next() % 9;
		for (size_t i = 0; i < la; i++)
			a[i] = (unsigned char)(next() & 0xff);
		for (size_t i = 0; i < lb; i++)
			b[i] = next() % 4 ? a[i % la] : (unsigned char)(next() & 0xff);
		assert_int_equal(strdist_lev((const char *)a, la, (const char *)b, lb),
				 ref_lev(a, la, b, lb));
		checked++;
	}
	assert_true(checked > 1000);
}

static void test_cut(void **state)
{
	static char a[STRDIST_MAX + 100], b[STRDIST_MAX + 100];

	(void)state;
	memset(a, 'x', sizeof(a));
	memset(b, 'x', sizeof(b));
	b[STRDIST_MAX + 10] = 'y'; /* past the cut: not read */
	assert_int_equal(strdist_lev(a, sizeof(a), b, sizeof(b)), 0);
	b[STRDIST_MAX - 1] = 'y';
	assert_int_equal(strdist_lev(a, sizeof(a), b, sizeof(b)), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand),
		cmocka_unit_test(test_random_vs_matrix),
		cmocka_unit_test(test_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
