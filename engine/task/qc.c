/* SPDX-License-Identifier: MIT */
/* Hard negatives, option assembly, text QC and chain candidate sets. */
#include "qc.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "hash.h"
#include "rng.h"
#include "strdist.h"

/* ======================= Defaults, seeds, shuffle ======================= */

void qc_defaults(struct qc_params *p)
{
	p->n_options = 5;
	p->angle_margin_deg = 30.0f;
	p->dist_margin_rel = 0.25f;
	p->dist_margin_m = 0.3f;
	p->z_max = 1.5f;
	p->enforce_length = false;
	p->overlap_slack = 0.15f;
	p->dup_similarity = 0.9f;
	p->max_repairs = 8;
	p->chain_candidates = 8;
	disc_defaults(&p->disc);
}

static const char *const reason_names[QC_NREASON] = {
	"ok", "meta_option", "duplicate", "substring", "permutation",
	"length_z", "lexical_overlap", "no_negatives",
};

const char *qc_reason_name(enum qc_reason r)
{
	return (unsigned)r < QC_NREASON ? reason_names[r] : "?";
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool hex16(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 16; i++) {
		int h = hexval(s[i]);

		if (h < 0)
			return false;
		v = (v << 4) | (uint64_t)h;
	}
	*out = v;
	return true;
}

uint64_t qc_seed_from_id(const char *qa_id)
{
	char hex[HASH_HEX_LEN + 1];
	uint64_t v = 0;

	if (!qa_id)
		qa_id = "";
	if (strlen(qa_id) >= 16 && hex16(qa_id, &v))
		return v;
	if (hash_hex(qa_id, strlen(qa_id), hex))
		return 0x5eed5eed5eed5eedULL; /* hashing failed: still deterministic */
	hex16(hex, &v);
	return v;
}

struct rng {
	uint64_t s;
	bool uniform; /* broad draws uniform over the kind's range, not the prior's marginal */
};

/* Uniform in [0, n). */
static int draw_int(struct rng *r, int n)
{
	return (int)rng_below(&r->s, (uint64_t)n);
}

static void shuffle_ints(struct rng *r, int *v, int n)
{
	int i;

	for (i = n - 1; i > 0; i--) {
		int j = draw_int(r, i + 1), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

#define SEED_SHUFFLE 0x6f7074696f6e73ULL /* "options" */
#define SEED_POOL 0x6e656761746976ULL    /* "negativ" */
#define SEED_CHAIN 0x636861696e73ULL     /* "chains" */

int qc_style(const char *qa_id)
{
	/* one phrasing for every option of the item, varied across items */
	return (int)((qc_seed_from_id(qa_id) >> 17) & 0x7fff);
}

void qc_shuffle(uint64_t seed, int n, int *perm)
{
	struct rng r = { seed ^ SEED_SHUFFLE, false };
	int i;

	ENG_ASSERT(n >= 0 && n <= QC_CHAIN_MAX_CAND);
	for (i = 0; i < n; i++)
		perm[i] = i;
	shuffle_ints(&r, perm, n);
}

/* ======================= Margins ======================= */

static float ang_diff(float a, float b)
{
	return fabsf(bev_wrap_deg(a - b));
}

static bool dist_distinct(float a, float b, const struct qc_params *p)
{
	float d = fabsf(a - b), big = a > b ? a : b;

	return d + 1e-4f >= p->dist_margin_m && d + 1e-4f >= p->dist_margin_rel * big;
}

static bool rel_incompatible(enum ans_rel a, enum ans_rel b)
{
	return a != b && a != ANS_REL_NEAR && b != ANS_REL_NEAR;
}

bool qc_distinct(const struct answer *a, const struct answer *b,
		 const struct qc_params *p)
{
	struct qc_params def;
	int i;

	if (!p) {
		qc_defaults(&def);
		p = &def;
	}
	if (a->kind != b->kind)
		return true;
	switch (a->kind) {
	case ANS_HEAD_TURN_APPROX:
		return ang_diff(a->yaw_deg, b->yaw_deg) + 1e-4f >= p->angle_margin_deg;
	case ANS_GAZE_APPROX:
		return !ans_name_equal(a->object, b->object) ||
		       ang_diff(a->yaw_deg, b->yaw_deg) + 1e-4f >= p->angle_margin_deg;
	case ANS_HEAD_TURN_RELATIVE:
		return a->dir != b->dir;
	case ANS_GAZE_RELATIVE:
		if (!ans_name_equal(a->object, b->object))
			return true;
		return ans_name_equal(a->ref, b->ref) && rel_incompatible(a->rel, b->rel);
	case ANS_NAV_APPROX:
		return a->dir != b->dir || dist_distinct(a->dist_m, b->dist_m, p);
	case ANS_NAV_RELATIVE:
		if (a->nlegs != b->nlegs)
			return true;
		for (i = 0; i < a->nlegs && i < 2; i++)
			if (a->legs[i] != b->legs[i])
				return true;
		return false;
	case ANS_INTERACT_APPROX:
		return a->dir != b->dir || a->vertical != b->vertical ||
		       dist_distinct(a->dist_m, b->dist_m, p) || a->hand != b->hand ||
		       !ans_name_equal(a->verb, b->verb) ||
		       !ans_name_equal(a->object, b->object);
	case ANS_INTERACT_RELATIVE:
		return a->dir != b->dir || !ans_name_equal(a->verb, b->verb) ||
		       !ans_name_equal(a->object, b->object);
	case ANS_CHAIN:
		return !ans_equal(a, b);
	default:
		return true;
	}
}

/* ======================= Text normalisation ======================= */

#define QT_NORM ANS_TEXT_MAX
#define QT_TOK 96

/*
 * A text normalised for the checks: lowercase tokens (words of letters,
 * digits and apostrophes; numbers in %g form) joined by single spaces.
 * "°", "º", "deg", "degree(s)" -> "deg"; "metre(s)", "meter(s)" -> "m";
 * "~", "about", "approximately", "approx", "roughly" dropped; every other
 * character separates tokens.
 */
struct qtext {
	char norm[QT_NORM];
	int ntok;
	short off[QT_TOK];
	short len[QT_TOK];
	bool isnum[QT_TOK];
	bool stop[QT_TOK];  /* the token is a stop word (is_stop) */
	float num[QT_TOK];
};

static bool word_is_stop(const char *w, size_t wl);

static void qt_push(struct qtext *q, const char *w, size_t wl, bool isnum, double v)
{
	size_t at = 0;

	if (q->ntok >= QT_TOK)
		return;
	if (q->ntok)
		at = (size_t)q->off[q->ntok - 1] + (size_t)q->len[q->ntok - 1] + 1;
	if (at + wl + 1 >= QT_NORM)
		return;
	if (q->ntok)
		q->norm[at - 1] = ' ';
	memcpy(q->norm + at, w, wl);
	q->norm[at + wl] = '\0';
	q->off[q->ntok] = (short)at;
	q->len[q->ntok] = (short)wl;
	q->isnum[q->ntok] = isnum;
	q->stop[q->ntok] = word_is_stop(w, wl);
	q->num[q->ntok] = (float)v;
	q->ntok++;
}

static void qt_word(struct qtext *q, const char *w, size_t wl)
{
	static const char *const drop[] = { "about", "approximately", "approx", "roughly",
					    NULL };
	static const char *const deg[] = { "deg", "degree", "degrees", "degs", NULL };
	static const char *const met[] = { "metre", "metres", "meter", "meters", NULL };
	int i;

	for (i = 0; drop[i]; i++)
		if (strlen(drop[i]) == wl && !memcmp(drop[i], w, wl))
			return;
	for (i = 0; deg[i]; i++)
		if (strlen(deg[i]) == wl && !memcmp(deg[i], w, wl)) {
			qt_push(q, "deg", 3, false, 0);
			return;
		}
	for (i = 0; met[i]; i++)
		if (strlen(met[i]) == wl && !memcmp(met[i], w, wl)) {
			qt_push(q, "m", 1, false, 0);
			return;
		}
	qt_push(q, w, wl, false, 0);
}

static void qt_prep(const char *s, struct qtext *q)
{
	size_t i = 0, n = s ? strlen(s) : 0;

	q->norm[0] = '\0';
	q->ntok = 0;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		if (isalpha(c)) {
			char w[64];
			size_t wl = 0;

			while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '\'')) {
				if (wl < sizeof(w))
					w[wl++] = (char)tolower((unsigned char)s[i]);
				i++;
			}
			qt_word(q, w, wl);
		} else if (isdigit(c)) {
			char num[40], w[40];
			size_t nl = 0;
			int wl;
			double v;

			while (i < n && (isdigit((unsigned char)s[i]) ||
					 (s[i] == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1])))) {
				if (nl < sizeof(num) - 1)
					num[nl++] = s[i];
				i++;
			}
			num[nl] = '\0';
			v = strtod(num, NULL);
			wl = snprintf(w, sizeof(w), "%g", v);
			qt_push(q, w, (size_t)wl, true, v);
		} else if (c == 0xC2 && i + 1 < n &&
			   ((unsigned char)s[i + 1] == 0xB0 || (unsigned char)s[i + 1] == 0xBA)) {
			qt_push(q, "deg", 3, false, 0);
			i += 2;
		} else {
			i++;
		}
	}
}

static bool tok_eq(const struct qtext *a, int i, const struct qtext *b, int j)
{
	return a->len[i] == b->len[j] &&
	       !memcmp(a->norm + a->off[i], b->norm + b->off[j], (size_t)a->len[i]);
}

static bool tok_is(const struct qtext *a, int i, const char *w)
{
	return (size_t)a->len[i] == strlen(w) && !memcmp(a->norm + a->off[i], w, (size_t)a->len[i]);
}

/* Levenshtein similarity of two byte strings. */
static float lev_sim(const char *a, size_t la, const char *b, size_t lb)
{
	size_t big;

	if (la > QT_NORM)
		la = QT_NORM;
	if (lb > QT_NORM)
		lb = QT_NORM;
	big = la > lb ? la : lb;
	if (!big)
		return 1.0f;
	return 1.0f - (float)strdist_lev(a, la, b, lb) / (float)big;
}

float qc_similarity(const char *a, const char *b)
{
	struct qtext *qa = malloc(sizeof(*qa)), *qb = malloc(sizeof(*qb));
	float s = 0.0f;

	if (qa && qb) {
		qt_prep(a, qa);
		qt_prep(b, qb);
		s = lev_sim(qa->norm, strlen(qa->norm), qb->norm, strlen(qb->norm));
	}
	free(qa);
	free(qb);
	return s;
}

/* Text of tokens [b, e) of q, as a pointer and length into q->norm. */
static size_t span(const struct qtext *q, int b, int e, const char **s)
{
	*s = q->norm + q->off[b];
	return (size_t)(q->off[e - 1] + q->len[e - 1] - q->off[b]);
}

/*
 * Near-duplicates: equal normalised texts, or a character similarity >=
 * thr where the differing words are a spelling variant (their own
 * similarity >= 0.5, no number in them changing by 10% or more) rather
 * than a different word ("left" / "right", "cup" / "mug", "0.6" / "1.6").
 */
static bool near_dup(const struct qtext *a, const struct qtext *b, float thr,
		     float *sim_out)
{
	int p = 0, s = 0, ea, eb, i, j, na = 0, nb = 0;
	double va[QT_TOK], vb[QT_TOK];
	const char *sa, *sb;
	size_t la, lb;
	float sim;

	if (!strcmp(a->norm, b->norm)) {
		if (sim_out)
			*sim_out = 1.0f;
		return true;
	}
	/* without a figure to report, the cheap word checks go first */
	sim = sim_out ? lev_sim(a->norm, strlen(a->norm), b->norm, strlen(b->norm)) : 1.0f;
	if (sim_out)
		*sim_out = sim;
	if (sim < thr)
		return false;
	while (p < a->ntok && p < b->ntok && tok_eq(a, p, b, p))
		p++;
	while (s < a->ntok - p && s < b->ntok - p &&
	       tok_eq(a, a->ntok - 1 - s, b, b->ntok - 1 - s))
		s++;
	ea = a->ntok - s;
	eb = b->ntok - s;
	if (ea <= p || eb <= p)
		return false; /* whole words added or removed */
	for (i = p; i < ea; i++)
		if (a->isnum[i])
			va[na++] = a->num[i];
	for (j = p; j < eb; j++)
		if (b->isnum[j])
			vb[nb++] = b->num[j];
	if (na != nb)
		return false;
	for (i = 0; i < na; i++) {
		double big = fabs(va[i]) > fabs(vb[i]) ? fabs(va[i]) : fabs(vb[i]);

		if (fabs(va[i] - vb[i]) >= 0.1 * big && big > 0)
			return false;
	}
	la = span(a, p, ea, &sa);
	lb = span(b, p, eb, &sb);
	if (lev_sim(sa, la, sb, lb) < 0.5f)
		return false;
	return sim_out || lev_sim(a->norm, strlen(a->norm), b->norm, strlen(b->norm)) >= thr;
}

/* a's token sequence occurs inside b's longer one. */
static bool is_substring(const struct qtext *a, const struct qtext *b)
{
	int i, j;

	if (a->ntok < 1 || a->ntok >= b->ntok)
		return false;
	for (i = 0; i + a->ntok <= b->ntok; i++) {
		for (j = 0; j < a->ntok; j++)
			if (!tok_eq(a, j, b, i + j))
				break;
		if (j == a->ntok)
			return true;
	}
	return false;
}

/* Sorts the token indices of q by token text (insertion sort: short lists). */
static void sort_toks(const struct qtext *q, int *idx)
{
	int i;

	for (i = 0; i < q->ntok; i++)
		idx[i] = i;
	for (i = 1; i < q->ntok; i++) {
		int k = idx[i], j = i - 1;

		while (j >= 0) {
			int a = idx[j];
			int n = q->len[a] < q->len[k] ? q->len[a] : q->len[k];
			int c = memcmp(q->norm + q->off[a], q->norm + q->off[k], (size_t)n);

			if (c < 0 || (c == 0 && q->len[a] <= q->len[k]))
				break;
			idx[j + 1] = a;
			j--;
		}
		idx[j + 1] = k;
	}
}

/* Same multiset of tokens in another order. */
static bool is_permutation(const struct qtext *a, const struct qtext *b)
{
	int ia[QT_TOK], ib[QT_TOK], i;

	if (a->ntok != b->ntok || a->ntok < 2 || !strcmp(a->norm, b->norm))
		return false;
	sort_toks(a, ia);
	sort_toks(b, ib);
	for (i = 0; i < a->ntok; i++)
		if (!tok_eq(a, ia[i], b, ib[i]))
			return false;
	return true;
}

/* Phrases that make an option a meta option, matched as token sequences. */
static const char *const meta_phrases[] = {
	"all of the above", "none of the above", "all the above", "none of these",
	"all of these", "all of them", "none of them", "both of the above",
	"neither of the above", "cannot be determined", "can not be determined",
	"can't be determined", "cannot determine", "can't determine",
	"cannot be known", "cannot be told", "cannot tell", "can't tell",
	"not enough information", "insufficient information", "not enough info",
	"impossible to tell", "impossible to determine", "impossible to know",
	"not possible to determine", "not possible to tell", "no way to know",
	"not determinable", "undeterminable", "same as option", "not sure",
	"no correct answer", "other options", NULL,
};

/* Options that are meta when they are the whole text. */
static const char *const meta_whole[] = {
	"none", "all", "unknown", "neither", "both", "n a", "other", "nothing",
	"not applicable", "no answer", NULL,
};

static bool letter_tok(const struct qtext *q, int i)
{
	return q->len[i] == 1 && q->norm[q->off[i]] >= 'a' && q->norm[q->off[i]] <= 'h';
}

/*
 * The meta phrases, prepared once (read-only afterwards: thread-safe),
 * with their first tokens: a phrase can equal a text or lie inside it
 * only when the text holds its first token, so a text holding none of
 * them skips the phrase-by-phrase match.
 */
#define NMETA (sizeof(meta_phrases) / sizeof(meta_phrases[0]) - 1)
static struct qtext meta_prepared[NMETA];
static int meta_first[NMETA]; /* index in meta_firsts of each phrase's first token */
static int meta_firsts[NMETA]; /* a phrase whose first token is each distinct one */
static int nmeta_firsts;
static pthread_once_t meta_once = PTHREAD_ONCE_INIT;

static void meta_prepare(void)
{
	size_t i;
	int k;

	for (i = 0; i < NMETA; i++) {
		qt_prep(meta_phrases[i], &meta_prepared[i]);
		ENG_ASSERT(meta_prepared[i].ntok > 0);
		for (k = 0; k < nmeta_firsts; k++)
			if (tok_eq(&meta_prepared[meta_firsts[k]], 0, &meta_prepared[i], 0))
				break;
		if (k == nmeta_firsts)
			meta_firsts[nmeta_firsts++] = (int)i;
		meta_first[i] = k;
	}
}

static bool is_meta(const struct qtext *q)
{
	size_t k;
	int i;

	for (i = 0; meta_whole[i]; i++)
		if (!strcmp(q->norm, meta_whole[i]))
			return true;
	/* "both A and B", "neither A nor B", "A and B", "option C" */
	for (i = 0; i + 3 < q->ntok; i++)
		if ((tok_is(q, i, "both") && letter_tok(q, i + 1) && tok_is(q, i + 2, "and") &&
		     letter_tok(q, i + 3)) ||
		    (tok_is(q, i, "neither") && letter_tok(q, i + 1) && tok_is(q, i + 2, "nor") &&
		     letter_tok(q, i + 3)))
			return true;
	if (q->ntok == 3 && letter_tok(q, 0) && tok_is(q, 1, "and") && letter_tok(q, 2))
		return true;
	for (i = 0; i + 1 < q->ntok; i++)
		if ((tok_is(q, i, "option") || tok_is(q, i, "options")) && letter_tok(q, i + 1))
			return true;
	pthread_once(&meta_once, meta_prepare);
	{
		bool held[NMETA] = { false }, any = false;
		int f;

		for (f = 0; f < nmeta_firsts; f++)
			for (i = 0; i < q->ntok && !held[f]; i++)
				held[f] = tok_eq(&meta_prepared[meta_firsts[f]], 0, q, i);
		for (f = 0; f < nmeta_firsts; f++)
			any = any || held[f];
		if (!any)
			return false;
		for (k = 0; k < NMETA; k++)
			if (held[meta_first[k]] && (!strcmp(meta_prepared[k].norm, q->norm) ||
						    is_substring(&meta_prepared[k], q)))
				return true;
	}
	return false;
}

/*
 * Words that carry no content for the overlap check: English function
 * words and the verbs and nouns every answer template uses.
 */
static const char *const stopwords[] = {
	"a", "an", "the", "of", "to", "at", "in", "on", "for", "with", "and", "or",
	"by", "from", "into", "onto", "then", "first", "is", "are", "be", "was",
	"will", "would", "should", "can", "could", "do", "does", "did", "how",
	"what", "which", "where", "when", "who", "why", "this", "that", "these",
	"those", "it", "its", "their", "they", "them", "his", "her", "he", "she",
	"you", "your", "so", "as", "now", "next", "person", "human", "person's",
	"turn", "go", "look", "keep", "facing", "face", "move", "step", "head",
	"hand", "hands", "deg", "m", "way", "most", "likely", "s", NULL,
};

/*
 * The stop words as sorted keys: a word of at most 8 bytes packed into a
 * uint64_t (first byte lowest, zero-padded) beside its length, so that a
 * token is looked up with one binary search instead of a strlen and a
 * memcmp per word of the list.
 */
#define STOP_MAX_LEN 8

struct stop_key {
	uint64_t key;
	size_t len;
};

static struct stop_key stop_keys[sizeof(stopwords) / sizeof(stopwords[0])];
static size_t nstop_keys;
static pthread_once_t stop_once = PTHREAD_ONCE_INIT;

static uint64_t pack_word(const char *w, size_t wl)
{
	uint64_t k = 0;
	size_t i;

	for (i = 0; i < wl; i++)
		k |= (uint64_t)(unsigned char)w[i] << (8 * i);
	return k;
}

static int stop_cmp(const void *pa, const void *pb)
{
	const struct stop_key *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->len > b->len) - (a->len < b->len);
}

static void stop_prepare(void)
{
	int k;

	for (k = 0; stopwords[k]; k++) {
		size_t wl = strlen(stopwords[k]);

		ENG_ASSERT(wl <= STOP_MAX_LEN);
		stop_keys[nstop_keys].key = pack_word(stopwords[k], wl);
		stop_keys[nstop_keys++].len = wl;
	}
	qsort(stop_keys, nstop_keys, sizeof(stop_keys[0]), stop_cmp);
}

static bool word_is_stop(const char *w, size_t wl)
{
	struct stop_key k;

	if (wl > STOP_MAX_LEN)
		return false;
	pthread_once(&stop_once, stop_prepare);
	k.key = pack_word(w, wl);
	k.len = wl;
	return bsearch(&k, stop_keys, nstop_keys, sizeof(stop_keys[0]), stop_cmp) != NULL;
}

/* Token i of q is a stop word: decided once, when the token was read. */
static bool is_stop(const struct qtext *q, int i)
{
	return q->stop[i];
}

/* Share of the option's distinct content tokens that occur in the question. */
static float overlap(const struct qtext *o, const struct qtext *question)
{
	int i, j, content = 0, hit = 0;

	for (i = 0; i < o->ntok; i++) {
		bool dup = false;

		if (is_stop(o, i))
			continue;
		for (j = 0; j < i && !dup; j++)
			dup = tok_eq(o, i, o, j);
		if (dup)
			continue;
		content++;
		for (j = 0; j < question->ntok; j++)
			if (tok_eq(o, i, question, j)) {
				hit++;
				break;
			}
	}
	return content ? (float)hit / (float)content : 0.0f;
}

/* ======================= Item checks ======================= */

static void add_detail(struct qc_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_detail(struct qc_result *r, const char *fmt, ...)
{
	size_t n = strlen(r->detail);
	va_list ap;

	if (n + 3 >= sizeof(r->detail))
		return;
	if (n) {
		r->detail[n++] = ';';
		r->detail[n++] = ' ';
		r->detail[n] = '\0';
	}
	va_start(ap, fmt);
	vsnprintf(r->detail + n, sizeof(r->detail) - n, fmt, ap);
	va_end(ap);
}

static void fail(struct qc_result *r, enum qc_reason why)
{
	if (!(r->failed & (1u << why)) && r->pass) {
		r->reason = why;
		r->pass = false;
	}
	r->failed |= 1u << why;
}

/* Length of an option: its tokens, not counting the unit symbols deg and m. */
static int words(const struct qtext *q)
{
	int i, n = 0;

	for (i = 0; i < q->ntok; i++)
		if (!tok_is(q, i, "deg") && !tok_is(q, i, "m"))
			n++;
	return n;
}

/* Length z-score and overlap figures of an item (no verdict). */
static void figures(const struct qtext *const *o, int n, int answer,
		    const struct qtext *q, struct qc_result *r)
{
	double sum = 0, sq = 0, osum = 0, mean, sd;
	int i, m = 0;

	for (i = 0; i < n; i++) {
		if (i == answer)
			continue;
		sum += words(o[i]);
		if (q)
			osum += (double)overlap(o[i], q);
		m++;
	}
	mean = m ? sum / m : 0;
	for (i = 0; i < n; i++)
		if (i != answer)
			sq += (words(o[i]) - mean) * (words(o[i]) - mean);
	sd = m ? sqrt(sq / m) : 0;
	r->len_answer = (float)words(o[answer]);
	r->len_mean = (float)mean;
	r->len_sd = (float)sd;
	/* one two-word name among one-word names is no outlier: a spread below 1.5 words counts as 1.5 */
	r->z = (float)((words(o[answer]) - mean) / (sd < 1.5 ? 1.5 : sd));
	r->overlap_checked = q != NULL;
	r->overlap_answer = q ? overlap(o[answer], q) : 0.0f;
	r->overlap_mean = q && m ? (float)(osum / m) : 0.0f;
}

static void check_item(const struct qtext *const *o, int n, int answer,
		       const struct qtext *q, const struct qc_params *p,
		       struct qc_result *r)
{
	int i, j;

	r->pass = true;
	r->reason = QC_OK;
	r->failed = 0;
	r->detail[0] = '\0';
	r->max_similarity = 0.0f;
	for (i = 0; i < n; i++)
		if (is_meta(o[i])) {
			fail(r, QC_META);
			add_detail(r, "option %c is a meta option", 'A' + i);
		}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			float sim = 0.0f;

			if (near_dup(o[i], o[j], p->dup_similarity, &sim)) {
				fail(r, QC_DUPLICATE);
				add_detail(r, "options %c and %c are near-duplicates "
					   "(similarity %.2f)", 'A' + i, 'A' + j, (double)sim);
			}
			if (sim > r->max_similarity)
				r->max_similarity = sim;
			if (is_substring(o[i], o[j]) || is_substring(o[j], o[i])) {
				fail(r, QC_SUBSTRING);
				add_detail(r, "option %c is contained in option %c",
					   'A' + (is_substring(o[i], o[j]) ? i : j),
					   'A' + (is_substring(o[i], o[j]) ? j : i));
			}
			if (is_permutation(o[i], o[j])) {
				fail(r, QC_PERMUTATION);
				add_detail(r, "options %c and %c are token permutations",
					   'A' + i, 'A' + j);
			}
		}
	figures(o, n, answer, q, r);
	if (p->enforce_length && fabsf(r->z) > p->z_max) {
		fail(r, QC_LENGTH);
		add_detail(r, "answer length z = %.2f (limit %.2f)", (double)r->z,
			   (double)p->z_max);
	}
	if (r->overlap_checked &&
	    r->overlap_answer > r->overlap_mean + p->overlap_slack + 1e-6f) {
		fail(r, QC_OVERLAP);
		add_detail(r, "answer overlap with the question %.2f > distractors %.2f + %.2f",
			   (double)r->overlap_answer, (double)r->overlap_mean,
			   (double)p->overlap_slack);
	}
}

int qc_check_text(const char *question, const char *const *options, int n,
		  int answer, const struct qc_params *p, struct qc_result *res)
{
	struct qc_params def;
	struct qtext *qt;
	const struct qtext *o[QC_MAX_OPTIONS];
	int i;

	if (n < 2 || n > QC_MAX_OPTIONS || answer < 0 || answer >= n || !options || !res)
		return err_set(ENG_EINVAL, "qc: bad item (n %d, answer %d)", n, answer);
	for (i = 0; i < n; i++)
		if (!options[i])
			return err_set(ENG_EINVAL, "qc: option %d is NULL", i);
	if (!p) {
		qc_defaults(&def);
		p = &def;
	}
	qt = malloc(sizeof(*qt) * (size_t)(n + 1));
	if (!qt)
		return ENG_ENOMEM;
	for (i = 0; i < n; i++) {
		qt_prep(options[i], &qt[i]);
		o[i] = &qt[i];
	}
	if (question)
		qt_prep(question, &qt[n]);
	memset(res, 0, sizeof(*res));
	check_item(o, n, answer, question ? &qt[n] : NULL, p, res);
	free(qt);
	return 0;
}

/* ======================= Option design ======================= */

/*
 * The options of an item are an exchangeable design (docs/answers.md,
 * Option design): the truth and every distractor are draws from one
 * process, so that nothing in the option texts says which one is real.
 *
 * A latent centre c takes each field group of the truth with probability
 * `share`, else a draw from the prior (the answers of the group's other
 * candidates in the recording, ctx->prior); every distractor takes each
 * field group of c with probability `share`, else a fresh draw from the
 * prior. So options cluster around c, near each other in some fields (hard
 * negatives), and the truth is just one member of the cluster: it is
 * neither the centre nor the most common value of any field. A set is
 * accepted only when it satisfies constraints symmetric in its members:
 * every pair differs by the design margins (qc_distinct), renders to texts
 * that are not near-duplicates, substrings or permutations of each other,
 * and every option's length z-score and question overlap against the
 * others are within the limits. Rejection of a symmetric constraint keeps
 * the set exchangeable.
 */

#define DESIGN_RESTARTS 8  /* fresh cluster centres tried */
#define DESIGN_KERNEL 1.0f /* how near the centre draws are: weight exp(-k x field distance) */
#define DESIGN_SWEEPS 24   /* Gibbs sweeps per centre */
#define REDRAWS 24         /* draws of one option per sweep */
#define MARGINAL_MIN 16      /* prior answers for broad draws from the prior's marginal */
#define BROAD_SHARE 0.1f    /* label draws from the broad prior, not the group's answers */

/* Field groups copied as units between options. */
enum fgroup {
	FG_YAW = 0,  /* yaw_deg */
	FG_DIR,      /* dir */
	FG_DIST,     /* dist_m */
	FG_VERT,     /* vertical */
	FG_HAND,     /* hand */
	FG_ACT,      /* verb + object */
	FG_OBJ,      /* object */
	FG_REL,      /* rel */
	FG_REF,      /* ref */
	FG_LEGS,     /* nlegs + legs */
	FG_COUNT
};

/* The field groups of each kind. */
static unsigned kind_groups(enum ans_kind k)
{
	switch (k) {
	case ANS_HEAD_TURN_APPROX: return 1u << FG_YAW;
	case ANS_HEAD_TURN_RELATIVE: return 1u << FG_DIR;
	case ANS_GAZE_APPROX: return (1u << FG_YAW) | (1u << FG_OBJ);
	case ANS_GAZE_RELATIVE: return (1u << FG_OBJ) | (1u << FG_REL) | (1u << FG_REF);
	case ANS_NAV_APPROX: return (1u << FG_DIR) | (1u << FG_DIST);
	case ANS_NAV_RELATIVE: return 1u << FG_LEGS;
	case ANS_INTERACT_APPROX:
		return (1u << FG_DIR) | (1u << FG_VERT) | (1u << FG_DIST) | (1u << FG_HAND) |
		       (1u << FG_ACT);
	case ANS_INTERACT_RELATIVE: return (1u << FG_DIR) | (1u << FG_ACT);
	default: return 0;
	}
}

static float unit(struct rng *r)
{
	return (float)rng_unit(&r->s);
}

/* Weighted choice among n weights (all 1 when w is NULL). */
static size_t pick_weighted(struct rng *r, const float *w, size_t n)
{
	double total = 0, x;
	size_t i;

	if (!w)
		return (size_t)rng_below(&r->s, n);
	for (i = 0; i < n; i++)
		total += (double)w[i];
	if (total <= 0)
		return (size_t)rng_below(&r->s, n);
	x = rng_unit(&r->s) * total;
	for (i = 0; i + 1 < n; i++) {
		x -= (double)w[i];
		if (x < 0)
			return i;
	}
	return n - 1;
}

size_t qc_pick_reference(const enum ans_rel *rels, size_t n, uint64_t *state)
{
	size_t count[ANS_REL_NEAR + 1] = { 0 }, i, k;
	int labels[ANS_REL_NEAR + 1], nl = 0, l;

	for (i = 0; i < n; i++)
		if ((unsigned)rels[i] <= ANS_REL_NEAR && !count[rels[i]]++)
			labels[nl++] = (int)rels[i];
	if (!nl)
		return 0;
	l = labels[rng_below(state, (uint64_t)nl)];
	k = (size_t)rng_below(state, count[l]);
	for (i = 0; i < n; i++)
		if ((int)rels[i] == l && !k--)
			return i;
	return 0;
}

/* How far apart two answers of one kind are, field group by field group (0 = same). */
static float fdist(const struct answer *a, const struct answer *b, unsigned groups)
{
	float d = 0;
	int k;

	if (groups & (1u << FG_YAW))
		d += fminf(1.0f, fabsf(bev_wrap_deg(a->yaw_deg - b->yaw_deg)) / 60.0f);
	if (groups & (1u << FG_DIR)) {
		k = abs((int)a->dir - (int)b->dir) % BEV_NDIR;
		d += k == 0 ? 0.0f : (k == 1 || k == 7) ? 0.5f : 1.0f;
	}
	if (groups & (1u << FG_DIST))
		d += fminf(1.0f, fabsf(logf((a->dist_m + 0.1f) / (b->dist_m + 0.1f))) / logf(2.0f));
	if (groups & (1u << FG_VERT))
		d += a->vertical != b->vertical;
	if (groups & (1u << FG_HAND))
		d += a->hand != b->hand;
	/* names of the prior are the engine's own display names: compared as they are */
	if (groups & ((1u << FG_ACT) | (1u << FG_OBJ)))
		d += strcmp(a->object, b->object) != 0;
	if (groups & (1u << FG_ACT))
		d += strcmp(a->verb, b->verb) != 0;
	if (groups & (1u << FG_LEGS)) {
		d += a->nlegs != b->nlegs;
		d += a->legs[0] != b->legs[0];
		d += a->nlegs == 2 && b->nlegs == 2 && a->legs[1] != b->legs[1];
	}
	return d;
}

/*
 * Weights over the prior around answer c: prior weight times
 * exp(-KERNEL * distance to c). Draws with these weights are "near c".
 */
static void kernel_weights(const struct qc_context *ctx, const struct answer *c, unsigned groups,
			   float *w)
{
	size_t j;

	for (j = 0; j < ctx->nprior; j++)
		w[j] = (ctx->prior_weights ? ctx->prior_weights[j] : 1.0f) *
		       expf(-DESIGN_KERNEL * fdist(c, &ctx->prior[j], groups));
}

/*
 * A broad draw of field group g from the prior's own marginal: the field
 * of a random prior answer, distances moved by up to a factor 1.25 within
 * the prior's range. Values no key takes
 * (a forward turn where every key turns by more than the field of view)
 * never appear, or a solver would learn to strike them out. A prior of
 * fewer than MARGINAL_MIN answers has too few values for a set: its broad
 * draws are uniform over the kind's range.
 */
static bool draw_marginal(struct rng *r, const struct qc_context *ctx, enum fgroup g,
			  struct answer *out)
{
	const struct answer *a;
	float lo = INFINITY, hi = -INFINITY, v;
	size_t j;

	if (r->uniform || ctx->nprior < MARGINAL_MIN || g == FG_REL || g == FG_REF)
		return false;
	a = &ctx->prior[rng_below(&r->s, ctx->nprior)];
	switch (g) {
	case FG_YAW: out->yaw_deg = a->yaw_deg; return true;
	case FG_DIST:
		for (j = 0; j < ctx->nprior; j++) {
			lo = fminf(lo, ctx->prior[j].dist_m);
			hi = fmaxf(hi, ctx->prior[j].dist_m);
		}
		v = a->dist_m * expf((unit(r) * 2 - 1) * logf(1.25f));
		out->dist_m = fminf(hi, fmaxf(lo, v));
		return true;
	case FG_DIR: out->dir = a->dir; return true;
	case FG_VERT: out->vertical = a->vertical; return true;
	case FG_HAND: out->hand = a->hand; return true;
	case FG_LEGS:
		out->nlegs = a->nlegs;
		memcpy(out->legs, a->legs, sizeof(out->legs));
		return true;
	case FG_ACT: memcpy(out->verb, a->verb, sizeof(out->verb)); /* fall through */
	case FG_OBJ: memcpy(out->object, a->object, sizeof(out->object)); return true;
	default: return false;
	}
}

/*
 * A draw of field group g from the broad prior: the prior's marginal when
 * there is a prior; without one, labels uniform and distances log-uniform
 * over the kind's range (never centred on the truth); references from
 * those visible at T.
 */
static void draw_group(struct rng *r, const struct qc_context *ctx, const struct answer *truth,
		       enum fgroup g, struct answer *out)
{
	static const enum ans_rel rels[4] = { ANS_REL_LEFT_OF, ANS_REL_RIGHT_OF,
					      ANS_REL_IN_FRONT_OF, ANS_REL_BEHIND };

	if (draw_marginal(r, ctx, g, out))
		return;
	switch (g) {
	case FG_YAW: {
		/* magnitudes no smaller than the prior's smallest: no key turns less */
		float lo = 180;
		size_t j;
		int steps;

		for (j = 0; j < ctx->nprior; j++)
			lo = fminf(lo, fabsf(ctx->prior[j].yaw_deg));
		if (!ctx->nprior)
			lo = 0;
		steps = (int)((180.0f - 5.0f * ceilf(lo / 5.0f)) / 5.0f) + 1;
		out->yaw_deg = 5.0f * ceilf(lo / 5.0f) + 5.0f * (float)rng_below(&r->s, (uint64_t)steps);
		if (rng_below(&r->s, 2))
			out->yaw_deg = -out->yaw_deg;
		break;
	}
	case FG_DIR:
		out->dir = (enum bev_dir)rng_below(&r->s, BEV_NDIR);
		break;
	case FG_DIST:
		if (truth->kind == ANS_NAV_APPROX)
			out->dist_m = (float)(1.5 * exp(rng_unit(&r->s) * log(12.0 / 1.5)));
		else
			out->dist_m = (float)(0.2 * exp(rng_unit(&r->s) * log(3.0 / 0.2)));
		break;
	case FG_VERT:
		out->vertical = (int)rng_below(&r->s, 3) - 1;
		break;
	case FG_LEGS:
		out->nlegs = 1 + (int)rng_below(&r->s, 2);
		out->legs[0] = (enum bev_dir)rng_below(&r->s, BEV_NDIR);
		out->legs[1] = (enum bev_dir)rng_below(&r->s, BEV_NDIR);
		break;
	case FG_REL:
		out->rel = rels[rng_below(&r->s, 4)];
		break;
	case FG_REF:
		if (ctx->nrefs) {
			size_t j = ctx->ref_rels ? qc_pick_reference(ctx->ref_rels, ctx->nrefs, &r->s)
						 : (size_t)rng_below(&r->s, ctx->nrefs);

			ans_set_text(out->ref, sizeof(out->ref), ctx->refs[j]);
			if (ctx->ref_rels)
				out->rel = ctx->ref_rels[j];
		}
		break;
	case FG_HAND:
		out->hand = (enum rec_hand)(REC_HAND_LEFT + (int)rng_below(&r->s, 3));
		break;
	case FG_ACT:
	case FG_OBJ:
		if (ctx->nprior) {
			const struct answer *a = &ctx->prior[rng_below(&r->s, ctx->nprior)];

			memcpy(out->object, a->object, sizeof(out->object));
			if (g == FG_ACT)
				memcpy(out->verb, a->verb, sizeof(out->verb));
		}
		break;
	default:
		break;
	}
}

/*
 * One answer of the cluster: a whole answer of the prior drawn with the
 * centre's kernel weights w (so its fields keep the correlations real
 * answers have), or, for a share `broad` of draws (small priors), a broad
 * draw of every field group.
 */
static void draw_answer(struct rng *r, const struct qc_context *ctx, const struct answer *truth,
			const float *w, unsigned groups, float broad, struct answer *out)
{
	int g;

	if (ctx->nprior && unit(r) >= broad) {
		*out = ctx->prior[pick_weighted(r, w, ctx->nprior)];
		out->kind = truth->kind;
		if ((groups & (1u << FG_REL)) && !ctx->ref_rels)
			draw_group(r, ctx, truth, FG_REL, out);
		if (groups & (1u << FG_REF))
			draw_group(r, ctx, truth, FG_REF, out);
	} else {
		*out = *truth;
		for (g = 0; g < FG_COUNT; g++)
			if (groups & (1u << g))
				draw_group(r, ctx, truth, (enum fgroup)g, out);
	}
	/* a reference is never the object itself */
	for (g = 0; g < 8 && out->kind == ANS_GAZE_RELATIVE && ctx->nrefs > 1 &&
		    ans_name_equal(out->object, out->ref); g++)
		draw_group(r, ctx, truth, FG_REF, out);
	/* the truth's form: a hand exactly when the truth names one */
	if (out->kind == ANS_INTERACT_APPROX && truth->hand == REC_HAND_NONE)
		out->hand = REC_HAND_NONE;
	if (out->kind == ANS_INTERACT_APPROX && truth->hand != REC_HAND_NONE &&
	    out->hand == REC_HAND_NONE)
		draw_group(r, ctx, truth, FG_HAND, out);
}

/* One option being placed: its value and its text. */
struct opt {
	struct answer a;
	char text[ANS_TEXT_MAX];
	struct qtext qt;
	bool from_brain;
};

static int render_opt(struct opt *o, const struct qc_params *p, int style)
{
	struct buf b;
	int rc;

	if (ans_normalise(&o->a, &p->disc))
		return ENG_EINVAL;
	buf_init(&b, ANS_TEXT_MAX);
	rc = ans_render_style(&o->a, style, &b);
	if (!rc) {
		memcpy(o->text, buf_str(&b), b.len + 1);
		qt_prep(o->text, &o->qt);
		if (is_meta(&o->qt))
			rc = ENG_EINVAL;
	}
	buf_release(&b);
	return rc;
}

static bool pair_ok(const struct opt *a, const struct opt *b, const struct qc_params *p)
{
	return qc_distinct(&a->a, &b->a, p) && !is_substring(&a->qt, &b->qt) &&
	       !is_substring(&b->qt, &a->qt) && !is_permutation(&a->qt, &b->qt) &&
	       !near_dup(&a->qt, &b->qt, p->dup_similarity, NULL);
}

/*
 * The item-level checks made symmetric: every option's length z-score and
 * question overlap against the others within the limits (so the truth is
 * never filtered on a figure its distractors escape).
 */
static bool set_ok(const struct opt *o, int n, const struct qtext *q, const struct qc_params *p)
{
	double len[QC_MAX_OPTIONS], ov[QC_MAX_OPTIONS], sl = 0, so = 0, sq = 0;
	int i;

	for (i = 0; i < n; i++) {
		len[i] = words(&o[i].qt);
		ov[i] = q ? (double)overlap(&o[i].qt, q) : 0;
		sl += len[i];
		so += ov[i];
		sq += len[i] * len[i];
	}
	for (i = 0; i < n; i++) {
		/* the figures of option i against the n - 1 others, as figures() has them */
		double m = (sl - len[i]) / (n - 1);
		double var = (sq - len[i] * len[i]) / (n - 1) - m * m;
		double sd = var > 0 ? sqrt(var) : 0;
		double z = (len[i] - m) / (sd < 1.5 ? 1.5 : sd);

		if (p->enforce_length && fabs(z) > (double)p->z_max)
			return false;
		if (q && ov[i] > (so - ov[i]) / (n - 1) + (double)p->overlap_slack + 1e-6)
			return false;
	}
	return true;
}

/* The brain's proposals that parse and keep the margins from the truth. */
static int brain_options(const struct answer *truth, const struct qc_context *ctx,
			 const struct qc_params *p, int style, struct opt *out, int cap,
			 int *rejected)
{
	int i, n = 0, k;

	for (i = 0; i < (int)ctx->nproposals && n < cap; i++) {
		struct opt o;
		bool ok = true;

		memset(&o, 0, sizeof(o));
		if (!ctx->proposals[i] || ans_parse(truth->kind, ctx->proposals[i], &p->disc, &o.a)) {
			(*rejected)++;
			continue;
		}
		if (o.a.kind == ANS_INTERACT_APPROX)
			o.a.hand = truth->hand == REC_HAND_NONE ? REC_HAND_NONE :
				   o.a.hand == REC_HAND_NONE ? truth->hand : o.a.hand;
		o.from_brain = true;
		if (render_opt(&o, p, style) || !qc_distinct(&o.a, truth, p))
			ok = false;
		for (k = 0; ok && k < n; k++)
			ok = pair_ok(&o, &out[k], p);
		if (!ok) {
			(*rejected)++;
			continue;
		}
		out[n++] = o;
	}
	return n;
}

/* Whether the prior holds n answers pairwise apart by the margins (greedily). */
static bool prior_spans(const struct qc_context *ctx, const struct qc_params *p, int n)
{
	const struct answer *rep[QC_MAX_OPTIONS];
	size_t j;
	int k, m = 0;

	for (j = 0; j < ctx->nprior && m < n; j++) {
		bool apart = true;

		for (k = 0; k < m && apart; k++)
			apart = qc_distinct(&ctx->prior[j], rep[k], p);
		if (apart)
			rep[m++] = &ctx->prior[j];
	}
	return m >= n;
}

/*
 * The options rendered so far, by answer: the sweeps draw the same few
 * prior answers again and again, design after design, and rendering (the
 * template lookups, the text preparation) is a pure function of the
 * answer for the discretisation settings and the style. One memo per
 * thread, kept across designs while the settings and style stay the
 * same (emptied when they change), the oldest entry replaced when full.
 */
#define RENDER_MEMO 96

struct render_memo {
	int n, next;
	int style;
	struct disc_params disc;
	struct {
		struct answer key;  /* the answer as drawn, before normalising */
		struct opt o;       /* what render_opt made of it (text empty: unusable) */
	} e[RENDER_MEMO];
};

static _Thread_local struct render_memo *thread_memo;
static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;
static bool memo_key_ok;

static void memo_key_make(void)
{
	/* the thread's memo is freed when the thread ends */
	memo_key_ok = pthread_key_create(&memo_key, free) == 0;
}

/* The calling thread's memo for settings p and style, or NULL without memory. */
static struct render_memo *memo_get(const struct qc_params *p, int style)
{
	struct render_memo *m = thread_memo;

	if (!m) {
		pthread_once(&memo_once, memo_key_make);
		if (!memo_key_ok)
			return NULL;
		m = malloc(sizeof(*m));
		if (!m)
			return NULL;
		if (pthread_setspecific(memo_key, m)) {
			free(m);
			return NULL;
		}
		m->n = 0;
		thread_memo = m;
	}
	/* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): floats only; -0 != 0 just empties it */
	if (!m->n || m->style != style || memcmp(&m->disc, &p->disc, sizeof(m->disc))) {
		m->n = m->next = 0;
		m->style = style;
		m->disc = p->disc;
	}
	return m;
}

struct draw {
	struct rng *r;
	const struct qc_context *ctx;
	const struct qc_params *p;
	int style;
	unsigned groups;
	float broad;       /* share of broad draws */
	float *w;          /* kernel weights around the centre, over the prior */
	const struct opt *brain;
	int nbrain;
	struct render_memo *memo; /* NULL: every option rendered */
};

/* A fresh option: a draw near the centre, or (half the time) a brain proposal. */
static void draw_option(struct draw *d, const struct answer *truth, struct opt *out)
{
	if (d->nbrain && unit(d->r) < 0.5f) {
		*out = d->brain[rng_below(&d->r->s, (uint64_t)d->nbrain)];
		return;
	}
	memset(out, 0, sizeof(*out));
	draw_answer(d->r, d->ctx, truth, d->w, d->groups, d->broad, &out->a);
	if (d->memo) {
		struct render_memo *m = d->memo;
		int k;

		for (k = 0; k < m->n; k++)
			if (!memcmp(&m->e[k].key, &out->a, sizeof(out->a))) {
				*out = m->e[k].o;
				return;
			}
		k = m->n < RENDER_MEMO ? m->n++ : m->next;
		if (k == m->next)
			m->next = (m->next + 1) % RENDER_MEMO;
		m->e[k].key = out->a;
		if (render_opt(out, d->p, d->style))
			out->text[0] = '\0'; /* unusable: redrawn */
		m->e[k].o = *out;
		return;
	}
	if (render_opt(out, d->p, d->style))
		out->text[0] = '\0'; /* unusable: redrawn */
}

/* Whether option i renders and keeps the margins and text checks with every other. */
static bool fits(const struct opt *o, int n, int i, const struct qc_params *p)
{
	int k;

	if (!o[i].text[0])
		return false;
	for (k = 0; k < n; k++)
		if (k != i && o[k].text[0] && !pair_ok(&o[i], &o[k], p))
			return false;
	return true;
}

/* Redraws option i (up to REDRAWS times) until it fits; true when it does. */
static bool redraw(struct draw *d, struct opt *o, int n, int i)
{
	int t;

	for (t = 0; t < REDRAWS; t++) {
		draw_option(d, &o[0].a, &o[i]);
		if (fits(o, n, i, d->p))
			return true;
	}
	return false;
}

/* A new centre from the prior, weighted by its kernel to every option. */
static void redraw_centre(struct draw *d, const struct opt *o, int n)
{
	const struct qc_context *ctx = d->ctx;
	struct answer centre;
	size_t j;
	int i;

	for (j = 0; j < ctx->nprior; j++) {
		float s = 0;

		for (i = 0; i < n; i++)
			s += fdist(&o[i].a, &ctx->prior[j], d->groups);
		d->w[j] = (ctx->prior_weights ? ctx->prior_weights[j] : 1.0f) *
			  expf(-DESIGN_KERNEL * s);
	}
	centre = ctx->prior[pick_weighted(d->r, d->w, ctx->nprior)];
	kernel_weights(ctx, &centre, d->groups, d->w);
}

/*
 * Draws a set around a centre until it satisfies the symmetric
 * constraints. Option 0 is the truth. The centre c is an answer of the
 * prior drawn with the kernel around the truth; every distractor is a
 * whole prior answer drawn with the kernel around c (hard: near c, so near
 * each other and the truth), brain proposals, when there are, standing in
 * for half the draws. The kernel is symmetric and the truth itself is an
 * answer of the prior, so the truth is exchangeable with the distractors:
 * it is one more draw near c, not the point they were made around.
 * Returns 0 and fills o[1..n-1], or ENG_ENOTFOUND.
 */
static int design(struct draw *d, struct opt *o, int n, const struct qtext *q)
{
	int restart, sweep, i;

	for (restart = 0; restart < DESIGN_RESTARTS; restart++) {
		struct answer centre = o[0].a;
		int valid_sweeps = 0;

		if (d->ctx->nprior) {
			kernel_weights(d->ctx, &o[0].a, d->groups, d->w);
			centre = d->ctx->prior[pick_weighted(d->r, d->w, d->ctx->nprior)];
			kernel_weights(d->ctx, &centre, d->groups, d->w);
		}
		for (i = 1; i < n; i++)
			draw_option(d, &o[0].a, &o[i]);
		/*
		 * Gibbs sweeps: each distractor in turn is redrawn from the same
		 * distribution until it fits with all the others. The chain's
		 * stationary law is the product of the draws restricted to valid
		 * sets, in which the truth is exchangeable with the distractors;
		 * two sweeps after the set is first valid let it mix.
		 */
		for (sweep = 0; sweep < DESIGN_SWEEPS; sweep++) {
			bool valid = true;

			for (i = 1; i < n; i++)
				if (!redraw(d, o, n, i))
					valid = false;
			if (!valid) {
				valid_sweeps = 0;
				continue;
			}
			if (++valid_sweeps >= 2 && set_ok(o, n, q, d->p))
				return 0;
			/*
			 * The centre given every option, the truth among them: with
			 * the centre drawn from the truth alone, the margins push the
			 * distractors away from a centre the truth sits by, and the
			 * key becomes the option most like the others.
			 */
			if (d->ctx->nprior)
				redraw_centre(d, o, n);
		}
	}
	return ENG_ENOTFOUND;
}

int qc_build_options(const struct answer *truth, const struct qc_context *ctx,
		     const char *question, const char *qa_id,
		     const struct qc_params *p, struct qc_options *out)
{
	static const struct qc_context no_ctx;
	struct qc_params def;
	struct opt *o = NULL, *brain = NULL;
	struct qtext *qt = NULL;
	struct rng rng;
	uint64_t seed;
	int n, i, nbrain, rejected = 0, perm[QC_MAX_OPTIONS], rc = 0, style;

	if (!p) {
		qc_defaults(&def);
		p = &def;
	}
	if (!ctx)
		ctx = &no_ctx;
	n = p->n_options;
	if (!truth || !out || n < 2 || n > QC_MAX_OPTIONS)
		return err_set(ENG_EINVAL, "qc: option count %d outside 2..%d", n, QC_MAX_OPTIONS);
	if (truth->kind == ANS_CHAIN || (unsigned)truth->kind >= ANS_NKIND)
		return err_set(ENG_EINVAL, "qc: %s has no options", ans_kind_name(truth->kind));
	o = calloc(QC_MAX_OPTIONS, sizeof(*o));
	brain = calloc(8, sizeof(*brain));
	qt = calloc(1, sizeof(*qt));
	if (!o || !brain || !qt) {
		rc = ENG_ENOMEM;
		goto out;
	}
	seed = qc_seed_from_id(qa_id);
	style = qc_style(qa_id);
	o[0].a = *truth;
	if (render_opt(&o[0], p, style)) {
		rc = err_set(ENG_EINVAL, "qc: the truth does not render: %s", err_msg());
		goto out;
	}
	if (question)
		qt_prep(question, qt);
	rng.s = seed ^ SEED_POOL;
	rng.uniform = false;
	nbrain = brain_options(&o[0].a, ctx, p, style, brain, 8, &rejected);
	memset(out, 0, sizeof(*out));
	{
		struct draw d = { &rng, ctx, p, style, kind_groups(truth->kind), 0, NULL, brain,
				  nbrain, memo_get(p, style) };

		/* a recording with few candidates of the group leans on the broad prior */
		d.broad = ctx->nprior >= (size_t)(8 * n) ? BROAD_SHARE
			  : ctx->nprior >= (size_t)(2 * n) ? 0.3f : ctx->nprior ? 0.7f : 1.0f;
		/*
		 * A prior with fewer than n answers apart by the margins cannot
		 * fill a set (eight head-turn directions when no key faces
		 * forward): its broad draws cover the kind's whole range.
		 */
		if (ctx->nprior && !prior_spans(ctx, p, n)) {
			rng.uniform = true;
			if (d.broad < 0.5f)
				d.broad = 0.5f;
		}
		d.w = calloc(ctx->nprior + 1, sizeof(*d.w));
		if (!d.w) {
			rc = ENG_ENOMEM;
			goto out;
		}
		/* without memory for a memo (d.memo NULL), every option is rendered */
		rc = design(&d, o, n, question ? qt : NULL);
		free(d.w);
	}
	if (rc) {
		rc = 0;
		out->qc.reason = QC_NO_NEGATIVES;
		out->qc.failed = 1u << QC_NO_NEGATIVES;
		snprintf(out->qc.detail, sizeof(out->qc.detail),
			 "no exchangeable set of %d options within the margins and text checks "
			 "(%d centres x %d sweeps)", n, DESIGN_RESTARTS, DESIGN_SWEEPS);
		out->qc.brain_rejected = rejected + nbrain;
		goto out;
	}
	qc_shuffle(seed, n, perm);
	out->n = n;
	for (i = 0; i < n; i++) {
		const struct opt *c = &o[perm[i]];

		out->opt[i] = c->a;
		memcpy(out->text[i], c->text, sizeof(out->text[i]));
		out->from_brain[i] = c->from_brain;
		if (perm[i] == 0)
			out->answer = i;
	}
	{
		const char *texts[QC_MAX_OPTIONS];

		for (i = 0; i < n; i++)
			texts[i] = out->text[i];
		rc = qc_check_text(question, texts, n, out->answer, p, &out->qc);
		if (rc)
			goto out;
	}
	for (i = 0; i < n; i++)
		if (out->from_brain[i])
			out->qc.brain_kept++;
	out->qc.brain_rejected = rejected + nbrain - out->qc.brain_kept;
	out->qc.engine_added = n - 1 - out->qc.brain_kept;
out:
	free(o);
	free(brain);
	free(qt);
	return rc;
}

/* ======================= JSON ======================= */

static double r3(float v)
{
	return round((double)v * 1000.0) / 1000.0;
}

cJSON *qc_result_to_json(const struct qc_result *r)
{
	cJSON *o = cJSON_CreateObject(), *len, *ov, *chk, *br;
	bool ok;
	int i;

	if (!o)
		return NULL;
	ok = cJSON_AddBoolToObject(o, "pass", r->pass) &&
	     cJSON_AddStringToObject(o, "reason", qc_reason_name(r->reason)) &&
	     cJSON_AddStringToObject(o, "detail", r->detail) &&
	     cJSON_AddNumberToObject(o, "z", r3(r->z));
	len = ok ? cJSON_AddObjectToObject(o, "length") : NULL;
	ok = len && cJSON_AddNumberToObject(len, "answer", r3(r->len_answer)) &&
	     cJSON_AddNumberToObject(len, "mean", r3(r->len_mean)) &&
	     cJSON_AddNumberToObject(len, "sd", r3(r->len_sd));
	ov = ok ? cJSON_AddObjectToObject(o, "overlap") : NULL;
	ok = ov && cJSON_AddBoolToObject(ov, "checked", r->overlap_checked) &&
	     cJSON_AddNumberToObject(ov, "answer", r3(r->overlap_answer)) &&
	     cJSON_AddNumberToObject(ov, "distractors", r3(r->overlap_mean));
	ok = ok && cJSON_AddNumberToObject(o, "max_similarity", r3(r->max_similarity));
	chk = ok ? cJSON_AddObjectToObject(o, "checks") : NULL;
	ok = chk != NULL;
	for (i = QC_META; ok && i <= QC_OVERLAP; i++) {
		static const char *const names[] = { "", "meta", "duplicate", "substring",
						     "permutation", "length", "overlap" };

		ok = cJSON_AddBoolToObject(chk, names[i], !(r->failed & (1u << i))) != NULL;
	}
	ok = ok && cJSON_AddNumberToObject(o, "repairs", r->repairs);
	br = ok ? cJSON_AddObjectToObject(o, "brain") : NULL;
	ok = br && cJSON_AddNumberToObject(br, "kept", r->brain_kept) &&
	     cJSON_AddNumberToObject(br, "rejected", r->brain_rejected);
	ok = ok && cJSON_AddNumberToObject(o, "engine_added", r->engine_added);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *qc_options_to_json(const struct qc_options *o)
{
	cJSON *j = cJSON_CreateObject(), *texts, *st, *q;
	char letter[2] = { (char)('A' + o->answer), '\0' };
	bool ok;
	int i;

	if (!j)
		return NULL;
	texts = cJSON_AddArrayToObject(j, "options");
	st = texts ? cJSON_AddArrayToObject(j, "structured") : NULL;
	ok = st && cJSON_AddNumberToObject(j, "answer_index", o->answer) &&
	     cJSON_AddStringToObject(j, "answer_letter", letter);
	for (i = 0; ok && i < o->n; i++) {
		cJSON *s = cJSON_CreateString(o->text[i]);
		cJSON *a = ans_to_json(&o->opt[i]);

		ok = s && a && cJSON_AddItemToArray(texts, s) && cJSON_AddItemToArray(st, a);
		if (!ok) {
			cJSON_Delete(s);
			cJSON_Delete(a);
		}
	}
	q = ok ? qc_result_to_json(&o->qc) : NULL;
	ok = q && cJSON_AddItemToObject(j, "qc", q);
	if (!ok) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* ======================= Chain candidates ======================= */

static bool desc_clash(const char *a, const char *b, float thr)
{
	struct qtext *qa = malloc(sizeof(*qa)), *qb = malloc(sizeof(*qb));
	bool clash = true;

	if (qa && qb) {
		qt_prep(a, qa);
		qt_prep(b, qb);
		clash = near_dup(qa, qb, thr, NULL);
	}
	free(qa);
	free(qb);
	return clash;
}

struct tier_pos {
	int tier, pos, idx;
};

static int cmp_tier_pos(const void *pa, const void *pb)
{
	const struct tier_pos *a = pa, *b = pb;

	if (a->tier != b->tier)
		return a->tier < b->tier ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

/*
 * Sorts order[0..n) by tiers[order[i]], keeping the order within a tier:
 * a sort on (tier, position), O(n log n) where an insertion sort was
 * quadratic in the recording's actions.
 */
static int sort_by_tier(int *order, const int *tiers, size_t n)
{
	struct tier_pos *v;
	int lo = 0, hi = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int t = tiers[order[i]];

		lo = !i || t < lo ? t : lo;
		hi = !i || t > hi ? t : hi;
	}
	/* the usual few tiers: a counting sort, stable, in O(n) */
	if (n && lo >= 0 && hi < 64) {
		size_t start[65] = { 0 };
		int *tmp = malloc(n * sizeof(*tmp));

		if (!tmp)
			return ENG_ENOMEM;
		for (i = 0; i < n; i++)
			start[tiers[order[i]] + 1]++;
		for (i = 1; i <= 64; i++)
			start[i] += start[i - 1];
		for (i = 0; i < n; i++)
			tmp[start[tiers[order[i]]]++] = order[i];
		memcpy(order, tmp, n * sizeof(*order));
		free(tmp);
		return 0;
	}
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return ENG_ENOMEM;
	for (i = 0; i < n; i++) {
		v[i].tier = tiers[order[i]];
		v[i].pos = (int)i;
		v[i].idx = order[i];
	}
	qsort(v, n, sizeof(*v), cmp_tier_pos);
	for (i = 0; i < n; i++)
		order[i] = v[i].idx;
	free(v);
	return 0;
}

int qc_chain_candidates(const char *const *truth, int k, const char *const *pool,
			const int *tiers, size_t npool, const char *qa_id, int ncand,
			const struct qc_params *p, struct qc_chain *out)
{
	struct qc_params def;
	const char *pick[QC_CHAIN_MAX_CAND];
	struct qtext *qpick; /* pick[j]'s prepared text; the last: the candidate's */
	struct rng rng;
	int *order = NULL, perm[QC_CHAIN_MAX_CAND];
	int i, j, np = 0, rc = 0;
	uint64_t seed;

	if (!p) {
		qc_defaults(&def);
		p = &def;
	}
	if (!ncand)
		ncand = p->chain_candidates;
	if (!truth || !out || k < 2 || k > ANS_CHAIN_MAX)
		return err_set(ENG_EINVAL, "qc: a chain needs 2..%d true actions", ANS_CHAIN_MAX);
	if (ncand <= k || ncand > QC_CHAIN_MAX_CAND)
		return err_set(ENG_EINVAL, "qc: %d candidates for %d true actions", ncand, k);
	for (i = 0; i < k; i++) {
		if (!truth[i] || !truth[i][0] || strlen(truth[i]) >= QC_DESC_MAX)
			return err_set(ENG_EINVAL, "qc: true action %d has no usable description", i);
		for (j = 0; j < i; j++)
			if (desc_clash(truth[i], truth[j], p->dup_similarity))
				return err_set(ENG_EINVAL, "qc: true actions %d and %d have the same "
					       "description '%s'", j, i, truth[i]);
		pick[np++] = truth[i];
	}
	seed = qc_seed_from_id(qa_id);
	rng.s = seed ^ SEED_CHAIN;
	rng.uniform = false;
	if (npool) {
		order = malloc(sizeof(*order) * npool);
		if (!order)
			return ENG_ENOMEM;
		for (i = 0; i < (int)npool; i++)
			order[i] = i;
		shuffle_ints(&rng, order, (int)npool);
		/* a stable sort by tier keeps the shuffle within each tier */
		if (tiers) {
			rc = sort_by_tier(order, tiers, npool);
			if (rc) {
				free(order);
				return rc;
			}
		}
	}
	/* the picks' texts prepared once, each candidate's once */
	qpick = malloc((QC_CHAIN_MAX_CAND + 1) * sizeof(*qpick));
	if (!qpick) {
		free(order);
		return ENG_ENOMEM;
	}
	for (j = 0; j < np; j++)
		qt_prep(pick[j], &qpick[j]);
	for (i = 0; i < (int)npool && np < ncand; i++) {
		const char *d = pool[order[i]];
		bool clash = false;

		if (!d || !d[0] || strlen(d) >= QC_DESC_MAX)
			continue;
		qt_prep(d, &qpick[QC_CHAIN_MAX_CAND]);
		for (j = 0; j < np && !clash; j++)
			clash = near_dup(&qpick[QC_CHAIN_MAX_CAND], &qpick[j], p->dup_similarity, NULL);
		if (!clash) {
			qpick[np] = qpick[QC_CHAIN_MAX_CAND];
			pick[np++] = d;
		}
	}
	free(qpick);
	free(order);
	if (np < ncand)
		return err_set(ENG_ENOTFOUND, "qc: only %d distinct distractor actions, %d needed",
			       np - k, ncand - k);
	memset(out, 0, sizeof(*out));
	out->n = ncand;
	out->k = k;
	qc_shuffle(seed ^ SEED_CHAIN, ncand, perm);
	for (i = 0; i < ncand; i++) {
		int src = perm[i];

		snprintf(out->desc[i], sizeof(out->desc[i]), "%s", pick[src]);
		if (src < k) {
			out->is_true[i] = true;
			out->node_of[src] = i + ANS_CHAIN_BASE;
		}
	}
	return rc;
}

int qc_chain_answer(const struct qc_chain *c, const int *order,
		    const enum bev_dir *edges, struct answer *out)
{
	bool seen[ANS_CHAIN_MAX] = { false };
	int i;

	ans_init(out, ANS_CHAIN);
	out->k = c->k;
	for (i = 0; i < c->k; i++) {
		if (order[i] < 0 || order[i] >= c->k || seen[order[i]])
			return err_set(ENG_EINVAL, "qc: chain order is not a permutation of 0..%d",
				       c->k - 1);
		seen[order[i]] = true;
		out->nodes[i] = c->node_of[order[i]];
	}
	for (i = 0; i < c->k - 1; i++) {
		if ((unsigned)edges[i] >= BEV_NDIR)
			return err_set(ENG_EINVAL, "qc: chain edge %d is invalid", i);
		out->edges[i] = edges[i];
	}
	return ans_normalise(out, NULL);
}

int qc_chain_list(const struct qc_chain *c, struct buf *out)
{
	int i, rc = 0;

	for (i = 0; i < c->n && !rc; i++)
		rc = buf_addf(out, "%s%d. %s", i ? "; " : "", i + ANS_CHAIN_BASE, c->desc[i]);
	return rc;
}
