/* SPDX-License-Identifier: MIT */
/* A JSON Schema subset validator over cJSON that collects every violation. */
#include "schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"

struct schema {
	cJSON *doc;  /* private copy of the schema document */
};

/* ======================= JSON Pointers ======================= */

#define PTR_CAP 512

/* A JSON Pointer under construction; push returns the length to pop back to. */
struct ptr {
	char s[PTR_CAP]; /* NUL-terminated pointer text */
	size_t len;      /* bytes used */
};

static void ptr_add(struct ptr *p, const char *s, size_t n)
{
	if (p->len + n + 4 >= PTR_CAP) { /* too deep: end with one visible mark */
		if (p->len < 4 || strcmp(p->s + p->len - 4, "/...")) {
			memcpy(p->s + p->len, "/...", 4);
			p->len += 4;
		}
		p->s[p->len] = '\0';
		return;
	}
	memcpy(p->s + p->len, s, n);
	p->len += n;
	p->s[p->len] = '\0';
}

/* Appends "/key" with RFC 6901 escapes (~ -> ~0, / -> ~1). */
static size_t ptr_push_key(struct ptr *p, const char *key)
{
	size_t old = p->len;
	const char *k;

	ptr_add(p, "/", 1);
	for (k = key; *k; k++) {
		if (*k == '~')
			ptr_add(p, "~0", 2);
		else if (*k == '/')
			ptr_add(p, "~1", 2);
		else
			ptr_add(p, k, 1);
	}
	return old;
}

static size_t ptr_push_index(struct ptr *p, int i)
{
	char b[24];
	size_t old = p->len;
	int n = snprintf(b, sizeof(b), "/%d", i);

	ptr_add(p, b, (size_t)n);
	return old;
}

static void ptr_pop(struct ptr *p, size_t len)
{
	p->len = len;
	p->s[len] = '\0';
}

/* ======================= Schema checking (load time) ======================= */

static const char *const type_names[] = {
	"null", "boolean", "object", "array", "number", "string", "integer",
};

static const char *const ignored_keywords[] = {
	"description", "title", "default", "examples", "$schema", "$comment",
};

static bool is_type_name(const char *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(type_names); i++)
		if (!strcmp(s, type_names[i]))
			return true;
	return false;
}

static bool is_ignored(const char *kw)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ignored_keywords); i++)
		if (!strcmp(kw, ignored_keywords[i]))
			return true;
	return false;
}

static bool is_count(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	       v->valuedouble <= 1e15 && floor(v->valuedouble) == v->valuedouble;
}

struct check {
	const char *name; /* prefix of messages */
	struct ptr at;    /* location inside the schema */
};

static int check_fail(struct check *c, const char *what)
{
	return err_set(ENG_ESCHEMA, "%s: %s: %s", c->name, c->at.len ? c->at.s : "(root)",
		       what);
}

/* true when the array holds unique strings (names for required/type) */
static bool unique_strings(const cJSON *a, bool (*valid)(const char *))
{
	const cJSON *x, *y;

	cJSON_ArrayForEach(x, a) {
		if (!cJSON_IsString(x) || (valid && !valid(x->valuestring)))
			return false;
		for (y = x->next; y; y = y->next)
			if (cJSON_IsString(y) && !strcmp(x->valuestring, y->valuestring))
				return false;
	}
	return true;
}

static int check_schema(struct check *c, const cJSON *s);

static int check_keyword(struct check *c, const cJSON *kw)
{
	const char *k = kw->string;
	const cJSON *x;
	char msg[160];
	int rc = 0, i = 0;

	if (is_ignored(k))
		return 0;
	if (!strcmp(k, "type")) {
		if (cJSON_IsString(kw)) {
			if (!is_type_name(kw->valuestring))
				return check_fail(c, "unknown type name");
			return 0;
		}
		if (!cJSON_IsArray(kw) || !cJSON_GetArraySize(kw) ||
		    !unique_strings(kw, is_type_name))
			return check_fail(c, "must be a type name or an array of unique type names");
		return 0;
	}
	if (!strcmp(k, "enum")) {
		if (!cJSON_IsArray(kw) || !cJSON_GetArraySize(kw))
			return check_fail(c, "must be a non-empty array");
		return 0;
	}
	if (!strcmp(k, "const"))
		return 0;
	if (!strcmp(k, "required")) {
		if (!cJSON_IsArray(kw) || !unique_strings(kw, NULL))
			return check_fail(c, "must be an array of unique strings");
		return 0;
	}
	if (!strcmp(k, "properties")) {
		if (!cJSON_IsObject(kw))
			return check_fail(c, "must be an object");
		cJSON_ArrayForEach(x, kw) {
			size_t old = ptr_push_key(&c->at, x->string);

			rc = check_schema(c, x);
			ptr_pop(&c->at, old);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!strcmp(k, "additionalProperties") || !strcmp(k, "items")) {
		if (cJSON_IsArray(kw))
			return check_fail(c, "the array (tuple) form is not supported");
		return check_schema(c, kw);
	}
	if (!strcmp(k, "minItems") || !strcmp(k, "maxItems") ||
	    !strcmp(k, "minLength") || !strcmp(k, "maxLength")) {
		if (!is_count(kw))
			return check_fail(c, "must be a non-negative integer");
		return 0;
	}
	if (!strcmp(k, "minimum") || !strcmp(k, "maximum") ||
	    !strcmp(k, "exclusiveMinimum") || !strcmp(k, "exclusiveMaximum")) {
		if (cJSON_IsBool(kw))
			return check_fail(c, "the draft-4 boolean form is not supported; give the bound as a number");
		if (!cJSON_IsNumber(kw))
			return check_fail(c, "must be a number");
		return 0;
	}
	if (!strcmp(k, "anyOf")) {
		if (!cJSON_IsArray(kw) || !cJSON_GetArraySize(kw))
			return check_fail(c, "must be a non-empty array of schemas");
		cJSON_ArrayForEach(x, kw) {
			size_t old = ptr_push_index(&c->at, i++);

			rc = check_schema(c, x);
			ptr_pop(&c->at, old);
			if (rc)
				return rc;
		}
		return 0;
	}
	snprintf(msg, sizeof(msg), "unsupported keyword '%.100s'", k);
	return check_fail(c, msg);
}

static int check_schema(struct check *c, const cJSON *s)
{
	const cJSON *kw;

	if (cJSON_IsBool(s))
		return 0;
	if (!cJSON_IsObject(s))
		return check_fail(c, "a schema must be an object or a boolean");
	cJSON_ArrayForEach(kw, s) {
		size_t old = ptr_push_key(&c->at, kw->string);
		int rc = check_keyword(c, kw);

		ptr_pop(&c->at, old);
		if (rc)
			return rc;
	}
	return 0;
}

int schema_new(const char *name, const cJSON *doc, struct schema **out)
{
	struct check c;
	struct schema *s;
	int rc;

	if (!doc)
		return err_set(ENG_EINVAL, "%s: no schema", name ? name : "schema");
	c.name = name ? name : "schema";
	c.at.len = 0;
	c.at.s[0] = '\0';
	rc = check_schema(&c, doc);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ENG_ENOMEM;
	s->doc = cJSON_Duplicate(doc, 1);
	if (!s->doc) {
		free(s);
		return ENG_ENOMEM;
	}
	*out = s;
	return 0;
}

int schema_parse(const char *name, const char *text, size_t len,
		 struct schema **out)
{
	const char *end = NULL;
	cJSON *doc;
	int rc;

	doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!doc)
		return err_set(ENG_EPARSE, "%s: invalid JSON at byte %zu",
			       name ? name : "schema", end ? (size_t)(end - text) : 0);
	rc = schema_new(name, doc, out);
	cJSON_Delete(doc);
	return rc;
}

void schema_free(struct schema *s)
{
	if (!s)
		return;
	cJSON_Delete(s->doc);
	free(s);
}

const cJSON *schema_doc(const struct schema *s)
{
	return s->doc;
}

/* ======================= Validation ======================= */

struct vstate {
	cJSON *out;  /* violations array, or NULL to count only */
	int count;   /* violations seen, including those not stored */
	bool nomem;  /* an allocation failed */
	struct ptr at; /* location inside the instance */
};

static void add_violation(struct vstate *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_violation(struct vstate *st, const char *fmt, ...)
{
	char msg[768];
	cJSON *v;
	va_list ap;

	st->count++;
	if (!st->out || st->count > SCHEMA_MAX_VIOLATIONS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	v = cJSON_CreateObject();
	if (!v || !cJSON_AddStringToObject(v, "path", st->at.s) ||
	    !cJSON_AddStringToObject(v, "message", msg)) {
		cJSON_Delete(v);
		st->nomem = true;
		return;
	}
	cJSON_AddItemToArray(st->out, v);
}

static const char *type_of(const cJSON *v)
{
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsNumber(v))
		return "number";
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsArray(v))
		return "array";
	return "object";
}

static bool is_integer(const cJSON *v)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
	       floor(v->valuedouble) == v->valuedouble;
}

static bool type_matches(const char *t, const cJSON *v)
{
	if (!strcmp(t, "integer"))
		return is_integer(v);
	return !strcmp(t, type_of(v));
}

/* Bytes of s that fit in n bytes without cutting a UTF-8 sequence. */
static size_t utf8_prefix(const char *s, size_t n)
{
	size_t len = strlen(s);

	if (len <= n)
		return len;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

static size_t utf8_count(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* A short rendering of a value for messages: 500, "abc", true, an array. */
static void show(const cJSON *v, char *b, size_t n)
{
	if (cJSON_IsNumber(v)) {
		snprintf(b, n, "%.15g", v->valuedouble);
	} else if (cJSON_IsString(v)) {
		size_t k = utf8_prefix(v->valuestring, 60);

		snprintf(b, n, "\"%.*s%s\"", (int)k, v->valuestring,
			 v->valuestring[k] ? "..." : "");
	} else if (cJSON_IsBool(v) || cJSON_IsNull(v)) {
		snprintf(b, n, "%s", cJSON_IsNull(v) ? "null" : cJSON_IsTrue(v) ? "true" : "false");
	} else {
		snprintf(b, n, "%s", cJSON_IsArray(v) ? "an array" : "an object");
	}
}

/* A compact JSON rendering bounded to n bytes, for enum/const listings. */
static void show_json(const cJSON *v, char *b, size_t n)
{
	char *t = cJSON_PrintUnformatted(v);

	if (!t) {
		snprintf(b, n, "?");
		return;
	}
	if (strlen(t) >= n && n > 4)
		snprintf(b, n, "%.*s...", (int)utf8_prefix(t, n - 4), t);
	else
		snprintf(b, n, "%s", t);
	cJSON_free(t);
}

static void validate(struct vstate *st, const cJSON *s, const cJSON *v);

static void check_type(struct vstate *st, const cJSON *type, const cJSON *v,
		       bool *ok)
{
	const cJSON *t;
	char want[160], got[96];
	size_t n = 0;

	*ok = true;
	if (cJSON_IsString(type)) {
		if (type_matches(type->valuestring, v))
			return;
		snprintf(want, sizeof(want), "%s", type->valuestring);
	} else {
		cJSON_ArrayForEach(t, type)
			if (type_matches(t->valuestring, v))
				return;
		want[0] = '\0';
		cJSON_ArrayForEach(t, type) {
			int w = snprintf(want + n, sizeof(want) - n, "%s%s",
					 n ? (t->next ? ", " : " or ") : "", t->valuestring);

			if (w < 0 || (size_t)w >= sizeof(want) - n)
				break;
			n += (size_t)w;
		}
	}
	*ok = false;
	show(v, got, sizeof(got));
	if (cJSON_IsNumber(v) || cJSON_IsString(v))
		add_violation(st, "must be of type %s, got %s %s", want, type_of(v), got);
	else
		add_violation(st, "must be of type %s, got %s", want, type_of(v));
}

static void check_number(struct vstate *st, const cJSON *s, double x)
{
	const cJSON *k;
	char got[64];

	snprintf(got, sizeof(got), "%.15g", x);
	k = cJSON_GetObjectItemCaseSensitive(s, "minimum");
	if (k && x < k->valuedouble)
		add_violation(st, "must be >= %.15g, got %s", k->valuedouble, got);
	k = cJSON_GetObjectItemCaseSensitive(s, "maximum");
	if (k && x > k->valuedouble)
		add_violation(st, "must be <= %.15g, got %s", k->valuedouble, got);
	k = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMinimum");
	if (k && x <= k->valuedouble)
		add_violation(st, "must be > %.15g, got %s", k->valuedouble, got);
	k = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMaximum");
	if (k && x >= k->valuedouble)
		add_violation(st, "must be < %.15g, got %s", k->valuedouble, got);
}

static void check_string(struct vstate *st, const cJSON *s, const char *str)
{
	const cJSON *k;
	double n = (double)utf8_count(str);

	k = cJSON_GetObjectItemCaseSensitive(s, "minLength");
	if (k && n < k->valuedouble)
		add_violation(st, "must be at least %.0f characters long, got %.0f",
			      k->valuedouble, n);
	k = cJSON_GetObjectItemCaseSensitive(s, "maxLength");
	if (k && n > k->valuedouble)
		add_violation(st, "must be at most %.0f characters long, got %.0f",
			      k->valuedouble, n);
}

static void check_array(struct vstate *st, const cJSON *s, const cJSON *v)
{
	const cJSON *k, *x;
	double n = cJSON_GetArraySize(v);
	int i = 0;

	k = cJSON_GetObjectItemCaseSensitive(s, "minItems");
	if (k && n < k->valuedouble)
		add_violation(st, "must have at least %.0f items, got %.0f", k->valuedouble, n);
	k = cJSON_GetObjectItemCaseSensitive(s, "maxItems");
	if (k && n > k->valuedouble)
		add_violation(st, "must have at most %.0f items, got %.0f", k->valuedouble, n);
	k = cJSON_GetObjectItemCaseSensitive(s, "items");
	if (!k)
		return;
	cJSON_ArrayForEach(x, v) {
		size_t old = ptr_push_index(&st->at, i++);

		validate(st, k, x);
		ptr_pop(&st->at, old);
	}
}

/* "a, b, c" of the listed property names, bounded. */
static void list_names(const cJSON *props, char *b, size_t n)
{
	const cJSON *p;
	size_t used = 0;

	b[0] = '\0';
	cJSON_ArrayForEach(p, props) {
		int w = snprintf(b + used, n - used, "%s%s", used ? ", " : "", p->string);

		if (w < 0 || (size_t)w >= n - used) {
			if (n > 5)
				snprintf(b + (used < n - 5 ? used : n - 5), 5, "...");
			return;
		}
		used += (size_t)w;
	}
}

static void check_object(struct vstate *st, const cJSON *s, const cJSON *v)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
	const cJSON *addl = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
	const cJSON *x;
	char names[256];

	cJSON_ArrayForEach(x, req) {
		if (!cJSON_GetObjectItemCaseSensitive(v, x->valuestring)) {
			size_t old = ptr_push_key(&st->at, x->valuestring);

			add_violation(st, "is required");
			ptr_pop(&st->at, old);
		}
	}
	cJSON_ArrayForEach(x, v) {
		const cJSON *ps = props ? cJSON_GetObjectItemCaseSensitive(props, x->string) : NULL;
		size_t old = ptr_push_key(&st->at, x->string);

		if (ps) {
			validate(st, ps, x);
		} else if (cJSON_IsFalse(addl)) {
			list_names(props, names, sizeof(names));
			if (names[0])
				add_violation(st, "is not allowed (allowed: %s)", names);
			else
				add_violation(st, "is not allowed (no properties are allowed)");
		} else if (addl) {
			validate(st, addl, x);
		}
		ptr_pop(&st->at, old);
	}
}

static void check_any_of(struct vstate *st, const cJSON *any, const cJSON *v)
{
	const cJSON *b;
	cJSON *best = NULL;
	int nb = 0, best_count = 0, best_i = 0;
	char detail[512];
	size_t used = 0;

	cJSON_ArrayForEach(b, any) {
		struct vstate sub;

		sub.out = st->out ? cJSON_CreateArray() : NULL;
		sub.count = 0;
		sub.nomem = st->out && !sub.out;
		sub.at = st->at;
		validate(&sub, b, v);
		if (sub.nomem)
			st->nomem = true;
		if (sub.count == 0) {
			cJSON_Delete(sub.out);
			cJSON_Delete(best);
			return;
		}
		if (!best_count || sub.count < best_count) {
			cJSON_Delete(best);
			best = sub.out;
			best_count = sub.count;
			best_i = nb;
		} else {
			cJSON_Delete(sub.out);
		}
		nb++;
	}
	detail[0] = '\0';
	if (best) {
		const cJSON *e;
		int shown = 0;

		cJSON_ArrayForEach(e, best) {
			const char *p = cJSON_GetObjectItemCaseSensitive(e, "path")->valuestring;
			const char *m = cJSON_GetObjectItemCaseSensitive(e, "message")->valuestring;
			int w;

			if (shown == 3)
				break;
			w = snprintf(detail + used, sizeof(detail) - used, "%s%s: %s",
				     shown ? "; " : "", *p ? p : "(value)", m);
			if (w < 0 || (size_t)w >= sizeof(detail) - used)
				break;
			used += (size_t)w;
			shown++;
		}
	}
	if (detail[0])
		add_violation(st, "must match one of the %d alternatives of anyOf; the closest "
			      "(alternative %d) fails with: %s", nb, best_i, detail);
	else
		add_violation(st, "must match one of the %d alternatives of anyOf", nb);
	cJSON_Delete(best);
}

static void validate(struct vstate *st, const cJSON *s, const cJSON *v)
{
	const cJSON *k;
	char a[256], b[96];
	bool ok;

	if (cJSON_IsTrue(s))
		return;
	if (cJSON_IsFalse(s)) {
		add_violation(st, "is not allowed here");
		return;
	}
	k = cJSON_GetObjectItemCaseSensitive(s, "type");
	if (k) {
		check_type(st, k, v, &ok);
		if (!ok)
			return; /* the other keywords would only repeat it */
	}
	k = cJSON_GetObjectItemCaseSensitive(s, "const");
	if (k && !cJSON_Compare(k, v, 1)) {
		show_json(k, a, sizeof(a));
		show(v, b, sizeof(b));
		add_violation(st, "must be %s, got %s", a, b);
	}
	k = cJSON_GetObjectItemCaseSensitive(s, "enum");
	if (k) {
		const cJSON *e;
		bool found = false;

		cJSON_ArrayForEach(e, k)
			if (cJSON_Compare(e, v, 1)) {
				found = true;
				break;
			}
		if (!found) {
			show_json(k, a, sizeof(a));
			show(v, b, sizeof(b));
			add_violation(st, "must be one of %s, got %s", a, b);
		}
	}
	if (cJSON_IsNumber(v))
		check_number(st, s, v->valuedouble);
	else if (cJSON_IsString(v))
		check_string(st, s, v->valuestring);
	else if (cJSON_IsArray(v))
		check_array(st, s, v);
	else if (cJSON_IsObject(v))
		check_object(st, s, v);
	k = cJSON_GetObjectItemCaseSensitive(s, "anyOf");
	if (k)
		check_any_of(st, k, v);
}

int schema_validate(const struct schema *s, const cJSON *inst,
		    cJSON *violations)
{
	struct vstate st;

	st.out = violations;
	st.count = 0;
	st.nomem = false;
	st.at.len = 0;
	st.at.s[0] = '\0';
	validate(&st, s->doc, inst);
	if (violations && st.count > SCHEMA_MAX_VIOLATIONS) {
		char msg[96];
		cJSON *v = cJSON_CreateObject();

		snprintf(msg, sizeof(msg), "%d more violations not shown",
			 st.count - SCHEMA_MAX_VIOLATIONS);
		if (!v || !cJSON_AddStringToObject(v, "path", "") ||
		    !cJSON_AddStringToObject(v, "message", msg)) {
			cJSON_Delete(v);
			return ENG_ENOMEM;
		}
		cJSON_AddItemToArray(violations, v);
	}
	if (st.nomem)
		return ENG_ENOMEM;
	return st.count;
}

/* ======================= Filling nullable properties ======================= */

static bool accepts_null(const cJSON *s)
{
	const cJSON *t, *b;

	if (!cJSON_IsObject(s))
		return false;
	t = cJSON_GetObjectItemCaseSensitive(s, "type");
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "null"))
		return true;
	if (cJSON_IsArray(t))
		cJSON_ArrayForEach(b, t)
			if (!strcmp(b->valuestring, "null"))
				return true;
	t = cJSON_GetObjectItemCaseSensitive(s, "anyOf");
	cJSON_ArrayForEach(b, t)
		if (accepts_null(b))
			return true;
	return false;
}

static int fill(const cJSON *s, cJSON *v)
{
	const cJSON *props, *items, *p;
	cJSON *x;
	int rc;

	if (!cJSON_IsObject(s))
		return 0;
	if (cJSON_IsObject(v)) {
		props = cJSON_GetObjectItemCaseSensitive(s, "properties");
		cJSON_ArrayForEach(p, props) {
			x = cJSON_GetObjectItemCaseSensitive(v, p->string);
			if (!x) {
				if (accepts_null(p) && !cJSON_AddNullToObject(v, p->string))
					return ENG_ENOMEM;
				continue;
			}
			rc = fill(p, x);
			if (rc)
				return rc;
		}
	} else if (cJSON_IsArray(v)) {
		items = cJSON_GetObjectItemCaseSensitive(s, "items");
		if (!items)
			return 0;
		cJSON_ArrayForEach(x, v) {
			rc = fill(items, x);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int schema_fill_nulls(const struct schema *s, cJSON *inst)
{
	return fill(s->doc, inst);
}
