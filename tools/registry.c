/* SPDX-License-Identifier: MIT */
/* The tool table, schema loading, the per-thread context and tool_call(). */
#include "registry.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "embed.h"
#include "err.h"

/*
 * The table is generated from schemas/tools/ (scripts/gen_tools.sh): one
 * row per schema, NAME bound to tool_NAME(). The schema of each is
 * schemas/tools/<name>.json; its top-level "description" is what the
 * brain reads about the tool, its "title" the one-line summary.
 */
#define NTOOLS TOOLS_GEN_COUNT


/* ======================= Schemas ======================= */

struct loaded {
	struct schema *schema; /* NULL when loading failed */
	int rc;                /* load result */
	char err[512];         /* load error message */
};

static struct loaded loaded[NTOOLS];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static int load_one(const struct tool_def *t, struct loaded *l)
{
	char path[128];
	const struct embed_file *f;
	const cJSON *doc, *type, *desc;
	int rc;

	snprintf(path, sizeof(path), "schemas/tools/%s.json", t->name);
	f = embed_find(path);
	if (!f)
		return err_set(ENG_ENOENT, "tool '%s': %s is not embedded in the binary",
			       t->name, path);
	rc = schema_parse(path, f->data, f->len, &l->schema);
	if (rc)
		return rc;
	doc = schema_doc(l->schema);
	type = cJSON_GetObjectItemCaseSensitive(doc, "type");
	desc = cJSON_GetObjectItemCaseSensitive(doc, "description");
	if (!cJSON_IsString(type) || strcmp(type->valuestring, "object"))
		rc = err_set(ENG_ESCHEMA, "%s: the root must have \"type\": \"object\"", path);
	else if (!cJSON_IsString(desc) || !desc->valuestring[0])
		rc = err_set(ENG_ESCHEMA, "%s: the root needs a \"description\" of the tool", path);
	if (rc) {
		schema_free(l->schema);
		l->schema = NULL;
	}
	return rc;
}

static void load_all(void)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++) {
		err_clear();
		loaded[i].rc = load_one(&tool__table[i], &loaded[i]);
		if (loaded[i].rc)
			snprintf(loaded[i].err, sizeof(loaded[i].err), "%s",
				 err_msg()[0] ? err_msg() : eng_strerror(loaded[i].rc));
	}
}

size_t tool_count(void)
{
	return NTOOLS;
}

const struct tool_def *tool_at(size_t i)
{
	return i < NTOOLS ? &tool__table[i] : NULL;
}

const struct tool_def *tool_find(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < NTOOLS; i++)
		if (!strcmp(tool__table[i].name, name))
			return &tool__table[i];
	return NULL;
}

int tool_schema(const struct tool_def *t, const struct schema **out)
{
	size_t i = (size_t)(t - tool__table);

	if (i >= NTOOLS)
		return err_set(ENG_EINVAL, "not a registered tool");
	pthread_once(&load_once, load_all);
	if (loaded[i].rc)
		return err_set(loaded[i].rc, "%s", loaded[i].err);
	*out = loaded[i].schema;
	return 0;
}

const char *tool_summary(const struct tool_def *t)
{
	const struct schema *s;
	const cJSON *d;

	if (tool_schema(t, &s))
		return "";
	d = cJSON_GetObjectItemCaseSensitive(schema_doc(s), "title");
	return cJSON_IsString(d) ? d->valuestring : "";
}

const char *tool_description(const struct tool_def *t)
{
	const struct schema *s;
	const cJSON *d;

	if (tool_schema(t, &s))
		return "";
	d = cJSON_GetObjectItemCaseSensitive(schema_doc(s), "description");
	return cJSON_IsString(d) ? d->valuestring : "";
}

int tool_registry_check(void)
{
	const struct schema *s;
	size_t i, j;
	int rc;

	for (i = 0; i < NTOOLS; i++) {
		const char *n = tool__table[i].name;

		if (!n[0] || strlen(n) > 64)
			return err_set(ENG_EINVAL, "tool name '%s' is not 1 to 64 characters", n);
		for (j = 0; n[j]; j++)
			if (!islower((unsigned char)n[j]) && !isdigit((unsigned char)n[j]) &&
			    n[j] != '_')
				return err_set(ENG_EINVAL, "tool name '%s' is not [a-z0-9_]", n);
		for (j = 0; j < i; j++)
			if (!strcmp(tool__table[j].name, n))
				return err_set(ENG_EINVAL, "tool '%s' is registered twice", n);
		rc = tool_schema(&tool__table[i], &s);
		if (rc)
			return rc;
	}
	return 0;
}

int tool_openai_tools(cJSON **out)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;
	int rc = 0;

	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; i < NTOOLS; i++) {
		const struct schema *s;
		cJSON *item, *fn, *params;

		rc = tool_schema(&tool__table[i], &s);
		if (rc)
			goto out;
		item = cJSON_CreateObject();
		if (!item) {
			rc = ENG_ENOMEM;
			goto out;
		}
		cJSON_AddItemToArray(arr, item);
		params = cJSON_Duplicate(schema_doc(s), 1);
		fn = cJSON_CreateObject();
		if (!params || !fn || !cJSON_AddStringToObject(item, "type", "function")) {
			cJSON_Delete(params);
			cJSON_Delete(fn);
			rc = ENG_ENOMEM;
			goto out;
		}
		cJSON_AddItemToObject(item, "function", fn);
		/* the description travels once, next to the name; the title is ours */
		cJSON_DeleteItemFromObjectCaseSensitive(params, "description");
		cJSON_DeleteItemFromObjectCaseSensitive(params, "title");
		if (!cJSON_AddStringToObject(fn, "name", tool__table[i].name) ||
		    !cJSON_AddStringToObject(fn, "description", tool_description(&tool__table[i]))) {
			cJSON_Delete(params);
			rc = ENG_ENOMEM;
			goto out;
		}
		cJSON_AddItemToObject(fn, "parameters", params);
		if (!cJSON_AddTrueToObject(fn, "strict")) {
			rc = ENG_ENOMEM;
			goto out;
		}
	}
out:
	if (rc) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return 0;
}

/* ======================= Context ======================= */

struct shared_ent {
	char key[96];
	void *data;
	void (*destroy)(void *data);
	bool ready;                  /* false while its maker runs */
	struct shared_ent *next;
};

struct tool_shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct shared_ent *head;
	size_t list_size;            /* tool_shared_set_list_size(), 0 unset */
};

struct tool_ctx {
	struct tool_shared *shared;  /* borrowed, or NULL */
	const struct recording *rec; /* borrowed */
	struct disc_params disc;     /* discretisation settings */
	unsigned flags;              /* enum tool_ctx_flags */
	struct {
		void *data;                 /* owned by the context */
		void (*destroy)(void *data); /* may be NULL */
	} slots[TOOL_SLOT_COUNT];
	cJSON *rejects;              /* violations of the running call, or NULL */
};

int tool_ctx_new(const struct recording *rec, struct tool_ctx **out)
{
	struct tool_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return ENG_ENOMEM;
	ctx->rec = rec;
	disc_defaults(&ctx->disc);
	*out = ctx;
	return 0;
}

int tool_shared_new(struct tool_shared **out)
{
	struct tool_shared *s = calloc(1, sizeof(*s));

	if (!s)
		return ENG_ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	*out = s;
	return 0;
}

void tool_shared_free(struct tool_shared *s)
{
	struct shared_ent *e, *next;

	if (!s)
		return;
	for (e = s->head; e; e = next) {
		next = e->next;
		if (e->data && e->destroy)
			e->destroy(e->data);
		free(e);
	}
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void tool_ctx_share(struct tool_ctx *ctx, struct tool_shared *s)
{
	ctx->shared = s;
}

void tool_shared_set_list_size(struct tool_shared *s, size_t n)
{
	s->list_size = n;
}

size_t tool_ctx_list_size(const struct tool_ctx *ctx)
{
	return ctx->shared ? ctx->shared->list_size : 0;
}

int tool_shared_get(struct tool_ctx *ctx, const char *key,
		    int (*make)(void *arg, void **data, void (**destroy)(void *data)),
		    void *arg, void **data, bool *owned)
{
	struct tool_shared *s = ctx->shared;
	struct shared_ent *e, **pp;
	void (*destroy)(void *data) = NULL;
	int rc;

	*data = NULL;
	*owned = s == NULL;
	if (!s)
		return make(arg, data, &destroy);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		for (e = s->head; e && strcmp(e->key, key); e = e->next)
			;
		if (!e || e->ready)
			break;
		pthread_cond_wait(&s->cond, &s->lock);
	}
	if (e) {
		*data = e->data;
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		pthread_mutex_unlock(&s->lock);
		return ENG_ENOMEM;
	}
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->next = s->head;
	s->head = e;
	pthread_mutex_unlock(&s->lock);
	rc = make(arg, data, &destroy);
	pthread_mutex_lock(&s->lock);
	if (rc) {
		/* not stored: a waiter makes it again, and gets its own error */
		for (pp = &s->head; *pp != e; pp = &(*pp)->next)
			;
		*pp = e->next;
		free(e);
	} else {
		e->data = *data;
		e->destroy = destroy;
		e->ready = true;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void tool_ctx_free(struct tool_ctx *ctx)
{
	size_t i;

	if (!ctx)
		return;
	for (i = 0; i < TOOL_SLOT_COUNT; i++)
		if (ctx->slots[i].data && ctx->slots[i].destroy)
			ctx->slots[i].destroy(ctx->slots[i].data);
	cJSON_Delete(ctx->rejects);
	free(ctx);
}

const struct recording *tool_ctx_rec(const struct tool_ctx *ctx)
{
	return ctx->rec;
}

const struct disc_params *tool_ctx_disc(const struct tool_ctx *ctx)
{
	return &ctx->disc;
}

void tool_ctx_set_disc(struct tool_ctx *ctx, const struct disc_params *p)
{
	ctx->disc = *p;
}

void tool_ctx_set_flags(struct tool_ctx *ctx, unsigned flags)
{
	ctx->flags = flags;
}

void *tool_ctx_slot(const struct tool_ctx *ctx, enum tool_slot slot)
{
	if ((unsigned)slot >= TOOL_SLOT_COUNT)
		return NULL; /* documented: an invalid slot is empty */
	return ctx->slots[slot].data;
}

int tool_ctx_set_slot(struct tool_ctx *ctx, enum tool_slot slot, void *data,
		      void (*destroy)(void *data))
{
	if ((unsigned)slot >= TOOL_SLOT_COUNT)
		return err_set(ENG_EINVAL, "invalid tool context slot %d", (int)slot);
	if (ctx->slots[slot].data && ctx->slots[slot].data != data &&
	    ctx->slots[slot].destroy)
		ctx->slots[slot].destroy(ctx->slots[slot].data);
	ctx->slots[slot].data = data;
	ctx->slots[slot].destroy = destroy;
	return 0;
}

int tool_shared_slot(struct tool_ctx *ctx, enum tool_slot slot, const char *key,
		     int (*make)(void *arg, void **data, void (**destroy)(void *data)),
		     void *arg, void (*destroy)(void *data), void **out)
{
	void *data = NULL;
	bool owned;
	int rc;

	rc = tool_shared_get(ctx, key, make, arg, &data, &owned);
	if (rc)
		return rc;
	rc = tool_ctx_set_slot(ctx, slot, data, owned ? destroy : NULL);
	if (rc) {
		if (owned)
			destroy(data);
		return rc;
	}
	*out = data;
	return 0;
}

int tool__reject(struct tool_ctx *ctx, const char *path, const char *fmt, ...)
{
	char msg[512];
	cJSON *v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err_set(ENG_EINVAL, "%s: %s", path, msg);
	if (!ctx->rejects)
		ctx->rejects = cJSON_CreateArray();
	v = cJSON_CreateObject();
	if (!ctx->rejects || !v || !cJSON_AddStringToObject(v, "path", path) ||
	    !cJSON_AddStringToObject(v, "message", msg)) {
		cJSON_Delete(v);
		return ENG_EINVAL; /* still reported, as tool_failed with the message */
	}
	cJSON_AddItemToArray(ctx->rejects, v);
	return ENG_EINVAL;
}

/* ======================= Calling ======================= */

/* {"ok":false,"error":kind} plus "detail" when given; NULL when out of memory. */
static cJSON *failure(const char *kind, const char *detail)
{
	cJSON *r = cJSON_CreateObject();

	if (!r || !cJSON_AddFalseToObject(r, "ok") ||
	    !cJSON_AddStringToObject(r, "error", kind) ||
	    (detail && !cJSON_AddStringToObject(r, "detail", detail))) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

static int unknown_tool(const char *name, cJSON **result)
{
	char detail[160];
	cJSON *r, *names;
	size_t i;

	snprintf(detail, sizeof(detail), "no tool named '%.100s'", name ? name : "");
	r = failure("unknown_tool", detail);
	names = cJSON_CreateArray();
	if (!r || !names) {
		cJSON_Delete(r);
		cJSON_Delete(names);
		return ENG_ENOMEM;
	}
	cJSON_AddItemToObject(r, "valid_tools", names);
	for (i = 0; i < NTOOLS; i++) {
		cJSON *s = cJSON_CreateString(tool__table[i].name);

		if (!s) {
			cJSON_Delete(r);
			return ENG_ENOMEM;
		}
		cJSON_AddItemToArray(names, s);
	}
	*result = r;
	return ENG_ENOTFOUND;
}

static int tool_failed(const char *detail, int code, cJSON **result)
{
	cJSON *r = failure("tool_failed", detail);

	if (!r)
		return ENG_ENOMEM;
	*result = r;
	return code ? code : ENG_EINVAL;
}

/* Takes ownership of `violations`. */
static int invalid_arguments(const char *name, cJSON *violations, cJSON **result)
{
	char hint[160];
	cJSON *r = failure("invalid_arguments", NULL);

	snprintf(hint, sizeof(hint), "call %s again with corrected arguments", name);
	if (!r) {
		cJSON_Delete(violations);
		return ENG_ENOMEM;
	}
	cJSON_AddItemToObject(r, "violations", violations);
	if (!cJSON_AddStringToObject(r, "hint", hint)) {
		cJSON_Delete(r);
		return ENG_ENOMEM;
	}
	*result = r;
	return ENG_ESCHEMA;
}

int tool_call_value(struct tool_ctx *ctx, const char *name, const cJSON *args,
		    cJSON **result)
{
	const struct tool_def *t = tool_find(name);
	const struct schema *s;
	cJSON *copy = NULL, *viol = NULL, *res = NULL;
	const cJSON *work = args;
	char detail[1100];
	int rc, n;

	*result = NULL;
	if (!t)
		return unknown_tool(name, result);
	rc = tool_schema(t, &s);
	if (rc) {
		snprintf(detail, sizeof(detail), "the schema of '%s' does not load: %s",
			 name, err_msg());
		return tool_failed(detail, rc, result);
	}
	if (!args || (ctx->flags & TOOL_CTX_FILL_NULLS)) {
		copy = args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
		if (!copy || ((ctx->flags & TOOL_CTX_FILL_NULLS) && schema_fill_nulls(s, copy))) {
			rc = ENG_ENOMEM;
			goto out;
		}
		work = copy;
	}
	viol = cJSON_CreateArray();
	if (!viol) {
		rc = ENG_ENOMEM;
		goto out;
	}
	n = schema_validate(s, work, viol);
	if (n < 0) {
		rc = n;
		goto out;
	}
	if (n > 0) {
		rc = invalid_arguments(name, viol, result);
		viol = NULL;
		goto out;
	}
	if (!ctx->rec) {
		rc = tool_failed("no recording is loaded", ENG_EINVAL, result);
		goto out;
	}
	res = cJSON_CreateObject();
	if (!res || !cJSON_AddTrueToObject(res, "ok")) {
		rc = ENG_ENOMEM;
		goto out;
	}
	cJSON_Delete(ctx->rejects);
	ctx->rejects = NULL;
	err_clear();
	rc = t->fn(ctx, work, res);
	if (!rc) {
		*result = res;
		res = NULL;
		goto out;
	}
	if (rc == ENG_EINVAL && ctx->rejects && cJSON_GetArraySize(ctx->rejects) > 0) {
		rc = invalid_arguments(name, ctx->rejects, result);
		ctx->rejects = NULL;
		goto out;
	}
	snprintf(detail, sizeof(detail), "%s", err_msg()[0] ? err_msg() : eng_strerror(rc));
	n = tool_failed(detail, rc, result);
	if (n == ENG_ENOMEM)
		rc = ENG_ENOMEM;
out:
	cJSON_Delete(ctx->rejects);
	ctx->rejects = NULL;
	cJSON_Delete(res);
	cJSON_Delete(viol);
	cJSON_Delete(copy);
	if (rc == ENG_ENOMEM && !*result)
		*result = failure("tool_failed", "out of memory");
	return rc;
}

/* Up to 24 bytes of text at p, control characters shown as spaces. */
static void snippet(const char *p, char *b, size_t n)
{
	size_t i;

	for (i = 0; i < 24 && i + 1 < n && p[i]; i++)
		/* NOLINTNEXTLINE(bugprone-narrowing-conversions): both arms are chars */
		b[i] = ((unsigned char)p[i] < 0x20) ? ' ' : p[i];
	while (i > 0 && ((unsigned char)p[i] & 0xC0) == 0x80) /* whole characters only */
		i--;
	b[i] = '\0';
}

static int invalid_json(const char *text, cJSON **result)
{
	const char *end = NULL, *p;
	char detail[200], near[32];
	size_t len = strlen(text);
	cJSON *r, *v;

	/* the text without the trailing-garbage rule tells the two cases apart */
	v = cJSON_ParseWithLengthOpts(text, len + 1, &end, 0);
	if (v) {
		cJSON_Delete(v);
		for (p = end; *p && isspace((unsigned char)*p); p++)
			;
		snippet(p, near, sizeof(near));
		snprintf(detail, sizeof(detail),
			 "unexpected characters after the JSON value at byte %zu: '%s'",
			 (size_t)(p - text), near);
	} else {
		p = end ? end : text;
		snippet(p, near, sizeof(near));
		snprintf(detail, sizeof(detail), "invalid JSON at byte %zu%s%s%s",
			 (size_t)(p - text), *p ? " near '" : " (unexpected end)",
			 *p ? near : "", *p ? "'" : "");
	}
	r = failure("invalid_json", detail);
	if (!r || !cJSON_AddStringToObject(r, "hint",
					   "arguments must be a JSON object matching the schema")) {
		cJSON_Delete(r);
		return ENG_ENOMEM;
	}
	*result = r;
	return ENG_EPARSE;
}

int tool_call(struct tool_ctx *ctx, const char *name, const char *args_json,
	      cJSON **result)
{
	const char *p = args_json ? args_json : "";
	const char *end = NULL;
	cJSON *args;
	int rc;

	*result = NULL;
	if (!tool_find(name))
		return unknown_tool(name, result);
	while (*p && isspace((unsigned char)*p))
		p++;
	if (!*p)
		args = cJSON_CreateObject();
	else
		args = cJSON_ParseWithLengthOpts(args_json, strlen(args_json) + 1, &end, 1);
	if (!args) {
		if (!*p)
			return ENG_ENOMEM;
		return invalid_json(args_json, result);
	}
	rc = tool_call_value(ctx, name, args, result);
	cJSON_Delete(args);
	return rc;
}
