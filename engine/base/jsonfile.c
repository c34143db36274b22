/* SPDX-License-Identifier: MIT */
/* Whole-file JSON reading with line numbers, and typed field getters. */
#include "jsonfile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "banned.h"
#include "buf.h"
#include "err.h"

/* The line of offset `at` in text (1-based). */
static size_t line_at(const char *text, size_t at)
{
	size_t line = 1, i;

	for (i = 0; i < at; i++)
		line += text[i] == '\n';
	return line;
}

int jsonfile_read(const char *path, cJSON **out)
{
	struct buf b;
	const char *text, *end = NULL;
	cJSON *root = NULL;
	size_t len;
	int rc;

	buf_init(&b, (size_t)JSONFILE_MAX_BYTES + 1);
	rc = buf_read_file(&b, path);
	if (rc)
		goto out;
	text = buf_str(&b);
	len = b.len;
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		size_t at = len;

		if (end && end >= text && end <= text + len)
			at = (size_t)(end - text);
		rc = err_set(ENG_EPARSE, "%s: parse error near line %zu", path, line_at(text, at));
		goto out;
	}
	/* only whitespace may follow the value */
	if (end) {
		while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' ||
					    *end == '\r'))
			end++;
		if (end < text + len) {
			rc = err_set(ENG_EPARSE, "%s: parse error near line %zu (text after the value)",
				     path, line_at(text, (size_t)(end - text)));
			goto out;
		}
	}
out:
	buf_release(&b);
	if (rc) {
		cJSON_Delete(root);
		return rc;
	}
	*out = root;
	return 0;
}

static const cJSON *field(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

	return cJSON_IsNull(v) ? NULL : v;
}

/* "ctx.key" or, when ctx ends with ':' (a file name), "ctx key". */
static const char *sep(const char *ctx)
{
	size_t n = strlen(ctx);

	return n && ctx[n - 1] == ':' ? " " : ".";
}

static int missing(const char *ctx, const char *key)
{
	return err_set(ENG_EPARSE, "%s%s%s: missing", ctx, sep(ctx), key);
}

int jsonfile_str(const cJSON *obj, const char *key, bool required,
		 const char *ctx, const char **out)
{
	const cJSON *v = field(obj, key);

	if (!v)
		return required ? missing(ctx, key) : 0;
	if (!cJSON_IsString(v) || !v->valuestring)
		return err_set(ENG_EPARSE, "%s%s%s: expected a string", ctx, sep(ctx), key);
	*out = v->valuestring;
	return 0;
}

int jsonfile_num(const cJSON *obj, const char *key, bool required,
		 const char *ctx, double *out)
{
	const cJSON *v = field(obj, key);

	if (!v)
		return required ? missing(ctx, key) : 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return err_set(ENG_EPARSE, "%s%s%s: expected a number", ctx, sep(ctx), key);
	*out = v->valuedouble;
	return 0;
}

int jsonfile_i64(const cJSON *obj, const char *key, bool required,
		 const char *ctx, int64_t *out)
{
	const cJSON *v = field(obj, key);
	double d;

	if (!v)
		return required ? missing(ctx, key) : 0;
	if (!cJSON_IsNumber(v))
		return err_set(ENG_EPARSE, "%s%s%s: expected an integer", ctx, sep(ctx), key);
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d))
		return err_set(ENG_EPARSE, "%s%s%s: expected an integer", ctx, sep(ctx), key);
	if (fabs(d) >= 9007199254740992.0)
		return err_set(ENG_ERANGE, "%s%s%s: integer beyond 2^53", ctx, sep(ctx), key);
	*out = (int64_t)d;
	return 0;
}

int jsonfile_bool(const cJSON *obj, const char *key, bool required,
		  const char *ctx, bool *out)
{
	const cJSON *v = field(obj, key);

	if (!v)
		return required ? missing(ctx, key) : 0;
	if (!cJSON_IsBool(v))
		return err_set(ENG_EPARSE, "%s%s%s: expected true or false", ctx, sep(ctx), key);
	*out = cJSON_IsTrue(v);
	return 0;
}

int jsonfile_vec(const cJSON *obj, const char *key, size_t n, bool required,
		 const char *ctx, double *out)
{
	const cJSON *v = field(obj, key), *it;
	double tmp[16];
	size_t i = 0;

	if (!v)
		return required ? missing(ctx, key) : 0;
	if (n > ARRAY_SIZE(tmp) || !cJSON_IsArray(v) || (size_t)cJSON_GetArraySize(v) != n)
		return err_set(ENG_EPARSE, "%s%s%s: expected an array of %zu numbers", ctx, sep(ctx), key, n);
	cJSON_ArrayForEach(it, v) {
		if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
			return err_set(ENG_EPARSE, "%s%s%s[%zu]: expected a finite number", ctx,
				       sep(ctx), key, i);
		tmp[i++] = it->valuedouble;
	}
	memcpy(out, tmp, n * sizeof(*out));
	return 0;
}

const char *jsonfile_get_str(const cJSON *obj, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

double jsonfile_get_num(const cJSON *obj, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (cJSON_IsRaw(v) && v->valuestring)
		return strtod(v->valuestring, NULL);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int64_t jsonfile_get_time(const cJSON *obj, const char *key, int64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char *end;
	long long x;

	if (cJSON_IsNumber(v))
		return (int64_t)llround(v->valuedouble);
	if ((cJSON_IsRaw(v) || cJSON_IsString(v)) && v->valuestring) {
		x = strtoll(v->valuestring, &end, 10);
		if (end != v->valuestring && !*end)
			return (int64_t)x;
	}
	return dflt;
}

/* ======================= Printing ======================= */

/*
 * The text "%1.15g" gives v, in buf, when v is a short decimal (see
 * jsonfile_print); false otherwise.
 */
/* The decimal digits of u at b, no NUL; their count. */
static int put_digits(char *b, uint64_t u)
{
	char t[20];
	int n = 0, i;

	do {
		t[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	for (i = 0; i < n; i++)
		b[i] = t[n - 1 - i];
	return n;
}

static bool short_decimal(double v, char buf[32])
{
	static const double pw[7] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
	static const int64_t ipw[7] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
	double a = fabs(v);
	int d;

	/* -0 is "-0" or "0" by cJSON's version: left to cJSON */
	if (!isfinite(v) || (v == 0 && signbit(v)))
		return false;
	/* an integer of up to 15 digits: %g writes its digits */
	if (a < 1e15 && v == floor(v)) {
		int n = 0;

		if (v < 0)
			buf[n++] = '-';
		n += put_digits(buf + n, (uint64_t)a);
		buf[n] = '\0';
		return true;
	}
	if (a >= 1e9 || (a != 0 && a < 1e-4))
		return false;
	for (d = 0; d <= 6; d++) {
		double k = round(v * pw[d]);
		int64_t u, ip, fp;
		int n = 0, z;

		if (k / pw[d] != v)
			continue;
		u = (int64_t)fabs(k);
		ip = u / ipw[d];
		fp = u % ipw[d];
		if (k < 0)
			buf[n++] = '-';
		n += put_digits(buf + n, (uint64_t)ip);
		if (fp) {
			/* the fraction with its leading zeros, then its trailing zeros cut */
			buf[n++] = '.';
			for (z = d - 1; z >= 0; z--, fp /= 10)
				buf[n + z] = (char)('0' + fp % 10);
			n += d;
			while (buf[n - 1] == '0')
				n--;
		}
		buf[n] = '\0';
		return true;
	}
	return false;
}

/* The text being printed: a growing buffer, NULL after a failure. */
struct jp {
	char *p;
	size_t len, cap;
};

/* Room for n more bytes (and the NUL). */
static bool jp_room(struct jp *o, size_t n)
{
	size_t cap;
	char *p;

	if (!o->p)
		return false;
	if (o->len + n < o->cap)
		return true;
	for (cap = o->cap * 2; o->len + n >= cap; cap *= 2)
		;
	p = realloc(o->p, cap);
	if (!p) {
		free(o->p);
		o->p = NULL;
		return false;
	}
	o->p = p;
	o->cap = cap;
	return true;
}

static bool jp_add(struct jp *o, const char *s, size_t n)
{
	if (!jp_room(o, n))
		return false;
	memcpy(o->p + o->len, s, n);
	o->len += n;
	return true;
}

/* The first byte of [s, end) that needs an escape ('"', '\\', below 32), or end. */
static const unsigned char *plain_run(const unsigned char *s, const unsigned char *end)
{
#if defined(__SSE2__)
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), c31 = _mm_set1_epi8(31);

	for (; end - s >= 16; s += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
		__m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
					   _mm_cmpeq_epi8(_mm_max_epu8(x, c31), c31));
		int m = _mm_movemask_epi8(hit);

		if (m)
			return s + __builtin_ctz((unsigned)m);
	}
#endif
	while (s < end && *s > 31 && *s != '"' && *s != '\\')
		s++;
	return s;
}

/*
 * A string as cJSON's print_string_ptr writes it: '"', '\\' and the
 * control characters escaped (the short forms for \b \f \n \r \t, else
 * \u00xx), every other byte as it is; NULL is "".
 */
static bool jp_string(struct jp *o, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)(str ? str : ""), *run, *end;
	char *w;

	end = s + strlen((const char *)s);
	if (!jp_room(o, (size_t)(end - s) + 2))
		return false;
	o->p[o->len++] = '"';
	for (;;) {
		run = s;
		s = plain_run(s, end);
		if (s > run && !jp_add(o, (const char *)run, (size_t)(s - run)))
			return false;
		if (s == end)
			break;
		if (!jp_room(o, 6))
			return false;
		w = o->p + o->len;
		w[0] = '\\';
		switch (*s) {
		case '"': w[1] = '"'; break;
		case '\\': w[1] = '\\'; break;
		case '\b': w[1] = 'b'; break;
		case '\f': w[1] = 'f'; break;
		case '\n': w[1] = 'n'; break;
		case '\r': w[1] = 'r'; break;
		case '\t': w[1] = 't'; break;
		default:
			w[1] = 'u';
			w[2] = '0';
			w[3] = '0';
			w[4] = hex[*s >> 4];
			w[5] = hex[*s & 15];
			o->len += 4;
			break;
		}
		o->len += 2;
		s++;
	}
	if (!jp_room(o, 1))
		return false;
	o->p[o->len++] = '"';
	return true;
}

/* A number: a short decimal from its digits, any other by cJSON itself. */
static bool jp_number(struct jp *o, const cJSON *j)
{
	char b[32], *t;
	cJSON one;
	bool ok;

	if (short_decimal(j->valuedouble, b))
		return jp_add(o, b, strlen(b));
	memset(&one, 0, sizeof(one));
	one.type = cJSON_Number;
	one.valuedouble = j->valuedouble;
	one.valueint = j->valueint;
	t = cJSON_PrintUnformatted(&one);
	if (!t) {
		free(o->p);
		o->p = NULL;
		return false;
	}
	ok = jp_add(o, t, strlen(t));
	cJSON_free(t);
	return ok;
}

/* Node j as cJSON_PrintUnformatted writes it; false (o->p freed) when it can't. */
static bool jp_value(struct jp *o, const cJSON *j)
{
	const cJSON *c;
	char open, close;

	switch (j->type & 0xff) {
	case cJSON_NULL: return jp_add(o, "null", 4);
	case cJSON_False: return jp_add(o, "false", 5);
	case cJSON_True: return jp_add(o, "true", 4);
	case cJSON_Number: return jp_number(o, j);
	case cJSON_String: return jp_string(o, j->valuestring);
	case cJSON_Raw:
		if (!j->valuestring)
			break;
		return jp_add(o, j->valuestring, strlen(j->valuestring));
	case cJSON_Array:
	case cJSON_Object:
		open = (j->type & 0xff) == cJSON_Array ? '[' : '{';
		close = open == '[' ? ']' : '}';
		if (!jp_add(o, &open, 1))
			return false;
		for (c = j->child; c; c = c->next) {
			if (open == '{' && (!jp_string(o, c->string) || !jp_add(o, ":", 1)))
				return false;
			if (!jp_value(o, c) || (c->next && !jp_add(o, ",", 1)))
				return false;
		}
		return jp_add(o, &close, 1);
	default:
		break;
	}
	free(o->p);
	o->p = NULL;
	return false;
}

char *jsonfile_print(cJSON *root)
{
	struct jp o = { NULL, 0, 256 };

	if (!root)
		return NULL;
	o.p = malloc(o.cap);
	if (!jp_value(&o, root))
		return NULL;
	o.p[o.len] = '\0';
	return o.p;
}
