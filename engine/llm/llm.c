/* SPDX-License-Identifier: MIT */
/*
 * Chat Completions client: conversation helpers, request bodies per
 * profile, reply and error parsing, the retry loop, and the transports
 * (libcurl, the cache hook, cassettes).
 */
#include "llm.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <openssl/evp.h>

#include "buf.h"
#include "curldl.h"
#include "err.h"
#include "jsonfile.h"
#include "rng.h"
#include "banned.h"

#define LLM_MAX_HEADERS 128

/* ===================== Global setup ===================== */

static bool curl_ready; /* llm_global_init() succeeded */

int llm_global_init(void)
{
	int rc = curldl_load();

	if (rc)
		return rc;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return err_set(ENG_EHTTP, "curl_global_init failed");
	curl_ready = true;
	return 0;
}

void llm_global_cleanup(void)
{
	if (curl_ready)
		curl_global_cleanup();
	curl_ready = false;
}

/* ===================== Small helpers ===================== */

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void copy_field(char *dst, size_t n, const char *s)
{
	snprintf(dst, n, "%s", s ? s : "");
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *get_str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * v as a long, saturated at the ends of long's range (NaN gives 0): a
 * server's number can be anything, and the plain cast is undefined past
 * the range.
 */
static long to_long(double v)
{
	if (v != v)
		return 0;
	if (v >= (double)LONG_MAX)
		return LONG_MAX;
	if (v <= (double)LONG_MIN)
		return LONG_MIN;
	return (long)v;
}

static long get_long(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsNumber(v) ? to_long(v->valuedouble) : 0;
}

/* ===================== Messages ===================== */

static void tool_call_release(struct llm_tool_call *tc)
{
	free(tc->id);
	free(tc->name);
	free(tc->arguments_json);
	free(tc->arguments_raw);
	free(tc->arguments_error);
	cJSON_Delete(tc->raw);
	memset(tc, 0, sizeof(*tc));
}

void llm_msg_init(struct llm_msg *m, enum llm_role role)
{
	memset(m, 0, sizeof(*m));
	m->role = role;
}

void llm_msg_release(struct llm_msg *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n_tool_calls; i++)
		tool_call_release(&m->tool_calls[i]);
	free(m->tool_calls);
	free(m->content);
	cJSON_Delete(m->parts);
	free(m->tool_call_id);
	free(m->name);
	llm_msg_init(m, m->role);
}

int llm_msg_text(struct llm_msg *m, enum llm_role role, const char *text)
{
	llm_msg_init(m, role);
	if (!text)
		return 0;
	m->content = strdup(text);
	return m->content ? 0 : ENG_ENOMEM;
}

int llm_msg_tool_result(struct llm_msg *m, const char *tool_call_id,
			const char *name, const char *content)
{
	llm_msg_init(m, LLM_ROLE_TOOL);
	if (!tool_call_id)
		return err_set(ENG_EINVAL, "tool result without a tool_call_id");
	m->tool_call_id = strdup(tool_call_id);
	/* cppcheck-suppress nullPointerRedundantCheck ; xstrdup(NULL) is NULL */
	m->name = xstrdup(name);
	m->content = xstrdup(content ? content : "");
	if (!m->tool_call_id || (name && !m->name) || !m->content) {
		llm_msg_release(m);
		return ENG_ENOMEM;
	}
	return 0;
}

int llm_msg_set_parts(struct llm_msg *m, const char *parts_json)
{
	cJSON *p = parts_json ? cJSON_Parse(parts_json) : NULL;

	if (!cJSON_IsArray(p)) {
		cJSON_Delete(p);
		return err_set(ENG_EPARSE, "content parts are not a JSON array");
	}
	cJSON_Delete(m->parts);
	m->parts = p;
	return 0;
}

/* ---------- content parts (images) ---------- */

/*
 * The parts array of user message m, created on first use; plain content
 * becomes its first text part. NULL on allocation failure (m unchanged).
 */
static cJSON *user_parts(struct llm_msg *m)
{
	cJSON *parts, *t;

	if (m->parts)
		return m->parts;
	parts = cJSON_CreateArray();
	if (!parts)
		return NULL;
	if (m->content) {
		t = cJSON_CreateObject();
		if (!t || !cJSON_AddStringToObject(t, "type", "text") ||
		    !cJSON_AddStringToObject(t, "text", m->content) ||
		    !cJSON_AddItemToArray(parts, t)) {
			cJSON_Delete(t);
			cJSON_Delete(parts);
			return NULL;
		}
	}
	m->parts = parts;
	free(m->content);
	m->content = NULL;
	return parts;
}

/* Appends part to m's parts (taking it), or deletes it and returns ENG_ENOMEM. */
static int push_part(struct llm_msg *m, cJSON *part)
{
	cJSON *parts = part ? user_parts(m) : NULL;

	if (!parts || !cJSON_AddItemToArray(parts, part)) {
		cJSON_Delete(part);
		return ENG_ENOMEM;
	}
	return 0;
}

int llm_msg_add_text(struct llm_msg *m, const char *text)
{
	cJSON *t;

	if (m->role != LLM_ROLE_USER)
		return err_set(ENG_EINVAL, "content parts go in user messages");
	t = cJSON_CreateObject();
	if (t && (!cJSON_AddStringToObject(t, "type", "text") ||
		  !cJSON_AddStringToObject(t, "text", text ? text : ""))) {
		cJSON_Delete(t);
		t = NULL;
	}
	return push_part(m, t);
}

int llm_msg_add_image(struct llm_msg *m, const char *mime, const void *bytes, size_t len)
{
	size_t head;
	cJSON *t, *u;
	char *url;
	int k;

	if (m->role != LLM_ROLE_USER)
		return err_set(ENG_EINVAL, "content parts go in user messages");
	if (!mime || strncmp(mime, "image/", 6) || !mime[6] || strpbrk(mime, ";, \"") ||
	    !bytes || !len)
		return err_set(ENG_EINVAL, "an image needs bytes and an image/... type");
	if (len > ((size_t)1 << 30))
		return err_set(ENG_ETOOBIG, "image of %zu bytes is too large", len);
	head = strlen("data:") + strlen(mime) + strlen(";base64,");
	url = malloc(head + 4 * ((len + 2) / 3) + 1);
	if (!url)
		return ENG_ENOMEM;
	k = snprintf(url, head + 1, "data:%s;base64,", mime);
	EVP_EncodeBlock((unsigned char *)url + k, bytes, (int)len);
	t = cJSON_CreateObject();
	u = cJSON_CreateObject();
	if (!t || !u || !cJSON_AddStringToObject(t, "type", "image_url") ||
	    !cJSON_AddStringToObject(u, "url", url) || !cJSON_AddItemToObject(t, "image_url", u)) {
		if (!t || !cJSON_GetObjectItemCaseSensitive(t, "image_url"))
			cJSON_Delete(u);
		cJSON_Delete(t);
		t = NULL;
	}
	free(url);
	return push_part(m, t);
}

/* Grows the tool-call array by one zeroed slot. */
static struct llm_tool_call *tool_call_push(struct llm_msg *m)
{
	struct llm_tool_call *t;

	t = realloc(m->tool_calls, (m->n_tool_calls + 1) * sizeof(*t));
	if (!t)
		return NULL;
	m->tool_calls = t;
	t = &m->tool_calls[m->n_tool_calls++];
	memset(t, 0, sizeof(*t));
	return t;
}

int llm_msg_add_tool_call(struct llm_msg *m, const char *id, const char *name,
			  const char *arguments_json, const cJSON *raw)
{
	struct llm_tool_call *t;
	cJSON *chk;

	if (!id || !name || !arguments_json)
		return err_set(ENG_EINVAL, "tool call needs an id, a name and arguments");
	chk = cJSON_Parse(arguments_json);
	if (!chk)
		return err_set(ENG_EINVAL, "tool call '%s': arguments are not JSON", name);
	cJSON_Delete(chk);
	t = tool_call_push(m);
	if (!t)
		return ENG_ENOMEM;
	t->id = strdup(id);
	t->name = strdup(name);
	t->arguments_json = strdup(arguments_json);
	t->raw = raw ? cJSON_Duplicate(raw, 1) : NULL;
	if (!t->id || !t->name || !t->arguments_json || (raw && !t->raw)) {
		tool_call_release(t);
		m->n_tool_calls--;
		return ENG_ENOMEM;
	}
	return 0;
}

static int dup_field(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : ENG_ENOMEM;
}

int llm_msg_copy(struct llm_msg *dst, const struct llm_msg *src)
{
	size_t i;
	int rc = 0;

	llm_msg_init(dst, src->role);
	rc = dup_field(&dst->content, src->content);
	if (!rc)
		rc = dup_field(&dst->tool_call_id, src->tool_call_id);
	if (!rc)
		rc = dup_field(&dst->name, src->name);
	if (!rc && src->parts) {
		dst->parts = cJSON_Duplicate(src->parts, 1);
		if (!dst->parts)
			rc = ENG_ENOMEM;
	}
	for (i = 0; !rc && i < src->n_tool_calls; i++) {
		const struct llm_tool_call *s = &src->tool_calls[i];
		struct llm_tool_call *t = tool_call_push(dst);

		if (!t) {
			rc = ENG_ENOMEM;
			break;
		}
		t->flags = s->flags;
		rc = dup_field(&t->id, s->id);
		if (!rc)
			rc = dup_field(&t->name, s->name);
		if (!rc)
			rc = dup_field(&t->arguments_json, s->arguments_json);
		if (!rc)
			rc = dup_field(&t->arguments_raw, s->arguments_raw);
		if (!rc)
			rc = dup_field(&t->arguments_error, s->arguments_error);
		if (!rc && s->raw) {
			t->raw = cJSON_Duplicate(s->raw, 1);
			if (!t->raw)
				rc = ENG_ENOMEM;
		}
	}
	if (rc)
		llm_msg_release(dst);
	return rc;
}

/* ===================== Replies ===================== */

void llm_reply_init(struct llm_reply *r)
{
	memset(r, 0, sizeof(*r));
	llm_msg_init(&r->msg, LLM_ROLE_ASSISTANT);
	r->error.retry_after_ms = -1;
}

void llm_reply_release(struct llm_reply *r)
{
	if (!r)
		return;
	llm_msg_release(&r->msg);
	free(r->finish_reason);
	free(r->id);
	free(r->model);
	free(r->system_fingerprint);
	free(r->request_id);
	free(r->refusal);
	free(r->reasoning);
	free(r->body);
	llm_reply_init(r);
}

void llm_reply_take_msg(struct llm_reply *r, struct llm_msg *dst)
{
	*dst = r->msg;
	llm_msg_init(&r->msg, LLM_ROLE_ASSISTANT);
}

/* Clears the parsed parts of r (keeps transport metadata). */
static void reply_clear_parsed(struct llm_reply *r)
{
	llm_msg_release(&r->msg);
	r->msg.role = LLM_ROLE_ASSISTANT;
	free(r->finish_reason);
	free(r->id);
	free(r->model);
	free(r->system_fingerprint);
	free(r->refusal);
	free(r->reasoning);
	r->finish_reason = r->id = r->model = r->system_fingerprint = NULL;
	r->refusal = r->reasoning = NULL;
	memset(&r->usage, 0, sizeof(r->usage));
	r->salvaged = 0;
}

/* ===================== Tool-call arguments ===================== */

static char *print_json(const cJSON *j)
{
	char *p = cJSON_PrintUnformatted(j);
	char *s;

	if (!p)
		return NULL;
	s = strdup(p);
	cJSON_free(p);
	return s;
}

static int set_args(struct llm_tool_call *tc, const char *text)
{
	free(tc->arguments_json);
	tc->arguments_json = strdup(text);
	return tc->arguments_json ? 0 : ENG_ENOMEM;
}

/*
 * Normalises arguments given as a string, an object, invalid JSON, "" or
 * JSON encoded twice (llm-protocol.md 4.6) into valid JSON text.
 */
static int args_normalise(const cJSON *a, struct llm_tool_call *tc)
{
	const char *s, *end = NULL;
	cJSON *p, *q;
	int rc = 0;

	if (!a || cJSON_IsNull(a)) {
		tc->flags |= LLM_TC_ARGS_EMPTY;
		return set_args(tc, "{}");
	}
	if (!cJSON_IsString(a)) {
		if (cJSON_IsObject(a) || cJSON_IsArray(a))
			tc->flags |= LLM_TC_ARGS_OBJECT;
		tc->arguments_json = print_json(a);
		return tc->arguments_json ? 0 : ENG_ENOMEM;
	}
	s = a->valuestring;
	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s) {
		tc->flags |= LLM_TC_ARGS_EMPTY;
		return set_args(tc, "{}");
	}
	p = cJSON_ParseWithOpts(s, &end, 1);
	if (!p) {
		long off = end ? (long)(end - a->valuestring) : 0;
		char msg[160];

		tc->flags |= LLM_TC_ARGS_INVALID;
		snprintf(msg, sizeof(msg), "arguments are not valid JSON (error at offset %ld of %zu)",
			 off, strlen(a->valuestring));
		tc->arguments_raw = strdup(a->valuestring);
		tc->arguments_error = strdup(msg);
		if (!tc->arguments_raw || !tc->arguments_error)
			return ENG_ENOMEM;
		return set_args(tc, "{}");
	}
	if (cJSON_IsString(p)) {
		q = cJSON_ParseWithOpts(p->valuestring, NULL, 1);
		if (cJSON_IsObject(q) || cJSON_IsArray(q)) {
			tc->flags |= LLM_TC_ARGS_DOUBLE;
			cJSON_Delete(p);
			p = q;
			tc->arguments_raw = strdup(a->valuestring);
			if (!tc->arguments_raw)
				rc = ENG_ENOMEM;
		} else {
			cJSON_Delete(q);
		}
	}
	if (!rc) {
		tc->arguments_json = print_json(p);
		if (!tc->arguments_json)
			rc = ENG_ENOMEM;
	}
	cJSON_Delete(p);
	return rc;
}

/* The arguments to echo in history: valid JSON text, "{}" if not. */
static char *args_for_history(const char *text)
{
	cJSON *p = text ? cJSON_ParseWithOpts(text, NULL, 1) : NULL;
	char *s;

	if (!p)
		return strdup("{}");
	s = print_json(p);
	cJSON_Delete(p);
	return s;
}

/* ===================== Reply parsing ===================== */

static int tool_offered(const struct llm_tool *tools, size_t ntools, const char *name)
{
	size_t i;

	for (i = 0; i < ntools; i++)
		if (tools[i].name && !strcmp(tools[i].name, name))
			return 1;
	return 0;
}

static int synth_id(struct llm_tool_call *tc, unsigned long *counter)
{
	char id[40];
	unsigned long n = counter ? ++*counter : 1;

	snprintf(id, sizeof(id), "call_%lu", n);
	free(tc->id);
	tc->id = strdup(id);
	tc->flags |= LLM_TC_ID_SYNTH;
	return tc->id ? 0 : ENG_ENOMEM;
}

/* Adds one salvaged call from {"name":..,"arguments"|"parameters":..}. */
static int salvage_one(const cJSON *o, const struct llm_tool *tools, size_t ntools,
		       unsigned long *counter, struct llm_msg *m, int *added)
{
	const char *name = get_str(o, "name");
	const cJSON *args;
	struct llm_tool_call *tc;
	int rc;

	if (!name || !tool_offered(tools, ntools, name))
		return 0;
	args = get(o, "arguments");
	if (!args)
		args = get(o, "parameters");
	tc = tool_call_push(m);
	if (!tc)
		return ENG_ENOMEM;
	tc->name = strdup(name);
	if (!tc->name)
		return ENG_ENOMEM;
	rc = args_normalise(args, tc);
	if (!rc)
		rc = synth_id(tc, counter);
	tc->flags |= LLM_TC_SALVAGED;
	(*added)++;
	return rc;
}

/* Parses the JSON at p (a call object or an array of them). */
static int salvage_json(const char *p, const char **endp, const struct llm_tool *tools,
			size_t ntools, unsigned long *counter, struct llm_msg *m, int *added)
{
	const char *end = NULL;
	cJSON *j, *it;
	int rc = 0;

	while (*p && isspace((unsigned char)*p))
		p++;
	j = cJSON_ParseWithOpts(p, &end, 0);
	if (!j)
		return 0;
	if (endp)
		*endp = end;
	if (cJSON_IsArray(j)) {
		cJSON_ArrayForEach(it, j) {
			rc = salvage_one(it, tools, ntools, counter, m, added);
			if (rc)
				break;
		}
	} else if (cJSON_IsObject(j)) {
		rc = salvage_one(j, tools, ntools, counter, m, added);
	}
	cJSON_Delete(j);
	return rc;
}

/*
 * Why: misconfigured vLLM/llama.cpp servers return the call as text
 * (llm-protocol.md 4.6.1). Only offered tool names are accepted, so prose
 * that merely contains JSON is left alone.
 */
static int salvage(struct llm_reply *r, const struct llm_tool *tools, size_t ntools,
		   unsigned long *counter)
{
	static const char *const tags[] = { "<tool_call>", "[TOOL_CALLS]", "<|python_tag|>" };
	const char *text = r->msg.content;
	const char *p;
	size_t i;
	int added = 0;
	int rc = 0;

	if (!text)
		return 0;
	for (i = 0; !rc && i < ARRAY_SIZE(tags); i++) {
		p = strstr(text, tags[i]);
		while (!rc && p) {
			p += strlen(tags[i]);
			rc = salvage_json(p, NULL, tools, ntools, counter, &r->msg, &added);
			p = strstr(p, tags[i]);
		}
	}
	p = added ? NULL : strstr(text, "```");
	while (!rc && !added && p) {
		p += 3;
		while (isalpha((unsigned char)*p))
			p++;
		rc = salvage_json(p, NULL, tools, ntools, counter, &r->msg, &added);
		/* skip the closing fence, then look for the next block */
		p = strstr(p, "```");
		p = p ? strstr(p + 3, "```") : NULL;
	}
	if (!rc && !added) {
		p = text;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '{' || *p == '[')
			rc = salvage_json(p, NULL, tools, ntools, counter, &r->msg, &added);
	}
	if (!rc && added) {
		/* the text was the call: the history must not carry it twice */
		free(r->msg.content);
		r->msg.content = NULL;
		r->salvaged = 1;
	}
	return rc;
}

/* Joins the text of a content-parts array. */
static char *parts_text(const cJSON *arr)
{
	struct buf b;
	const cJSON *it;

	buf_init(&b, (size_t)64 << 20);
	cJSON_ArrayForEach(it, arr) {
		const char *t = cJSON_IsString(it) ? it->valuestring : get_str(it, "text");

		if (t && buf_adds(&b, t)) {
			buf_release(&b);
			return NULL;
		}
	}
	return buf_detach(&b);
}

static int parse_tool_calls(const cJSON *arr, unsigned long *counter, struct llm_msg *m)
{
	const cJSON *it;
	int rc = 0;

	cJSON_ArrayForEach(it, arr) {
		const cJSON *fn = get(it, "function");
		const char *id = get_str(it, "id");
		const char *name;
		struct llm_tool_call *tc;

		if (!cJSON_IsObject(it))
			continue;
		if (!cJSON_IsObject(fn))
			fn = it;        /* tolerate {"name":..,"arguments":..} without "function" */
		name = get_str(fn, "name");
		tc = tool_call_push(m);
		if (!tc)
			return ENG_ENOMEM;
		tc->name = strdup(name ? name : "");
		tc->raw = cJSON_Duplicate(it, 1);
		if (!tc->name || !tc->raw)
			return ENG_ENOMEM;
		if (id && *id) {
			tc->id = strdup(id);
			if (!tc->id)
				return ENG_ENOMEM;
		} else {
			rc = synth_id(tc, counter);
			if (rc)
				return rc;
		}
		rc = args_normalise(get(fn, "arguments"), tc);
		if (rc)
			return rc;
	}
	return 0;
}

int llm_reply_parse(const char *body, size_t len, const struct llm_tool *tools,
		    size_t ntools, int do_salvage, unsigned long *id_counter,
		    struct llm_reply *r)
{
	cJSON *root = NULL;
	const cJSON *choice, *msg, *content, *tcs, *usage, *d;
	const char *s;
	int rc = 0;

	reply_clear_parsed(r);
	root = body ? cJSON_ParseWithLength(body, len) : NULL;
	if (!cJSON_IsObject(root)) {
		rc = err_set(ENG_EPARSE, "llm reply is not a JSON object (%zu bytes)", len);
		goto out;
	}
	choice = cJSON_GetArrayItem(get(root, "choices"), 0);
	msg = get(choice, "message");
	if (!cJSON_IsObject(msg)) {
		s = get_str(get(root, "error"), "message");
		rc = err_set(ENG_EPARSE, "llm reply has no choices[0].message%s%s",
			     s ? ": " : "", s ? s : "");
		goto out;
	}
	r->msg.role = LLM_ROLE_ASSISTANT;
	content = get(msg, "content");
	if (cJSON_IsString(content)) {
		r->msg.content = strdup(content->valuestring);
		if (!r->msg.content)
			rc = ENG_ENOMEM;
	} else if (cJSON_IsArray(content)) {
		r->msg.content = parts_text(content);
		if (!r->msg.content)
			rc = ENG_ENOMEM;
	}
	if (!rc)
		rc = dup_field(&r->finish_reason, get_str(choice, "finish_reason"));
	if (!rc)
		rc = dup_field(&r->refusal, get_str(msg, "refusal"));
	if (!rc) {
		s = get_str(msg, "reasoning_content");
		rc = dup_field(&r->reasoning, s ? s : get_str(msg, "reasoning"));
	}
	if (!rc)
		rc = dup_field(&r->id, get_str(root, "id"));
	if (!rc)
		rc = dup_field(&r->model, get_str(root, "model"));
	if (!rc)
		rc = dup_field(&r->system_fingerprint, get_str(root, "system_fingerprint"));
	tcs = get(msg, "tool_calls");
	if (!rc && cJSON_IsArray(tcs))
		rc = parse_tool_calls(tcs, id_counter, &r->msg);
	if (rc)
		goto out;
	usage = get(root, "usage");
	if (cJSON_IsObject(usage)) {
		r->usage.present = 1;
		r->usage.prompt_tokens = get_long(usage, "prompt_tokens");
		r->usage.completion_tokens = get_long(usage, "completion_tokens");
		r->usage.total_tokens = get_long(usage, "total_tokens");
		d = get(usage, "prompt_tokens_details");
		r->usage.cached_tokens = get_long(d, "cached_tokens");
		d = get(usage, "completion_tokens_details");
		r->usage.reasoning_tokens = get_long(d, "reasoning_tokens");
	}
	if (do_salvage && ntools && !r->msg.n_tool_calls)
		rc = salvage(r, tools, ntools, id_counter);
out:
	if (rc && rc != ENG_EPARSE)
		err_set(rc, "llm reply: %s", eng_strerror(rc));
	cJSON_Delete(root);
	return rc;
}

/* ===================== Errors ===================== */

int llm_parse_duration(const char *s, long *ms)
{
	double total = 0;
	const char *p = s;
	char *end;

	if (!s || !*s)
		return ENG_EINVAL;
	while (*p) {
		double v = strtod(p, &end);

		if (end == p || !(v >= 0))
			return ENG_EINVAL;
		p = end;
		if (!strncmp(p, "ms", 2)) {
			total += v;
			p += 2;
		} else if (*p == 's') {
			total += v * 1000;
			p++;
		} else if (*p == 'm') {
			total += v * 60000;
			p++;
		} else if (*p == 'h') {
			total += v * 3600000;
			p++;
		} else {
			return ENG_EINVAL;
		}
	}
	*ms = to_long(total + 0.5);
	return 0;
}

int llm_parse_retry_after(const char *value, time_t now, long *ms)
{
	char *end;
	double v;
	time_t t;

	if (!value)
		return ENG_EINVAL;
	while (isspace((unsigned char)*value))
		value++;
	v = strtod(value, &end);
	if (end != value) {
		while (isspace((unsigned char)*end))
			end++;
		if (*end || !(v >= 0))
			return ENG_EINVAL;
		*ms = to_long(v * 1000 + 0.5);
		return 0;
	}
	/* a date needs libcurl's parser: a reply parsed without a client loads it here */
	if (curldl_load()) {
		err_clear();
		return ENG_EINVAL;
	}
	t = curl_getdate(value, NULL);
	if (t == (time_t)-1)
		return ENG_EINVAL;
	*ms = t > now ? to_long((double)(t - now) * 1000) : 0;
	return 0;
}

static int is_quota(const char *s)
{
	static const char *const codes[] = {
		"insufficient_quota", "credit_balance_exhausted",
		"organization_usage_limit_exceeded", "billing_hard_limit_reached",
		"billing_not_active", "quota_exceeded", "access_terminated",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(codes); i++)
		if (!strcmp(s, codes[i]))
			return 1;
	return 0;
}

static void error_object(const cJSON *e, struct llm_error *err)
{
	const cJSON *code = get(e, "code");
	const cJSON *it;
	const char *t;

	copy_field(err->message, sizeof(err->message), get_str(e, "message"));
	t = get_str(e, "type");
	copy_field(err->type, sizeof(err->type), t ? t : get_str(e, "status"));
	if (cJSON_IsString(code))
		copy_field(err->code, sizeof(err->code), code->valuestring);
	else if (cJSON_IsNumber(code))
		snprintf(err->code, sizeof(err->code), "%d", code->valueint);
	copy_field(err->param, sizeof(err->param), get_str(e, "param"));
	cJSON_ArrayForEach(it, get(e, "details")) {
		const char *at = get_str(it, "@type");
		long ms;

		if (at && strstr(at, "RetryInfo") &&
		    !llm_parse_duration(get_str(it, "retryDelay"), &ms))
			err->retry_after_ms = ms;
	}
}

void llm_error_parse(const char *body, size_t len, int http_status, struct llm_error *err)
{
	cJSON *root;
	const cJSON *o, *e;
	size_t i, n;

	memset(err, 0, sizeof(*err));
	err->http_status = http_status;
	err->retry_after_ms = -1;
	root = body && len ? cJSON_ParseWithLength(body, len) : NULL;
	o = cJSON_IsArray(root) ? cJSON_GetArrayItem(root, 0) : root;
	e = get(o, "error");
	if (cJSON_IsString(e)) {
		copy_field(err->message, sizeof(err->message), e->valuestring);
	} else if (cJSON_IsObject(e)) {
		error_object(e, err);
	} else if (cJSON_IsObject(o) && get_str(o, "message")) {
		error_object(o, err);   /* vLLM legacy flat {"object":"error",...} */
	} else if (body && len) {
		/* not JSON: keep a printable prefix */
		n = len < sizeof(err->message) - 1 ? len : sizeof(err->message) - 1;
		for (i = 0; i < n; i++)
			err->message[i] = isprint((unsigned char)body[i]) ? body[i] : ' ';
		err->message[n] = '\0';
	}
	if (!err->message[0])
		snprintf(err->message, sizeof(err->message), "HTTP %d", http_status);
	err->quota = is_quota(err->code) || is_quota(err->type) ||
		     strstr(err->message, "exceeded your current quota") != NULL;
	cJSON_Delete(root);
}

/* ===================== Backoff ===================== */

long llm_backoff_ms(int retry, long max_backoff_ms, double u)
{
	double d = 500.0;
	int i;

	for (i = 0; i < retry && d < (double)max_backoff_ms; i++)
		d *= 2;
	if (d > (double)max_backoff_ms)
		d = (double)max_backoff_ms;
	if (u < 0)
		u = 0;
	if (u >= 1)
		u = 0.999999;
	return (long)(d * (1.0 - 0.25 * u));
}


/* Off a fiber, nanosleep; on one, the thread's other fibers run meanwhile. */
static void default_sleep(void *ctx, long ms)
{
	(void)ctx;
	fiber_sleep_ms(ms);
}

/* ===================== Client ===================== */

/*
 * A tool set's part of the request body (opts->tools_static): the text
 * sent and its canonical text for the key, built on the first request
 * that offers the set with the profile and kept for the process, shared
 * by every client (the sets are static, and a run's clients, one per
 * worker, serve the same few: one per sub-task). Past LLM_TOOLS_MEMO sets
 * the others are built per request, as without the flag.
 */
#define LLM_TOOLS_MEMO 64

struct tools_memo {
	const struct llm_tool *tools;
	size_t n;
	const struct llm_profile_info *prof;
	char *wire;   /* cJSON_PrintUnformatted of the tools array */
	char *canon;  /* llm_json_canonical of it */
};

static struct tools_memo tools_memo[LLM_TOOLS_MEMO];
static size_t ntools_memo;
static pthread_mutex_t tools_memo_lock = PTHREAD_MUTEX_INITIALIZER;

struct llm_client {
	const struct llm_profile_info *prof;
	struct llm_config cfg;     /* copy; its strings point into this struct */
	char *base_url;
	char *url;                 /* base_url + /chat/completions */
	char *shown_url;           /* url without its query, for logs and messages */
	char *path;                /* URL path, part of the cache key */
	char *model;
	char *auth;                /* "Authorization: Bearer ..."; wiped on free */
	CURL *curl;
	struct curl_slist *headers;
	struct buf body;           /* response body of the current attempt */
	cJSON *resp_headers;       /* lowercase name -> value */
	int n_headers;
	int too_big;               /* the write callback hit the cap */
	uint64_t rng;
	unsigned long id_counter;  /* for synthesised tool_call ids: set per request */
	char errbuf[CURL_ERROR_SIZE];
};

void llm_config_init(struct llm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->profile = LLM_PROFILE_AUTO;
	cfg->connect_timeout_ms = 10000;
	cfg->timeout_ms = 600000;
	cfg->max_retries = 2;
	cfg->max_backoff_ms = 8000;
	cfg->max_retry_after_ms = 60000;
	cfg->max_retry_wait_ms = 60000;
	cfg->max_response_bytes = (size_t)8 << 20;
	cfg->temperature = -1;
	cfg->seed = -1;
	cfg->salvage = 1;
}

void llm_opts_init(struct llm_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->parallel_tool_calls = -1;
}

enum llm_profile llm_client_profile(const struct llm_client *c)
{
	return c->prof->id;
}

static void logf_(const struct llm_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_(const struct llm_client *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!c->cfg.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->cfg.log(c->cfg.log_ctx, line);
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	struct llm_client *c = ud;
	size_t len = size * n;

	if (buf_add(&c->body, data, len)) {
		c->too_big = 1;
		return 0;
	}
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
	struct llm_client *c = ud;
	size_t len = size * n, nl, vl;
	const char *colon, *v;
	char name[64], value[512];
	size_t i;

	if (len >= 5 && !memcmp(data, "HTTP/", 5)) {
		/* a new response (after 100-continue or a redirect) */
		cJSON_Delete(c->resp_headers);
		c->resp_headers = cJSON_CreateObject();
		c->n_headers = 0;
		return len;
	}
	colon = memchr(data, ':', len);
	if (!colon || !c->resp_headers || c->n_headers >= LLM_MAX_HEADERS)
		return len;
	nl = (size_t)(colon - data);
	if (nl == 0 || nl >= sizeof(name))
		return len;
	for (i = 0; i < nl; i++)
		name[i] = (char)tolower((unsigned char)data[i]);
	name[nl] = '\0';
	v = colon + 1;
	vl = len - nl - 1;
	while (vl && (*v == ' ' || *v == '\t')) {
		v++;
		vl--;
	}
	while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
		vl--;
	if (vl >= sizeof(value))
		vl = sizeof(value) - 1;
	memcpy(value, v, vl);
	value[vl] = '\0';
	if (!cJSON_GetObjectItemCaseSensitive(c->resp_headers, name)) {
		cJSON_AddStringToObject(c->resp_headers, name, value);
		c->n_headers++;
	}
	return len;
}

/*
 * Joins base and /chat/completions (before any query, so an Azure-style
 * "?api-version=..." stays at the end), and finds the URL path.
 */
static int client_urls(struct llm_client *c, const char *base)
{
	struct buf b;
	size_t q = strcspn(base, "?#");
	size_t n = q;
	const char *p;
	int rc;

	while (n && base[n - 1] == '/')
		n--;
	buf_init(&b, 8192);
	rc = buf_add(&b, base, n);
	if (!rc && (n < 17 || strncmp(base + n - 17, "/chat/completions", 17)))
		rc = buf_adds(&b, "/chat/completions");
	if (!rc)
		rc = buf_adds(&b, base + q);
	if (rc) {
		buf_release(&b);
		return rc == ENG_ETOOBIG ? err_set(ENG_EINVAL, "llm base url is too long") : rc;
	}
	c->url = buf_detach(&b);
	if (!c->url)
		return ENG_ENOMEM;
	c->shown_url = strndup(c->url, strcspn(c->url, "?#"));
	if (!c->shown_url)
		return ENG_ENOMEM;
	p = strstr(c->url, "://");
	p = p ? p + 3 : c->url;
	p = strchr(p, '/');
	c->path = p ? strndup(p, strcspn(p, "?#")) : strdup("/chat/completions");
	return c->path ? 0 : ENG_ENOMEM;
}

static int client_curl(struct llm_client *c)
{
	const char *key_env = c->cfg.api_key_env ? c->cfg.api_key_env : c->prof->key_env;
	const char *key = getenv(key_env);
	const char *np;
	struct buf b;
	struct curl_slist *h = NULL;
	int rc = 0;

	/* llm_global_init() loaded it; a caller that skipped it gets an error, not a crash */
	rc = curldl_load();
	if (rc)
		return rc;
	c->curl = curl_easy_init();
	if (!c->curl)
		return err_set(ENG_EHTTP, "curl_easy_init failed");
	if (key && *key) {
		buf_init(&b, 8192);
		rc = buf_addf(&b, "Authorization: Bearer %s", key);
		if (rc) {
			buf_release(&b);
			return rc == ENG_ETOOBIG ? err_set(ENG_EINVAL, "%s is too long", key_env) : rc;
		}
		c->auth = buf_detach(&b);
		if (!c->auth)
			return ENG_ENOMEM;
	}
	h = curl_slist_append(h, "Content-Type: application/json");
	if (h)
		h = curl_slist_append(h, "Accept: application/json");
	if (h)
		h = curl_slist_append(h, "Expect:");
	if (h && c->auth)
		h = curl_slist_append(h, c->auth);
	if (!h)
		return ENG_ENOMEM;
	c->headers = h;
	curl_easy_setopt(c->curl, CURLOPT_URL, c->url);
	curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "proxima-llm/1");
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, c->cfg.connect_timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, c->cfg.timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c->curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(c->curl, CURLOPT_FAILONERROR, 0L);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	/* loopback servers are never reached through a proxy */
	np = getenv("no_proxy");
	if (!np)
		np = getenv("NO_PROXY");
	if (!np)
		curl_easy_setopt(c->curl, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
	return 0;
}

int llm_client_new(const struct llm_config *cfg, struct llm_client **out)
{
	struct llm_client *c;
	enum llm_profile p;
	int replay_only;
	int rc = 0;

	if (!cfg->model || !*cfg->model)
		return err_set(ENG_EINVAL, "llm model is not set");
	replay_only = cfg->cassette && llm_cassette_mode(cfg->cassette) == LLM_CASSETTE_REPLAY;
	if ((!cfg->base_url || !*cfg->base_url) && !replay_only)
		return err_set(ENG_EINVAL, "llm base url is not set");
	c = calloc(1, sizeof(*c));
	if (!c)
		return ENG_ENOMEM;
	c->cfg = *cfg;
	p = cfg->profile == LLM_PROFILE_AUTO ? llm_profile_detect(cfg->base_url) : cfg->profile;
	c->prof = llm_profile_get(p);
	if (c->cfg.max_retries < 0)
		c->cfg.max_retries = 0;
	if (!c->cfg.max_response_bytes)
		c->cfg.max_response_bytes = (size_t)8 << 20;
	buf_init(&c->body, c->cfg.max_response_bytes + 1);
	c->base_url = strdup(cfg->base_url && *cfg->base_url ? cfg->base_url : "http://replay.invalid/v1");
	c->model = strdup(cfg->model);
	if (!c->base_url || !c->model) {
		rc = ENG_ENOMEM;
		goto out;
	}
	c->cfg.base_url = c->base_url;
	c->cfg.model = c->model;
	c->cfg.profile = p;
	rc = client_urls(c, c->base_url);
	if (rc)
		goto out;
	rc = client_curl(c);
	if (rc)
		goto out;
	c->cfg.api_key_env = NULL;
	c->rng = cfg->jitter_seed ? cfg->jitter_seed
				  : (uint64_t)now_ms() ^ ((uint64_t)(uintptr_t)c << 16);
out:
	if (rc) {
		llm_client_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void llm_client_free(struct llm_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	if (c->auth) {
		explicit_bzero(c->auth, strlen(c->auth));
		free(c->auth);
	}
	buf_release(&c->body);
	cJSON_Delete(c->resp_headers);
	free(c->base_url);
	free(c->url);
	free(c->shown_url);
	free(c->path);
	free(c->model);
	free(c);
}

/* ===================== Request bodies ===================== */

static int valid_tool_name(const char *s)
{
	size_t n = 0;

	if (!s)
		return 0;
	for (; s[n]; n++)
		if (!isalnum((unsigned char)s[n]) && s[n] != '_' && s[n] != '-')
			return 0;
	return n >= 1 && n <= 64;
}

static int is_reasoning_model(const char *m)
{
	const char *slash = strrchr(m, '/');

	if (slash)
		m = slash + 1;
	if (m[0] == 'o' && (m[1] == '1' || m[1] == '3' || m[1] == '4') &&
	    (m[2] == '\0' || m[2] == '-'))
		return 1;
	return !strncmp(m, "gpt-5", 5);
}

static const char *role_name(enum llm_role r)
{
	switch (r) {
	case LLM_ROLE_SYSTEM: return "system";
	case LLM_ROLE_USER: return "user";
	case LLM_ROLE_ASSISTANT: return "assistant";
	case LLM_ROLE_TOOL: return "tool";
	}
	return "user";
}

/* Adds item to o, or deletes it and fails when o or item is NULL. */
static int add(cJSON *o, const char *k, cJSON *item)
{
	if (!item)
		return ENG_ENOMEM;
	if (!cJSON_AddItemToObject(o, k, item)) {
		cJSON_Delete(item);
		return ENG_ENOMEM;
	}
	return 0;
}

static int add_str(cJSON *o, const char *k, const char *v)
{
	return add(o, k, cJSON_CreateString(v));
}

/*
 * One history tool call: our id, name and re-serialised arguments, then
 * every other key the provider sent (Gemini's extra_content thought
 * signature must come back verbatim), minus Ollama's "index".
 */
static cJSON *history_tool_call(const struct llm_tool_call *tc)
{
	const cJSON *rfn = tc->raw ? get(tc->raw, "function") : NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON *fn = NULL;
	const cJSON *it;
	char *args = args_for_history(tc->arguments_json);
	int rc = (!o || !args) ? ENG_ENOMEM : 0;

	if (!rc)
		rc = add_str(o, "id", tc->id ? tc->id : "");
	if (!rc)
		rc = add_str(o, "type", "function");
	if (!rc) {
		fn = cJSON_CreateObject();
		rc = add(o, "function", fn);
	}
	if (!rc)
		rc = add_str(fn, "name", tc->name ? tc->name : "");
	if (!rc)
		rc = add_str(fn, "arguments", args);
	if (!rc && cJSON_IsObject(rfn) && rfn != tc->raw) {
		cJSON_ArrayForEach(it, rfn) {
			if (!strcmp(it->string, "name") || !strcmp(it->string, "arguments"))
				continue;
			rc = add(fn, it->string, cJSON_Duplicate(it, 1));
			if (rc)
				break;
		}
	}
	if (!rc && cJSON_IsObject(tc->raw)) {
		cJSON_ArrayForEach(it, tc->raw) {
			static const char *const ours[] = { "id", "type", "function", "index",
							    "name", "arguments" };
			size_t k;

			for (k = 0; k < ARRAY_SIZE(ours); k++)
				if (!strcmp(it->string, ours[k]))
					break;
			if (k < ARRAY_SIZE(ours))
				continue;
			rc = add(o, it->string, cJSON_Duplicate(it, 1));
			if (rc)
				break;
		}
	}
	free(args);
	if (rc) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* The tool name a tool message answers, from the assistant turns before it. */
static const char *name_for_call(const struct llm_msg *msgs, size_t upto, const char *id)
{
	size_t i, k;

	for (i = upto; i-- > 0;) {
		if (msgs[i].role != LLM_ROLE_ASSISTANT)
			continue;
		for (k = 0; k < msgs[i].n_tool_calls; k++)
			if (msgs[i].tool_calls[k].id && !strcmp(msgs[i].tool_calls[k].id, id))
				return msgs[i].tool_calls[k].name;
	}
	return NULL;
}

static int add_content(cJSON *o, const struct llm_msg *m, int null_ok)
{
	if (m->parts)
		return add(o, "content", cJSON_Duplicate(m->parts, 1));
	if (null_ok && (!m->content || !*m->content))
		return add(o, "content", cJSON_CreateNull());
	return add_str(o, "content", m->content ? m->content : "");
}

static int build_message(const struct llm_msg *msgs, size_t i, cJSON *arr)
{
	const struct llm_msg *m = &msgs[i];
	cJSON *o = cJSON_CreateObject();
	cJSON *tcs;
	const char *name;
	size_t k;
	int rc;

	if (!o)
		return ENG_ENOMEM;
	rc = add_str(o, "role", role_name(m->role));
	if (rc)
		goto out;
	switch (m->role) {
	case LLM_ROLE_ASSISTANT:
		/* content key always present; null ("" included) only beside tool calls */
		rc = add_content(o, m, m->n_tool_calls > 0);
		if (rc || !m->n_tool_calls)
			break;
		tcs = cJSON_CreateArray();
		rc = add(o, "tool_calls", tcs);
		for (k = 0; !rc && k < m->n_tool_calls; k++) {
			cJSON *tc = history_tool_call(&m->tool_calls[k]);

			if (!tc || !cJSON_AddItemToArray(tcs, tc)) {
				cJSON_Delete(tc);
				rc = ENG_ENOMEM;
			}
		}
		break;
	case LLM_ROLE_TOOL:
		if (!m->tool_call_id || !*m->tool_call_id) {
			rc = err_set(ENG_EINVAL, "messages[%zu]: tool message without tool_call_id", i);
			break;
		}
		name = m->name ? m->name : name_for_call(msgs, i, m->tool_call_id);
		if (!name) {
			rc = err_set(ENG_EINVAL,
				     "messages[%zu]: tool message for '%s' has no name and no matching call",
				     i, m->tool_call_id);
			break;
		}
		rc = add_str(o, "tool_call_id", m->tool_call_id);
		if (!rc)
			rc = add_str(o, "name", name);
		if (!rc)
			rc = add_content(o, m, 0);
		break;
	default:
		rc = add_content(o, m, 0);
		break;
	}
out:
	if (!rc && !cJSON_AddItemToArray(arr, o))
		rc = ENG_ENOMEM;
	if (rc)
		cJSON_Delete(o);
	return rc;
}

int llm_msgs_to_json(const struct llm_msg *msgs, size_t n, cJSON **out)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;
	int rc = 0;

	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; !rc && i < n; i++)
		rc = build_message(msgs, i, arr);
	if (rc) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return 0;
}

static int build_tool(const struct llm_profile_info *pf, const struct llm_tool *t,
		      size_t i, cJSON *arr)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *fn = cJSON_CreateObject();
	cJSON *schema = NULL;
	int rc = 0;

	if (!o || !fn) {
		rc = ENG_ENOMEM;
		goto out;
	}
	if (!valid_tool_name(t->name)) {
		rc = err_set(ENG_EINVAL, "tools[%zu]: name '%s' does not match ^[a-zA-Z0-9_-]{1,64}$",
			     i, t->name ? t->name : "");
		goto out;
	}
	if (t->parameters) {
		schema = cJSON_Duplicate(t->parameters, 1);
		if (!schema)
			rc = ENG_ENOMEM;
	} else if (t->parameters_json) {
		schema = cJSON_Parse(t->parameters_json);
		if (!cJSON_IsObject(schema))
			rc = err_set(ENG_EPARSE, "tools[%zu] '%s': parameters are not a JSON object",
				     i, t->name);
	}
	if (!rc && schema && (pf->flags & LLM_PF_GEMINI_SCHEMA))
		rc = llm_gemini_schema(schema);
	if (rc)
		goto out;
	rc = add_str(fn, "name", t->name);
	if (!rc && t->description)
		rc = add_str(fn, "description", t->description);
	if (!rc && schema) {
		rc = add(fn, "parameters", schema);
		schema = NULL;
	}
	if (!rc && t->strict && (pf->flags & LLM_PF_STRICT))
		rc = add(fn, "strict", cJSON_CreateTrue());
	if (!rc)
		rc = add_str(o, "type", "function");
	if (!rc) {
		rc = add(o, "function", fn);
		fn = NULL;
	}
	if (!rc && !cJSON_AddItemToArray(arr, o))
		rc = ENG_ENOMEM;
out:
	cJSON_Delete(schema);
	cJSON_Delete(fn);
	if (rc)
		cJSON_Delete(o);
	return rc;
}

static int build_choice(const struct llm_profile_info *pf, const struct llm_opts *o,
			cJSON *root)
{
	cJSON *obj, *fn;

	if (o->tool_choice == LLM_CHOICE_DEFAULT || !(pf->flags & LLM_PF_TOOL_CHOICE))
		return 0;
	switch (o->tool_choice) {
	case LLM_CHOICE_AUTO: return add_str(root, "tool_choice", "auto");
	case LLM_CHOICE_NONE: return add_str(root, "tool_choice", "none");
	case LLM_CHOICE_REQUIRED: return add_str(root, "tool_choice", "required");
	case LLM_CHOICE_NAMED:
		if (!valid_tool_name(o->tool_name))
			return err_set(ENG_EINVAL, "named tool_choice without a valid tool name");
		if (!(pf->flags & LLM_PF_CHOICE_OBJECT))
			return add_str(root, "tool_choice", "required");
		obj = cJSON_CreateObject();
		fn = cJSON_CreateObject();
		if (!obj || !fn || add_str(obj, "type", "function") ||
		    add_str(fn, "name", o->tool_name)) {
			cJSON_Delete(obj);
			cJSON_Delete(fn);
			return ENG_ENOMEM;
		}
		if (add(obj, "function", fn)) {
			cJSON_Delete(obj);
			return ENG_ENOMEM;
		}
		return add(root, "tool_choice", obj);
	default:
		return err_set(ENG_EINVAL, "unknown tool_choice %d", (int)o->tool_choice);
	}
}

/* Adds the fields of extra_json that the body does not set already. */
static int build_extra(const char *extra_json, cJSON *root)
{
	cJSON *x = cJSON_Parse(extra_json);
	cJSON *it, *next;

	if (!cJSON_IsObject(x)) {
		cJSON_Delete(x);
		return err_set(ENG_EPARSE, "llm extra fields are not a JSON object");
	}
	for (it = x->child; it; it = next) {
		next = it->next;
		if (cJSON_GetObjectItemCaseSensitive(root, it->string))
			continue;
		cJSON_DetachItemViaPointer(x, it);
		cJSON_AddItemToObject(root, it->string, it);
	}
	cJSON_Delete(x);
	return 0;
}

/*
 * A raw item whose text is tools_raw itself, not a copy (cJSON's
 * reference flag: cJSON_Delete leaves the text alone). The memo it points
 * into outlives every request (tools_text).
 */
static cJSON *raw_reference(const char *tools_raw)
{
	cJSON *it = cJSON_CreateNull();

	if (it) {
		it->type = cJSON_Raw | cJSON_IsReference;
		it->valuestring = (char *)(uintptr_t)tools_raw;
	}
	return it;
}

/*
 * llm_build_request(); tools_raw (or NULL): the tools array as text, sent
 * as it is instead of being built from tools.
 */
static int build_request(const struct llm_client *c, const struct llm_msg *msgs, size_t n,
			 const struct llm_tool *tools, size_t ntools, const char *tools_raw,
			 const struct llm_opts *opts, cJSON **out)
{
	const struct llm_profile_info *pf = c->prof;
	struct llm_opts defaults;
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = NULL, *it, *next;
	size_t i;
	int mt;
	int rc = 0;

	if (!opts) {
		llm_opts_init(&defaults);
		opts = &defaults;
	}
	if (!root)
		return ENG_ENOMEM;
	rc = add_str(root, "model", c->model);
	if (!rc) {
		arr = cJSON_CreateArray();
		rc = add(root, "messages", arr);
	}
	for (i = 0; !rc && i < n; i++)
		rc = build_message(msgs, i, arr);
	if (!rc && ntools && tools_raw) {
		rc = add(root, "tools", raw_reference(tools_raw));
	} else if (!rc && ntools) {
		arr = cJSON_CreateArray();
		rc = add(root, "tools", arr);
		for (i = 0; !rc && i < ntools; i++)
			rc = build_tool(pf, &tools[i], i, arr);
	}
	if (!rc && ntools)
		rc = build_choice(pf, opts, root);
	if (!rc && ntools && opts->parallel_tool_calls >= 0 && (pf->flags & LLM_PF_PARALLEL))
		rc = add(root, "parallel_tool_calls", cJSON_CreateBool(opts->parallel_tool_calls));
	if (!rc && c->cfg.temperature >= 0 &&
	    !((pf->flags & LLM_PF_REASONING_RULES) && is_reasoning_model(c->model)))
		rc = add(root, "temperature", cJSON_CreateNumber(c->cfg.temperature));
	if (!rc && c->cfg.seed >= 0 && (pf->flags & LLM_PF_SEED))
		rc = add(root, "seed", cJSON_CreateNumber((double)c->cfg.seed));
	mt = opts->max_tokens > 0 ? opts->max_tokens : c->cfg.max_tokens;
	if (!rc && mt > 0)
		rc = add(root, pf->max_tokens_field, cJSON_CreateNumber(mt));
	if (!rc && opts->response_format_json) {
		cJSON *rf = cJSON_Parse(opts->response_format_json);

		if (!cJSON_IsObject(rf)) {
			cJSON_Delete(rf);
			rc = err_set(ENG_EPARSE, "llm response_format is not a JSON object");
		} else {
			rc = add(root, "response_format", rf);
		}
	}
	if (!rc && opts->extra_json)
		rc = build_extra(opts->extra_json, root);
	if (!rc && (pf->flags & LLM_PF_WHITELIST)) {
		for (it = root->child; it; it = next) {
			next = it->next;
			if (!llm_profile_allows_field(pf, it->string))
				cJSON_Delete(cJSON_DetachItemViaPointer(root, it));
		}
	}
	if (rc) {
		if (rc == ENG_ENOMEM)
			err_set(rc, "llm request: out of memory");
		cJSON_Delete(root);
		return rc;
	}
	*out = root;
	return 0;
}

int llm_build_request(const struct llm_client *c, const struct llm_msg *msgs, size_t n,
		      const struct llm_tool *tools, size_t ntools,
		      const struct llm_opts *opts, cJSON **out)
{
	return build_request(c, msgs, n, tools, ntools, NULL, opts, out);
}

/*
 * The memo of a static tool set for the client's profile, made on its
 * first request (under the lock: a set is built once); NULL when the memo
 * is full or the set does not build (the request then builds it and
 * reports why). A memo, once made, never changes.
 */
static const struct tools_memo *tools_text(const struct llm_client *c,
					   const struct llm_tool *tools, size_t ntools)
{
	struct tools_memo *m = NULL;
	cJSON *arr = NULL;
	struct buf b;
	size_t i;
	int rc = 0;

	buf_init(&b, (size_t)1 << 30);
	pthread_mutex_lock(&tools_memo_lock);
	for (i = 0; i < ntools_memo; i++)
		if (tools_memo[i].tools == tools && tools_memo[i].n == ntools &&
		    tools_memo[i].prof == c->prof) {
			m = &tools_memo[i];
			goto out;
		}
	if (ntools_memo == LLM_TOOLS_MEMO || !(arr = cJSON_CreateArray()))
		goto out;
	for (i = 0; !rc && i < ntools; i++)
		rc = build_tool(c->prof, &tools[i], i, arr);
	if (!rc)
		rc = llm_json_canonical(arr, &b);
	m = &tools_memo[ntools_memo];
	m->wire = rc ? NULL : cJSON_PrintUnformatted(arr);
	m->canon = m->wire ? buf_detach(&b) : NULL;
	if (!m->canon) {
		cJSON_free(m->wire);
		m->wire = NULL;
		m = NULL;
		err_clear();
		goto out;
	}
	m->tools = tools;
	m->n = ntools;
	m->prof = c->prof;
	ntools_memo++;
out:
	pthread_mutex_unlock(&tools_memo_lock);
	cJSON_Delete(arr);
	buf_release(&b);
	return m;
}

/* ===================== Transport ===================== */

/* One attempt's outcome, from the network or a cassette. */
struct attempt {
	int status;          /* HTTP status; 0 for a transport failure */
	CURLcode cc;
	int too_big;
	cJSON *headers;      /* lowercase names; may be NULL */
	char *body;          /* may be NULL */
	size_t len;
	long latency_ms;
	int replayed;
};

static void attempt_release(struct attempt *a)
{
	cJSON_Delete(a->headers);
	free(a->body);
	memset(a, 0, sizeof(*a));
}

static const char *hdr(const struct attempt *a, const char *name)
{
	return a->headers ? get_str(a->headers, name) : NULL;
}

/* ===================== Requests of fibers ===================== */

/* The multi handle of a thread running llm_fibers_run(). */
struct fiber_loop {
	CURLM *multi;
};

/* A fiber's transfer in the multi handle (its CURLOPT_PRIVATE). */
struct fiber_xfer {
	struct fiber *f;
	CURLcode cc;
	bool done;
};

static _Thread_local struct fiber_loop *thread_loop;

/* Drives the transfers, and wakes the fibers whose transfer is over. */
static void loop_progress(struct fiber_loop *l)
{
	CURLMsg *m;
	int running, left;

	curl_multi_perform(l->multi, &running);
	while ((m = curl_multi_info_read(l->multi, &left))) {
		struct fiber_xfer *x = NULL;
		CURL *easy = m->easy_handle;
		CURLcode cc = m->data.result;

		if (m->msg != CURLMSG_DONE)
			continue;
		/* the message is the multi handle's until the removal: read first */
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
		curl_multi_remove_handle(l->multi, easy);
		if (!x)
			continue;
		x->cc = cc;
		x->done = true;
		fiber_wake(x->f);
	}
}

static void loop_idle(void *ctx, long timeout_ms)
{
	struct fiber_loop *l = ctx;

	/* a wait with no limit is cut into seconds: a missed wake-up costs one */
	curl_multi_poll(l->multi, NULL, 0, timeout_ms < 0 || timeout_ms > 1000 ? 1000
					   : (int)timeout_ms, NULL);
	loop_progress(l);
}

/*
 * The transfer of easy on the thread's multi handle, the fiber parked
 * until it is over. The request goes out before the fiber parks (one
 * perform), not when the thread next runs out of ready fibers.
 */
static CURLcode fiber_perform(struct fiber_loop *l, CURL *easy)
{
	struct fiber_xfer x = { fiber_self(), CURLE_OK, false };

	curl_easy_setopt(easy, CURLOPT_PRIVATE, (char *)&x);
	if (curl_multi_add_handle(l->multi, easy) != CURLM_OK) {
		curl_easy_setopt(easy, CURLOPT_PRIVATE, (char *)NULL);
		return curl_easy_perform(easy);
	}
	loop_progress(l);
	while (!x.done)
		fiber_suspend();
	curl_easy_setopt(easy, CURLOPT_PRIVATE, (char *)NULL);
	return x.cc;
}

int llm_fibers_run(size_t n, fiber_fn *fn, void *const *args)
{
	struct fiber_loop l = { NULL };
	int rc;

	rc = curldl_load();
	if (rc)
		return rc;
	l.multi = curl_multi_init();
	if (!l.multi)
		return err_set(ENG_EHTTP, "llm: cannot make a libcurl multi handle");
	thread_loop = &l;
	rc = fiber_run(n, fn, args, 0, loop_idle, &l);
	thread_loop = NULL;
	curl_multi_cleanup(l.multi);
	return rc;
}

static int http_post(struct llm_client *c, const char *body, size_t len, struct attempt *a)
{
	long status = 0;
	long t0;

	buf_release(&c->body);
	buf_init(&c->body, c->cfg.max_response_bytes + 1);
	cJSON_Delete(c->resp_headers);
	c->resp_headers = cJSON_CreateObject();
	c->n_headers = 0;
	c->too_big = 0;
	c->errbuf[0] = '\0';
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	t0 = now_ms();
	a->cc = thread_loop && fiber_self() ? fiber_perform(thread_loop, c->curl)
					    : curl_easy_perform(c->curl);
	a->latency_ms = now_ms() - t0;
	if (a->cc == CURLE_OK)
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	a->status = (int)status;
	a->too_big = c->too_big;
	a->headers = c->resp_headers;
	c->resp_headers = NULL;
	a->len = c->body.len;
	a->body = buf_detach(&c->body);
	return a->body ? 0 : ENG_ENOMEM;
}

static int transport(struct llm_client *c, const char *key, const char *body, size_t len,
		     struct attempt *a)
{
	struct llm_cassette *cas = c->cfg.cassette;
	enum llm_cassette_mode mode = cas ? llm_cassette_mode(cas) : 0;
	int rc;

	if (cas && mode != LLM_CASSETTE_RECORD) {
		rc = llm_cassette_lookup(cas, key, &a->status, &a->headers, &a->body);
		if (!rc) {
			a->len = a->body ? strlen(a->body) : 0;
			a->replayed = 1;
			return 0;
		}
		if (rc != ENG_ENOTFOUND || mode == LLM_CASSETTE_REPLAY)
			return rc;
	}
	rc = http_post(c, body, len, a);
	if (rc || !cas || a->status <= 0)
		return rc;
	rc = llm_cassette_append(cas, key, body, a->status, a->headers, a->body, a->latency_ms);
	if (rc)
		logf_(c, "llm: cannot record to cassette: %s", err_msg());
	return 0;
}

static int curl_retryable(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

/* Server hints in headers override the body's (Gemini RetryInfo). */
static void header_hints(const struct attempt *a, struct llm_error *err)
{
	const char *v = hdr(a, "retry-after-ms");
	long ms;
	char *end;
	double d;

	if (v) {
		d = strtod(v, &end);
		if (end != v && d >= 0) {
			err->retry_after_ms = to_long(d + 0.5);
			return;
		}
	}
	v = hdr(a, "retry-after");
	if (v && !llm_parse_retry_after(v, time(NULL), &ms))
		err->retry_after_ms = ms;
}

static int status_retryable(const struct attempt *a, const struct llm_error *err)
{
	const char *x = hdr(a, "x-should-retry");
	int s = a->status;

	if (err->quota)
		return 0;
	if (x && !strcmp(x, "true"))
		return 1;
	if (x && !strcmp(x, "false"))
		return 0;
	return s == 408 || s == 409 || s == 429 || (s >= 500 && s != 501);
}

static void cache_lookup(struct llm_client *c, const struct llm_tool *tools, size_t ntools,
			 struct llm_reply *out, int *hit)
{
	const struct llm_cache_ops *ops = c->cfg.cache;
	char *resp = NULL;
	int status = 0;
	int rc;

	*hit = 0;
	if (!ops || !ops->get)
		return;
	rc = ops->get(ops->ctx, out->key, &resp, &status);
	if (rc == ENG_ENOTFOUND)
		return;
	if (rc) {
		logf_(c, "llm: cache get failed (%s); treated as a miss", eng_strerror(rc));
		return;
	}
	if (status == 200 && resp &&
	    !llm_reply_parse(resp, strlen(resp), tools, ntools, c->cfg.salvage,
			     &c->id_counter, out)) {
		*hit = 1;
		out->cached = 1;
		out->http_status = 200;
		out->body = resp;
		logf_(c, "llm: cache hit %.16s", out->key);
		return;
	}
	logf_(c, "llm: cache entry %.16s unusable; asking the server", out->key);
	free(resp);
}

/*
 * The outcome of one HTTP attempt into out: 0 for a parsed reply, else
 * the error, with *retryable saying whether another attempt may help.
 */
static int attempt_outcome(struct llm_client *c, struct attempt *a, int attempt,
			   const struct llm_tool *tools, size_t ntools, struct llm_reply *out,
			   int *retryable)
{
	int rc;

	out->attempts = attempt + 1;
	out->latency_ms = a->latency_ms;
	out->http_status = a->status;
	out->replayed = a->replayed;
	free(out->request_id);
	out->request_id = xstrdup(hdr(a, "x-request-id"));
	free(out->body);
	out->body = a->body;
	a->body = NULL;
	memset(&out->error, 0, sizeof(out->error));
	out->error.retry_after_ms = -1;
	if (a->status == 0) {
		out->error.curl_code = (int)a->cc;
		copy_field(out->error.message, sizeof(out->error.message),
			   c->errbuf[0] ? c->errbuf
			   : !curldl_load() ? curl_easy_strerror(a->cc) : "transport error");
		if (a->too_big)
			return err_set(ENG_ETOOBIG, "llm: %s: response larger than %zu bytes",
				       c->shown_url, c->cfg.max_response_bytes);
		*retryable = curl_retryable(a->cc);
		return a->cc == CURLE_OPERATION_TIMEDOUT ? ENG_ETIMEOUT : ENG_EHTTP;
	}
	if (a->status >= 200 && a->status < 300) {
		rc = llm_reply_parse(out->body, a->len, tools, ntools, c->cfg.salvage,
				     &c->id_counter, out);
		if (!rc)
			return 0;
		out->error.http_status = a->status;
		copy_field(out->error.message, sizeof(out->error.message), err_msg());
		*retryable = 1;
		return rc;
	}
	llm_error_parse(out->body, a->len, a->status, &out->error);
	header_hints(a, &out->error);
	*retryable = status_retryable(a, &out->error);
	return ENG_EHTTP;
}

/*
 * Waits before the next attempt (Retry-After, else backoff with jitter),
 * within the client's budgets. Returns false when no retry should follow.
 */
static bool retry_wait(struct llm_client *c, const struct attempt *a, int attempt,
		       struct llm_reply *out)
{
	long delay = out->error.retry_after_ms;

	if (delay > c->cfg.max_retry_after_ms) {
		logf_(c, "llm: server asks to wait %ld ms (> %ld): not retrying", delay,
		      c->cfg.max_retry_after_ms);
		return false;
	}
	if (delay <= 0)
		delay = llm_backoff_ms(attempt, c->cfg.max_backoff_ms, rng_unit(&c->rng));
	if (out->retry_wait_ms + delay > c->cfg.max_retry_wait_ms) {
		logf_(c, "llm: retry wait budget %ld ms spent", c->cfg.max_retry_wait_ms);
		return false;
	}
	logf_(c, "llm: attempt %d/%d %s -> %d%s%s (%s); retry in %ld ms", attempt + 1,
	      c->cfg.max_retries + 1, c->shown_url, a->status,
	      out->request_id ? " request-id " : "", out->request_id ? out->request_id : "",
	      out->error.message, delay);
	out->retry_wait_ms += delay;
	if (!a->replayed) {
		if (c->cfg.sleep_ms)
			c->cfg.sleep_ms(c->cfg.sleep_ctx, delay);
		else
			default_sleep(NULL, delay);
	}
	return true;
}

int llm_chat(struct llm_client *c, const struct llm_msg *msgs, size_t n,
	     const struct llm_tool *tools, size_t ntools,
	     const struct llm_opts *opts, struct llm_reply *out)
{
	const struct tools_memo *tm;
	cJSON *req = NULL;
	char *wire = NULL;
	size_t wire_len;
	struct attempt a;
	int attempt, retryable = 0, hit = 0;
	int rc = 0;
	size_t i;

	memset(&a, 0, sizeof(a));
	llm_reply_init(out);
	/*
	 * Ids made up for calls that came without one (text calls, providers
	 * that send none) are a function of the conversation only: the turn
	 * (assistant messages so far) times 100 plus the call's place. A
	 * per-client counter made the next request, and so its cache key,
	 * depend on which sessions the thread had served before.
	 */
	c->id_counter = 0;
	for (i = 0; i < n; i++)
		c->id_counter += msgs[i].role == LLM_ROLE_ASSISTANT;
	c->id_counter *= 100;
	tm = ntools && opts && opts->tools_static ? tools_text(c, tools, ntools) : NULL;
	rc = build_request(c, msgs, n, tools, ntools, tm ? tm->wire : NULL, opts, &req);
	if (rc)
		return rc;
	rc = llm_cache_key_tools(c->prof->name, c->path, req, tm ? tm->canon : NULL, out->key);
	if (rc)
		goto out;
	/* cJSON_PrintUnformatted's text, printed in one pass */
	wire = jsonfile_print(req);
	if (!wire) {
		rc = ENG_ENOMEM;
		goto out;
	}
	wire_len = strlen(wire);
	cache_lookup(c, tools, ntools, out, &hit);
	if (hit)
		goto out;
	for (attempt = 0;; attempt++) {
		attempt_release(&a);
		rc = transport(c, out->key, wire, wire_len, &a);
		if (rc)
			goto out;
		rc = attempt_outcome(c, &a, attempt, tools, ntools, out, &retryable);
		if (!rc || rc == ENG_ETOOBIG)
			break;
		if (!retryable || attempt >= c->cfg.max_retries || !retry_wait(c, &a, attempt, out))
			break;
	}
	if (rc == ENG_ETOOBIG)
		goto out;
	if (rc) {
		char what[160] = "";

		if (out->error.http_status)
			snprintf(what, sizeof(what), "HTTP %d%s%s%s%s: ", out->error.http_status,
				 out->error.type[0] ? " " : "", out->error.type,
				 out->error.code[0] ? " " : "", out->error.code);
		err_set(rc, "llm: %s: %s%s (%d attempt%s)", c->shown_url, what, out->error.message,
			out->attempts, out->attempts == 1 ? "" : "s");
		goto out;
	}
	logf_(c, "llm: attempt %d %s -> %d in %ld ms%s", out->attempts, c->shown_url, out->http_status,
	      out->latency_ms, out->replayed ? " (replayed)" : "");
	if (out->http_status == 200 && !out->replayed && c->cfg.cache && c->cfg.cache->put) {
		int prc = c->cfg.cache->put(c->cfg.cache->ctx, out->key, wire, out->body, 200,
					    out->latency_ms);

		if (prc)
			logf_(c, "llm: cache put failed (%s)", eng_strerror(prc));
	}
out:
	attempt_release(&a);
	free(wire);
	cJSON_Delete(req);
	return rc;
}
