/* SPDX-License-Identifier: MIT */
/*
 * jsonfile_print against cJSON_PrintUnformatted on the same trees, byte
 * for byte: numbers rounded to 0..8 places as the tools round them, full
 * doubles, floats widened to double, integers past the int range, tiny
 * and huge magnitudes, negative zero, NaN, under objects (constant keys
 * among them) and arrays; and the tree is unchanged afterwards. Strings and
 * keys of random bytes (every control character, quotes, backslashes,
 * UTF-8 and bytes past 0x7f), empty and nested containers, booleans,
 * null, raw text and a NULL string; and the trees cJSON cannot print
 * (a raw node without text, an invalid node), which give NULL here too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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

/*
 * A random string: up to 40 bytes of any value 1..255, quotes and
 * backslashes often; or up to 200 bytes of long runs that need no escape
 * (past the 16 bytes the printer scans at once) with a few that do.
 */
static void random_bytes(char *b)
{
	bool runs = unit() < 0.3;
	int n = (int)(unit() * (runs ? 200 : 40)), i;

	for (i = 0; i < n; i++) {
		double u = unit();

		if (runs && u < 0.97)
			b[i] = (char)(u < 0.5 ? 'a' + (int)(unit() * 26) : 0xc3 + (int)(unit() * 2));
		else
			b[i] = (char)(u < 0.1 ? '"' : u < 0.2 ? '\\' : u < 0.4 ? 1 + (int)(unit() * 31)
				      : 1 + (int)(unit() * 255));
	}
	b[n] = '\0';
}

/* A random tree of depth at most d. */
static cJSON *random_tree(int d)
{
	char b[256];
	int k = (int)(unit() * (d > 0 ? 9 : 6)), n, i;
	cJSON *c;

	switch (k) {
	case 0: return cJSON_CreateNull();
	case 1: return cJSON_CreateBool(unit() < 0.5);
	case 2: return cJSON_CreateNumber(value((int)(unit() * 62)));
	case 3: random_bytes(b); return cJSON_CreateString(b);
	case 4: return cJSON_CreateRaw("[1,2]");
	case 5: c = cJSON_CreateString("x"); free(c->valuestring); c->valuestring = NULL; return c;
	case 6:
	case 7:
		c = cJSON_CreateArray();
		for (n = (int)(unit() * 5), i = 0; i < n; i++)
			cJSON_AddItemToArray(c, random_tree(d - 1));
		return c;
	default:
		c = cJSON_CreateObject();
		for (n = (int)(unit() * 5), i = 0; i < n; i++) {
			random_bytes(b);
			cJSON_AddItemToObject(c, b, random_tree(d - 1));
		}
		return c;
	}
}

static void test_strings_and_shapes(void **state)
{
	int round;
	size_t total = 0, escapes = 0;

	(void)state;
	for (round = 0; round < 2000; round++) {
		cJSON *root = random_tree(4);
		char *a = cJSON_PrintUnformatted(root), *b = jsonfile_print(root), *p;

		assert_non_null(a);
		assert_non_null(b);
		assert_string_equal(a, b);
		total += strlen(a);
		for (p = a; (p = strstr(p, "\\u00")); p++)
			escapes++;
		free(a);
		free(b);
		cJSON_Delete(root);
	}
	assert_true(total > 80000);
	assert_true(escapes > 1000); /* the \u00xx form was exercised */
	/* what cJSON cannot print */
	{
		cJSON *o = cJSON_CreateObject(), *r = cJSON_CreateRaw("1"), *bad = cJSON_CreateNull();

		free(r->valuestring);
		r->valuestring = NULL;
		cJSON_AddItemToObject(o, "r", r);
		assert_null(cJSON_PrintUnformatted(o));
		assert_null(jsonfile_print(o));
		cJSON_Delete(o);
		bad->type = cJSON_Invalid;
		o = cJSON_CreateArray();
		cJSON_AddItemToArray(o, bad);
		assert_null(cJSON_PrintUnformatted(o));
		assert_null(jsonfile_print(o));
		cJSON_Delete(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_strings_and_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
