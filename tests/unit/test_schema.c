/* SPDX-License-Identifier: MIT */
/*
 * The JSON Schema subset validator: hand-written cases for each keyword
 * (with the exact paths and messages), load-time rejection of unsupported
 * keywords, and every case of the official JSON-Schema-Test-Suite files
 * (draft 7) for the supported keywords in tests/data/jsonschema/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "errcode.h"
#include "err.h"
#include "schema.h"

#define SUITE_DIR "tests/data/jsonschema/draft7"

/* Compiles schema text; fails the test when it does not load. */
static struct schema *load(const char *text)
{
	struct schema *s = NULL;
	int rc = schema_parse("test", text, strlen(text), &s);

	if (rc)
		fail_msg("schema does not load: %s", err_msg());
	return s;
}

/* Validates instance text, returns the violation count; *viol keeps the array. */
static int check(const struct schema *s, const char *inst, cJSON **viol)
{
	cJSON *v = cJSON_Parse(inst), *arr = cJSON_CreateArray();
	int n;

	assert_non_null(v);
	assert_non_null(arr);
	n = schema_validate(s, v, arr);
	cJSON_Delete(v);
	if (viol)
		*viol = arr;
	else
		cJSON_Delete(arr);
	return n;
}

static const char *vpath(const cJSON *arr, int i)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, i), "path")->valuestring;
}

static const char *vmsg(const cJSON *arr, int i)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, i), "message")->valuestring;
}

/* Exactly one violation, at path, with message. */
static void expect_one(const struct schema *s, const char *inst, const char *path,
		       const char *msg)
{
	cJSON *arr;
	int n = check(s, inst, &arr);

	if (n != 1) {
		char *t = cJSON_PrintUnformatted(arr);

		fail_msg("%s: %d violations: %s", inst, n, t);
	}
	assert_string_equal(vpath(arr, 0), path);
	assert_string_equal(vmsg(arr, 0), msg);
	cJSON_Delete(arr);
}

/* ======================= Hand-written cases ======================= */

static void test_type(void **state)
{
	struct schema *s = load("{\"type\":\"integer\"}");
	struct schema *u = load("{\"type\":[\"string\",\"null\"]}");
	struct schema *w = load("{\"type\":[\"string\",\"array\",\"null\"]}");

	(void)state;
	assert_int_equal(check(s, "3", NULL), 0);
	assert_int_equal(check(s, "3.0", NULL), 0); /* zero fraction is an integer */
	expect_one(s, "1.5", "", "must be of type integer, got number 1.5");
	expect_one(s, "\"7\"", "", "must be of type integer, got string \"7\"");
	expect_one(s, "[]", "", "must be of type integer, got array");
	assert_int_equal(check(u, "null", NULL), 0);
	assert_int_equal(check(u, "\"x\"", NULL), 0);
	expect_one(u, "3", "", "must be of type string or null, got number 3");
	expect_one(w, "{}", "", "must be of type string, array or null, got object");
	schema_free(s);
	schema_free(u);
	schema_free(w);
}

static void test_enum_const(void **state)
{
	struct schema *e = load("{\"enum\":[\"left\",\"right\",1,null,{\"a\":[1]}]}");
	struct schema *c = load("{\"const\":{\"k\":[1,2]}}");

	(void)state;
	assert_int_equal(check(e, "\"right\"", NULL), 0);
	assert_int_equal(check(e, "1.0", NULL), 0);
	assert_int_equal(check(e, "null", NULL), 0);
	assert_int_equal(check(e, "{\"a\":[1]}", NULL), 0);
	expect_one(e, "\"up\"", "",
		   "must be one of [\"left\",\"right\",1,null,{\"a\":[1]}], got \"up\"");
	expect_one(e, "{\"a\":[2]}", "",
		   "must be one of [\"left\",\"right\",1,null,{\"a\":[1]}], got an object");
	assert_int_equal(check(c, "{\"k\":[1,2]}", NULL), 0);
	expect_one(c, "{\"k\":[2,1]}", "", "must be {\"k\":[1,2]}, got an object");
	schema_free(e);
	schema_free(c);
}

static void test_required_nested_path(void **state)
{
	struct schema *s = load(
		"{\"type\":\"object\",\"properties\":{\"legs\":{\"type\":\"array\",\"items\":"
		"{\"type\":\"object\",\"required\":[\"dir\",\"m\"],\"properties\":"
		"{\"dir\":{\"type\":\"string\"},\"m\":{\"type\":\"number\"}}}}}}");

	(void)state;
	assert_int_equal(check(s, "{\"legs\":[{\"dir\":\"left\",\"m\":1}]}", NULL), 0);
	expect_one(s, "{\"legs\":[{\"dir\":\"a\",\"m\":1},{\"dir\":\"b\",\"m\":1},"
		      "{\"dir\":\"c\",\"m\":1},{\"m\":2}]}",
		   "/legs/3/dir", "is required");
	expect_one(s, "{\"legs\":[{\"dir\":5,\"m\":1}]}", "/legs/0/dir",
		   "must be of type string, got number 5");
	schema_free(s);
}

static void test_additional_properties(void **state)
{
	struct schema *f = load("{\"properties\":{\"a\":{},\"b\":{}},\"additionalProperties\":false}");
	struct schema *n = load("{\"additionalProperties\":false}");
	struct schema *k = load("{\"properties\":{\"a\":{}},\"additionalProperties\":{\"type\":\"boolean\"}}");

	(void)state;
	assert_int_equal(check(f, "{\"a\":1,\"b\":2}", NULL), 0);
	expect_one(f, "{\"a\":1,\"extra\":2}", "/extra", "is not allowed (allowed: a, b)");
	expect_one(n, "{\"x\":1}", "/x", "is not allowed (no properties are allowed)");
	assert_int_equal(check(k, "{\"a\":1,\"z\":true}", NULL), 0);
	expect_one(k, "{\"a\":1,\"z\":0}", "/z", "must be of type boolean, got number 0");
	assert_int_equal(check(f, "[1,2]", NULL), 0); /* ignores non-objects */
	schema_free(f);
	schema_free(n);
	schema_free(k);
}

static void test_items_and_counts(void **state)
{
	struct schema *s = load("{\"type\":\"array\",\"items\":{\"type\":\"number\"},"
				"\"minItems\":3,\"maxItems\":3}");

	(void)state;
	assert_int_equal(check(s, "[1,2,3]", NULL), 0);
	expect_one(s, "[1,2]", "", "must have at least 3 items, got 2");
	expect_one(s, "[1,2,3,4]", "", "must have at most 3 items, got 4");
	expect_one(s, "[1,\"x\",3]", "/1", "must be of type number, got string \"x\"");
	schema_free(s);
}

static void test_numeric_bounds(void **state)
{
	struct schema *s = load("{\"properties\":{\"limit\":{\"type\":[\"integer\",\"null\"],"
				"\"minimum\":1,\"maximum\":100},\"r\":{\"exclusiveMinimum\":0,"
				"\"exclusiveMaximum\":2.5}}}");

	(void)state;
	assert_int_equal(check(s, "{\"limit\":100,\"r\":2.4}", NULL), 0);
	assert_int_equal(check(s, "{\"limit\":null}", NULL), 0);
	expect_one(s, "{\"limit\":500}", "/limit", "must be <= 100, got 500");
	expect_one(s, "{\"limit\":0}", "/limit", "must be >= 1, got 0");
	expect_one(s, "{\"r\":0}", "/r", "must be > 0, got 0");
	expect_one(s, "{\"r\":2.5}", "/r", "must be < 2.5, got 2.5");
	assert_int_equal(check(s, "{\"r\":\"str\"}", NULL), 0); /* bounds ignore strings */
	schema_free(s);
}

static void test_string_length_code_points(void **state)
{
	struct schema *s = load("{\"minLength\":2,\"maxLength\":5}");

	(void)state;
	assert_int_equal(check(s, "\"h\\u00e9llo\"", NULL), 0); /* 5 code points, 6 bytes */
	assert_int_equal(check(s, "\"\\ud83d\\udca9\\ud83d\\udca9\"", NULL), 0); /* 2 points, 8 bytes */
	expect_one(s, "\"\\ud83d\\udca9\"", "", "must be at least 2 characters long, got 1");
	expect_one(s, "\"\\u65e5\\u672c\\u8a9e\\u65e5\\u672c\\u8a9e\"", "",
		   "must be at most 5 characters long, got 6");
	schema_free(s);
}

static void test_any_of(void **state)
{
	struct schema *s = load("{\"anyOf\":[{\"type\":\"string\",\"maxLength\":2},"
				"{\"type\":\"integer\",\"maximum\":10}]}");
	cJSON *arr;

	(void)state;
	assert_int_equal(check(s, "\"ab\"", NULL), 0);
	assert_int_equal(check(s, "7", NULL), 0);
	assert_int_equal(check(s, "50", &arr), 1);
	assert_string_equal(vpath(arr, 0), "");
	assert_string_equal(vmsg(arr, 0),
			    "must match one of the 2 alternatives of anyOf; the closest "
			    "(alternative 0) fails with: (value): must be of type string, got number 50");
	cJSON_Delete(arr);
	assert_int_equal(check(s, "\"abc\"", &arr), 1);
	assert_non_null(strstr(vmsg(arr, 0), "must be at most 2 characters long, got 3"));
	cJSON_Delete(arr);
	schema_free(s);
}

static void test_collects_all_and_escapes(void **state)
{
	struct schema *s = load(
		"{\"type\":\"object\",\"required\":[\"t\",\"k\"],\"additionalProperties\":false,"
		"\"properties\":{\"t\":{\"type\":\"integer\"},\"k\":{\"type\":\"integer\",\"maximum\":6},"
		"\"a/b~c\":{\"type\":\"string\"}}}");
	cJSON *arr;

	(void)state;
	assert_int_equal(check(s, "{\"k\":9,\"a/b~c\":1,\"zz\":0}", &arr), 4);
	assert_string_equal(vpath(arr, 0), "/t");
	assert_string_equal(vmsg(arr, 0), "is required");
	assert_string_equal(vpath(arr, 1), "/k");
	assert_string_equal(vmsg(arr, 1), "must be <= 6, got 9");
	assert_string_equal(vpath(arr, 2), "/a~1b~0c");
	assert_string_equal(vpath(arr, 3), "/zz");
	assert_string_equal(vmsg(arr, 3), "is not allowed (allowed: t, k, a/b~c)");
	cJSON_Delete(arr);
	/* counting without an array gives the same number */
	{
		cJSON *v = cJSON_Parse("{\"k\":9,\"a/b~c\":1,\"zz\":0}");

		assert_int_equal(schema_validate(s, v, NULL), 4);
		cJSON_Delete(v);
	}
	schema_free(s);
}

static void test_violation_cap(void **state)
{
	struct schema *s = load("{\"items\":{\"type\":\"string\"}}");
	char inst[512];
	size_t n = 0;
	int i;
	cJSON *arr;

	(void)state;
	n += (size_t)snprintf(inst + n, sizeof(inst) - n, "[");
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(inst + n, sizeof(inst) - n, "%s%d", i ? "," : "", i);
	snprintf(inst + n, sizeof(inst) - n, "]");
	assert_int_equal(check(s, inst, &arr), 100);
	assert_int_equal(cJSON_GetArraySize(arr), SCHEMA_MAX_VIOLATIONS + 1);
	assert_string_equal(vpath(arr, SCHEMA_MAX_VIOLATIONS - 1), "/63");
	assert_string_equal(vmsg(arr, SCHEMA_MAX_VIOLATIONS), "36 more violations not shown");
	cJSON_Delete(arr);
	schema_free(s);
}

static void test_boolean_and_ignored(void **state)
{
	struct schema *s = load("{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
				"\"title\":\"t\",\"description\":\"d\",\"$comment\":\"c\","
				"\"examples\":[1],\"default\":\"not checked\","
				"\"properties\":{\"no\":false,\"yes\":true}}");

	(void)state;
	assert_int_equal(check(s, "{\"yes\":[1]}", NULL), 0);
	expect_one(s, "{\"no\":1}", "/no", "is not allowed here");
	schema_free(s);
}

static void expect_reject(const char *text, const char *where, const char *what)
{
	struct schema *s = NULL;
	int rc = schema_parse("x.json", text, strlen(text), &s);

	assert_int_equal(rc, ENG_ESCHEMA);
	assert_null(s);
	if (!strstr(err_msg(), where) || !strstr(err_msg(), what))
		fail_msg("message '%s' lacks '%s' or '%s'", err_msg(), where, what);
}

static void test_rejects_unsupported(void **state)
{
	struct schema *s = NULL;

	(void)state;
	expect_reject("{\"properties\":{\"a\":{\"pattern\":\"^x\"}}}", "x.json: /properties/a/pattern",
		      "unsupported keyword 'pattern'");
	expect_reject("{\"$ref\":\"#/x\"}", "/$ref", "unsupported keyword '$ref'");
	expect_reject("{\"oneOf\":[{}]}", "/oneOf", "unsupported");
	expect_reject("{\"items\":[{},{}]}", "/items", "tuple");
	expect_reject("{\"minimum\":\"3\"}", "/minimum", "must be a number");
	expect_reject("{\"exclusiveMinimum\":true}", "/exclusiveMinimum", "draft-4");
	expect_reject("{\"type\":\"float\"}", "/type", "unknown type name");
	expect_reject("{\"type\":[\"string\",\"string\"]}", "/type", "unique");
	expect_reject("{\"required\":[\"a\",3]}", "/required", "unique strings");
	expect_reject("{\"maxLength\":-1}", "/maxLength", "non-negative integer");
	expect_reject("{\"anyOf\":[]}", "/anyOf", "non-empty");
	expect_reject("{\"anyOf\":[{\"format\":\"date\"}]}", "/anyOf/0/format", "unsupported");
	expect_reject("[1]", "(root)", "object or a boolean");
	assert_int_equal(schema_parse("x.json", "{\"type\":", 8, &s), ENG_EPARSE);
	assert_null(s);
}

static void test_fill_nulls(void **state)
{
	struct schema *s = load(
		"{\"type\":\"object\",\"properties\":{\"t\":{\"type\":\"integer\"},"
		"\"o\":{\"type\":[\"string\",\"null\"]},\"sub\":{\"type\":\"object\","
		"\"properties\":{\"x\":{\"type\":[\"number\",\"null\"]}}},"
		"\"u\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}},"
		"\"required\":[\"t\",\"o\",\"sub\",\"u\"],\"additionalProperties\":false}");
	cJSON *v = cJSON_Parse("{\"t\":1,\"sub\":{}}");
	char *text;

	(void)state;
	assert_int_equal(schema_validate(s, v, NULL), 2);
	assert_int_equal(schema_fill_nulls(s, v), 0);
	text = cJSON_PrintUnformatted(v);
	assert_string_equal(text, "{\"t\":1,\"sub\":{\"x\":null},\"o\":null,\"u\":null}");
	assert_int_equal(schema_validate(s, v, NULL), 0);
	cJSON_free(text);
	cJSON_Delete(v);
	/* a non-nullable property stays missing */
	v = cJSON_Parse("{}");
	assert_int_equal(schema_fill_nulls(s, v), 0);
	assert_null(cJSON_GetObjectItemCaseSensitive(v, "t"));
	cJSON_Delete(v);
	schema_free(s);
}

/* ======================= Official test suite ======================= */

static cJSON *read_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;
	cJSON *v;

	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = '\0';
	fclose(f);
	v = cJSON_Parse(b);
	free(b);
	if (!v)
		fail_msg("%s is not JSON", path);
	return v;
}

/*
 * Each file with the number of its groups whose schema uses a keyword we
 * reject at load time (patternProperties, items as an array, $ref ...):
 * those must fail to load, every other group must load and every case of
 * it must give the suite's answer.
 */
static const struct {
	const char *file;
	int groups;      /* groups in the file */
	int unsupported; /* groups that must be rejected at load */
} suite[] = {
	{ "type", 8, 0 }, { "enum", 3, 0 }, { "const", 4, 0 }, { "required", 3, 0 },
	{ "properties", 3, 1 }, { "additionalProperties", 5, 2 }, { "items", 5, 2 },
	{ "minItems", 1, 0 }, { "maxItems", 1, 0 }, { "minimum", 1, 0 }, { "maximum", 1, 0 },
	{ "exclusiveMinimum", 1, 0 }, { "exclusiveMaximum", 1, 0 }, { "minLength", 1, 0 },
	{ "maxLength", 1, 0 }, { "anyOf", 6, 0 }, { "default", 2, 0 },
};

static void test_official_suite(void **state)
{
	size_t f;
	int cases = 0, wrong = 0;

	(void)state;
	for (f = 0; f < sizeof(suite) / sizeof(suite[0]); f++) {
		char path[256];
		cJSON *doc, *g;
		int groups = 0, unsupported = 0;

		snprintf(path, sizeof(path), "%s/%s.json", SUITE_DIR, suite[f].file);
		doc = read_json(path);
		cJSON_ArrayForEach(g, doc) {
			const cJSON *sch = cJSON_GetObjectItemCaseSensitive(g, "schema");
			const cJSON *tests = cJSON_GetObjectItemCaseSensitive(g, "tests"), *t;
			const char *gd = cJSON_GetObjectItemCaseSensitive(g, "description")->valuestring;
			struct schema *s = NULL;
			int rc = schema_new(path, sch, &s);

			groups++;
			if (rc) {
				assert_int_equal(rc, ENG_ESCHEMA);
				printf("# %s: '%s' rejected: %s\n", suite[f].file, gd, err_msg());
				unsupported++;
				continue;
			}
			cJSON_ArrayForEach(t, tests) {
				const cJSON *data = cJSON_GetObjectItemCaseSensitive(t, "data");
				bool valid = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "valid"));
				int n = schema_validate(s, data, NULL);

				cases++;
				assert_true(n >= 0);
				if ((n == 0) != valid) {
					wrong++;
					printf("# WRONG %s / %s / %s: got %d violations\n", suite[f].file, gd,
					       cJSON_GetObjectItemCaseSensitive(t, "description")->valuestring, n);
				}
			}
			schema_free(s);
		}
		cJSON_Delete(doc);
		printf("# %s: %d groups, %d rejected\n", suite[f].file, groups, unsupported);
		assert_int_equal(groups, suite[f].groups);
		assert_int_equal(unsupported, suite[f].unsupported);
	}
	printf("# official suite: %d cases, %d wrong\n", cases, wrong);
	assert_int_equal(wrong, 0);
	assert_int_equal(cases, 163); /* every case of the supported groups ran */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type),
		cmocka_unit_test(test_enum_const),
		cmocka_unit_test(test_required_nested_path),
		cmocka_unit_test(test_additional_properties),
		cmocka_unit_test(test_items_and_counts),
		cmocka_unit_test(test_numeric_bounds),
		cmocka_unit_test(test_string_length_code_points),
		cmocka_unit_test(test_any_of),
		cmocka_unit_test(test_collects_all_and_escapes),
		cmocka_unit_test(test_violation_cap),
		cmocka_unit_test(test_boolean_and_ignored),
		cmocka_unit_test(test_rejects_unsupported),
		cmocka_unit_test(test_fill_nulls),
		cmocka_unit_test(test_official_suite),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
