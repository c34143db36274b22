/* SPDX-License-Identifier: MIT */
/*
 * Scoring with EgoProx's evaluate.py semantics: answer parsing that
 * follows its Python regexes character class by character class (Unicode
 * whitespace, IGNORECASE folding, str.upper()), MC accuracy, and the
 * chain metrics Act-Acc, Rel-Acc-S and Rel-Acc-L.
 */
#include "eval.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "buf.h"
#include "err.h"
#include "export.h"
#include "jsonfile.h"
#include "store.h"

/* Largest predictions or records file read. */
#define EVAL_MAX_FILE (1u << 30)

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

bool eval_parse_letter(const char *text, int noptions, char *out)
{
	const unsigned char *s = (const unsigned char *)text;
	char max = 'E', l = 0, last = 0;
	size_t i = 0, n;

	if (!text)
		return false;
	if (noptions > 5)
		max = (char)('A' + (noptions > 26 ? 26 : noptions) - 1);
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
	if (last) {
		*out = last;
		return true;
	}
	if (mc_bare(s, max, &l)) {
		*out = l;
		return true;
	}
	return false;
}

/* ============================ Chains ============================ */

/* The first run of ASCII digits in s as a saturating integer; false if none. */
static bool first_digits(const char *s, long long *v)
{
	const char *p = s;

	while (*p && (*p < '0' || *p > '9'))
		p++;
	if (!*p)
		return false;
	*v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		*v = *v > (LLONG_MAX - 9) / 10 ? LLONG_MAX : *v * 10 + (*p - '0');
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

/* evaluate.py's _parse_node_token. */
static bool node_token(const cJSON *x, long long *v)
{
	if (cJSON_IsBool(x))
		return false;
	if (cJSON_IsNumber(x)) {
		double d = trunc(x->valuedouble);

		if (!isfinite(d))
			return false; /* int(inf) raises in Python */
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

/* The JSON path of parse_llm_answer on the stripped text. */
static enum eval_chain_status chain_json(const char *s, int node_len, int edge_len,
					 struct eval_chain *out)
{
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithOpts(s, &end, 1);
	const cJSON *nodes, *edges, *x;
	enum eval_chain_status st = EVAL_CHAIN_UNPARSABLE;

	if (!j)
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
		out->nnodes = 0;
		for (m = j; m < k;) {
			long long v = 0;

			if (s[m] < '0' || s[m] > '9') {
				m++;
				continue;
			}
			for (; m < k && s[m] >= '0' && s[m] <= '9'; m++)
				v = v > (LLONG_MAX - 9) / 10 ? LLONG_MAX : v * 10 + (s[m] - '0');
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
	a = chain_json(copy, node_len, edge_len, out);
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

/* int(x) of a key node as Python would compute it; false when it raises. */
static bool key_int(const cJSON *x, long long *v)
{
	if (cJSON_IsBool(x)) {
		*v = cJSON_IsTrue(x);
		return true;
	}
	if (cJSON_IsNumber(x))
		return node_token(x, v);
	if (cJSON_IsString(x)) {
		size_t n;
		const char *s = py_strip(x->valuestring, &n), *p = s;
		int neg = 0;

		if (p < s + n && (*p == '+' || *p == '-'))
			neg = *p++ == '-';
		if (p == s + n)
			return false;
		*v = 0;
		for (; p < s + n; p++) {
			if (*p < '0' || *p > '9')
				return false;
			*v = *v > (LLONG_MAX - 9) / 10 ? LLONG_MAX : *v * 10 + (*p - '0');
		}
		if (neg)
			*v = -*v;
		return true;
	}
	return false;
}

/* evaluate.py find_matching_gt: the first key chain whose nodes equal pred's. */
static const cJSON *match_chain(const cJSON *correct, const struct eval_chain *pred)
{
	const cJSON *c, *x;

	cJSON_ArrayForEach(c, correct) {
		const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(c, "node");
		int i = 0, same = 1;

		if (!cJSON_IsObject(c) || !cJSON_IsArray(nodes) ||
		    cJSON_GetArraySize(nodes) != pred->nnodes)
			continue;
		cJSON_ArrayForEach(x, nodes) {
			long long v;

			if (!key_int(x, &v) || v != pred->nodes[i]) {
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

/* ============================== Sets ============================== */

enum answer_state { ANSWER_MISSING = 0, ANSWER_NULL, ANSWER_TEXT };

struct eval_item {
	char *id;
	char *group;          /* CATEGORY.SUBTASK/METRIC, or the EgoProx source */
	const char *source;   /* EgoProx source (static), or NULL */
	int chain;
	int noptions;         /* options or candidates; 0 when unknown */
	char *key;            /* MC: the correct letter as text */
	cJSON *correct;       /* chain: correct_answer (owned) */
	enum answer_state state;
	char *answer;
};

struct eval_set {
	struct eval_item *items;
	size_t n, cap;
	size_t *byid;         /* item indices sorted by id, built on demand */
	size_t nbyid;
	size_t pred_total, pred_unknown, pred_repeat, ignored;
};

static const char *const sources[] = {
	"Intention_Approx", "Intention_Relative", "Exploration_Approx", "Exploration_Relative",
	"Exploitation_Approx", "Exploitation_Relative", "Chain of Actions"
};

static const char *source_static(const char *s)
{
	size_t i;

	for (i = 0; s && i < ARRAY_SIZE(sources); i++)
		if (!strcmp(s, sources[i]))
			return sources[i];
	return NULL;
}

static void item_release(struct eval_item *it)
{
	free(it->id);
	free(it->group);
	free(it->key);
	free(it->answer);
	cJSON_Delete(it->correct);
}

void eval_set_free(struct eval_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->n; i++)
		item_release(&set->items[i]);
	free(set->items);
	free(set->byid);
	free(set);
}

size_t eval_set_size(const struct eval_set *set)
{
	return set ? set->n : 0;
}

/* A new zeroed item at the end of set, or NULL. */
static struct eval_item *item_new(struct eval_set *set)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		struct eval_item *n = realloc(set->items, cap * sizeof(*n));

		if (!n)
			return NULL;
		set->items = n;
		set->cap = cap;
	}
	free(set->byid);
	set->byid = NULL;
	memset(&set->items[set->n], 0, sizeof(set->items[0]));
	return &set->items[set->n++];
}

/* Fills the common fields; on failure the item is dropped again. */
static int item_fill(struct eval_set *set, struct eval_item *it, const char *id,
		     const char *group, const char *source)
{
	it->id = strdup(id);
	it->group = strdup(group);
	it->source = source_static(source);
	if (!it->id || !it->group) {
		item_release(it);
		set->n--;
		return ENG_ENOMEM;
	}
	return 0;
}

/* ---------- from the store ---------- */

struct store_ctx {
	struct eval_set *set;
	const char *tasks;
};

static int ref_from_qa(const struct store_qa *qa, void *ctx)
{
	struct store_ctx *c = ctx;
	struct eval_item *it;
	cJSON *opts = NULL, *ans = NULL;
	const cJSON *correct = NULL;
	char group[200];
	int rc = 0, nopt;

	if (!export_tasks_match(c->tasks, qa->category, qa->subtask, qa->metric))
		return 0;
	opts = cJSON_Parse(qa->options_json);
	if (!cJSON_IsArray(opts)) {
		rc = err_set(ENG_EINVAL, "qa '%s': options_json is not an array", qa->id);
		goto out;
	}
	nopt = cJSON_GetArraySize(opts);
	if (qa->answer_index < 0) {
		ans = qa->answer_json ? cJSON_Parse(qa->answer_json) : NULL;
		correct = cJSON_GetObjectItemCaseSensitive(ans, "correct_answer");
		if (!cJSON_IsArray(correct))
			goto out; /* no key: not scored (export skips it too) */
	} else if (qa->answer_index >= nopt || nopt > 26) {
		rc = err_set(ENG_EINVAL, "qa '%s': answer_index %d out of %d options", qa->id,
			     qa->answer_index, nopt);
		goto out;
	}
	snprintf(group, sizeof(group), "%s.%s/%s", qa->category, qa->subtask, qa->metric);
	it = item_new(c->set);
	if (!it) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = item_fill(c->set, it, qa->id, group, export_egoprox_source(qa->category, qa->metric));
	if (rc)
		goto out;
	it->noptions = nopt;
	if (correct) {
		it->chain = 1;
		it->correct = cJSON_Duplicate(correct, 1);
		rc = it->correct ? 0 : ENG_ENOMEM;
	} else {
		char l[2] = { (char)('A' + qa->answer_index), 0 };

		it->key = strdup(l);
		rc = it->key ? 0 : ENG_ENOMEM;
	}
out:
	cJSON_Delete(opts);
	cJSON_Delete(ans);
	return rc;
}

int eval_set_from_store(struct store *st, const char *status, const char *tasks,
			struct eval_set **out)
{
	struct eval_set *set;
	struct store_filter flt;
	struct store_ctx c;
	int rc = export_tasks_check(tasks);

	if (rc)
		return rc;
	set = calloc(1, sizeof(*set));
	if (!set)
		return ENG_ENOMEM;
	memset(&flt, 0, sizeof(flt));
	flt.status = status ? status : EXPORT_DEFAULT_STATUS;
	c.set = set;
	c.tasks = tasks;
	rc = store_qa_iter(st, &flt, 0, ref_from_qa, &c);
	if (rc) {
		eval_set_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

/* ---------- files ---------- */

/* Reads a whole file into a NUL-terminated buffer (free()). */
static int slurp(const char *path, char **out, size_t *len)
{
	struct buf b;
	int rc;

	buf_init(&b, (size_t)EVAL_MAX_FILE + 1);
	rc = buf_read_file(&b, path);
	if (rc) {
		buf_release(&b);
		return rc;
	}
	*len = b.len;
	*out = b.ptr ? buf_detach(&b) : strdup("");
	return *out ? 0 : ENG_ENOMEM;
}

/* Line number of offset `at` in text. */
static size_t line_of(const char *text, const char *at)
{
	size_t line = 1;

	for (; text < at && *text; text++)
		line += *text == '\n';
	return line;
}

/* An id: a string, or an integer number as decimal text. */
static bool id_text(const cJSON *v, char *out, size_t size)
{
	if (cJSON_IsString(v)) {
		snprintf(out, size, "%s", v->valuestring);
		return strlen(v->valuestring) < size;
	}
	if (cJSON_IsNumber(v) && v->valuedouble == trunc(v->valuedouble) &&
	    fabs(v->valuedouble) < 9e15) {
		snprintf(out, size, "%.0f", v->valuedouble);
		return true;
	}
	return false;
}

/* Options "A. ", "B. " ... at line starts of a multiple-choice prompt. */
static int count_lettered(const char *text)
{
	const char *p = text;
	char pat[5] = "\nA. ";
	int n = 0;

	if (!text)
		return 0;
	for (; n < 26; n++) {
		const char *q;

		pat[1] = (char)('A' + n);
		if (n == 0 && !strncmp(text, pat + 1, 3)) {
			q = text;
		} else {
			q = strstr(p, pat);
			if (!q)
				break;
		}
		p = q + 1;
	}
	return n;
}

/* Candidates "1. ", "2. " ... of a chain prompt, each after a space, newline or '('. */
static int count_numbered(const char *text)
{
	const char *p = text;
	char pat[16];
	int n = 0;

	if (!text)
		return 0;
	for (;;) {
		const char *q = p;
		size_t len;

		snprintf(pat, sizeof(pat), "%d. ", n + 1);
		len = strlen(pat);
		for (;;) {
			q = strstr(q, pat);
			if (!q || q == text || strchr(" \n(", q[-1]))
				break;
			q += len;
		}
		if (!q)
			return n;
		p = q + len;
		n++;
	}
}

/* The first text item of an EgoProx MC sample's chat turns. */
static const char *mc_prompt_text(const cJSON *o)
{
	const cJSON *turn, *part;

	cJSON_ArrayForEach(turn, cJSON_GetObjectItemCaseSensitive(o, "data")) {
		cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(turn, "content")) {
			const char *t = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(part, "type"));

			if (t && !strcmp(t, "text"))
				return cJSON_GetStringValue(
					cJSON_GetObjectItemCaseSensitive(part, "text"));
		}
	}
	return NULL;
}

/* Sets item `it`'s answer from a results object's "answer" field. */
static int answer_from_field(struct eval_item *it, const cJSON *o, int arrays_as_text)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "answer");

	free(it->answer);
	it->answer = NULL;
	if (!a) {
		it->state = ANSWER_MISSING;
		return 0;
	}
	if (cJSON_IsString(a)) {
		it->answer = strdup(a->valuestring);
	} else if (arrays_as_text && (cJSON_IsArray(a) || cJSON_IsObject(a))) {
		char *s = cJSON_PrintUnformatted(a);

		it->answer = s ? strdup(s) : NULL;
		cJSON_free(s);
	} else {
		it->state = ANSWER_NULL;
		return 0;
	}
	if (!it->answer)
		return ENG_ENOMEM;
	it->state = ANSWER_TEXT;
	return 0;
}

/* Key items of an EgoProx array (egoprox.json or a results file). */
static int set_from_egoprox(struct eval_set *set, const cJSON *arr, const char *path,
			    int with_answers)
{
	const cJSON *o;
	int i = 0, rc = 0;

	if (!cJSON_IsArray(arr))
		return err_set(ENG_EPARSE, "'%s': expected a JSON array of samples", path);
	cJSON_ArrayForEach(o, arr) {
		const char *src = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "source"));
		const char *s = source_static(src);
		struct eval_item *it;
		char id[256];

		if (!cJSON_IsObject(o) ||
		    !id_text(cJSON_GetObjectItemCaseSensitive(o, "id"), id, sizeof(id))) {
			rc = err_set(ENG_EPARSE, "'%s': [%d]: expected an object with an \"id\"",
				     path, i);
			break;
		}
		i++;
		if (!s) {
			set->ignored++;
			continue;
		}
		it = item_new(set);
		if (!it)
			return ENG_ENOMEM;
		rc = item_fill(set, it, id, s, s);
		if (rc)
			break;
		if (!strcmp(s, "Chain of Actions")) {
			const cJSON *ca = cJSON_GetObjectItemCaseSensitive(o, "correct_answer");

			it->chain = 1;
			it->correct = ca ? cJSON_Duplicate(ca, 1) : cJSON_CreateNull();
			it->noptions = count_numbered(cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(o, "user_prompt")));
			if (!it->correct)
				rc = ENG_ENOMEM;
		} else {
			const char *k = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(o, "correct_option"));

			it->noptions = count_lettered(mc_prompt_text(o));
			if (k) {
				it->key = strdup(k);
				rc = it->key ? 0 : ENG_ENOMEM;
			}
		}
		if (!rc && with_answers)
			rc = answer_from_field(it, o, 0);
		if (rc)
			break;
	}
	return rc;
}

/* Calls fn on each non-blank line of a JSONL file, parsed; names path:line. */
static int jsonl_each(const char *path, int (*fn)(const cJSON *o, const char *where, void *ctx),
		      void *ctx)
{
	char *text = NULL, *p, *nl, where[PATH_MAX + 32];
	size_t len, line = 0;
	int rc = slurp(path, &text, &len);

	if (rc)
		return rc;
	for (p = text; !rc && p < text + len; p = nl + 1) {
		const char *end = NULL;
		cJSON *o;
		size_t k;

		line++;
		nl = strchr(p, '\n');
		if (!nl)
			nl = text + len;
		*nl = '\0';
		for (k = 0; p[k] == ' ' || p[k] == '\t' || p[k] == '\r'; k++)
			;
		if (!p[k])
			continue;
		snprintf(where, sizeof(where), "%s:%zu", path, line);
		o = cJSON_ParseWithOpts(p, &end, 1);
		if (!cJSON_IsObject(o)) {
			cJSON_Delete(o);
			rc = err_set(ENG_EPARSE, "%s: not a JSON object", where);
			break;
		}
		rc = fn(o, where, ctx);
		cJSON_Delete(o);
	}
	free(text);
	return rc;
}

/* One records.jsonl line of a jsonl export. */
static int ref_from_record(const cJSON *o, const char *where, void *ctx)
{
	struct eval_set *set = ctx;
	const cJSON *ca = cJSON_GetObjectItemCaseSensitive(o, "correct_answer");
	const char *group = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "group"));
	const char *letter = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(o, "answer_letter"));
	const char *src = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "source"));
	struct eval_item *it;
	char id[256];
	int rc;

	if (!id_text(cJSON_GetObjectItemCaseSensitive(o, "id"), id, sizeof(id)) || !group)
		return err_set(ENG_EPARSE, "%s: a record needs \"id\" and \"group\"", where);
	if (!letter && !cJSON_IsArray(ca))
		return err_set(ENG_EPARSE, "%s: a record needs \"answer_letter\" or "
			       "\"correct_answer\"", where);
	it = item_new(set);
	if (!it)
		return ENG_ENOMEM;
	rc = item_fill(set, it, id, group, src);
	if (rc)
		return rc;
	it->noptions = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "options"));
	if (letter) {
		it->key = strdup(letter);
		return it->key ? 0 : ENG_ENOMEM;
	}
	it->chain = 1;
	it->correct = cJSON_Duplicate(ca, 1);
	return it->correct ? 0 : ENG_ENOMEM;
}

int eval_set_from_export(const char *dir, struct eval_set **out)
{
	char path[PATH_MAX];
	cJSON *man = NULL, *arr = NULL;
	const char *fmt;
	struct eval_set *set = calloc(1, sizeof(*set));
	int rc;

	if (!set)
		return ENG_ENOMEM;
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	rc = jsonfile_read(path, &man);
	if (rc)
		goto out;
	fmt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(man, "format"));
	if (fmt && !strcmp(fmt, "egoprox")) {
		snprintf(path, sizeof(path), "%s/%s", dir, export_format_file(EXPORT_EGOPROX));
		rc = jsonfile_read(path, &arr);
		rc = rc ? rc : set_from_egoprox(set, arr, path, 0);
	} else if (fmt && !strcmp(fmt, "jsonl")) {
		snprintf(path, sizeof(path), "%s/%s", dir, export_format_file(EXPORT_JSONL));
		rc = jsonl_each(path, ref_from_record, set);
	} else {
		rc = err_set(ENG_EINVAL, "'%s': format '%s' holds no answer key eval reads "
			     "(export with --format egoprox or jsonl, or score against --db)",
			     path, fmt ? fmt : "?");
	}
out:
	cJSON_Delete(man);
	cJSON_Delete(arr);
	if (rc) {
		eval_set_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

/* Reads a whole JSON array file with a line number on parse errors. */
static int read_array(const char *path, cJSON **out)
{
	char *text = NULL;
	const char *end = NULL;
	size_t len;
	int rc = slurp(path, &text, &len);

	if (rc)
		return rc;
	*out = cJSON_ParseWithOpts(text, &end, 1);
	if (!*out)
		rc = err_set(ENG_EPARSE, "%s:%zu: JSON parse error", path,
			     line_of(text, end ? end : text));
	free(text);
	return rc;
}

int eval_set_from_results(const char *path, struct eval_set **out)
{
	struct eval_set *set = calloc(1, sizeof(*set));
	cJSON *arr = NULL;
	int rc;

	if (!set)
		return ENG_ENOMEM;
	rc = read_array(path, &arr);
	rc = rc ? rc : set_from_egoprox(set, arr, path, 1);
	cJSON_Delete(arr);
	if (rc) {
		eval_set_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

/* ---------- answers ---------- */

static int cmp_byid(const void *a, const void *b, void *ctx)
{
	const struct eval_set *set = ctx;

	return strcmp(set->items[*(const size_t *)a].id, set->items[*(const size_t *)b].id);
}

/* The item with this id, or NULL (ENG_ENOMEM in *rc when the index fails). */
static struct eval_item *find_item(struct eval_set *set, const char *id, int *rc)
{
	size_t lo = 0, hi, i;

	*rc = 0;
	if (!set->byid || set->nbyid != set->n) {
		free(set->byid);
		set->byid = malloc((set->n ? set->n : 1) * sizeof(*set->byid));
		if (!set->byid) {
			*rc = ENG_ENOMEM;
			return NULL;
		}
		for (i = 0; i < set->n; i++)
			set->byid[i] = i;
		qsort_r(set->byid, set->n, sizeof(*set->byid), cmp_byid, set);
		set->nbyid = set->n;
	}
	hi = set->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(set->items[set->byid[mid]].id, id);

		if (!c)
			return &set->items[set->byid[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int eval_set_answer(struct eval_set *set, const char *id, const char *text)
{
	int rc;
	struct eval_item *it = find_item(set, id, &rc);

	if (rc)
		return rc;
	if (!it)
		return err_set(ENG_ENOTFOUND, "no key item '%s'", id);
	if (it->state != ANSWER_MISSING)
		set->pred_repeat++;
	free(it->answer);
	it->answer = NULL;
	it->state = text ? ANSWER_TEXT : ANSWER_NULL;
	if (text) {
		it->answer = strdup(text);
		if (!it->answer) {
			it->state = ANSWER_NULL;
			return ENG_ENOMEM;
		}
	}
	return 0;
}

/* One prediction object (a JSONL line or a results item). */
static int pred_put(struct eval_set *set, const cJSON *o, const char *where, int arrays)
{
	char id[256];
	struct eval_item *it;
	int rc;

	if (!id_text(cJSON_GetObjectItemCaseSensitive(o, "id"), id, sizeof(id)))
		return err_set(ENG_EPARSE, "%s: a prediction needs an \"id\" (string or integer)",
			       where);
	set->pred_total++;
	it = find_item(set, id, &rc);
	if (rc)
		return rc;
	if (!it) {
		set->pred_unknown++;
		return 0;
	}
	if (!cJSON_GetObjectItemCaseSensitive(o, "answer"))
		return 0;
	if (it->state != ANSWER_MISSING)
		set->pred_repeat++;
	return answer_from_field(it, o, arrays);
}

static int pred_line(const cJSON *o, const char *where, void *ctx)
{
	return pred_put(ctx, o, where, 1);
}

int eval_set_read_predictions(struct eval_set *set, const char *path)
{
	char *text = NULL, where[PATH_MAX + 32];
	const unsigned char *p;
	cJSON *arr = NULL;
	const cJSON *o;
	size_t len;
	int rc = slurp(path, &text, &len), i = 0;

	if (rc)
		return rc;
	p = (const unsigned char *)text;
	p += skip_ws(p);
	if (*p != '[') {
		free(text);
		return jsonl_each(path, pred_line, set);
	}
	free(text);
	rc = read_array(path, &arr);
	if (rc)
		return rc;
	cJSON_ArrayForEach(o, arr) {
		snprintf(where, sizeof(where), "%s: [%d]", path, i++);
		if (!cJSON_IsObject(o)) {
			rc = err_set(ENG_EPARSE, "%s: expected an object", where);
			break;
		}
		rc = pred_put(set, o, where, 0);
		if (rc)
			break;
	}
	cJSON_Delete(arr);
	return rc;
}

/* ============================== Scoring ============================== */

struct acc {
	const char *name;
	/* multiple choice */
	size_t n, correct, missing, unparsed, chance_n;
	double chance;
	/* chains */
	size_t cn, evaluated, node_correct, drop_unparsable, drop_length, cmissing, invalid;
	size_t cchance_n;
	double sum_s, sum_l, cchance;
};

/* n! / (n - k)! as a double. */
static double perms(int n, int k)
{
	double p = 1;
	int i;

	for (i = 0; i < k; i++)
		p *= n - i;
	return p;
}

/* Distinct node lists of length k among the key chains. */
static int distinct_chains(const cJSON *correct, int k)
{
	const cJSON *a, *b;
	int n = 0;

	cJSON_ArrayForEach(a, correct) {
		const cJSON *na = cJSON_GetObjectItemCaseSensitive(a, "node");
		int dup = 0;

		if (cJSON_GetArraySize(na) != k)
			continue;
		for (b = correct->child; b && b != a; b = b->next) {
			const cJSON *nb = cJSON_GetObjectItemCaseSensitive(b, "node");

			if (cJSON_GetArraySize(nb) == k && cJSON_Compare(na, nb, 1)) {
				dup = 1;
				break;
			}
		}
		n += !dup;
	}
	return n;
}

static void score_mc(const struct eval_item *it, struct acc *a)
{
	char l;

	a->n++;
	if (it->noptions > 0) {
		a->chance += 1.0 / it->noptions;
		a->chance_n++;
	}
	if (it->state == ANSWER_MISSING) {
		a->missing++;
		return;
	}
	if (it->state != ANSWER_TEXT || !eval_parse_letter(it->answer, it->noptions, &l)) {
		a->unparsed++;
		return;
	}
	if (it->key && it->key[0] == l && it->key[1] == '\0')
		a->correct++;
}

static void score_chain(const struct eval_item *it, struct acc *a)
{
	const cJSON *first = cJSON_GetArrayItem(it->correct, 0), *nodes, *edges, *m;
	struct eval_chain pc;
	enum eval_chain_status st;
	int k, e;

	a->cn++;
	nodes = cJSON_GetObjectItemCaseSensitive(first, "node");
	edges = cJSON_GetObjectItemCaseSensitive(first, "edge");
	k = cJSON_GetArraySize(nodes);
	e = cJSON_GetArraySize(edges);
	if (!cJSON_IsArray(it->correct) || !cJSON_IsObject(first) || !cJSON_IsArray(nodes) ||
	    !cJSON_IsArray(edges) || k == 0 || e == 0 || k > EVAL_CHAIN_MAX || e > EVAL_CHAIN_MAX) {
		a->invalid++;
		return;
	}
	if (it->noptions >= k) {
		a->cchance += distinct_chains(it->correct, k) / perms(it->noptions, k);
		a->cchance_n++;
	}
	if (it->state == ANSWER_MISSING) {
		a->cmissing++;
		return;
	}
	st = it->state == ANSWER_TEXT ? eval_parse_chain(it->answer, k, e, &pc)
				       : EVAL_CHAIN_UNPARSABLE;
	if (st != EVAL_CHAIN_OK) {
		if (st == EVAL_CHAIN_LENGTH)
			a->drop_length++;
		else
			a->drop_unparsable++;
		return;
	}
	a->evaluated++;
	m = match_chain(it->correct, &pc);
	if (!m)
		return;
	a->node_correct++;
	edges = cJSON_GetObjectItemCaseSensitive(m, "edge");
	a->sum_s += eval_edge_accuracy(edges, &pc, false);
	a->sum_l += eval_edge_accuracy(edges, &pc, true);
}

static void j_put(int *oom, cJSON *o, const char *k, cJSON *v)
{
	if (!v || !o || !cJSON_AddItemToObject(o, k, v)) {
		cJSON_Delete(v);
		*oom = 1;
	}
}

static cJSON *ratio(double num, size_t den)
{
	return den ? cJSON_CreateNumber(num / (double)den) : cJSON_CreateNull();
}

static cJSON *acc_mc_json(int *oom, const struct acc *a)
{
	cJSON *o = cJSON_CreateObject();

	j_put(oom, o, "kind", cJSON_CreateString("mc"));
	j_put(oom, o, "n", cJSON_CreateNumber((double)a->n));
	j_put(oom, o, "correct", cJSON_CreateNumber((double)a->correct));
	j_put(oom, o, "accuracy", ratio((double)a->correct, a->n));
	j_put(oom, o, "chance", ratio(a->chance, a->chance_n));
	j_put(oom, o, "missing", cJSON_CreateNumber((double)a->missing));
	j_put(oom, o, "unparsed", cJSON_CreateNumber((double)a->unparsed));
	if (!o)
		*oom = 1;
	return o;
}

static cJSON *acc_chain_json(int *oom, const struct acc *a)
{
	cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateObject();
	double nc = (double)a->node_correct;

	j_put(oom, o, "kind", cJSON_CreateString("chain"));
	j_put(oom, o, "n", cJSON_CreateNumber((double)a->cn));
	j_put(oom, o, "evaluated", cJSON_CreateNumber((double)a->evaluated));
	j_put(oom, o, "node_correct", cJSON_CreateNumber(nc));
	/* evaluate.py reports 0 when nothing was evaluated or node-correct */
	j_put(oom, o, "act_acc", cJSON_CreateNumber(a->evaluated ? nc / (double)a->evaluated : 0));
	j_put(oom, o, "rel_acc_s", cJSON_CreateNumber(a->node_correct ? a->sum_s / nc : 0));
	j_put(oom, o, "rel_acc_l", cJSON_CreateNumber(a->node_correct ? a->sum_l / nc : 0));
	j_put(oom, o, "dropped_unparsable", cJSON_CreateNumber((double)a->drop_unparsable));
	j_put(oom, o, "dropped_length", cJSON_CreateNumber((double)a->drop_length));
	j_put(oom, o, "missing", cJSON_CreateNumber((double)a->cmissing));
	j_put(oom, o, "invalid_key", cJSON_CreateNumber((double)a->invalid));
	j_put(oom, c, "act_acc", ratio(a->cchance, a->cchance_n));
	j_put(oom, c, "rel_acc_s", cJSON_CreateNumber(1.0 / 8));
	j_put(oom, c, "rel_acc_l", cJSON_CreateNumber(3.0 / 8));
	j_put(oom, o, "chance", c);
	if (!o)
		*oom = 1;
	return o;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct acc *)a)->name, ((const struct acc *)b)->name);
}

/* The accumulator called name in accs[0..*n), added when new. */
static struct acc *acc_get(struct acc *accs, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(accs[i].name, name))
			return &accs[i];
	memset(&accs[*n], 0, sizeof(accs[0]));
	accs[*n].name = name;
	return &accs[(*n)++];
}

int eval_set_score(const struct eval_set *set, cJSON **out)
{
	struct acc *groups = calloc(set->n + 1, sizeof(*groups));
	struct acc src[ARRAY_SIZE(sources)], all;
	cJSON *r = cJSON_CreateObject(), *g, *e, *p;
	size_t ng = 0, i, missing = 0;
	int oom = 0;

	memset(src, 0, sizeof(src));
	memset(&all, 0, sizeof(all));
	if (!groups || !r) {
		free(groups);
		cJSON_Delete(r);
		return ENG_ENOMEM;
	}
	for (i = 0; i < ARRAY_SIZE(sources); i++)
		src[i].name = sources[i];
	for (i = 0; i < set->n; i++) {
		const struct eval_item *it = &set->items[i];
		struct acc *a = acc_get(groups, &ng, it->group);
		size_t s;

		missing += it->state == ANSWER_MISSING;
		for (s = 0; s < ARRAY_SIZE(sources); s++)
			if (it->source == sources[s])
				break;
		if (it->chain) {
			score_chain(it, a);
			if (s < ARRAY_SIZE(sources))
				score_chain(it, &src[s]);
		} else {
			score_mc(it, a);
			score_mc(it, &all);
			if (s < ARRAY_SIZE(sources))
				score_mc(it, &src[s]);
		}
	}
	qsort(groups, ng, sizeof(*groups), cmp_name);
	g = cJSON_CreateObject();
	for (i = 0; g && i < ng; i++) {
		if (groups[i].n || !groups[i].cn)
			j_put(&oom, g, groups[i].name, acc_mc_json(&oom, &groups[i]));
		if (groups[i].cn) {
			char name[240];

			snprintf(name, sizeof(name), "%s%s", groups[i].name,
				 groups[i].n ? " (chain)" : "");
			j_put(&oom, g, name, acc_chain_json(&oom, &groups[i]));
		}
	}
	j_put(&oom, r, "groups", g);
	e = cJSON_CreateObject();
	for (i = 0; e && i < ARRAY_SIZE(sources); i++) {
		if (i + 1 < ARRAY_SIZE(sources))
			j_put(&oom, e, sources[i], acc_mc_json(&oom, &src[i]));
		else if (src[i].cn)
			j_put(&oom, e, sources[i], acc_chain_json(&oom, &src[i]));
	}
	j_put(&oom, r, "egoprox", e);
	j_put(&oom, r, "overall_mc", acc_mc_json(&oom, &all));
	p = cJSON_CreateObject();
	j_put(&oom, p, "total", cJSON_CreateNumber((double)set->pred_total));
	j_put(&oom, p, "unknown_ids", cJSON_CreateNumber((double)set->pred_unknown));
	j_put(&oom, p, "repeated_ids", cJSON_CreateNumber((double)set->pred_repeat));
	j_put(&oom, p, "ignored_key_items", cJSON_CreateNumber((double)set->ignored));
	j_put(&oom, r, "predictions", p);
	j_put(&oom, r, "items", cJSON_CreateNumber((double)set->n));
	j_put(&oom, r, "missing", cJSON_CreateNumber((double)missing));
	free(groups);
	if (oom) {
		cJSON_Delete(r);
		return ENG_ENOMEM;
	}
	*out = r;
	return 0;
}
