/* SPDX-License-Identifier: MIT */
/*
 * Provider profiles for the Chat Completions client: what each provider
 * accepts, Gemini's schema and field rules, and the canonical JSON and
 * request key shared by the cache and the cassettes.
 */
#include "llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "hash.h"
#include "banned.h"

/* ===================== Profile table ===================== */

static const struct llm_profile_info profiles[] = {
	{ LLM_PROFILE_OPENAI, "openai", "OPENAI_API_KEY", "max_completion_tokens",
	  LLM_PF_TOOL_CHOICE | LLM_PF_CHOICE_OBJECT | LLM_PF_PARALLEL | LLM_PF_SEED |
		  LLM_PF_STRICT | LLM_PF_REASONING_RULES },
	{ LLM_PROFILE_GEMINI, "gemini", "GEMINI_API_KEY", "max_tokens",
	  LLM_PF_TOOL_CHOICE | LLM_PF_CHOICE_OBJECT | LLM_PF_GEMINI_SCHEMA | LLM_PF_WHITELIST },
	{ LLM_PROFILE_VLLM, "vllm", "OPENAI_API_KEY", "max_tokens",
	  LLM_PF_TOOL_CHOICE | LLM_PF_CHOICE_OBJECT | LLM_PF_PARALLEL | LLM_PF_SEED |
		  LLM_PF_STRICT },
	{ LLM_PROFILE_LLAMACPP, "llamacpp", "OPENAI_API_KEY", "max_tokens",
	  LLM_PF_TOOL_CHOICE | LLM_PF_PARALLEL | LLM_PF_SEED },
	{ LLM_PROFILE_OLLAMA, "ollama", "OPENAI_API_KEY", "max_tokens", LLM_PF_SEED },
};

/* Top-level fields Gemini's OpenAI endpoint accepts; others are 400s. */
static const char *const gemini_fields[] = {
	"model", "messages", "tools", "tool_choice", "temperature", "top_p", "n",
	"stop", "max_tokens", "max_completion_tokens", "stream", "stream_options",
	"response_format", "reasoning_effort", "presence_penalty",
	"frequency_penalty", "seed",
};

const struct llm_profile_info *llm_profile_get(enum llm_profile p)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(profiles); i++)
		if (profiles[i].id == p)
			return &profiles[i];
	return &profiles[0];
}

int llm_profile_allows_field(const struct llm_profile_info *p, const char *field)
{
	size_t i;

	if (!(p->flags & LLM_PF_WHITELIST))
		return 1;
	for (i = 0; i < ARRAY_SIZE(gemini_fields); i++)
		if (!strcmp(gemini_fields[i], field))
			return 1;
	return 0;
}

int llm_profile_parse(const char *name, enum llm_profile *out)
{
	size_t i;

	if (!name)
		return err_set(ENG_EINVAL, "llm profile is missing");
	if (!strcmp(name, "auto")) {
		*out = LLM_PROFILE_AUTO;
		return 0;
	}
	if (!strcmp(name, "llama.cpp") || !strcmp(name, "llama-server")) {
		*out = LLM_PROFILE_LLAMACPP;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(profiles); i++) {
		if (!strcmp(profiles[i].name, name)) {
			*out = profiles[i].id;
			return 0;
		}
	}
	return err_set(ENG_EINVAL,
		       "unknown llm profile '%s' (openai, gemini, vllm, llamacpp, ollama, auto)",
		       name);
}

/* The port of a URL as text ("" when none), written into port[8]. */
static void url_port(const char *url, char port[8])
{
	const char *p = strstr(url, "://");
	const char *end;
	size_t n;

	port[0] = '\0';
	p = p ? p + 3 : url;
	end = p + strcspn(p, "/?#");
	if (*p == '[') {
		p = memchr(p, ']', (size_t)(end - p));
		if (!p)
			return;
	}
	p = memchr(p, ':', (size_t)(end - p));
	if (!p)
		return;
	p++;
	n = (size_t)(end - p);
	if (n >= 8)
		return;
	memcpy(port, p, n);
	port[n] = '\0';
}

enum llm_profile llm_profile_detect(const char *base_url)
{
	char port[8];

	if (!base_url)
		return LLM_PROFILE_OPENAI;
	if (strstr(base_url, "googleapis.com"))
		return LLM_PROFILE_GEMINI;
	if (strstr(base_url, "api.openai.com"))
		return LLM_PROFILE_OPENAI;
	url_port(base_url, port);
	if (!strcmp(port, "11434") || strstr(base_url, "ollama"))
		return LLM_PROFILE_OLLAMA;
	if (!strcmp(port, "8080"))
		return LLM_PROFILE_LLAMACPP;
	if (!strcmp(port, "8000"))
		return LLM_PROFILE_VLLM;
	return LLM_PROFILE_OPENAI;
}

/* ===================== Gemini schema transform ===================== */

static int gemini_node(cJSON *s, int *nullable);

/* Removes name from the "required" array of s, if listed. */
static void required_remove(cJSON *s, const char *name)
{
	cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
	cJSON *it;
	int i = 0;

	if (!cJSON_IsArray(req))
		return;
	cJSON_ArrayForEach(it, req) {
		if (cJSON_IsString(it) && !strcmp(it->valuestring, name)) {
			cJSON_DeleteItemFromArray(req, i);
			return;
		}
		i++;
	}
}

static int gemini_children(cJSON *container)
{
	cJSON *it;
	int nullable;
	int rc;

	cJSON_ArrayForEach(it, container) {
		rc = gemini_node(it, &nullable);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Why: Gemini parses function declarations as an OpenAPI-3 subset proto,
 * so unknown keywords and type arrays are hard 400s, not ignored.
 */
static int gemini_node(cJSON *s, int *nullable)
{
	static const char *const drop[] = {
		"additionalProperties", "$schema", "$id", "$comment", "propertyNames",
		"strict", "unevaluatedProperties",
	};
	cJSON *type, *it, *props, *konst;
	size_t i;
	int rc;

	*nullable = 0;
	if (!cJSON_IsObject(s))
		return 0;
	for (i = 0; i < ARRAY_SIZE(drop); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(s, drop[i]);
	konst = cJSON_DetachItemFromObjectCaseSensitive(s, "const");
	if (konst) {
		if (cJSON_IsString(konst) && !cJSON_GetObjectItemCaseSensitive(s, "enum")) {
			cJSON *arr = cJSON_CreateArray();

			if (!arr) {
				cJSON_Delete(konst);
				return ENG_ENOMEM;
			}
			cJSON_AddItemToArray(arr, konst);
			cJSON_AddItemToObject(s, "enum", arr);
		} else {
			cJSON_Delete(konst);
		}
	}
	type = cJSON_GetObjectItemCaseSensitive(s, "type");
	if (cJSON_IsArray(type)) {
		const char *pick = NULL;

		cJSON_ArrayForEach(it, type) {
			if (!cJSON_IsString(it))
				continue;
			if (!strcmp(it->valuestring, "null"))
				*nullable = 1;
			else if (!pick)
				pick = it->valuestring;
		}
		if (pick) {
			cJSON *t = cJSON_CreateString(pick);

			if (!t)
				return ENG_ENOMEM;
			cJSON_ReplaceItemInObjectCaseSensitive(s, "type", t);
		} else {
			cJSON_DeleteItemFromObjectCaseSensitive(s, "type");
		}
	}
	props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	if (cJSON_IsObject(props)) {
		cJSON_ArrayForEach(it, props) {
			int n = 0;

			rc = gemini_node(it, &n);
			if (rc)
				return rc;
			if (n && it->string)
				required_remove(s, it->string);
		}
	}
	it = cJSON_GetObjectItemCaseSensitive(s, "items");
	if (cJSON_IsObject(it)) {
		int n;

		rc = gemini_node(it, &n);
		if (rc)
			return rc;
	} else if (cJSON_IsArray(it)) {
		rc = gemini_children(it);
		if (rc)
			return rc;
	}
	for (i = 0; i < 3; i++) {
		static const char *const comb[] = { "anyOf", "oneOf", "allOf" };

		it = cJSON_GetObjectItemCaseSensitive(s, comb[i]);
		if (cJSON_IsArray(it)) {
			rc = gemini_children(it);
			if (rc)
				return rc;
		}
	}
	it = cJSON_GetObjectItemCaseSensitive(s, "$defs");
	if (cJSON_IsObject(it))
		return gemini_children(it);
	return 0;
}

int llm_gemini_schema(cJSON *schema)
{
	int nullable;

	return gemini_node(schema, &nullable);
}

/* ===================== Canonical JSON and keys ===================== */

static int canon_string(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int rc = buf_add(b, "\"", 1);

	while (!rc && *p) {
		const unsigned char *q = p;

		/* a run of bytes that need no escape, added at once */
		while (*q >= 0x20 && *q != '"' && *q != '\\')
			q++;
		if (q > p) {
			rc = buf_add(b, p, (size_t)(q - p));
			p = q;
			continue;
		}
		switch (*p++) {
		case '"': rc = buf_add(b, "\\\"", 2); break;
		case '\\': rc = buf_add(b, "\\\\", 2); break;
		case '\b': rc = buf_add(b, "\\b", 2); break;
		case '\f': rc = buf_add(b, "\\f", 2); break;
		case '\n': rc = buf_add(b, "\\n", 2); break;
		case '\r': rc = buf_add(b, "\\r", 2); break;
		case '\t': rc = buf_add(b, "\\t", 2); break;
		default: rc = buf_addf(b, "\\u%04x", p[-1]); break;
		}
	}
	return rc ? rc : buf_add(b, "\"", 1);
}

/* Numbers as cJSON prints them, so canonical text round-trips. */
static int canon_number(struct buf *b, const cJSON *j)
{
	double d = j->valuedouble;
	char tmp[32];
	double back;

	if (isnan(d) || isinf(d))
		return buf_adds(b, "null");
	if (d == (double)j->valueint)
		return buf_addf(b, "%d", j->valueint);
	snprintf(tmp, sizeof(tmp), "%1.15g", d);
	back = strtod(tmp, NULL);
	if (back != d)
		snprintf(tmp, sizeof(tmp), "%1.17g", d);
	return buf_adds(b, tmp);
}

static int key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a;
	const cJSON *y = *(const cJSON *const *)b;

	return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

static int is_volatile(const char *k)
{
	return !strcmp(k, "user") || !strcmp(k, "metadata") || !strcmp(k, "stream_options");
}

/*
 * The canonical text of j; at the top level (skip_volatile) a "tools"
 * member is written as tools_canon when that is given, and with h, not
 * into b but into the hash: b's text so far goes in first, then
 * tools_canon, and b starts again empty (the hash sees the same bytes,
 * and the 20 KB of tool schemas are not copied for each request).
 */
static int canon_top(const cJSON *j, struct buf *b, int skip_volatile, const char *tools_canon,
		     struct hash *h);

static int canon(const cJSON *j, struct buf *b, int skip_volatile, const char *tools_canon)
{
	return canon_top(j, b, skip_volatile, tools_canon, NULL);
}

static int canon_top(const cJSON *j, struct buf *b, int skip_volatile, const char *tools_canon,
		     struct hash *h)
{
	const cJSON *it;
	const cJSON **kids = NULL;
	size_t n = 0, i, k;
	int rc = 0;

	if (cJSON_IsNull(j) || cJSON_IsInvalid(j))
		return buf_adds(b, "null");
	if (cJSON_IsTrue(j))
		return buf_adds(b, "true");
	if (cJSON_IsFalse(j))
		return buf_adds(b, "false");
	if (cJSON_IsNumber(j))
		return canon_number(b, j);
	if (cJSON_IsString(j))
		return canon_string(b, j->valuestring ? j->valuestring : "");
	if (cJSON_IsRaw(j))
		return buf_adds(b, j->valuestring ? j->valuestring : "null");
	if (cJSON_IsArray(j)) {
		rc = buf_add(b, "[", 1);
		i = 0;
		for (it = j->child; !rc && it; it = it->next, i++) {
			if (i)
				rc = buf_add(b, ",", 1);
			if (!rc)
				rc = canon(it, b, 0, NULL);
		}
		return rc ? rc : buf_add(b, "]", 1);
	}
	for (it = j->child; it; it = it->next)
		n++;
	if (n) {
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		kids = malloc(n * sizeof(*kids));
		if (!kids)
			return ENG_ENOMEM;
	}
	i = 0;
	for (it = j->child; it; it = it->next)
		kids[i++] = it;
	if (n > 1)
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		qsort(kids, n, sizeof(*kids), key_cmp);
	rc = buf_add(b, "{", 1);
	k = 0;
	for (i = 0; !rc && i < n; i++) {
		const char *name = kids[i]->string ? kids[i]->string : "";

		if (skip_volatile && is_volatile(name))
			continue;
		if (k++)
			rc = buf_add(b, ",", 1);
		if (!rc)
			rc = canon_string(b, name);
		if (!rc)
			rc = buf_add(b, ":", 1);
		if (rc)
			break;
		if (tools_canon && !strcmp(name, "tools")) {
			if (h) {
				rc = hash_add(h, b->ptr ? b->ptr : "", b->len);
				rc = rc ? rc : hash_add(h, tools_canon, strlen(tools_canon));
				buf_reset(b);
			} else {
				rc = buf_adds(b, tools_canon);
			}
		} else {
			rc = canon(kids[i], b, 0, NULL);
		}
	}
	free(kids);
	return rc ? rc : buf_add(b, "}", 1);
}

int llm_json_canonical(const cJSON *j, struct buf *out)
{
	return canon(j, out, 0, NULL);
}

int llm_cache_key(const char *profile, const char *path, const cJSON *body,
		  char out[HASH_HEX_LEN + 1])
{
	return llm_cache_key_tools(profile, path, body, NULL, out);
}

int llm_cache_key_tools(const char *profile, const char *path, const cJSON *body,
			const char *tools_canon, char out[HASH_HEX_LEN + 1])
{
	struct buf b;
	struct hash *h = NULL;
	int rc;

	buf_init(&b, (size_t)1 << 30);
	rc = hash_new(&h);
	if (rc)
		goto out;
	rc = hash_add_field(h, profile);
	if (!rc)
		rc = hash_add_field(h, path);
	if (!rc)
		rc = canon_top(body, &b, 1, tools_canon, h);
	if (!rc)
		rc = hash_add(h, buf_str(&b), b.len);
	if (rc)
		goto out;
	rc = hash_finish(h, out);
	h = NULL;
out:
	hash_free(h);
	buf_release(&b);
	return rc;
}
