/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for engine/base/schema.h: arbitrary text compiled as a schema
 * (and, when it compiles, used to validate a few fixed instances and the
 * text itself), and arbitrary text validated as an instance against every
 * embedded tool schema (schemas/tools/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "embed.h"
#include "schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const instances[] = {
	"null", "true", "0", "-1.5", "1e300", "\"\"", "\"h\xc3\xa9llo\"", "[]",
	"[1,\"a\",null,[2],{}]", "{}", "{\"a\":1,\"b\":[{\"c\":\"d\"}],\"t\":null}",
};

#define NTOOLS_MAX 64
static struct schema *tool_schemas[NTOOLS_MAX];
static size_t ntools = (size_t)-1;

/* Compiles the embedded tool schemas once. */
static void load_tools(void)
{
	size_t i, n = embed_count();

	ntools = 0;
	for (i = 0; i < n && ntools < NTOOLS_MAX; i++) {
		const struct embed_file *f = embed_at(i);

		if (strncmp(f->path, "schemas/tools/", 14))
			continue;
		if (schema_parse(f->path, f->data, f->len, &tool_schemas[ntools]))
			abort(); /* the shipped schemas must compile */
		ntools++;
	}
}

/* Validates inst against s, with and without a violations array. */
static void validate(const struct schema *s, const cJSON *inst)
{
	cJSON *v = cJSON_CreateArray();
	cJSON *copy;
	int n, m;

	if (!v)
		return;
	n = schema_validate(s, inst, v);
	m = schema_validate(s, inst, NULL);
	if (n >= 0 && m >= 0 && n != m)
		abort(); /* counting and collecting must agree */
	if (n >= 0 && cJSON_GetArraySize(v) !=
	    (n > SCHEMA_MAX_VIOLATIONS ? SCHEMA_MAX_VIOLATIONS + 1 : n))
		abort(); /* one entry per violation, and one for those left out */
	cJSON_Delete(v);
	copy = cJSON_Duplicate(inst, 1);
	if (copy) {
		(void)schema_fill_nulls(s, copy);
		(void)schema_validate(s, copy, NULL);
		cJSON_Delete(copy);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct schema *s = NULL;
	cJSON *inst;
	size_t i;

	if (ntools == (size_t)-1)
		load_tools();
	inst = cJSON_ParseWithLength((const char *)data, size);
	if (!schema_parse("fuzz", (const char *)data, size, &s)) {
		for (i = 0; i < sizeof(instances) / sizeof(instances[0]); i++) {
			cJSON *j = cJSON_Parse(instances[i]);

			if (j)
				validate(s, j);
			cJSON_Delete(j);
		}
		if (inst)
			validate(s, inst);
		(void)schema_doc(s);
		schema_free(s);
	}
	if (inst)
		for (i = 0; i < ntools; i++)
			validate(tool_schemas[i], inst);
	cJSON_Delete(inst);
	return 0;
}
