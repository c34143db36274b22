/* SPDX-License-Identifier: MIT */
/*
 * pyjson: what Python's json.loads accepts and refuses, with its messages
 * and positions (every expected value below is what python3 printed for
 * the same text: json.JSONDecodeError's msg, lineno, colno), the values
 * it gives (NaN, infinities, big integers, a repeated key, surrogates,
 * U+0000), strict UTF-8 for file bytes, and Python's == between values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "pyjson.h"

static cJSON *ok(const char *text, unsigned flags)
{
	cJSON *v = NULL;

	assert_int_equal(pyjson_parse(text, strlen(text), flags, &v, NULL), 0);
	assert_non_null(v);
	return v;
}

static void refused(const char *text, unsigned flags, const char *msg, size_t line, size_t col)
{
	struct pyjson_error e;
	cJSON *v = NULL;

	assert_int_equal(pyjson_parse(text, strlen(text), flags, &v, &e), ENG_EPARSE);
	assert_null(v);
	assert_string_equal(e.msg, msg);
	assert_int_equal(e.line, line);
	assert_int_equal(e.column, col);
}

static void test_refused_like_python(void **state)
{
	(void)state;
	refused("[01]", 0, "Expecting ',' delimiter", 1, 3);
	refused("[1.]", 0, "Expecting ',' delimiter", 1, 3);
	refused("\"a\tb\"", 0, "Invalid control character at", 1, 3);
	refused("{\"a\":1,}", 0, "Expecting property name enclosed in double quotes", 1, 8);
	refused("[1,]", 0, "Expecting value", 1, 4);
	refused("\"abc", 0, "Unterminated string starting at", 1, 1);
	refused("\"\\x\"", 0, "Invalid \\escape", 1, 2);
	refused("\"\\u12\"", 0, "Invalid \\uXXXX escape", 1, 3);
	refused("\"\\u123\"", 0, "Invalid \\uXXXX escape", 1, 3);
	refused("[1 2]", 0, "Expecting ',' delimiter", 1, 4);
	refused("1 2", 0, "Extra data", 1, 3);
	refused("", 0, "Expecting value", 1, 1);
	refused("\xef\xbb\xbf[]", 0, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 1, 1);
	refused("{\"a\" 1}", 0, "Expecting ':' delimiter", 1, 6);
	refused("-", 0, "Expecting value", 1, 1);
	refused("1e", 0, "Extra data", 1, 2);
	refused("[1,\n 2,\n x]", 0, "Expecting value", 3, 2);
	/* columns count characters, not bytes */
	refused("[\"\xc3\xa9\",\n  \"\xc3\xa9\xc3\xa9\t\"]", PYJSON_BYTES,
		"Invalid control character at", 2, 6);
	/* cJSON takes these; Python does not */
	refused("[1,2,]", 0, "Expecting value", 1, 6);
	refused("[\"a\nb\"]", 0, "Invalid control character at", 1, 4);
}

static void test_values(void **state)
{
	cJSON *v;
	const cJSON *x;

	(void)state;
	v = ok("[1, 2.5, -0, 1E5, 1e-2, true, false, null, NaN, -Infinity, 1e400]", 0);
	x = cJSON_GetArrayItem(v, 0);
	assert_true(cJSON_IsNumber(x) && x->valuedouble == 1 && !strcmp(x->valuestring, "1"));
	x = cJSON_GetArrayItem(v, 1);
	assert_true(x->valuedouble == 2.5 && !x->valuestring); /* a float */
	assert_string_equal(cJSON_GetArrayItem(v, 2)->valuestring, "0");
	assert_true(cJSON_GetArrayItem(v, 3)->valuedouble == 1e5 && !cJSON_GetArrayItem(v, 3)->valuestring);
	assert_true(cJSON_IsTrue(cJSON_GetArrayItem(v, 5)));
	assert_true(cJSON_IsNull(cJSON_GetArrayItem(v, 7)));
	assert_true(isnan(cJSON_GetArrayItem(v, 8)->valuedouble));
	assert_true(isinf(cJSON_GetArrayItem(v, 9)->valuedouble) &&
		    cJSON_GetArrayItem(v, 9)->valuedouble < 0);
	assert_true(isinf(cJSON_GetArrayItem(v, 10)->valuedouble));
	cJSON_Delete(v);
	/* an int of any size keeps its digits */
	v = ok("-123456789012345678901234567890", 0);
	assert_string_equal(v->valuestring, "-123456789012345678901234567890");
	cJSON_Delete(v);
	/* a repeated key: the last value, in the first one's place */
	v = ok(" {\"a\": 1, \"b\": 2, \"a\": 3} ", 0);
	assert_int_equal(cJSON_GetArraySize(v), 2);
	assert_string_equal(v->child->string, "a");
	assert_true(v->child->valuedouble == 3);
	cJSON_Delete(v);
	/* a surrogate pair is joined, a lone one kept (3 bytes), U+0000 is C0 80 */
	v = ok("[\"\\ud83d\\ude00\", \"\\ud800x\", \"a\\u0000b\", \"a\\/b\\tc\"]", 0);
	assert_string_equal(cJSON_GetArrayItem(v, 0)->valuestring, "\xf0\x9f\x98\x80");
	assert_string_equal(cJSON_GetArrayItem(v, 1)->valuestring, "\xed\xa0\x80x");
	assert_string_equal(cJSON_GetArrayItem(v, 2)->valuestring, "a\xc0\x80" "b");
	assert_string_equal(cJSON_GetArrayItem(v, 3)->valuestring, "a/b\tc");
	cJSON_Delete(v);
	/* text mode: U+0000 (C0 80) in a string is a control character */
	refused("\"a\xc0\x80\"", 0, "Invalid control character at", 1, 3);
}

static void test_bytes(void **state)
{
	struct pyjson_error e;
	cJSON *v = NULL;
	static const char nul[] = "[\"a\0\"]";

	(void)state;
	v = ok("[\"\xc3\xa9\"]", PYJSON_BYTES);
	cJSON_Delete(v);
	v = NULL;
	/* bytes Python's UTF-8 decoder refuses: a stray byte, an encoded surrogate,
	 * an overlong form */
	assert_int_equal(pyjson_parse("[\"\xff\"]", 5, PYJSON_BYTES, &v, &e), ENG_EPARSE);
	assert_string_equal(e.msg, "'utf-8' codec can't decode byte 0xff in position 2");
	assert_int_equal(pyjson_parse("\"\xed\xa0\x80\"", 5, PYJSON_BYTES, &v, &e), ENG_EPARSE);
	assert_int_equal(pyjson_parse("\"\xc0\x80\"", 4, PYJSON_BYTES, &v, &e), ENG_EPARSE);
	/* a NUL byte is U+0000: a control character inside a string */
	assert_int_equal(pyjson_parse(nul, sizeof(nul) - 1, PYJSON_BYTES, &v, &e), ENG_EPARSE);
	assert_string_equal(e.msg, "Invalid control character at");
	assert_null(v);
}

static void test_depth(void **state)
{
	char *t = malloc(2 * PYJSON_MAX_DEPTH + 4);
	cJSON *v = NULL;
	size_t n;

	(void)state;
	assert_non_null(t);
	for (n = 0; n < PYJSON_MAX_DEPTH; n++) {
		t[n] = '[';
		t[2 * PYJSON_MAX_DEPTH - 1 - n] = ']';
	}
	assert_int_equal(pyjson_parse(t, 2 * PYJSON_MAX_DEPTH, 0, &v, NULL), 0);
	cJSON_Delete(v);
	v = NULL;
	memmove(t + 1, t, 2 * PYJSON_MAX_DEPTH);
	t[0] = '[';
	t[2 * PYJSON_MAX_DEPTH + 1] = ']';
	assert_int_equal(pyjson_parse(t, 2 * PYJSON_MAX_DEPTH + 2, 0, &v, NULL), ENG_EPARSE);
	free(t);
}

static int eq(const char *a, const char *b)
{
	cJSON *x = ok(a, 0), *y = ok(b, 0);
	int r = pyjson_equal(x, y);

	cJSON_Delete(x);
	cJSON_Delete(y);
	return r;
}

static void test_equal(void **state)
{
	(void)state;
	/* Python's ==: 1 == 1.0 == True, NaN != NaN, "1" != 1, dicts ignore order */
	assert_true(eq("1", "1.0"));
	assert_true(eq("true", "1"));
	assert_true(eq("false", "0.0"));
	assert_false(eq("true", "2"));
	assert_false(eq("NaN", "NaN"));
	assert_false(eq("\"1\"", "1"));
	assert_true(eq("\"B\"", "\"B\""));
	assert_false(eq("\"B\"", "\"b\""));
	assert_false(eq("\"B\"", "[\"B\"]"));
	assert_true(eq("[1,{\"a\":[true]}]", "[1.0,{\"a\":[1]}]"));
	assert_true(eq("{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}"));
	assert_false(eq("{\"a\":1}", "{\"a\":1,\"b\":2}"));
	assert_false(eq("[1,2]", "[1,2,3]"));
	assert_true(eq("null", "null"));
	/* big integers compare exactly, as Python ints do */
	assert_false(eq("12345678901234567890", "12345678901234567891"));
	assert_true(eq("12345678901234567890", "12345678901234567890"));
	assert_true(pyjson_equal(NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_like_python),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
