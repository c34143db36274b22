/* SPDX-License-Identifier: MIT */
/*
 * jsonfile_print against cJSON_PrintUnformatted on the same trees, byte
 * for byte: numbers rounded to 0..8 places as the tools round them, full
 * doubles, floats widened to double, integers past the int range, tiny
 * and huge magnitudes, negative zero, NaN, under objects (constant keys
 * among them) and arrays; and the tree is unchanged afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonfile.h"

static uint64_t st = 2024;

static double unit(void)
{
	st = st * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(st >> 11) / 9007199254740992.0;
}

/* One value of kind k. */
static double value(int k)
{
	double m = (unit() - 0.5) * pow(10.0, floor(unit() * 12) - 3);
	double p = pow(10.0, (double)(k % 9));

	switch (k / 9) {
	case 0: return round(m * p) / p;                  /* rounded to k places */
	case 1: return m;                                 /* a full double */
	case 2: return (double)(float)m;                  /* a float widened */
	case 3: return floor(m * 1e6);                    /* integers, past 2^31 too */
	case 4: return (unit() - 0.5) * 1e-7;             /* below 1e-4 */
	case 5: return (unit() - 0.5) * 1e17;             /* past 1e15 */
	default: break;
	}
	switch (k % 4) {
	case 0: return -0.0;
	case 1: return 1e-4;
	case 2: return 999999999.999999;
	default: return -1e9;
	}
}

static void test_same_bytes(void **state)
{
	int round, k;
	size_t total = 0;

	(void)state;
	for (round = 0; round < 200; round++) {
		cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "v");
		char *a, *b, *c;

		assert_non_null(arr);
		for (k = 0; k < 58; k++) {
			double v = value(k);

			cJSON_AddItemToArray(arr, cJSON_CreateNumber(v));
			if (k % 5 == 0)
				cJSON_AddItemToObjectCS(root, "const", cJSON_CreateNumber(v));
		}
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(NAN));
		cJSON_AddItemToObject(root, "raw", cJSON_CreateRaw("123456789012345678"));
		cJSON_AddItemToObject(root, "s", cJSON_CreateString("1.5"));
		a = cJSON_PrintUnformatted(root);
		b = jsonfile_print(root);
		c = cJSON_PrintUnformatted(root); /* the tree as it was */
		assert_non_null(a);
		assert_non_null(b);
		assert_string_equal(a, b);
		assert_string_equal(a, c);
		total += strlen(a);
		free(a);
		free(b);
		free(c);
		cJSON_Delete(root);
	}
	assert_true(total > 100000);
	/* a bare number, and a tree without numbers */
	{
		cJSON *n = cJSON_CreateNumber(2.85), *s = cJSON_CreateString("x");
		char *t = jsonfile_print(n), *u = jsonfile_print(s);

		assert_string_equal(t, "2.85");
		assert_string_equal(u, "\"x\"");
		assert_true(cJSON_IsNumber(n));
		free(t);
		free(u);
		cJSON_Delete(n);
		cJSON_Delete(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
