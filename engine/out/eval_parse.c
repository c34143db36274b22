/* SPDX-License-Identifier: MIT */
/*
 * Answer parsing with the semantics of EgoProx's Python code, character
 * class by character class: parse_answer_letter of its inference scripts
 * (Unicode whitespace, IGNORECASE folding, str.upper()), and
 * parse_llm_answer / find_matching_gt / the edge accuracies of
 * evaluate.py, with json.loads's rules through pyjson.
 */
#include "eval.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "eval_int.h"
#include "pyjson.h"

/* ====================== Python character classes ====================== */

/*
 * Bytes of the whitespace character at s as Python's \s and str.strip()
 * see it (str.isspace(): U+0009-000D, U+001C-001F, U+0020, U+0085,
 * U+00A0, U+1680, U+2000-200A, U+2028, U+2029, U+202F, U+205F, U+3000),
 * or 0.
 */
static size_t py_space(const unsigned char *s)
{
	if (*s == ' ' || (*s >= 0x09 && *s <= 0x0d) || (*s >= 0x1c && *s <= 0x1f))
		return 1;
	if (s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
		return 2;
	if (s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
		return 3;
	if (s[0] == 0xe2 && s[1] == 0x80 &&
	    ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf))
		return 3;
	if (s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
		return 3;
	if (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
		return 3;
	return 0;
}

/* Bytes of \s* at s. */
static size_t skip_ws(const unsigned char *s)
{
	size_t i = 0, n;

	for (;;) {
		n = py_space(s + i);
		if (!n)
			return i;
		i += n;
	}
}

/* Bytes of one UTF-8 character at s (1 for a stray byte); s[0] != 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = *s < 0x80 ? 1 : *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc0 ? 2 : 1;
	size_t i;

	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 1;
	return n;
}

/*
 * Bytes of the character at s when it matches the lower-case ASCII letter
 * c under Python's re.IGNORECASE (which also folds U+017F long s into s,
 * and U+0130 / U+0131 into i), or 0.
 */
static size_t ci_char(const unsigned char *s, char c)
{
	if (*s < 0x80 && (*s | 0x20) == (unsigned char)c && c >= 'a' && c <= 'z')
		return 1;
	if (c == 's' && s[0] == 0xc5 && s[1] == 0xbf)
		return 2;
	if (c == 'i' && s[0] == 0xc4 && (s[1] == 0xb0 || s[1] == 0xb1))
		return 2;
	return 0;
}

/* Bytes of the word w (lower case) at s under IGNORECASE, or 0. */
static size_t ci_word(const unsigned char *s, const char *w)
{
	size_t i = 0, n;

	for (; *w; w++) {
		n = ci_char(s + i, *w);
		if (!n)
			return 0;
		i += n;
	}
	return i;
}

/*
 * The letter class [A-<max>] under IGNORECASE at s: bytes matched (0 for
 * none) and the letter Python's .upper() gives ('?' when that is not an
 * ASCII letter, e.g. U+0130, which then never equals a key).
 */
static size_t ci_letter(const unsigned char *s, char max, char *letter)
{
	char up = (char)(*s & ~0x20);

	if (*s < 0x80 && up >= 'A' && up <= max && ((*s >= 'A' && *s <= 'Z') ||
						   (*s >= 'a' && *s <= 'z'))) {
		*letter = up;
		return 1;
	}
	if (max >= 'S' && s[0] == 0xc5 && s[1] == 0xbf) {
		*letter = 'S';
		return 2;
	}
	if (max >= 'I' && s[0] == 0xc4 && (s[1] == 0xb0 || s[1] == 0xb1)) {
		*letter = s[1] == 0xb1 ? 'I' : '?';
		return 2;
	}
	if (max >= 'K' && s[0] == 0xe2 && s[1] == 0x84 && s[2] == 0xaa) {
		*letter = '?';
		return 3;
	}
	return 0;
}

/*
 * The A-H letters of Python's s.upper() over s[0..len): a-h and A-H, and
 * the characters whose upper case contains them (U+FB00-FB04 ligatures
 * ff/fi/fl/ffi/ffl, U+1E96, U+1E9A). Appends up to max letters to out,
 * *n counting them.
 */
static void upper_letters(const unsigned char *s, size_t len, char *out, int max, int *n)
{
	size_t i = 0;

	while (i < len && s[i]) {
		const char *add = "";
		size_t step = utf8_len(s + i);
		char one[2] = { 0, 0 };

		if (s[i] >= 'a' && s[i] <= 'h') {
			one[0] = (char)(s[i] - 'a' + 'A');
			add = one;
		} else if (s[i] >= 'A' && s[i] <= 'H') {
			one[0] = (char)s[i];
			add = one;
		} else if (step == 3 && s[i] == 0xef && s[i + 1] == 0xac && s[i + 2] <= 0x84) {
			static const char *const lig[] = { "FF", "F", "F", "FF", "FF" };

			add = lig[s[i + 2] - 0x80];
		} else if (step == 3 && s[i] == 0xe1 && s[i + 1] == 0xba &&
			   (s[i + 2] == 0x96 || s[i + 2] == 0x9a)) {
			add = s[i + 2] == 0x96 ? "H" : "A";
		}
		for (; *add; add++)
			if (*n < max)
				out[(*n)++] = *add;
		i += step;
	}
}

/*
 * The zero of every run of ten Unicode decimal digits (category Nd), in
 * Unicode 14.0, the database of Python 3.11 (Debian 12's python3): what
 * Python's \d matches and int() reads.
 */
static const uint32_t nd_zeros[] = {
	0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6,
	0xd66, 0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0,
	0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0,
	0xa9f0, 0xaa50, 0xabf0, 0xff10, 0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136,
	0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0, 0x11950,
	0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2,
	0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0
};

/* The code point of the UTF-8 sequence of k bytes at s. */
static uint32_t code_point(const unsigned char *s, size_t k)
{
	switch (k) {
	case 2: return ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
	case 3: return ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) |
		       (s[2] & 0x3f);
	case 4: return ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
		       ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
	default: return s[0];
	}
}

/* Bytes of the decimal digit at s (Python's \d), its value in *d; 0 if none. */
static size_t py_digit(const unsigned char *s, int *d)
{
	size_t k, lo = 0, hi = ARRAY_SIZE(nd_zeros);
	uint32_t c;

	if (*s >= '0' && *s <= '9') {
		*d = *s - '0';
		return 1;
	}
	if (*s < 0x80)
		return 0;
	k = utf8_len(s);
	c = code_point(s, k);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c < nd_zeros[mid])
			hi = mid;
		else if (c >= nd_zeros[mid] + 10)
			lo = mid + 1;
		else {
			*d = (int)(c - nd_zeros[mid]);
			return k;
		}
	}
	return 0;
}

/* v * 10 + d, saturating at LLONG_MAX. */
static long long push_digit(long long v, int d)
{
	return v > (LLONG_MAX - 9) / 10 ? LLONG_MAX : v * 10 + d;
}

/* ============================ MC letters ============================ */

/*
 * EgoProx's pattern (without the optional "Therefore," prefix, which
 * changes neither the letter nor where the match ends) at s: the letter
 * and the end of the whole match, trailing \s*>?\s*[\.\)]? included.
 */
static size_t mc_match(const unsigned char *s, char max, char *letter)
{
	static const char *const words[] = { "the", "correct", "answer", "is" };
	size_t i = 0, n, w;

	for (w = 0; w < ARRAY_SIZE(words); w++) {
		n = ci_word(s + i, words[w]);
		if (!n)
			return 0;
		i += n;
		n = skip_ws(s + i);
		if (!n && w < 3)
			return 0;
		i += n;
	}
	if (s[i] == '<')
		i++;
	i += skip_ws(s + i);
	n = ci_letter(s + i, max, letter);
	if (!n)
		return 0;
	i += n;
	i += skip_ws(s + i);
	if (s[i] == '>')
		i++;
	i += skip_ws(s + i);
	if (s[i] == '.' || s[i] == ')')
		i++;
	return i;
}

/* The bare-letter form \s*<?\s*X\s*>?\s*[.)]?\s* (X upper case, case-sensitive). */
static bool mc_bare(const unsigned char *s, char max, char *letter)
{
	size_t i = skip_ws(s);

	if (s[i] == '<')
		i++;
	i += skip_ws(s + i);
	if (s[i] < 'A' || s[i] > (unsigned char)max)
		return false;
	*letter = (char)s[i++];
	i += skip_ws(s + i);
	if (s[i] == '>')
		i++;
	i += skip_ws(s + i);
	if (s[i] == '.' || s[i] == ')')
		i++;
	i += skip_ws(s + i);
	return s[i] == '\0';
}

/* The letter of the last match of the pattern (finditer), or 0. */
static char mc_last(const unsigned char *s, char max)
{
	char l = 0, last = 0;
	size_t i = 0, n;

	/* finditer: non-overlapping matches, scanning on from each match's end */
	while (s[i]) {
		n = mc_match(s + i, max, &l);
		if (n) {
			last = l;
			i += n;
		} else {
			i++;
		}
	}
	return last;
}

bool eval_egoprox_letter(const char *text, char *out)
{
	char l;

	if (!text || !*text)
		return false;
	l = mc_last((const unsigned char *)text, 'E');
	if (!l || l == '?')
		return false;
	*out = l;
	return true;
}

bool eval_lenient_letter(const char *text, int noptions, char *out)
{
	const unsigned char *s = (const unsigned char *)text;
	char max = 'E', l;

	if (!text)
		return false;
	if (noptions > 5)
		max = (char)('A' + (noptions > 26 ? 26 : noptions) - 1);
	l = mc_last(s, max);
	if (!l && !mc_bare(s, max, &l))
		return false;
	if (l == '?')
		return false;
	*out = l;
	return true;
}

/* ============================ Chains ============================ */

/*
 * The first run of digits (re.search(r"(\d+)", s)) in s as int() reads it,
 * saturating; false if none.
 */
static bool first_digits(const char *text, long long *v)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t k;
	int d;

	while (*s && !py_digit(s, &d))
		s += utf8_len(s);
	if (!*s)
		return false;
	*v = 0;
	while ((k = py_digit(s, &d)) != 0) {
		*v = push_digit(*v, d);
		s += k;
	}
	return true;
}

/* Python str.strip() of a NUL-terminated string: start and length. */
static const char *py_strip(const char *text, size_t *len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = skip_ws(s), start = i, end = i, n;

	while (s[i]) {
		n = py_space(s + i);
		if (n) {
			i += n;
			continue;
		}
		i += utf8_len(s + i);
		end = i;
	}
	*len = end - start;
	return text + start;
}

/* An integer literal's digits (pyjson keeps them) as a saturating value. */
static long long literal_value(const char *digits)
{
	const char *p = digits;
	long long v = 0;
	int neg = *p == '-';

	if (neg)
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		v = push_digit(v, *p - '0');
	return neg ? (v == LLONG_MAX ? LLONG_MIN : -v) : v;
}

/* evaluate.py's _parse_node_token: false where it gives None or int() raises. */
static bool node_token(const cJSON *x, long long *v)
{
	if (cJSON_IsBool(x))
		return false;
	if (cJSON_IsNumber(x)) {
		double d = trunc(x->valuedouble);

		if (x->valuestring) {
			*v = literal_value(x->valuestring);
			return true;
		}
		if (!isfinite(d))
			return false; /* int(nan) and int(inf) raise in Python */
		*v = d >= 9.2e18 ? LLONG_MAX : d <= -9.2e18 ? LLONG_MIN : (long long)d;
		return true;
	}
	if (cJSON_IsString(x)) {
		size_t n;

		py_strip(x->valuestring, &n);
		return n && first_digits(x->valuestring, v);
	}
	return false;
}

/* The JSON path of parse_llm_answer on the stripped text s (len bytes). */
static enum eval_chain_status chain_json(const char *s, size_t len, int node_len, int edge_len,
					 struct eval_chain *out)
{
	cJSON *j = NULL;
	const cJSON *nodes, *edges, *x;
	enum eval_chain_status st = EVAL_CHAIN_UNPARSABLE;

	/* json.loads(s): any error (or running out of memory) sends Python to the fallback */
	if (pyjson_parse(s, len, 0, &j, NULL))
		return st;
	nodes = cJSON_GetArrayItem(j, 0);
	edges = cJSON_GetArrayItem(j, 1);
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != 2 || !cJSON_IsArray(nodes))
		goto out;
	out->nnodes = 0;
	cJSON_ArrayForEach(x, nodes) {
		long long v;

		if (!node_token(x, &v))
			goto out;
		if (out->nnodes < EVAL_CHAIN_MAX)
			out->nodes[out->nnodes] = v;
		out->nnodes++;
	}
	if (out->nnodes != node_len) {
		st = EVAL_CHAIN_LENGTH;
		goto out;
	}
	out->nedges = 0;
	if (cJSON_IsArray(edges)) {
		cJSON_ArrayForEach(x, edges)
			if (cJSON_IsString(x))
				upper_letters((const unsigned char *)x->valuestring,
					      strlen(x->valuestring), out->edges, edge_len,
					      &out->nedges);
	} else if (cJSON_IsString(edges)) {
		upper_letters((const unsigned char *)edges->valuestring,
			      strlen(edges->valuestring), out->edges, edge_len, &out->nedges);
	}
	st = EVAL_CHAIN_OK;
out:
	cJSON_Delete(j);
	return st;
}

/* The regex fallback: \[\s*\[\s*([^\]]+?)\s*\]\s*, then every A-H. */
static enum eval_chain_status chain_regex(const char *text, size_t len, int node_len,
					  int edge_len, struct eval_chain *out)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i, j, k, m;

	for (i = 0; i < len; i++) {
		const unsigned char *close;

		if (s[i] != '[')
			continue;
		j = i + 1 + skip_ws(s + i + 1);
		if (j >= len || s[j] != '[')
			continue;
		j++;
		close = memchr(s + j, ']', len - j);
		if (!close)
			return EVAL_CHAIN_UNPARSABLE; /* no later start can match either */
		k = (size_t)(close - s);
		if (k == j)
			continue;
		m = k + 1 + skip_ws(s + k + 1);
		if (m >= len || s[m] != ',')
			continue;
		/* re.findall(r"\d+", group): the digit runs between j and k */
		out->nnodes = 0;
		for (m = j; m < k;) {
			long long v = 0;
			size_t step;
			int d;

			if (!py_digit(s + m, &d)) {
				m += utf8_len(s + m);
				continue;
			}
			while (m < k && (step = py_digit(s + m, &d)) != 0) {
				v = push_digit(v, d);
				m += step;
			}
			if (out->nnodes < EVAL_CHAIN_MAX)
				out->nodes[out->nnodes] = v;
			out->nnodes++;
		}
		if (out->nnodes != node_len)
			return EVAL_CHAIN_LENGTH;
		out->nedges = 0;
		upper_letters(s, len, out->edges, edge_len, &out->nedges);
		return EVAL_CHAIN_OK;
	}
	return EVAL_CHAIN_UNPARSABLE;
}

enum eval_chain_status eval_parse_chain(const char *text, int node_len, int edge_len,
					struct eval_chain *out)
{
	enum eval_chain_status a, b;
	const char *s;
	char *copy;
	size_t len;

	memset(out, 0, sizeof(*out));
	if (!text || node_len < 1 || node_len > EVAL_CHAIN_MAX || edge_len < 0 ||
	    edge_len > EVAL_CHAIN_MAX)
		return EVAL_CHAIN_UNPARSABLE;
	s = py_strip(text, &len);
	if (!len)
		return EVAL_CHAIN_UNPARSABLE;
	copy = malloc(len + 1);
	if (!copy)
		return EVAL_CHAIN_UNPARSABLE;
	memcpy(copy, s, len);
	copy[len] = '\0';
	a = chain_json(copy, len, node_len, edge_len, out);
	if (a == EVAL_CHAIN_OK) {
		free(copy);
		return a;
	}
	memset(out, 0, sizeof(*out));
	b = chain_regex(copy, len, node_len, edge_len, out);
	free(copy);
	if (b == EVAL_CHAIN_OK)
		return b;
	memset(out, 0, sizeof(*out));
	return (a == EVAL_CHAIN_LENGTH || b == EVAL_CHAIN_LENGTH) ? EVAL_CHAIN_LENGTH
								  : EVAL_CHAIN_UNPARSABLE;
}

/* The key's edge token as Python's str(x).upper() compares: 'A'..'H' or 0. */
static char key_letter(const cJSON *x)
{
	const char *s = cJSON_GetStringValue(x);

	if (!s || !s[0] || s[1])
		return 0;
	if (s[0] >= 'a' && s[0] <= 'h')
		return (char)(s[0] - 'a' + 'A');
	/* NOLINTNEXTLINE(bugprone-narrowing-conversions): both arms are chars */
	return s[0] >= 'A' && s[0] <= 'H' ? s[0] : 0;
}

/* evaluate.py RELAXED_NEIGHBORS: each direction and its two 45-degree neighbours. */
static bool relaxed_ok(char key, char pred)
{
	static const char *const nb[8] = { "AEH", "BFG", "CEF", "DGH", "EAC", "FBC", "GBD", "HAD" };

	return key >= 'A' && key <= 'H' && pred && strchr(nb[key - 'A'], pred);
}

double eval_edge_accuracy(const cJSON *key_edges, const struct eval_chain *pred, bool relaxed)
{
	int L = cJSON_IsArray(key_edges) ? cJSON_GetArraySize(key_edges) : 0;
	int n = pred->nedges < L ? pred->nedges : L, i, c = 0;

	if (L == 0)
		return 1.0;
	for (i = 0; i < n; i++) {
		char k = key_letter(cJSON_GetArrayItem(key_edges, i));

		if (k && (pred->edges[i] == k || (relaxed && relaxed_ok(k, pred->edges[i]))))
			c++;
	}
	return (double)c / L;
}

/*
 * int(s) of a string as Python computes it: Unicode whitespace around, a
 * sign, decimal digits (any script) with single underscores between them.
 */
static bool py_int_text(const char *text, long long *v)
{
	size_t n;
	const unsigned char *s = (const unsigned char *)py_strip(text, &n), *e = s + n;
	int neg = 0, d, digits = 0;
	size_t k;

	if (s < e && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	*v = 0;
	while (s < e) {
		if (*s == '_' && digits && s + 1 < e && s[1] != '_') {
			s++;
			continue;
		}
		k = py_digit(s, &d);
		if (!k)
			return false;
		*v = push_digit(*v, d);
		digits++;
		s += k;
	}
	if (!digits)
		return false;
	if (neg)
		*v = -*v;
	return true;
}

bool eval__key_int(const cJSON *x, long long *v)
{
	if (cJSON_IsBool(x)) {
		*v = cJSON_IsTrue(x);
		return true;
	}
	if (cJSON_IsNumber(x))
		return node_token(x, v);
	if (cJSON_IsString(x))
		return py_int_text(x->valuestring, v);
	return false;
}

/* evaluate.py find_matching_gt: the first key chain whose nodes equal pred's. */
const cJSON *eval__match_chain(const cJSON *correct, const struct eval_chain *pred)
{
	const cJSON *c, *x;

	cJSON_ArrayForEach(c, correct) {
		const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(c, "node");
		int i = 0, same = 1;

		/* a candidate that is not an object stops evaluate.py; eval refuses such keys */
		if (!cJSON_IsObject(c) || !cJSON_IsArray(nodes) ||
		    cJSON_GetArraySize(nodes) != pred->nnodes)
			continue;
		cJSON_ArrayForEach(x, nodes) {
			long long v;

			if (!eval__key_int(x, &v) || v != pred->nodes[i]) {
				same = 0;
				break;
			}
			i++;
		}
		if (same)
			return c;
	}
	return NULL;
}

