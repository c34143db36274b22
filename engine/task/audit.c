/* SPDX-License-Identifier: MIT */
/* The blind audit: text-only solvers per group, with Wilson intervals. */
#include "audit.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "err.h"
#include "hash.h"
#include "qc.h"
#include "rng.h"

#define TOK_MAX 48      /* tokens kept per text */
#define TOK_LEN 24      /* bytes per token, with the NUL */
#define FEAT_BITS 18    /* hashed feature space of the learned solvers */
#define NFEAT (1u << FEAT_BITS)
#define EPOCHS 8
#define MAX_FEATS 256   /* features per option */

/* ======================= Items ======================= */

struct toks {
	int n;
	char t[TOK_MAX][TOK_LEN];
	uint64_t h[TOK_MAX]; /* FNV-1a of each token: compared before the text */
};

struct item {
	int group, n, key;
	char *recording, *question, *answer_json;
	char **options;
	struct toks qt;
	struct toks *ot;            /* per option */
	uint32_t fold;
	uint32_t **feat;            /* per option: its learned-solver features, or NULL */
	int *nfeat;                 /* their counts */
	int *truth, ntruth;         /* a chain's true candidates (chain_truths), or NULL */
};

struct audit_set {
	struct item *v;
	size_t n, cap;
};

/* Lowercase alphanumeric tokens (numbers kept whole, with their decimal point). */
static void tokenize(const char *s, struct toks *out)
{
	size_t k;

	out->n = 0;
	while (s && *s && out->n < TOK_MAX) {
		unsigned char c = (unsigned char)*s;

		if (!isalnum(c)) {
			s++;
			continue;
		}
		k = 0;
		while (*s && (isalnum((unsigned char)*s) ||
			      (*s == '.' && isdigit((unsigned char)s[1]) && k && isdigit((unsigned char)s[-1])))) {
			if (k + 1 < TOK_LEN)
				out->t[out->n][k++] = (char)tolower((unsigned char)*s);
			s++;
		}
		out->t[out->n][k] = '\0';
		out->h[out->n] = hash_fnv1a(HASH_FNV_BASIS, out->t[out->n], k);
		out->n++;
	}
}

/* Token k of u occurs in t. */
static bool has_tok(const struct toks *t, const struct toks *u, int k)
{
	uint64_t h = u->h[k];
	int i;

	for (i = 0; i < t->n; i++)
		if (t->h[i] == h && !strcmp(t->t[i], u->t[k]))
			return true;
	return false;
}

static char *dup(const char *s)
{
	return strdup(s ? s : "");
}

int audit_set_new(struct audit_set **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : ENG_ENOMEM;
}

static void item_release(struct item *it)
{
	int i;

	for (i = 0; it->options && i < it->n; i++)
		free(it->options[i]);
	for (i = 0; it->feat && i < it->n; i++)
		free(it->feat[i]);
	free(it->feat);
	free(it->nfeat);
	free(it->truth);
	free(it->options);
	free(it->ot);
	free(it->recording);
	free(it->question);
	free(it->answer_json);
}

void audit_set_free(struct audit_set *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		item_release(&s->v[i]);
	free(s->v);
	free(s);
}

int audit_set_add(struct audit_set *s, const struct audit_item *a)
{
	enum subtask st;
	enum metric m;
	struct item it;
	int i;

	if (a->n < 2 || a->n > AUDIT_MAX_OPTIONS || !subtask_group(a->group, &st, &m))
		return 0;
	if (st != SUBTASK_CHAIN && (a->key < 0 || a->key >= a->n))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct item *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return ENG_ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	memset(&it, 0, sizeof(it));
	it.group = a->group;
	it.n = a->n;
	it.key = a->key;
	it.recording = dup(a->recording);
	it.question = dup(a->question);
	it.answer_json = dup(a->answer_json);
	it.options = calloc((size_t)a->n, sizeof(*it.options));
	it.ot = calloc((size_t)a->n, sizeof(*it.ot));
	if (!it.recording || !it.question || !it.answer_json || !it.options || !it.ot) {
		item_release(&it);
		return ENG_ENOMEM;
	}
	for (i = 0; i < a->n; i++) {
		it.options[i] = dup(a->options[i]);
		if (!it.options[i]) {
			item_release(&it);
			return ENG_ENOMEM;
		}
		tokenize(it.options[i], &it.ot[i]);
	}
	tokenize(it.question, &it.qt);
	s->v[s->n++] = it;
	return 0;
}

/* ======================= Scoring ======================= */

void audit_wilson(double k, double n, double z, double *lo, double *hi)
{
	double p, d, c, w;

	if (n <= 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = k / n;
	d = 1 + z * z / n;
	c = (p + z * z / (2 * n)) / d;
	w = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d;
	*lo = c - w < 0 ? 0 : c - w;
	*hi = c + w > 1 ? 1 : c + w;
}

/* The share of a hit for scores s[0..n-1]: 1/k when the key is among k tied maxima. */
static double hit(const double *s, int n, int key)
{
	double best = -HUGE_VAL;
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (s[i] > best)
			best = s[i];
	for (i = 0; i < n; i++)
		k += s[i] >= best - 1e-12;
	return s[key] >= best - 1e-12 ? 1.0 / k : 0.0;
}

struct acc {
	const char *name;
	bool learned;
	double hits;
	long n;
};

static void acc_add(struct acc *a, double h)
{
	a->hits += h;
	a->n++;
}

/* ======================= Fixed rules ======================= */

static double mean_sim(const struct item *it, int i)
{
	double s = 0;
	int j;

	for (j = 0; j < it->n; j++)
		if (j != i)
			s += (double)qc_similarity(it->options[i], it->options[j]);
	return s / (it->n - 1);
}

static double jaccard(const struct toks *a, const struct toks *b)
{
	int i, inter = 0, uni = b->n;

	for (i = 0; i < a->n; i++) {
		if (has_tok(b, a, i))
			inter++;
		else
			uni++;
	}
	return uni ? (double)inter / uni : 0;
}

static double mean_jaccard(const struct item *it, int i)
{
	double s = 0;
	int j;

	for (j = 0; j < it->n; j++)
		if (j != i)
			s += jaccard(&it->ot[i], &it->ot[j]);
	return s / (it->n - 1);
}

/* Sum over an option's tokens of the number of other options that hold the token. */
static double shared_tokens(const struct item *it, int i)
{
	double s = 0;
	int t, j;

	for (t = 0; t < it->ot[i].n; t++)
		for (j = 0; j < it->n; j++)
			if (j != i && has_tok(&it->ot[j], &it->ot[i], t))
				s++;
	return s;
}

static double overlap_q(const struct item *it, int i)
{
	double s = 0;
	int t;

	for (t = 0; t < it->ot[i].n; t++)
		if (strlen(it->ot[i].t[t]) > 2 && has_tok(&it->qt, &it->ot[i], t))
			s++;
	return s;
}

/* The first number of a text, or NAN. */
static double first_number(const struct toks *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (isdigit((unsigned char)t->t[i][0]))
			return strtod(t->t[i], NULL);
	return NAN;
}

/* 1 for the options whose number is the median (both middles for an even count), else 0. */
static void middle_number(const struct item *it, double *s)
{
	double v[AUDIT_MAX_OPTIONS], sorted[AUDIT_MAX_OPTIONS];
	int i, j, m = 0;

	for (i = 0; i < it->n; i++) {
		v[i] = first_number(&it->ot[i]);
		s[i] = 0;
		if (isfinite(v[i]))
			sorted[m++] = v[i];
	}
	if (m < 3)
		return;
	for (i = 1; i < m; i++)
		for (j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			double x = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = x;
		}
	for (i = 0; i < it->n; i++)
		if (isfinite(v[i]) && (v[i] == sorted[(m - 1) / 2] || v[i] == sorted[m / 2]))
			s[i] = 1;
}

static const char *const dir_words[BEV_NDIR] = {
	"front", "front-left", "left", "back-left", "back", "back-right", "right", "front-right"
};

/* The 8-way direction an option names first (a hyphenated pair wins), or -1. */
static int option_dir(const char *text)
{
	char low[512];
	size_t i;
	int d, best = -1;
	const char *at, *first = NULL;

	for (i = 0; i + 1 < sizeof(low) && text[i]; i++)
		low[i] = (char)tolower((unsigned char)text[i]);
	low[i] = '\0';
	for (d = BEV_NDIR - 1; d >= 0; d--) {
		const char *w = dir_words[d];

		at = strstr(low, w);
		/* "front" inside "front-left" is the pair's */
		while (at && strchr(w, '-') == NULL && at[strlen(w)] == '-')
			at = strstr(at + 1, w);
		if (at && (!first || at < first || (at == first && strlen(w) > strlen(dir_words[best])))) {
			first = at;
			best = d;
		}
	}
	if (best < 0 && (strstr(low, "ahead") || strstr(low, "forward")))
		best = BEV_FRONT;
	if (best < 0 && strstr(low, "around"))
		best = BEV_BACK;
	return best;
}

/* How many of a direction's neighbours, opposite and mirror image the other options offer. */
static void ring(const struct item *it, double *s)
{
	int d[AUDIT_MAX_OPTIONS], i, j;

	for (i = 0; i < it->n; i++)
		d[i] = option_dir(it->options[i]);
	for (i = 0; i < it->n; i++) {
		int rel[4];

		s[i] = 0;
		if (d[i] < 0)
			continue;
		rel[0] = (d[i] + 1) % 8;
		rel[1] = (d[i] + 7) % 8;
		rel[2] = (d[i] + 4) % 8;
		rel[3] = (8 - d[i]) % 8; /* left <-> right */
		for (j = 0; j < it->n; j++) {
			int k;

			if (j == i || d[j] < 0)
				continue;
			for (k = 0; k < 4; k++)
				if (d[j] == rel[k] && (k < 3 || rel[3] != d[i]))
					s[i]++;
		}
	}
}

/* ======================= Learned: hashed features, conditional logit ======================= */

static uint32_t fhash(const char *a, const char *b, uint32_t salt)
{
	uint64_t h = 1469598103934665603ULL ^ salt;

	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (; b && *b; b++)
		h = (h ^ (unsigned char)*b) * 1099511628211ULL;
	return (uint32_t)(rng_mix64(h) & (NFEAT - 1));
}

/* The hashed features of option i of an item (repeats allowed). */
static int features(const struct item *it, int i, uint32_t *f)
{
	const struct toks *t = &it->ot[i];
	char b[16];
	int k, j, n = 0, len = (int)strlen(it->options[i]), rank = 0;

	for (k = 0; k < t->n && n + 4 < MAX_FEATS; k++) {
		int shared = 0;

		for (j = 0; j < it->n; j++)
			if (j != i && has_tok(&it->ot[j], t, k))
				shared++;
		snprintf(b, sizeof(b), "%d", shared);
		f[n++] = fhash("w", t->t[k], 1);
		f[n++] = fhash(t->t[k], b, 2);          /* token x how many others share it */
		if (k + 1 < t->n)
			f[n++] = fhash(t->t[k], t->t[k + 1], 3); /* bigram */
		if (has_tok(&it->qt, t, k))
			f[n++] = fhash("q", t->t[k], 4);
	}
	for (j = 0; j < it->n; j++)
		rank += (int)strlen(it->options[j]) < len;
	snprintf(b, sizeof(b), "%d", rank);
	if (n < MAX_FEATS)
		f[n++] = fhash("lenrank", b, 5);
	snprintf(b, sizeof(b), "%d", (int)(shared_tokens(it, i) / (t->n ? t->n : 1)));
	if (n < MAX_FEATS)
		f[n++] = fhash("sharebin", b, 6);
	return n;
}

/* Four partial sums: the gathers overlap instead of waiting on one add chain. */
static double dot(const float *w, const uint32_t *f, int n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	int k;

	for (k = 0; k + 4 <= n; k += 4) {
		s0 += (double)w[f[k]];
		s1 += (double)w[f[k + 1]];
		s2 += (double)w[f[k + 2]];
		s3 += (double)w[f[k + 3]];
	}
	for (; k < n; k++)
		s0 += (double)w[f[k]];
	return (s0 + s1) + (s2 + s3);
}

/*
 * Zeroes the weights the items of `group` can have touched: training
 * writes only their features, so this leaves all NFEAT zero again at a
 * fraction of a memset's cost.
 */
static void w_clear(const struct audit_set *s, int group, float *w)
{
	size_t k;
	int i, q;

	for (k = 0; k < s->n; k++) {
		const struct item *it = &s->v[k];

		if (it->group != group || !it->feat)
			continue;
		for (i = 0; i < it->n; i++)
			for (q = 0; q < it->nfeat[i]; q++)
				w[it->feat[i][q]] = 0;
	}
}

/*
 * The features of every option of it, computed once: they depend on the
 * item alone, and the folds and epochs read them again and again.
 */
static int item_features(struct item *it)
{
	uint32_t tmp[MAX_FEATS];
	int i;

	if (it->feat)
		return 0;
	it->feat = calloc((size_t)it->n, sizeof(*it->feat));
	it->nfeat = calloc((size_t)it->n, sizeof(*it->nfeat));
	if (!it->feat || !it->nfeat)
		return ENG_ENOMEM;
	for (i = 0; i < it->n; i++) {
		it->nfeat[i] = features(it, i, tmp);
		it->feat[i] = malloc((size_t)(it->nfeat[i] ? it->nfeat[i] : 1) * sizeof(*tmp));
		if (!it->feat[i])
			return ENG_ENOMEM;
		memcpy(it->feat[i], tmp, (size_t)it->nfeat[i] * sizeof(*tmp));
	}
	return 0;
}

/*
 * Trains on items of `group` whose fold differs from `test`, scores those
 * whose fold is `test`. The items' features are item_features()'.
 */
static int learned_fold(const struct audit_set *s, int group, uint32_t test, float *w,
			struct acc *a)
{
	int e, i;
	size_t k;

	w_clear(s, group, w);
	for (e = 0; e < EPOCHS; e++) {
		double lr = 0.2 / (1 + e);

		for (k = 0; k < s->n; k++) {
			const struct item *it = &s->v[k];
			double sc[AUDIT_MAX_OPTIONS], mx = -HUGE_VAL, z = 0;

			if (it->group != group || it->fold == test || it->key < 0)
				continue;
			for (i = 0; i < it->n; i++) {
				sc[i] = dot(w, it->feat[i], it->nfeat[i]);
				if (sc[i] > mx)
					mx = sc[i];
			}
			for (i = 0; i < it->n; i++) {
				sc[i] = exp(sc[i] - mx);
				z += sc[i];
			}
			for (i = 0; i < it->n; i++) {
				double g = (i == it->key) - sc[i] / z;
				const uint32_t *f = it->feat[i];
				int q;

				for (q = 0; q < it->nfeat[i]; q++)
					w[f[q]] += (float)(lr * g - lr * 1e-4 * (double)w[f[q]]);
			}
		}
	}
	for (k = 0; k < s->n; k++) {
		const struct item *it = &s->v[k];
		double sc[AUDIT_MAX_OPTIONS];

		if (it->group != group || it->fold != test || it->key < 0)
			continue;
		for (i = 0; i < it->n; i++)
			sc[i] = dot(w, it->feat[i], it->nfeat[i]);
		acc_add(a, hit(sc, it->n, it->key));
	}
	return 0;
}

/* ======================= Cross-validated priors ======================= */

/* Letter prior: the most frequent key position in the training folds. */
static void letter_prior(const struct audit_set *s, int group, uint32_t test, struct acc *a)
{
	double cnt[AUDIT_MAX_OPTIONS] = { 0 }, sc[AUDIT_MAX_OPTIONS];
	size_t k;
	int i;

	for (k = 0; k < s->n; k++)
		if (s->v[k].group == group && s->v[k].fold != test && s->v[k].key >= 0)
			cnt[s->v[k].key]++;
	for (k = 0; k < s->n; k++) {
		const struct item *it = &s->v[k];

		if (it->group != group || it->fold != test || it->key < 0)
			continue;
		for (i = 0; i < it->n; i++)
			sc[i] = cnt[i];
		acc_add(a, hit(sc, it->n, it->key));
	}
}

/*
 * Key-value prior: how often an option text's value (the whole text with
 * its object names, and each of its tokens) was the key rather than a
 * distractor in the training folds; the option with the best log-ratio.
 *
 * The values are hashed and sorted once per group (kv_prepare): each
 * token of each option of each keyed item, in that order, gets the index
 * of its distinct value. A split then costs one pass: the counts of every
 * fold (kv_split), the training counts of fold f being the totals less
 * fold f's own.
 */
struct kv_ent {
	uint32_t h, j; /* the value's hash, the token's position in item order */
};

struct kv_table {
	uint32_t *u;  /* per token in item order: its distinct value */
	size_t nu;    /* distinct values */
};

static int kv_cmp(const void *pa, const void *pb)
{
	const struct kv_ent *a = pa, *b = pb;

	if (a->h != b->h)
		return (a->h > b->h) - (a->h < b->h);
	return (a->j > b->j) - (a->j < b->j);
}

static int kv_prepare(const struct audit_set *s, int group, struct kv_table *t)
{
	struct kv_ent *e = NULL;
	size_t n = 0, k, j;
	int i, q, rc = 0;

	memset(t, 0, sizeof(*t));
	for (k = 0; k < s->n; k++)
		if (s->v[k].group == group && s->v[k].key >= 0)
			for (i = 0; i < s->v[k].n; i++)
				n += (size_t)s->v[k].ot[i].n;
	e = malloc((n ? n : 1) * sizeof(*e));
	t->u = malloc((n ? n : 1) * sizeof(*t->u));
	if (!e || !t->u) {
		free(t->u);
		t->u = NULL;
		rc = ENG_ENOMEM;
		goto out;
	}
	for (k = 0, j = 0; k < s->n; k++) {
		const struct item *it = &s->v[k];

		if (it->group != group || it->key < 0)
			continue;
		for (i = 0; i < it->n; i++)
			for (q = 0; q < it->ot[i].n; q++, j++) {
				e[j].h = fhash("kv", it->ot[i].t[q], 7);
				e[j].j = (uint32_t)j;
			}
	}
	if (n)
		qsort(e, n, sizeof(*e), kv_cmp);
	for (j = 0; j < n; j++) {
		if (j && e[j].h != e[j - 1].h)
			t->nu++;
		t->u[e[j].j] = (uint32_t)t->nu;
	}
	t->nu += n > 0;
out:
	free(e);
	return rc;
}

/* One split's key-value prior over all its folds, the folds in order. */
static int kv_split(const struct audit_set *s, int group, int folds, const struct kv_table *t,
		    struct acc *a)
{
	float *kf = calloc(t->nu * (size_t)folds + 1, sizeof(*kf));
	float *af = calloc(t->nu * (size_t)folds + 1, sizeof(*af));
	float *kt = calloc(t->nu + 1, sizeof(*kt)), *at = calloc(t->nu + 1, sizeof(*at));
	uint32_t f;
	size_t k, j;
	int i, q, rc = 0;

	if (!kf || !af || !kt || !at) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (k = 0, j = 0; k < s->n; k++) {
		const struct item *it = &s->v[k];

		if (it->group != group || it->key < 0)
			continue;
		for (i = 0; i < it->n; i++)
			for (q = 0; q < it->ot[i].n; q++, j++) {
				size_t u = t->u[j];

				kf[u * (size_t)folds + it->fold] += i == it->key;
				af[u * (size_t)folds + it->fold] += 1;
				kt[u] += i == it->key;
				at[u] += 1;
			}
	}
	for (f = 0; f < (uint32_t)folds; f++)
		for (k = 0, j = 0; k < s->n; k++) {
			const struct item *it = &s->v[k];
			double sc[AUDIT_MAX_OPTIONS];

			if (it->group != group || it->key < 0)
				continue;
			if (it->fold != f) {
				for (i = 0; i < it->n; i++)
					j += (size_t)it->ot[i].n;
				continue;
			}
			for (i = 0; i < it->n; i++) {
				sc[i] = 0;
				for (q = 0; q < it->ot[i].n; q++, j++) {
					size_t u = t->u[j];
					double key = (double)(kt[u] - kf[u * (size_t)folds + f]);
					double all = (double)(at[u] - af[u * (size_t)folds + f]);

					sc[i] += log((key + 0.2) / (all + 1.0));
				}
			}
			acc_add(a, hit(sc, it->n, it->key));
		}
out:
	free(kf);
	free(af);
	free(kt);
	free(at);
	return rc;
}

/* ======================= Chains ======================= */

/* The 1-based true node ids of a chain answer, into nodes; their count. */
static int chain_truth(const char *answer_json, int *nodes, int cap)
{
	cJSON *a = cJSON_Parse(answer_json), *c, *it;
	int k = 0;

	c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "chain"), "nodes");
	cJSON_ArrayForEach(it, c)
		if (cJSON_IsNumber(it) && k < cap)
			nodes[k++] = it->valueint;
	cJSON_Delete(a);
	return k;
}

/*
 * Each chain item of group: its true candidates, read from its answer once
 * (the learned scorer took them at every epoch of every fold and repeat).
 */
static int chain_truths(struct audit_set *s, int group)
{
	size_t k;

	for (k = 0; k < s->n; k++) {
		struct item *it = &s->v[k];

		if (it->group != group || it->truth)
			continue;
		it->truth = malloc(AUDIT_MAX_OPTIONS * sizeof(*it->truth));
		if (!it->truth)
			return ENG_ENOMEM;
		it->ntruth = chain_truth(it->answer_json, it->truth, AUDIT_MAX_OPTIONS);
	}
	return 0;
}

static double log_choose(int n, int k)
{
	return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

/* 1 when the top-k candidates by score are exactly the true set (ties: the share of ways). */
static double set_hit(const double *sc, int n, const int *truth, int k)
{
	bool is_true[AUDIT_MAX_OPTIONS] = { false };
	double kth;
	int i, above = 0, at = 0, true_above = 0, true_at = 0, order[AUDIT_MAX_OPTIONS], j;

	for (i = 0; i < k; i++)
		if (truth[i] >= 1 && truth[i] <= n)
			is_true[truth[i] - 1] = true;
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && sc[order[j - 1]] < sc[order[j]]; j--) {
			int x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	kth = sc[order[k - 1]];
	for (i = 0; i < n; i++) {
		if (sc[i] > kth + 1e-12) {
			above++;
			true_above += is_true[i];
		} else if (sc[i] >= kth - 1e-12) {
			at++;
			true_at += is_true[i];
		}
	}
	if (true_above != above || true_above + true_at != k)
		return 0;
	/* the tied slots are filled at random: all true ones must be drawn */
	return exp(-log_choose(at, k - above));
}

static void chain_rules(const struct audit_set *s, int group, struct acc *overlap, struct acc *chance)
{
	size_t k;
	int i;

	for (k = 0; k < s->n; k++) {
		const struct item *it = &s->v[k];
		double sc[AUDIT_MAX_OPTIONS];
		int kk;

		if (it->group != group)
			continue;
		kk = it->ntruth;
		if (kk < 1 || kk >= it->n)
			continue;
		for (i = 0; i < it->n; i++)
			sc[i] = overlap_q(it, i);
		acc_add(overlap, set_hit(sc, it->n, it->truth, kk));
		acc_add(chance, exp(-log_choose(it->n, kk)));
	}
}

/* The learned candidate scorer: logistic regression on (candidate, goal) features, CV. */
static int chain_learned(const struct audit_set *s, int group, int folds, float *w, struct acc *a)
{
	int i, e, q;
	uint32_t fold;
	size_t k;

	for (fold = 0; fold < (uint32_t)folds; fold++) {
		w_clear(s, group, w);
		for (e = 0; e < EPOCHS; e++) {
			double lr = 0.2 / (1 + e);

			for (k = 0; k < s->n; k++) {
				const struct item *it = &s->v[k];
				int kk;

				if (it->group != group || it->fold == fold)
					continue;
				kk = it->ntruth;
				for (i = 0; i < it->n; i++) {
					bool y = false;
					double p;

					for (q = 0; q < kk; q++)
						y = y || it->truth[q] == i + 1;
					p = 1 / (1 + exp(-dot(w, it->feat[i], it->nfeat[i])));
					for (q = 0; q < it->nfeat[i]; q++)
						w[it->feat[i][q]] += (float)(lr * ((double)y - p));
				}
			}
		}
		for (k = 0; k < s->n; k++) {
			const struct item *it = &s->v[k];
			double sc[AUDIT_MAX_OPTIONS];
			int kk;

			if (it->group != group || it->fold != fold)
				continue;
			kk = it->ntruth;
			if (kk < 1 || kk >= it->n)
				continue;
			for (i = 0; i < it->n; i++)
				sc[i] = dot(w, it->feat[i], it->nfeat[i]);
			acc_add(a, set_hit(sc, it->n, it->truth, kk));
		}
	}
	return 0;
}

/* ======================= The run ======================= */

/*
 * A solver cross-validated `repeats` times scored each item that often:
 * its hits and items become the means over the repeats (every repeat
 * scores the same items, so n divides exactly).
 */
static void repeat_mean(struct acc *a, int repeats)
{
	a->hits /= repeats;
	a->n /= repeats;
}

static void finish(struct audit_group *g, const struct acc *a)
{
	struct audit_solver *x;

	if (g->nsolvers >= AUDIT_MAX_SOLVERS || !a->n)
		return;
	x = &g->solvers[g->nsolvers++];
	snprintf(x->name, sizeof(x->name), "%s", a->name);
	x->learned = a->learned;
	x->n = a->n;
	x->hits = a->hits;
	x->acc = a->hits / (double)a->n;
	audit_wilson(a->hits, (double)a->n, 1.645, &x->lo, &x->hi);
}

/* Folds by recording when the group spans several, else by item. */
static void assign_folds(struct audit_set *s, int group, int folds, uint64_t seed)
{
	size_t k, nrec = 0;
	const char *first = NULL;

	for (k = 0; k < s->n; k++) {
		if (s->v[k].group != group)
			continue;
		if (!first)
			first = s->v[k].recording;
		else if (strcmp(first, s->v[k].recording))
			nrec = 2;
	}
	for (k = 0; k < s->n; k++) {
		const struct item *it = &s->v[k];
		const char *key = nrec >= 2 ? it->recording : it->question;
		uint64_t h = seed;
		const char *c;

		if (it->group != group)
			continue;
		for (c = key; *c; c++)
			h = rng_mix64(h ^ (unsigned char)*c);
		if (nrec < 2)
			h = rng_mix64(h ^ (uint64_t)k);
		s->v[k].fold = (uint32_t)(h % (uint64_t)folds);
	}
}

static void mc_rules(const struct audit_set *s, int group, struct acc *r)
{
	double sc[AUDIT_MAX_OPTIONS];
	size_t k;
	int i;

	for (k = 0; k < s->n; k++) {
		const struct item *it = &s->v[k];

		if (it->group != group || it->key < 0)
			continue;
		for (i = 0; i < it->n; i++)
			sc[i] = (double)strlen(it->options[i]);
		acc_add(&r[0], hit(sc, it->n, it->key));
		for (i = 0; i < it->n; i++)
			sc[i] = -(double)strlen(it->options[i]);
		acc_add(&r[1], hit(sc, it->n, it->key));
		for (i = 0; i < it->n; i++)
			sc[i] = overlap_q(it, i);
		acc_add(&r[2], hit(sc, it->n, it->key));
		middle_number(it, sc);
		acc_add(&r[3], hit(sc, it->n, it->key));
		for (i = 0; i < it->n; i++)
			sc[i] = mean_sim(it, i);
		acc_add(&r[4], hit(sc, it->n, it->key));
		for (i = 0; i < it->n; i++)
			sc[i] = -sc[i];
		acc_add(&r[5], hit(sc, it->n, it->key));
		for (i = 0; i < it->n; i++)
			sc[i] = mean_jaccard(it, i);
		acc_add(&r[6], hit(sc, it->n, it->key));
		for (i = 0; i < it->n; i++)
			sc[i] = -sc[i];
		acc_add(&r[7], hit(sc, it->n, it->key));
		for (i = 0; i < it->n; i++)
			sc[i] = shared_tokens(it, i);
		acc_add(&r[8], hit(sc, it->n, it->key));
		for (i = 0; i < it->n; i++)
			sc[i] = -sc[i];
		acc_add(&r[9], hit(sc, it->n, it->key));
		ring(it, sc);
		acc_add(&r[10], hit(sc, it->n, it->key));
	}
}

static int audit_group(struct audit_set *s, int group, const struct audit_params *p,
		       float *w, struct audit_group *g)
{
	static const char *const names[11] = {
		"longest", "shortest", "question_overlap", "middle_number", "most_similar_chars",
		"least_similar_chars", "most_similar_tokens", "least_similar_tokens",
		"shared_token_vote", "fewest_shared_tokens", "direction_ring"
	};
	struct acc r[11], letter = { "letter_prior", false, 0, 0 };
	struct acc kv = { "key_value_prior", false, 0, 0 }, lr = { "learned", true, 0, 0 };
	int folds = p->folds > 1 ? p->folds : 5, i, rc = 0, rep;
	int repeats = p->repeats > 0 ? p->repeats : AUDIT_REPEATS;
	struct kv_table kvt = { NULL, 0 };
	enum subtask st;
	enum metric m;
	uint32_t f;
	size_t k;

	subtask_group(group, &st, &m);
	memset(g, 0, sizeof(*g));
	g->group = group;
	for (k = 0; k < s->n; k++)
		if (s->v[k].group == group) {
			g->n++;
			g->options += s->v[k].n;
			g->chance += 1.0 / s->v[k].n;
		}
	if (!g->n)
		return 0;
	g->options /= (double)g->n;
	g->chance /= (double)g->n;
	if (st == SUBTASK_CHAIN) {
		struct acc ov = { "goal_overlap", false, 0, 0 }, ch = { "chance", false, 0, 0 };
		struct acc cl = { "learned_candidates", true, 0, 0 };

		rc = chain_truths(s, group);
		if (!rc)
			chain_rules(s, group, &ov, &ch);
		for (k = 0; k < s->n && !rc; k++)
			if (s->v[k].group == group && g->n >= (p->min_items > 0 ? p->min_items : 20))
				rc = item_features(&s->v[k]);
		for (rep = 0; rep < repeats && !rc && g->n >= (p->min_items > 0 ? p->min_items : 20);
		     rep++) {
			assign_folds(s, group, folds, p->seed + (uint64_t)rep);
			rc = chain_learned(s, group, folds, w, &cl);
		}
		g->chance = ch.n ? ch.hits / (double)ch.n : 0;
		repeat_mean(&cl, repeats);
		finish(g, &ov);
		finish(g, &cl);
	} else {
		for (i = 0; i < 11; i++) {
			r[i].name = names[i];
			r[i].learned = false;
			r[i].hits = 0;
			r[i].n = 0;
		}
		mc_rules(s, group, r);
		for (k = 0; k < s->n && !rc; k++)
			if (s->v[k].group == group && s->v[k].key >= 0 &&
			    g->n >= (p->min_items > 0 ? p->min_items : 20))
				rc = item_features(&s->v[k]);
		if (!rc)
			rc = kv_prepare(s, group, &kvt);
		for (rep = 0; rep < repeats && !rc; rep++) {
			assign_folds(s, group, folds, p->seed + (uint64_t)rep);
			for (f = 0; f < (uint32_t)folds; f++)
				letter_prior(s, group, f, &letter);
			rc = kv_split(s, group, folds, &kvt, &kv);
			for (f = 0; f < (uint32_t)folds && !rc; f++)
				if (g->n >= (p->min_items > 0 ? p->min_items : 20))
					rc = learned_fold(s, group, f, w, &lr);
		}
		free(kvt.u);
		repeat_mean(&letter, repeats);
		repeat_mean(&kv, repeats);
		repeat_mean(&lr, repeats);
		finish(g, &letter);
		finish(g, &kv);
		for (i = 0; i < 11; i++)
			finish(g, &r[i]);
		finish(g, &lr);
	}
	g->best = 0;
	for (i = 0; i < g->nsolvers; i++) {
		const struct audit_solver *x = &g->solvers[i];
		double margin = x->learned ? AUDIT_LEARNED_MARGIN : AUDIT_RULE_MARGIN;

		if (x->lo > g->solvers[g->best].lo)
			g->best = i;
		if (x->lo > g->chance + margin)
			g->flagged = true;
	}
	return rc;
}

/*
 * The groups on the cores, in parallel: a group reads and writes only its own
 * items (folds, features), so the report is the one a serial run gives.
 */
int audit_run(struct audit_set *s, const struct audit_params *p, struct audit_report *out)
{
	struct audit_group ag[SUBTASK_NGROUPS];
	int rcs[SUBTASK_NGROUPS] = { 0 }, g, rc = 0;

	memset(out, 0, sizeof(*out));
	out->folds = p->folds > 1 ? p->folds : 5;
	out->repeats = p->repeats > 0 ? p->repeats : AUDIT_REPEATS;
#pragma omp parallel
	{
		float *w = calloc(NFEAT, sizeof(*w)); /* zero: w_clear() keeps it so */

#pragma omp for schedule(dynamic, 1)
		for (g = 0; g < SUBTASK_NGROUPS; g++) {
			memset(&ag[g], 0, sizeof(ag[g]));
			rcs[g] = w ? audit_group(s, g, p, w, &ag[g]) : ENG_ENOMEM;
		}
		free(w);
	}
	for (g = 0; g < SUBTASK_NGROUPS && !rc; g++) {
		rc = rcs[g];
		if (!rc && ag[g].n)
			out->groups[out->ngroups++] = ag[g];
	}
	return rc;
}

/* Six decimals: a share's float noise (0.20000000000000148) is no figure. */
static double r6(double v)
{
	return round(v * 1e6) / 1e6;
}

cJSON *audit_report_json(const struct audit_report *r)
{
	cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "groups");
	int g, i;

	if (!o || !arr) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddNumberToObject(o, "rule_margin", AUDIT_RULE_MARGIN);
	cJSON_AddNumberToObject(o, "learned_margin", AUDIT_LEARNED_MARGIN);
	cJSON_AddNumberToObject(o, "folds", r->folds);
	cJSON_AddNumberToObject(o, "repeats", r->repeats);
	for (g = 0; g < r->ngroups; g++) {
		const struct audit_group *x = &r->groups[g];
		cJSON *go = cJSON_CreateObject(), *sv;
		char name[96];

		if (!go) {
			cJSON_Delete(o);
			return NULL;
		}
		cJSON_AddItemToArray(arr, go);
		subtask_group_name(x->group, name, sizeof(name));
		cJSON_AddStringToObject(go, "group", name);
		cJSON_AddNumberToObject(go, "n", (double)x->n);
		cJSON_AddNumberToObject(go, "options", x->options);
		cJSON_AddNumberToObject(go, "chance", r6(x->chance));
		cJSON_AddBoolToObject(go, "flagged", x->flagged);
		if (x->nsolvers)
			cJSON_AddStringToObject(go, "best", x->solvers[x->best].name);
		sv = cJSON_AddArrayToObject(go, "solvers");
		for (i = 0; sv && i < x->nsolvers; i++) {
			const struct audit_solver *s = &x->solvers[i];
			cJSON *so = cJSON_CreateObject();

			if (!so)
				break;
			cJSON_AddItemToArray(sv, so);
			cJSON_AddStringToObject(so, "name", s->name);
			cJSON_AddBoolToObject(so, "learned", s->learned);
			cJSON_AddNumberToObject(so, "n", (double)s->n);
			cJSON_AddNumberToObject(so, "accuracy", r6(s->acc));
			cJSON_AddNumberToObject(so, "lower_95", r6(s->lo));
			cJSON_AddNumberToObject(so, "upper_95", r6(s->hi));
		}
	}
	return o;
}
