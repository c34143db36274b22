/* SPDX-License-Identifier: MIT */
/* Hard negatives, option assembly, text QC and chain candidate sets. */
#include "qc.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "hash.h"
#include "rng.h"

/* ======================= Defaults, seeds, shuffle ======================= */

void qc_defaults(struct qc_params *p)
{
	p->n_options = 5;
	p->angle_margin_deg = 30.0f;
	p->dist_margin_rel = 0.25f;
	p->dist_margin_m = 0.3f;
	p->z_max = 1.5f;
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

void qc_shuffle(uint64_t seed, int n, int *perm)
{
	struct rng r = { seed ^ SEED_SHUFFLE };
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
	float num[QT_TOK];
};

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
	int row0[QT_NORM + 1], row1[QT_NORM + 1];
	int *prev = row0, *cur = row1;
	size_t i, j, big;

	if (la > QT_NORM)
		la = QT_NORM;
	if (lb > QT_NORM)
		lb = QT_NORM;
	big = la > lb ? la : lb;
	if (!big)
		return 1.0f;
	for (j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (i = 1; i <= la; i++) {
		int *t;

		cur[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): la and lb are the strlen of initialised strings */
			int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			int del = prev[j] + 1, ins = cur[j - 1] + 1;
			int m = sub < del ? sub : del;

			cur[j] = m < ins ? m : ins;
		}
		t = prev;
		prev = cur;
		cur = t;
	}
	return 1.0f - (float)prev[lb] / (float)big;
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

	sim = lev_sim(a->norm, strlen(a->norm), b->norm, strlen(b->norm));
	if (sim_out)
		*sim_out = sim;
	if (!strcmp(a->norm, b->norm))
		return true;
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
	return lev_sim(sa, la, sb, lb) >= 0.5f;
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

static bool is_meta(const struct qtext *q)
{
	struct qtext *ph;
	int i;
	bool hit = false;

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
	ph = malloc(sizeof(*ph));
	if (!ph)
		return false;
	for (i = 0; meta_phrases[i] && !hit; i++) {
		qt_prep(meta_phrases[i], ph);
		hit = !strcmp(ph->norm, q->norm) || is_substring(ph, q);
	}
	free(ph);
	return hit;
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

static bool is_stop(const struct qtext *q, int i)
{
	int k;

	for (k = 0; stopwords[k]; k++)
		if (tok_is(q, i, stopwords[k]))
			return true;
	return false;
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
	r->z = (float)((words(o[answer]) - mean) / (sd < 1.0 ? 1.0 : sd));
	r->overlap_checked = q != NULL;
	r->overlap_answer = q ? overlap(o[answer], q) : 0.0f;
	r->overlap_mean = q && m ? (float)(osum / m) : 0.0f;
}

/* Badness of the item-level checks: 0 when both pass. */
static float item_badness(const struct qc_result *r, const struct qc_params *p)
{
	float b = 0.0f;

	if (fabsf(r->z) > p->z_max)
		b += fabsf(r->z) - p->z_max;
	if (r->overlap_checked && r->overlap_answer > r->overlap_mean + p->overlap_slack + 1e-6f)
		b += r->overlap_answer - (r->overlap_mean + p->overlap_slack);
	return b;
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
	if (fabsf(r->z) > p->z_max) {
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

/* ======================= Option assembly ======================= */

#define POOL_MAX 256

struct cand {
	struct answer a;
	int tier;            /* 0 brain, 1 hard, 2 medium, 3 fill */
	unsigned family;     /* which fields differ from the truth (diff_mask) */
	bool rendered;
	bool bad;            /* does not render, or is a meta option */
	char text[ANS_TEXT_MAX];
	struct qtext qt;
};

struct ws {
	const struct qc_params *p;
	struct answer truth;
	struct cand tc;      /* the truth as a candidate */
	struct qtext question;
	bool has_question;
	struct cand pool[POOL_MAX];
	int npool;
	int order[POOL_MAX];
	int chosen[QC_MAX_OPTIONS]; /* pool indices of the negatives */
	int nchosen;
};

static int render_cand(struct cand *c)
{
	struct buf b;
	int rc;

	if (c->rendered)
		return c->bad ? ENG_EINVAL : 0;
	c->rendered = true;
	buf_init(&b, ANS_TEXT_MAX);
	rc = ans_render(&c->a, &b);
	if (!rc) {
		memcpy(c->text, buf_str(&b), b.len + 1);
		qt_prep(c->text, &c->qt);
		if (is_meta(&c->qt))
			rc = ENG_EINVAL;
	}
	buf_release(&b);
	c->bad = rc != 0;
	return rc;
}

/* Adds a candidate (normalised; duplicates of the truth or the pool dropped). */
static void add(struct ws *w, const struct answer *a, int tier)
{
	struct answer c = *a;
	int i;

	if (w->npool >= POOL_MAX)
		return;
	if (ans_normalise(&c, &w->p->disc))
		return;
	if (ans_equal(&c, &w->truth))
		return;
	for (i = 0; i < w->npool; i++)
		if (ans_equal(&c, &w->pool[i].a))
			return;
	memset(&w->pool[w->npool], 0, sizeof(w->pool[w->npool]));
	w->pool[w->npool].a = c;
	w->pool[w->npool].tier = tier;
	w->npool++;
}

static enum bev_dir dir_add(enum bev_dir d, int k)
{
	return (enum bev_dir)((((int)d + k) % 8 + 8) % 8);
}

static enum ans_rel rel_opposite(enum ans_rel r)
{
	switch (r) {
	case ANS_REL_LEFT_OF: return ANS_REL_RIGHT_OF;
	case ANS_REL_RIGHT_OF: return ANS_REL_LEFT_OF;
	case ANS_REL_IN_FRONT_OF: return ANS_REL_BEHIND;
	case ANS_REL_BEHIND: return ANS_REL_IN_FRONT_OF;
	default: return r;
	}
}

static bool set_object(struct answer *c, const char *name)
{
	return name && !ans_set_text(c->object, sizeof(c->object), name) && c->object[0];
}

/* Yaw negatives: mirrored side, neighbouring magnitudes, forward/around foils. */
static void gen_yaw(struct ws *w, const struct answer *t)
{
	struct answer c = *t;
	float y = t->yaw_deg, m = fabsf(y);
	int s = (y > 0 && y < 180) ? 1 : (y < 0 ? -1 : 0);
	int k;
	float g;

	if (s) {
		c.yaw_deg = -y;
		add(w, &c, 1);
	}
	for (k = 30; k <= 60; k += 5) {
		if (s) {
			c.yaw_deg = (float)s * (m + (float)k);
			add(w, &c, 1);
			c.yaw_deg = (float)s * (m - (float)k);
			add(w, &c, 1);
		} else {
			float base = m == 0.0f ? 0.0f : 180.0f;
			float v = base == 0.0f ? (float)k : 180.0f - (float)k;

			c.yaw_deg = v;
			add(w, &c, 1);
			c.yaw_deg = -v;
			add(w, &c, 1);
		}
	}
	c.yaw_deg = 0.0f;
	add(w, &c, 1);
	c.yaw_deg = 180.0f;
	add(w, &c, 1);
	if (s)
		for (k = 30; k <= 60; k += 5) {
			c.yaw_deg = (float)-s * (m + (float)k);
			add(w, &c, 2);
			c.yaw_deg = (float)-s * (m - (float)k);
			add(w, &c, 2);
		}
	/* NOLINTNEXTLINE(clang-analyzer-security.FloatLoopCounter): multiples of 5 are exact in float */
	for (g = -175.0f; g <= 180.0f; g += 5.0f) {
		c.yaw_deg = g;
		add(w, &c, 3);
	}
}

static void gen_gaze_approx(struct ws *w, const struct answer *t,
			    const struct qc_context *ctx)
{
	struct answer c = *t;
	size_t i;

	gen_yaw(w, t);
	for (i = 0; i < ctx->nobjects; i++) {
		float y = t->yaw_deg;

		c = *t;
		if (!set_object(&c, ctx->objects[i]))
			continue;
		if (ctx->object_yaws && isfinite(ctx->object_yaws[i]))
			y = ctx->object_yaws[i];
		c.yaw_deg = y;
		add(w, &c, 1);
		c.yaw_deg = -y;
		add(w, &c, 2);
		c.yaw_deg = t->yaw_deg;
		add(w, &c, 2);
	}
}

static void gen_head_rel(struct ws *w, const struct answer *t)
{
	struct answer c = *t;
	int k;

	c.dir = bev_dir_mirror(t->dir);
	add(w, &c, 1);
	c.dir = dir_add(t->dir, 1);
	add(w, &c, 1);
	c.dir = dir_add(t->dir, -1);
	add(w, &c, 1);
	c.dir = dir_add(t->dir, 4);
	add(w, &c, 1);
	for (k = 0; k < BEV_NDIR; k++) {
		c.dir = (enum bev_dir)k;
		add(w, &c, 2);
	}
}

static void gen_gaze_rel(struct ws *w, const struct answer *t, const struct qc_context *ctx)
{
	struct answer c = *t;
	size_t i;
	int r;

	if (t->rel != ANS_REL_NEAR) {
		c.rel = rel_opposite(t->rel);
		add(w, &c, 1);
	}
	for (i = 0; i < ctx->nobjects; i++) {
		c = *t;
		if (!set_object(&c, ctx->objects[i]) || ans_name_equal(c.object, t->ref))
			continue;
		add(w, &c, 1);
		if (t->rel != ANS_REL_NEAR) {
			c.rel = rel_opposite(t->rel);
			add(w, &c, 2);
		}
		for (r = 0; r < ANS_NREL; r++) {
			c.rel = (enum ans_rel)r;
			add(w, &c, 3);
		}
	}
	if (t->rel != ANS_REL_NEAR)
		for (r = 0; r < ANS_REL_NEAR; r++) {
			c = *t;
			c.rel = (enum ans_rel)r;
			add(w, &c, 2);
		}
}

static const float dist_factors[] = { 0.5f, 0.65f, 1.4f, 1.6f, 2.0f };

static void gen_nav_approx(struct ws *w, const struct answer *t,
			   const struct qc_context *ctx)
{
	struct answer c = *t;
	size_t i;
	int k, f;

	for (i = 0; i < ctx->ndirs; i++) {
		c = *t;
		c.dir = ctx->dirs[i];
		add(w, &c, 1);
	}
	c = *t;
	c.dir = bev_dir_mirror(t->dir);
	add(w, &c, 1);
	c.dir = dir_add(t->dir, 4);
	add(w, &c, 1);
	c.dir = BEV_FRONT; /* "go forward" and "turn around" foils */
	add(w, &c, 1);
	c.dir = BEV_BACK;
	add(w, &c, 1);
	c = *t;
	for (f = 0; f < (int)ARRAY_SIZE(dist_factors); f++) {
		c.dist_m = t->dist_m * dist_factors[f];
		add(w, &c, 1);
	}
	for (i = 0; i < ctx->nlengths; i++) {
		c = *t;
		c.dist_m = ctx->lengths[i];
		add(w, &c, 1);
		c.dir = bev_dir_mirror(t->dir);
		add(w, &c, 2);
	}
	for (k = 0; k < BEV_NDIR; k++) {
		c = *t;
		c.dir = (enum bev_dir)k;
		add(w, &c, 2);
	}
	for (k = -1; k <= 1; k += 2)
		for (f = 0; f < (int)ARRAY_SIZE(dist_factors); f++) {
			c = *t;
			c.dir = dir_add(t->dir, k);
			c.dist_m = t->dist_m * dist_factors[f];
			add(w, &c, 2);
		}
	for (k = 0; k < BEV_NDIR; k++)
		for (f = 0; f < (int)ARRAY_SIZE(dist_factors); f++) {
			c = *t;
			c.dir = (enum bev_dir)k;
			c.dist_m = t->dist_m * dist_factors[f];
			add(w, &c, 3);
		}
}

/*
 * Route negatives. Options with the truth's number of legs come first (an
 * option with another count differs in length, and a one-leg route is often
 * contained in a two-leg one, which the substring check refuses).
 */
static void gen_nav_rel(struct ws *w, const struct answer *t, const struct qc_context *ctx)
{
	bool two = t->nlegs == 2;
	struct answer c = *t;
	size_t i;
	int x, y;

	c.legs[0] = bev_dir_mirror(t->legs[0]);
	c.legs[1] = bev_dir_mirror(t->legs[1]);
	add(w, &c, 1);
	for (x = -1; x <= 1; x += 2) {
		c = *t;
		c.legs[0] = dir_add(t->legs[0], x);
		add(w, &c, 1);
		if (two) {
			c = *t;
			c.legs[1] = dir_add(t->legs[1], x);
			add(w, &c, 1);
		}
	}
	if (two) {
		c = *t;
		c.legs[0] = bev_dir_mirror(t->legs[0]);
		add(w, &c, 1);
		c = *t;
		c.legs[1] = bev_dir_mirror(t->legs[1]);
		add(w, &c, 1);
	} else {
		c = *t;
		c.legs[0] = dir_add(t->legs[0], 4);
		add(w, &c, 1);
		c.legs[0] = BEV_FRONT;
		add(w, &c, 1);
		c.legs[0] = BEV_BACK;
		add(w, &c, 1);
	}
	for (i = 0; i < ctx->ndirs; i++) {
		c = *t;
		c.nlegs = 1;
		c.legs[0] = ctx->dirs[i];
		add(w, &c, two ? 3 : 1);
	}
	for (x = 0; x < BEV_NDIR; x++) {
		c = *t;
		c.nlegs = 1;
		c.legs[0] = (enum bev_dir)x;
		add(w, &c, two ? 3 : 2);
		if (two && x != BEV_FRONT) {
			c = *t;
			c.legs[1] = (enum bev_dir)x;
			add(w, &c, 2);
			c = *t;
			c.legs[0] = (enum bev_dir)x;
			add(w, &c, 2);
		}
	}
	for (x = 0; x < BEV_NDIR; x++)
		for (y = 1; y < BEV_NDIR; y++) {
			c = *t;
			c.nlegs = 2;
			c.legs[0] = (enum bev_dir)x;
			c.legs[1] = (enum bev_dir)y;
			add(w, &c, 3);
		}
}

static void gen_interact(struct ws *w, const struct answer *t, const struct qc_context *ctx)
{
	static const float offs[] = { -0.5f, 0.4f, 0.8f, 1.2f };
	bool approx = t->kind == ANS_INTERACT_APPROX;
	struct answer c = *t;
	size_t i;
	int k, f, v;

	c.dir = bev_dir_mirror(t->dir);
	add(w, &c, 1);
	for (k = -1; k <= 1; k += 2) {
		c = *t;
		c.dir = dir_add(t->dir, k);
		add(w, &c, 1);
	}
	for (i = 0; i < ctx->nobjects; i++) {
		c = *t;
		if (!set_object(&c, ctx->objects[i]))
			continue;
		add(w, &c, 1);
		c.dir = bev_dir_mirror(t->dir);
		add(w, &c, 1);
	}
	if (approx) {
		for (f = 0; f < (int)ARRAY_SIZE(dist_factors); f++) {
			c = *t;
			c.dist_m = t->dist_m * dist_factors[f];
			add(w, &c, 1);
		}
		for (f = 0; f < (int)ARRAY_SIZE(offs); f++) {
			c = *t;
			c.dist_m = t->dist_m + offs[f];
			add(w, &c, 1);
		}
		if (t->hand != REC_HAND_NONE)
			for (k = REC_HAND_LEFT; k <= REC_HAND_BOTH; k++) {
				c = *t;
				c.hand = (enum rec_hand)k;
				add(w, &c, 1);
			}
		for (v = -1; v <= 1; v++) {
			c = *t;
			c.vertical = v;
			add(w, &c, 1);
		}
	}
	for (k = -2; k <= 4; k++) {
		c = *t;
		c.dir = dir_add(t->dir, k);
		add(w, &c, 2);
	}
	for (i = 0; i < ctx->nverbs; i++) {
		c = *t;
		if (ctx->verbs[i] && !ans_set_text(c.verb, sizeof(c.verb), ctx->verbs[i]))
			add(w, &c, 3);
	}
	for (i = 0; i < ctx->nobjects; i++) {
		c = *t;
		c.dir = bev_dir_mirror(t->dir);
		if (set_object(&c, ctx->objects[i]))
			add(w, &c, 2);
	}
	for (k = 0; k < BEV_NDIR; k++) {
		c = *t;
		c.dir = (enum bev_dir)k;
		add(w, &c, 3);
		if (approx)
			for (f = 0; f < (int)ARRAY_SIZE(dist_factors); f++) {
				c.dist_m = t->dist_m * dist_factors[f];
				add(w, &c, 3);
			}
	}
}

static void gen_pool(struct ws *w, const struct qc_context *ctx)
{
	const struct answer *t = &w->truth;

	switch (t->kind) {
	case ANS_HEAD_TURN_APPROX:
		gen_yaw(w, t);
		break;
	case ANS_GAZE_APPROX:
		gen_gaze_approx(w, t, ctx);
		break;
	case ANS_HEAD_TURN_RELATIVE:
		gen_head_rel(w, t);
		break;
	case ANS_GAZE_RELATIVE:
		gen_gaze_rel(w, t, ctx);
		break;
	case ANS_NAV_APPROX:
		gen_nav_approx(w, t, ctx);
		break;
	case ANS_NAV_RELATIVE:
		gen_nav_rel(w, t, ctx);
		break;
	case ANS_INTERACT_APPROX:
	case ANS_INTERACT_RELATIVE:
		gen_interact(w, t, ctx);
		break;
	default:
		break;
	}
}

/* Pairwise text checks between two rendered candidates. */
static bool text_ok(const struct ws *w, const struct qtext *a, const struct qtext *b)
{
	return !near_dup(a, b, w->p->dup_similarity, NULL) && !is_substring(a, b) &&
	       !is_substring(b, a) && !is_permutation(a, b);
}

/*
 * Candidate ci can join the chosen negatives (except the one at position
 * `skip`, -1 for none): margins and text checks against the truth and them.
 */
static bool compatible(struct ws *w, int ci, int skip)
{
	struct cand *c = &w->pool[ci];
	int i;

	if (!qc_distinct(&c->a, &w->truth, w->p))
		return false;
	for (i = 0; i < w->nchosen; i++) {
		if (i == skip)
			continue;
		if (w->chosen[i] == ci || !qc_distinct(&c->a, &w->pool[w->chosen[i]].a, w->p))
			return false;
	}
	if (render_cand(c))
		return false;
	if (!text_ok(w, &c->qt, &w->tc.qt))
		return false;
	for (i = 0; i < w->nchosen; i++)
		if (i != skip && !text_ok(w, &c->qt, &w->pool[w->chosen[i]].qt))
			return false;
	return true;
}

static void set_figures(struct ws *w, struct qc_result *r)
{
	const struct qtext *o[QC_MAX_OPTIONS];
	int i;

	o[0] = &w->tc.qt;
	for (i = 0; i < w->nchosen; i++)
		o[i + 1] = &w->pool[w->chosen[i]].qt;
	figures(o, w->nchosen + 1, 0, w->has_question ? &w->question : NULL, r);
}

/* Swaps one negative for an unused candidate to lower the item badness. */
static bool repair_step(struct ws *w, float *badness)
{
	struct qc_result r;
	float best = *badness;
	int bi = -1, bj = -1, i, j;

	for (i = 0; i < w->nchosen; i++) {
		int keep = w->chosen[i];

		for (j = 0; j < w->npool; j++) {
			int k, used = 0;

			for (k = 0; k < w->nchosen; k++)
				used |= w->chosen[k] == j;
			if (used || !compatible(w, j, i))
				continue;
			w->chosen[i] = j;
			set_figures(w, &r);
			w->chosen[i] = keep;
			if (item_badness(&r, w->p) + 1e-6f < best) {
				best = item_badness(&r, w->p);
				bi = i;
				bj = j;
			}
		}
	}
	if (bi < 0)
		return false;
	w->chosen[bi] = bj;
	*badness = best;
	return true;
}

enum {
	DIFF_MIRROR = 1 << 0,   /* mirrored side or direction */
	DIFF_MAGNITUDE = 1 << 1, /* another yaw magnitude */
	DIFF_FOIL = 1 << 2,     /* "keep facing forward" / "turn around" */
	DIFF_DIR = 1 << 3,      /* another direction or leg */
	DIFF_DIST = 1 << 4,
	DIFF_OBJECT = 1 << 5,
	DIFF_REL = 1 << 6,      /* relation or reference */
	DIFF_HAND = 1 << 7,
	DIFF_VERT = 1 << 8,
	DIFF_VERB = 1 << 9,
	DIFF_LEGS = 1 << 10     /* number of legs */
};

/* The fields in which c differs from t: the "family" of a negative. */
static unsigned diff_mask(const struct answer *t, const struct answer *c)
{
	unsigned m = 0;
	int i;

	if (c->yaw_deg != t->yaw_deg) {
		if (c->yaw_deg == 0.0f || c->yaw_deg == 180.0f)
			m |= DIFF_FOIL;
		else if (c->yaw_deg == -t->yaw_deg)
			m |= DIFF_MIRROR;
		else
			m |= DIFF_MAGNITUDE;
	}
	if (c->dir != t->dir)
		m |= c->dir == bev_dir_mirror(t->dir) ? DIFF_MIRROR : DIFF_DIR;
	if (c->nlegs != t->nlegs)
		m |= DIFF_LEGS;
	for (i = 0; i < 2 && i < c->nlegs && i < t->nlegs; i++)
		if (c->legs[i] != t->legs[i])
			m |= c->legs[i] == bev_dir_mirror(t->legs[i]) ? DIFF_MIRROR : DIFF_DIR;
	if (c->dist_m != t->dist_m)
		m |= DIFF_DIST;
	if (!ans_name_equal(c->object, t->object))
		m |= DIFF_OBJECT;
	if (c->rel != t->rel || !ans_name_equal(c->ref, t->ref))
		m |= DIFF_REL;
	if (c->hand != t->hand)
		m |= DIFF_HAND;
	if (c->vertical != t->vertical)
		m |= DIFF_VERT;
	if (!ans_name_equal(c->verb, t->verb))
		m |= DIFF_VERB;
	return m;
}

/*
 * Reorders v[0..n) so that families take turns (round robin in order of
 * first appearance), keeping the order within a family: the first
 * negatives of a tier then vary different fields.
 */
static void interleave(struct ws *w, int *v, int n)
{
	int out[POOL_MAX], no = 0, i;
	bool taken[POOL_MAX] = { false };

	if (n <= 0)
		return;
	while (no < n) {
		unsigned seen[POOL_MAX] = { 0 };
		int nseen = 0;

		for (i = 0; i < n; i++) {
			unsigned f = w->pool[v[i]].family;
			int k;
			bool dup = false;

			if (taken[i])
				continue;
			for (k = 0; k < nseen && !dup; k++)
				dup = seen[k] == f;
			if (dup)
				continue;
			seen[nseen++] = f;
			taken[i] = true;
			out[no++] = v[i];
		}
	}
	memcpy(v, out, sizeof(*v) * (size_t)n);
}

static void order_pool(struct ws *w, struct rng *rng, int nbrain)
{
	int tier, i, n = 0;

	for (i = 0; i < nbrain; i++)
		w->order[n++] = i;
	for (tier = 1; tier <= 3; tier++) {
		int start = n;

		for (i = nbrain; i < w->npool; i++)
			if (w->pool[i].tier == tier) {
				w->pool[i].family = diff_mask(&w->truth, &w->pool[i].a);
				w->order[n++] = i;
			}
		shuffle_ints(rng, w->order + start, n - start);
		if (tier < 3)
			interleave(w, w->order + start, n - start);
	}
}

/*
 * When the greedy selection falls short, one chosen negative may be what
 * blocks the others (a one-leg route contained in every two-leg one): try
 * each chosen negative in turn, leave it out and fill again in pool order.
 * Keeps the first full set found. Returns true when the set is full.
 */
static bool refill_without_one(struct ws *w, int want)
{
	int saved[QC_MAX_OPTIONS], nsaved = w->nchosen, drop, i;

	memcpy(saved, w->chosen, sizeof(saved));
	for (drop = 0; drop < nsaved; drop++) {
		int banned = saved[drop];

		w->nchosen = 0;
		for (i = 0; i < nsaved; i++)
			if (i != drop)
				w->chosen[w->nchosen++] = saved[i];
		for (i = 0; i < w->npool && w->nchosen < want; i++) {
			int ci = w->order[i];

			if (ci != banned && compatible(w, ci, -1))
				w->chosen[w->nchosen++] = ci;
		}
		if (w->nchosen == want)
			return true;
	}
	w->nchosen = nsaved;
	memcpy(w->chosen, saved, sizeof(saved));
	return false;
}

int qc_build_options(const struct answer *truth, const struct qc_context *ctx,
		     const char *question, const char *qa_id,
		     const struct qc_params *p, struct qc_options *out)
{
	static const struct qc_context no_ctx;
	struct qc_params def;
	struct qc_result res;
	struct ws *w = NULL;
	struct rng rng;
	uint64_t seed;
	int n, i, nbrain = 0, brain_rejected = 0, perm[QC_MAX_OPTIONS];
	int attempt, best_n = -1, best_rej = 0, best[QC_MAX_OPTIONS] = { 0 };
	float badness;
	int rc = 0;

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
	w = calloc(1, sizeof(*w));
	if (!w)
		return ENG_ENOMEM;
	w->p = p;
	w->truth = *truth;
	rc = ans_normalise(&w->truth, &p->disc);
	if (rc)
		goto out;
	w->tc.a = w->truth;
	rc = render_cand(&w->tc);
	if (rc) {
		rc = err_set(ENG_EINVAL, "qc: the truth does not render: %s", err_msg());
		goto out;
	}
	if (question) {
		qt_prep(question, &w->question);
		w->has_question = true;
	}
	seed = qc_seed_from_id(qa_id);
	rng.s = seed ^ SEED_POOL;

	/* the brain's proposals first, in their order */
	for (i = 0; i < (int)ctx->nproposals; i++) {
		struct answer a;
		int before = w->npool;

		if (!ctx->proposals[i] ||
		    ans_parse(truth->kind, ctx->proposals[i], &p->disc, &a)) {
			brain_rejected++;
			continue;
		}
		if (a.kind == ANS_INTERACT_APPROX)
			a.hand = w->truth.hand == REC_HAND_NONE ? REC_HAND_NONE :
				 a.hand == REC_HAND_NONE ? w->truth.hand : a.hand;
		add(w, &a, 0);
		if (w->npool == before)
			brain_rejected++; /* equal to the truth or to an earlier proposal */
	}
	nbrain = w->npool;
	gen_pool(w, ctx);
	order_pool(w, &rng, nbrain);

	/*
	 * Greedy selection in pool order; when it falls short, the engine's
	 * tiers are reshuffled and the selection retried (bounded), keeping
	 * the attempt that found the most negatives.
	 */
	for (attempt = 0; attempt <= p->max_repairs; attempt++) {
		int rej = 0;

		if (attempt)
			order_pool(w, &rng, nbrain);
		w->nchosen = 0;
		for (i = 0; i < w->npool && w->nchosen < n - 1; i++) {
			int ci = w->order[i];

			if (compatible(w, ci, -1))
				w->chosen[w->nchosen++] = ci;
			else if (ci < nbrain)
				rej++;
		}
		for (; i < w->npool; i++)
			if (w->order[i] < nbrain)
				rej++; /* not reached: counted as refused */
		if (w->nchosen > best_n) {
			best_n = w->nchosen;
			memcpy(best, w->chosen, sizeof(best));
			best_rej = rej;
		}
		if (best_n == n - 1)
			break;
	}
	w->nchosen = best_n;
	memcpy(w->chosen, best, sizeof(best));
	brain_rejected += best_rej;
	if (w->nchosen < n - 1 && w->nchosen > 0)
		refill_without_one(w, n - 1);
	memset(out, 0, sizeof(*out));
	memset(&res, 0, sizeof(res));
	if (w->nchosen < n - 1) {
		res.reason = QC_NO_NEGATIVES;
		res.failed = 1u << QC_NO_NEGATIVES;
		snprintf(res.detail, sizeof(res.detail),
			 "only %d of %d negatives satisfy the margins and text checks",
			 w->nchosen, n - 1);
		res.brain_rejected = brain_rejected;
		out->qc = res;
		out->n = 0;
		goto out;
	}

	set_figures(w, &res);
	badness = item_badness(&res, p);
	while (badness > 0.0f && res.repairs < p->max_repairs && repair_step(w, &badness))
		res.repairs++;

	/* final order */
	qc_shuffle(seed, n, perm);
	out->n = n;
	for (i = 0; i < n; i++) {
		const struct cand *c = perm[i] == 0 ? &w->tc : &w->pool[w->chosen[perm[i] - 1]];

		out->opt[i] = c->a;
		memcpy(out->text[i], c->text, sizeof(out->text[i]));
		out->from_brain[i] = perm[i] != 0 && w->chosen[perm[i] - 1] < nbrain;
		if (perm[i] == 0)
			out->answer = i;
	}
	{
		const char *texts[QC_MAX_OPTIONS];
		int repairs = res.repairs;

		for (i = 0; i < n; i++)
			texts[i] = out->text[i];
		rc = qc_check_text(question, texts, n, out->answer, p, &out->qc);
		if (rc)
			goto out;
		out->qc.repairs = repairs;
	}
	for (i = 0; i < n; i++)
		if (out->from_brain[i])
			out->qc.brain_kept++;
	out->qc.brain_rejected = brain_rejected;
	out->qc.engine_added = n - 1 - out->qc.brain_kept;
out:
	free(w);
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

int qc_chain_candidates(const char *const *truth, int k, const char *const *pool,
			size_t npool, const char *qa_id, int ncand,
			const struct qc_params *p, struct qc_chain *out)
{
	struct qc_params def;
	const char *pick[QC_CHAIN_MAX_CAND];
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
	if (npool) {
		order = malloc(sizeof(*order) * npool);
		if (!order)
			return ENG_ENOMEM;
		for (i = 0; i < (int)npool; i++)
			order[i] = i;
		shuffle_ints(&rng, order, (int)npool);
	}
	for (i = 0; i < (int)npool && np < ncand; i++) {
		const char *d = pool[order[i]];
		bool clash = false;

		if (!d || !d[0] || strlen(d) >= QC_DESC_MAX)
			continue;
		for (j = 0; j < np && !clash; j++)
			clash = desc_clash(d, pick[j], p->dup_similarity);
		if (!clash)
			pick[np++] = d;
	}
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
