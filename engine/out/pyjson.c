/* SPDX-License-Identifier: MIT */
/*
 * A JSON reader that accepts and rejects exactly what Python's json.loads
 * (strict mode, CPython's C scanner) does, and builds cJSON trees.
 */
#include "pyjson.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "buf.h"
#include "err.h"

/* Longest string or number text handled (a bigger file is refused by the caller). */
#define PYJSON_MAX_TEXT ((size_t)1 << 30)

struct parser {
	const unsigned char *s;
	size_t n, i;
	unsigned flags;
	int depth;
	int oom;
	size_t err_at;       /* where the first error is */
	char err_msg[96];    /* its message; "" while none */
	struct buf text;     /* the string being decoded */
};

size_t pyjson_char_len(const unsigned char *s, size_t n, bool strict)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c == 0xc0 && !strict && n >= 2 && s[1] == 0x80)
		return 2; /* U+0000 as this module writes it */
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = (c == 0xed && strict) ? 0x9f : 0xbf;

		return n >= 3 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return n >= 4 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		       (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* Records the first error (Python stops at the first one). */
static void fail(struct parser *p, size_t at, const char *msg)
{
	if (p->err_msg[0])
		return;
	p->err_at = at;
	snprintf(p->err_msg, sizeof(p->err_msg), "%s", msg);
}

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(struct parser *p)
{
	while (p->i < p->n && is_ws(p->s[p->i]))
		p->i++;
}

/* True when the bytes at i spell word. */
static int has_word(const struct parser *p, size_t i, const char *word)
{
	size_t k = strlen(word);

	return i + k <= p->n && !memcmp(p->s + i, word, k);
}

/* The character at i is U+0000 as this module writes it (text mode). */
static int is_nul_pair(const struct parser *p, size_t i)
{
	return !(p->flags & PYJSON_BYTES) && i + 1 < p->n && p->s[i] == 0xc0 && p->s[i + 1] == 0x80;
}

static cJSON *value(struct parser *p);

/* ------------------------------------------------------------ numbers */

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* _match_number: the C scanner's rules, character for character. */
static cJSON *number(struct parser *p)
{
	size_t start = p->i, idx = p->i, end_idx = p->n - 1, k;
	int is_float = 0;
	char stackbuf[64], *copy = stackbuf;
	cJSON *v;

	if (p->s[idx] == '-') {
		idx++;
		if (idx > end_idx) {
			fail(p, start, "Expecting value");
			return NULL;
		}
	}
	if (p->s[idx] >= '1' && p->s[idx] <= '9') {
		idx++;
		while (idx <= end_idx && is_digit(p->s[idx]))
			idx++;
	} else if (p->s[idx] == '0') {
		idx++;
	} else {
		fail(p, start, "Expecting value");
		return NULL;
	}
	if (idx < end_idx && p->s[idx] == '.' && is_digit(p->s[idx + 1])) {
		is_float = 1;
		idx += 2;
		while (idx <= end_idx && is_digit(p->s[idx]))
			idx++;
	}
	if (idx < end_idx && (p->s[idx] == 'e' || p->s[idx] == 'E')) {
		size_t e_start = idx;

		idx++;
		if (idx < end_idx && (p->s[idx] == '-' || p->s[idx] == '+'))
			idx++;
		while (idx <= end_idx && is_digit(p->s[idx]))
			idx++;
		if (is_digit(p->s[idx - 1]))
			is_float = 1;
		else
			idx = e_start;
	}
	k = idx - start;
	if (k + 1 > sizeof(stackbuf)) {
		copy = malloc(k + 1);
		if (!copy) {
			p->oom = 1;
			return NULL;
		}
	}
	memcpy(copy, p->s + start, k);
	copy[k] = '\0';
	v = cJSON_CreateNumber(0);
	if (v) {
		v->valuedouble = strtod(copy, NULL);
		v->valueint = 0;
		if (!is_float) {
			const char *digits = copy[0] == '-' && !strcmp(copy, "-0") ? "0" : copy;

			v->valuestring = malloc(strlen(digits) + 1);
			if (v->valuestring)
				memcpy(v->valuestring, digits, strlen(digits) + 1);
			else
				p->oom = 1;
		}
	} else {
		p->oom = 1;
	}
	if (copy != stackbuf)
		free(copy);
	p->i = idx;
	return v;
}

static cJSON *special_number(struct parser *p, double d, size_t len)
{
	cJSON *v = cJSON_CreateNumber(0);

	if (!v) {
		p->oom = 1;
		return NULL;
	}
	v->valuedouble = d;
	p->i += len;
	return v;
}

/* ------------------------------------------------------------ strings */

static int hex4(const unsigned char *s, unsigned *out)
{
	unsigned v = 0;
	int k;

	for (k = 0; k < 4; k++) {
		unsigned c = s[k], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return 0;
		v = v * 16 + d;
	}
	*out = v;
	return 1;
}

/* Appends code point c as UTF-8 (U+0000 as C0 80, surrogates as 3 bytes). */
static void put_cp(struct parser *p, unsigned c)
{
	unsigned char b[4];
	size_t n;

	if (c == 0) {
		b[0] = 0xc0;
		b[1] = 0x80;
		n = 2;
	} else if (c < 0x80) {
		b[0] = (unsigned char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (unsigned char)(0xc0 | (c >> 6));
		b[1] = (unsigned char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (unsigned char)(0xe0 | (c >> 12));
		b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | (c >> 18));
		b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (buf_add(&p->text, b, n))
		p->oom = 1;
}

/*
 * The \u escape whose 'u' is at u: one code point, or a joined surrogate
 * pair (scanstring_unicode's rules, including its bounds checks).
 * Returns the index after the escape, or 0 on error.
 */
static size_t unicode_escape(struct parser *p, size_t u)
{
	size_t end = u + 1 + 4;
	unsigned c, c2;

	if (end >= p->n || !hex4(p->s + u + 1, &c)) {
		fail(p, u, "Invalid \\uXXXX escape");
		return 0;
	}
	if (c >= 0xd800 && c <= 0xdbff && end + 6 < p->n && p->s[end] == '\\' &&
	    p->s[end + 1] == 'u') {
		if (!hex4(p->s + end + 2, &c2)) {
			fail(p, end + 1, "Invalid \\uXXXX escape");
			return 0;
		}
		if (c2 >= 0xdc00 && c2 <= 0xdfff) {
			c = 0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00);
			end += 6;
		}
	}
	put_cp(p, c);
	return end;
}

/* The string whose opening quote is at i, decoded into p->text. Returns 0 or -1. */
static int scan_string(struct parser *p)
{
	size_t begin = p->i, i = p->i + 1;

	buf_reset(&p->text);
	for (;;) {
		size_t run = i;
		unsigned char c = 0;

		while (i < p->n) {
			c = p->s[i];
			if (c == '"' || c == '\\')
				break;
			if (c <= 0x1f || is_nul_pair(p, i)) {
				fail(p, i, "Invalid control character at");
				return -1;
			}
			i++;
		}
		if (i > run && buf_add(&p->text, p->s + run, i - run))
			p->oom = 1;
		if (i >= p->n) {
			fail(p, begin, "Unterminated string starting at");
			return -1;
		}
		if (c == '"') {
			p->i = i + 1;
			return p->oom ? -1 : 0;
		}
		/* a backslash */
		i++;
		if (i >= p->n) {
			fail(p, begin, "Unterminated string starting at");
			return -1;
		}
		switch (p->s[i]) {
		case '"': put_cp(p, '"'); break;
		case '\\': put_cp(p, '\\'); break;
		case '/': put_cp(p, '/'); break;
		case 'b': put_cp(p, '\b'); break;
		case 'f': put_cp(p, '\f'); break;
		case 'n': put_cp(p, '\n'); break;
		case 'r': put_cp(p, '\r'); break;
		case 't': put_cp(p, '\t'); break;
		case 'u':
			i = unicode_escape(p, i);
			if (!i)
				return -1;
			continue;
		default:
			fail(p, i - 1, "Invalid \\escape");
			return -1;
		}
		i++;
	}
}

static cJSON *string_value(struct parser *p)
{
	cJSON *v;

	if (scan_string(p))
		return NULL;
	v = cJSON_CreateString(buf_str(&p->text));
	if (!v)
		p->oom = 1;
	return v;
}

/* ------------------------------------------------------------ containers */

static cJSON *array(struct parser *p)
{
	cJSON *a = cJSON_CreateArray(), *v;

	if (!a) {
		p->oom = 1;
		return NULL;
	}
	p->i++;
	skip_ws(p);
	if (p->i < p->n && p->s[p->i] == ']') {
		p->i++;
		return a;
	}
	for (;;) {
		v = value(p);
		if (!v)
			goto bad;
		if (!cJSON_AddItemToArray(a, v)) {
			cJSON_Delete(v);
			p->oom = 1;
			goto bad;
		}
		skip_ws(p);
		if (p->i < p->n && p->s[p->i] == ']') {
			p->i++;
			return a;
		}
		if (p->i >= p->n || p->s[p->i] != ',') {
			fail(p, p->i, "Expecting ',' delimiter");
			goto bad;
		}
		p->i++;
		skip_ws(p);
	}
bad:
	cJSON_Delete(a);
	return NULL;
}

/* Adds key -> v to o; a repeated key keeps its first place and the last value. */
static int put_member(cJSON *o, const char *key, cJSON *v)
{
	cJSON *old = cJSON_GetObjectItemCaseSensitive(o, key);

	if (old)
		return cJSON_ReplaceItemInObjectCaseSensitive(o, key, v) ? 0 : -1;
	return cJSON_AddItemToObject(o, key, v) ? 0 : -1;
}

static cJSON *object(struct parser *p)
{
	cJSON *o = cJSON_CreateObject(), *v;
	char *key = NULL;

	if (!o) {
		p->oom = 1;
		return NULL;
	}
	p->i++;
	skip_ws(p);
	if (p->i < p->n && p->s[p->i] == '}') {
		p->i++;
		return o;
	}
	for (;;) {
		if (p->i >= p->n || p->s[p->i] != '"') {
			fail(p, p->i, "Expecting property name enclosed in double quotes");
			goto bad;
		}
		if (scan_string(p))
			goto bad;
		key = strdup(buf_str(&p->text));
		if (!key) {
			p->oom = 1;
			goto bad;
		}
		skip_ws(p);
		if (p->i >= p->n || p->s[p->i] != ':') {
			fail(p, p->i, "Expecting ':' delimiter");
			goto bad;
		}
		p->i++;
		skip_ws(p);
		v = value(p);
		if (!v)
			goto bad;
		if (put_member(o, key, v)) {
			cJSON_Delete(v);
			p->oom = 1;
			goto bad;
		}
		free(key);
		key = NULL;
		skip_ws(p);
		if (p->i < p->n && p->s[p->i] == '}') {
			p->i++;
			return o;
		}
		if (p->i >= p->n || p->s[p->i] != ',') {
			fail(p, p->i, "Expecting ',' delimiter");
			goto bad;
		}
		p->i++;
		skip_ws(p);
	}
bad:
	free(key);
	cJSON_Delete(o);
	return NULL;
}

/* scan_once: one value at p->i. */
static cJSON *value(struct parser *p)
{
	cJSON *v = NULL;
	unsigned char c;

	if (p->i >= p->n) {
		fail(p, p->i, "Expecting value");
		return NULL;
	}
	c = p->s[p->i];
	switch (c) {
	case '"':
		return string_value(p);
	case '{':
	case '[':
		if (p->depth >= PYJSON_MAX_DEPTH) {
			fail(p, p->i, "maximum recursion depth exceeded while decoding a JSON document");
			return NULL;
		}
		p->depth++;
		v = c == '{' ? object(p) : array(p);
		p->depth--;
		return v;
	case 'n':
		if (has_word(p, p->i, "null")) {
			p->i += 4;
			v = cJSON_CreateNull();
			break;
		}
		return number(p);
	case 't':
		if (has_word(p, p->i, "true")) {
			p->i += 4;
			v = cJSON_CreateTrue();
			break;
		}
		return number(p);
	case 'f':
		if (has_word(p, p->i, "false")) {
			p->i += 5;
			v = cJSON_CreateFalse();
			break;
		}
		return number(p);
	case 'N':
		if (has_word(p, p->i, "NaN"))
			return special_number(p, (double)NAN, 3);
		return number(p);
	case 'I':
		if (has_word(p, p->i, "Infinity"))
			return special_number(p, (double)INFINITY, 8);
		return number(p);
	case '-':
		if (has_word(p, p->i, "-Infinity"))
			return special_number(p, -(double)INFINITY, 9);
		return number(p);
	default:
		return number(p);
	}
	if (!v)
		p->oom = 1;
	return v;
}

/* ------------------------------------------------------------ entry */

/* Line and character column of byte offset `at`, as JSONDecodeError gives them. */
static void position(const unsigned char *s, size_t n, size_t at, unsigned flags,
		     struct pyjson_error *err)
{
	size_t i = 0, line = 1, col = 1;

	while (i < at && i < n) {
		size_t k = pyjson_char_len(s + i, n - i, flags & PYJSON_BYTES);

		if (s[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
		i += k ? k : 1;
	}
	err->offset = at;
	err->line = line;
	err->column = col;
}

int pyjson_parse(const char *text, size_t len, unsigned flags, cJSON **out,
		 struct pyjson_error *err)
{
	struct parser p;
	struct pyjson_error dummy;
	cJSON *v = NULL;
	size_t i;
	int rc = 0;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	memset(&p, 0, sizeof(p));
	p.s = (const unsigned char *)(text ? text : "");
	p.n = text ? len : 0;
	p.flags = flags;
	if (p.n > PYJSON_MAX_TEXT)
		return err_set(ENG_ETOOBIG, "JSON text of %zu bytes is too large", p.n);
	if (flags & PYJSON_BYTES) {
		for (i = 0; i < p.n;) {
			size_t k = pyjson_char_len(p.s + i, p.n - i, true);

			if (!k) {
				snprintf(err->msg, sizeof(err->msg),
					 "'utf-8' codec can't decode byte 0x%02x in position %zu",
					 p.s[i], i);
				position(p.s, p.n, i, flags, err);
				return ENG_EPARSE;
			}
			i += k;
		}
	}
	buf_init(&p.text, PYJSON_MAX_TEXT);
	if (p.n >= 3 && p.s[0] == 0xef && p.s[1] == 0xbb && p.s[2] == 0xbf) {
		fail(&p, 0, "Unexpected UTF-8 BOM (decode using utf-8-sig)");
	} else {
		skip_ws(&p);
		v = value(&p);
		if (v) {
			skip_ws(&p);
			if (p.i != p.n)
				fail(&p, p.i, "Extra data");
		}
	}
	buf_release(&p.text);
	if (p.oom) {
		rc = ENG_ENOMEM;
	} else if (p.err_msg[0]) {
		snprintf(err->msg, sizeof(err->msg), "%s", p.err_msg);
		position(p.s, p.n, p.err_at, flags, err);
		rc = ENG_EPARSE;
	}
	if (rc) {
		cJSON_Delete(v);
		return rc;
	}
	*out = v;
	return 0;
}

/* ------------------------------------------------------------ equality */

/* A number's value as Python compares it, and whether it is an int literal. */
static int py_number(const cJSON *v, double *d, const char **digits)
{
	*digits = NULL;
	if (cJSON_IsTrue(v)) {
		*d = 1;
		*digits = "1";
		return 1;
	}
	if (cJSON_IsFalse(v)) {
		*d = 0;
		*digits = "0";
		return 1;
	}
	if (cJSON_IsNumber(v)) {
		*d = v->valuedouble;
		*digits = v->valuestring;
		return 1;
	}
	return 0;
}

bool pyjson_equal(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;
	const char *da, *db;
	double fa, fb;

	if (!a || !b)
		return !a && !b;
	if (py_number(a, &fa, &da) && py_number(b, &fb, &db)) {
		if (da && db)
			return !strcmp(da, db);
		return fa == fb;
	}
	if (cJSON_IsNull(a) || cJSON_IsNull(b))
		return cJSON_IsNull(a) && cJSON_IsNull(b);
	if (cJSON_IsString(a) || cJSON_IsString(b))
		return cJSON_IsString(a) && cJSON_IsString(b) &&
		       !strcmp(a->valuestring, b->valuestring);
	if (cJSON_IsArray(a) || cJSON_IsArray(b)) {
		if (!cJSON_IsArray(a) || !cJSON_IsArray(b))
			return false;
		for (x = a->child, y = b->child; x && y; x = x->next, y = y->next)
			if (!pyjson_equal(x, y))
				return false;
		return !x && !y;
	}
	if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
		if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
			return false;
		cJSON_ArrayForEach(x, a) {
			y = cJSON_GetObjectItemCaseSensitive(b, x->string);
			if (!y || !pyjson_equal(x, y))
				return false;
		}
		return true;
	}
	return false;
}
