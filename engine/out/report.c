/* SPDX-License-Identifier: MIT */
/*
 * The report of a QA set: counts, key distributions, letter balance,
 * z-scores, drops, the blind audit and the reviewers' figures as SVG
 * charts, one HTML page and report.json (report.h; docs/report.md).
 */
#include "report.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "store.h"
#include "subtask.h"
#include "svg.h"

#define ALL "all"
#define NO_NUM ((double)NAN)

/* ============================== Tallies ============================== */

/* A count per key, in the order keys were first seen (or seeded). */
struct tally_item {
	char *key;
	double n;
};

struct tally {
	struct tally_item *v;
	size_t n, cap;
	bool used;   /* some QA had the field */
};

static void tally_release(struct tally *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].key);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static struct tally_item *tally_find(const struct tally *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].key, key))
			return &t->v[i];
	return NULL;
}

/* Adds w to key's count (a new key goes last). Returns 0 or ENG_ENOMEM. */
static int tally_add(struct tally *t, const char *key, double w)
{
	struct tally_item *it = tally_find(t, key);

	if (it) {
		it->n += w;
		return 0;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct tally_item *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return ENG_ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n].key = strdup(key);
	if (!t->v[t->n].key)
		return ENG_ENOMEM;
	t->v[t->n++].n = w;
	return 0;
}

/* Marks t used and, the first time, seeds its keys with zero counts. */
static int tally_use(struct tally *t, const char *const *seed)
{
	int rc = 0;

	if (t->used)
		return 0;
	t->used = true;
	while (!rc && seed && *seed)
		rc = tally_add(t, *seed++, 0);
	return rc;
}

/* ============================== Fields ============================== */

/* The charts counted from each QA, in the order they are drawn. */
enum field {
	F_RECORDING = 0,
	F_DIRECTION,
	F_LEGS,
	F_TURN,
	F_DISTANCE,
	F_VERTICAL,
	F_HAND,
	F_VERB,
	F_RELATION,
	F_OBJECT,
	F_REFERENCE,
	F_CHAIN_LENGTH,
	F_EDGES,
	F_Z,
	F_N
};

/* How a chart orders its keys. */
enum order {
	ORDER_SEED = 0, /* the seeded keys in their order, others after them as seen */
	ORDER_COUNT,    /* largest count first, then by key; REPORT_TOP and "other" */
	ORDER_NUMBER    /* by the key's number */
};

static const char *const sectors[] = {
	"front", "front-left", "left", "back-left", "back", "back-right", "right", "front-right",
	NULL
};
static const char *const turn_bins[] = {
	"right 135-165", "right 90-130", "right 45-85", "right 15-40", "forward",
	"left 15-40", "left 45-85", "left 90-130", "left 135-165", "around", NULL
};
static const char *const dist_bins[] = {
	"<0.25", "0.25-0.5", "0.5-1", "1-2", "2-4", "4-8", ">=8", NULL
};
static const char *const verticals[] = { "down", "level", "up", NULL };
static const char *const hands[] = { "left", "right", "both", "none", NULL };
static const char *const relations[] = {
	"left_of", "right_of", "in_front_of", "behind", "near", NULL
};
static const char *const edge_letters[] = { "A", "B", "C", "D", "E", "F", "G", "H", NULL };
static const char *const z_bins[] = {
	"<-2", "[-2,-1.5)", "[-1.5,-1)", "[-1,-0.5)", "[-0.5,0)", "[0,0.5)", "[0.5,1)",
	"[1,1.5)", "[1.5,2)", ">=2", NULL
};

/* The statuses in the order the status chart draws them. */
static const char *const statuses[] = {
	"pending", "approved", "edited", "conflict", "rejected", "dropped", "superseded", NULL
};

static const struct field_spec {
	const char *plot;          /* the chart's name */
	const char *what;          /* its title after the scope */
	enum svg_kind kind;
	enum order order;
	const char *const *seed;   /* keys always drawn, in order (NULL: none) */
	const char *subtitle;      /* a fixed second line, or NULL */
} fields[F_N] = {
	[F_RECORDING] = { "recordings", "QAs by recording", SVG_BARS, ORDER_COUNT, NULL, NULL },
	[F_DIRECTION] = { "direction", "key directions (8 BEV sectors)", SVG_POLAR, ORDER_SEED,
			  sectors, "answer_json direction; the area of a sector follows its count" },
	[F_LEGS] = { "legs", "route legs (8 BEV sectors, every leg)", SVG_POLAR, ORDER_SEED,
		     sectors, "answer_json legs, each relative to the heading after the previous one" },
	[F_TURN] = { "turn", "turn magnitudes (yaw bins, degrees)", SVG_COLUMNS, ORDER_SEED,
		     turn_bins, "answer_json yaw_deg: forward |yaw| < 15, around |yaw| > 165" },
	[F_DISTANCE] = { "distance", "distances (m)", SVG_COLUMNS, ORDER_SEED, dist_bins,
			 "answer_json distance_m, in bins a factor 2 apart" },
	[F_VERTICAL] = { "vertical", "vertical classes", SVG_BARS, ORDER_SEED, verticals, NULL },
	[F_HAND] = { "hand", "hands", SVG_BARS, ORDER_SEED, hands,
		     "none: the hand is not asked" },
	[F_VERB] = { "verb", "verbs", SVG_BARS, ORDER_COUNT, NULL, NULL },
	[F_RELATION] = { "relation", "relations to the reference", SVG_BARS, ORDER_SEED,
			 relations, NULL },
	[F_OBJECT] = { "object", "key objects", SVG_BARS, ORDER_COUNT, NULL, NULL },
	[F_REFERENCE] = { "reference", "reference objects", SVG_BARS, ORDER_COUNT, NULL, NULL },
	[F_CHAIN_LENGTH] = { "chain_length", "chain lengths (actions)", SVG_COLUMNS,
			     ORDER_NUMBER, NULL, NULL },
	[F_EDGES] = { "edges", "chain edge letters", SVG_COLUMNS, ORDER_SEED, edge_letters,
		      "A right, B left, C front, D back, E front-right, F front-left, "
		      "G back-left, H back-right" },
	[F_Z] = { "z", "option-length z-scores", SVG_COLUMNS, ORDER_SEED, z_bins, NULL },
};

/* ============================== Scopes ============================== */

/* The figures of one group, or of all of them ("all"). */
struct scope {
	char *name;          /* "all" or "CATEGORY.SUBTASK/METRIC" */
	char *file;          /* its part of file names: "all", "intention.head_turn.approx" */
	int order;           /* -1 all, the subtask group index, SUBTASK_NGROUPS for others */
	size_t n;            /* QAs added */
	struct tally f[F_N];
	int64_t letters[REPORT_MAX_OPTIONS + 1][REPORT_MAX_OPTIONS];
	double z_sum;
	size_t z_n;
};

/* One chart and its values (owned strings). */
struct plot {
	char *name, *scope, *title, *subtitle, *file;
	const char *plot;
	struct svg_plot svg;      /* values point into vals */
	struct svg_value *vals;
	size_t nvals, capvals;
	char **owned;             /* keys and notes of vals */
	size_t nowned, capowned;
	cJSON *extra;             /* more figures for report.json (chi2, ...), or NULL */
};

struct report {
	struct scope **scopes;
	size_t nscopes, capscopes;
	size_t added, unreadable;
	bool finished;
	cJSON *stats, *audit;     /* copies, or NULL */
	char *title, *store, *status, *tasks, *engine_version;
	char created_at[96];
	struct plot *plots;
	size_t nplots, capplots;
};

static void scope_free(struct scope *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < F_N; i++)
		tally_release(&s->f[i]);
	free(s->name);
	free(s->file);
	free(s);
}

/* The file-name form of a scope: '/' becomes '.', anything unusual '_'. */
static char *file_token(const char *name)
{
	char *t = strdup(name);
	char *p;

	for (p = t; p && *p; p++) {
		if (*p == '/')
			*p = '.';
		else if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			   (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			*p = '_';
	}
	if (t && (!*t || *t == '.'))
		*t = '_';
	return t;
}

/* The scope called name, made when missing. NULL when out of memory. */
static struct scope *scope_get(struct report *r, const char *name)
{
	struct scope *s;
	size_t i;

	for (i = 0; i < r->nscopes; i++)
		if (!strcmp(r->scopes[i]->name, name))
			return r->scopes[i];
	if (r->nscopes == r->capscopes) {
		size_t cap = r->capscopes ? 2 * r->capscopes : 16;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct scope **v = realloc(r->scopes, cap * sizeof(*v));

		if (!v)
			return NULL;
		r->scopes = v;
		r->capscopes = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->name = strdup(name);
	s->file = file_token(name);
	if (!s->name || !s->file) {
		scope_free(s);
		return NULL;
	}
	if (!strcmp(name, ALL)) {
		s->order = -1;
	} else {
		int g = subtask_group_from_name(name);

		s->order = g >= 0 ? g : SUBTASK_NGROUPS;
	}
	r->scopes[r->nscopes++] = s;
	return s;
}

int report_new(struct report **out)
{
	struct report *r = calloc(1, sizeof(*r));

	if (!r)
		return ENG_ENOMEM;
	if (!scope_get(r, ALL)) {
		report_free(r);
		return ENG_ENOMEM;
	}
	*out = r;
	return 0;
}

static void plot_release(struct plot *p)
{
	size_t i;

	for (i = 0; i < p->nowned; i++)
		free(p->owned[i]);
	free(p->owned);
	free(p->vals);
	free(p->name);
	free(p->scope);
	free(p->title);
	free(p->subtitle);
	free(p->file);
	cJSON_Delete(p->extra);
}

void report_free(struct report *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nscopes; i++)
		scope_free(r->scopes[i]);
	free(r->scopes);
	for (i = 0; i < r->nplots; i++)
		plot_release(&r->plots[i]);
	free(r->plots);
	cJSON_Delete(r->stats);
	cJSON_Delete(r->audit);
	free(r->title);
	free(r->store);
	free(r->status);
	free(r->tasks);
	free(r->engine_version);
	free(r);
}

size_t report_qas(const struct report *r)
{
	return r ? r->added : 0;
}

size_t report_unreadable(const struct report *r)
{
	return r ? r->unreadable : 0;
}

/* ============================== Counting a QA ============================== */

/* The key of a turn: docs/report.md, Charts. */
static const char *turn_bin(double yaw)
{
	double a = fabs(yaw);
	int left = yaw > 0;

	if (a < 15)
		return "forward";
	if (a > 165)
		return "around";
	if (a < 45)
		return left ? "left 15-40" : "right 15-40";
	if (a < 90)
		return left ? "left 45-85" : "right 45-85";
	if (a < 135)
		return left ? "left 90-130" : "right 90-130";
	return left ? "left 135-165" : "right 135-165";
}

static const char *dist_bin(double d)
{
	int i;

	for (i = 0; i < 6; i++)
		if (d < 0.25 * (double)(1 << i))
			return dist_bins[i];
	return dist_bins[6];
}

static const char *z_bin(double z)
{
	if (z < -2)
		return z_bins[0];
	if (z >= 2)
		return z_bins[9];
	return z_bins[1 + (int)floor((z + 2) / 0.5)];
}

/* Counts key under field f in both scopes; polar keys must be sectors. */
static int count2(struct scope *const s[2], enum field f, const char *key, size_t *bad)
{
	int rc = 0, i;

	if (fields[f].kind == SVG_POLAR) {
		const char *const *k;

		for (k = sectors; *k && strcmp(*k, key); k++)
			;
		if (!*k) {
			(*bad)++;
			return 0;
		}
	}
	for (i = 0; !rc && i < 2; i++) {
		rc = tally_use(&s[i]->f[f], fields[f].seed);
		rc = rc ? rc : tally_add(&s[i]->f[f], key, 1);
	}
	return rc;
}

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* Counts the string member key of a under field f, when it has one. */
static int count_str(struct scope *const s[2], enum field f, const cJSON *a, const char *key,
		     size_t *bad)
{
	const char *t = jstr(a, key);

	return t ? count2(s, f, t, bad) : 0;
}

/* Counts each string of the array member key of a under field f. */
static int count_list(struct scope *const s[2], enum field f, const cJSON *a, const char *key,
		      size_t *bad)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key), *e;
	const cJSON *list = cJSON_IsArray(v) ? v : NULL;
	int rc = 0;

	cJSON_ArrayForEach(e, list)
		if (!rc && cJSON_IsString(e))
			rc = count2(s, f, e->valuestring, bad);
	return rc;
}

/* The finite number member key of a, or NO_NUM. */
static double jfinite(const cJSON *a, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);

	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NO_NUM;
}

/* The fields of a structured answer (docs/answers.md section 1). */
static int count_answer(struct scope *const s[2], const cJSON *a, size_t *bad)
{
	const cJSON *v, *chain = cJSON_GetObjectItemCaseSensitive(a, "chain");
	double x;
	char b[32];
	int rc;

	if (cJSON_IsObject(chain)) /* a chain's answer: {"correct_answer", "chain": {...}, ...} */
		a = chain;
	rc = count_str(s, F_DIRECTION, a, "direction", bad);
	rc = rc ? rc : count_list(s, F_LEGS, a, "legs", bad);
	x = jfinite(a, "yaw_deg");
	if (!rc && isfinite(x))
		rc = count2(s, F_TURN, turn_bin(x), bad);
	x = jfinite(a, "distance_m");
	if (!rc && isfinite(x))
		rc = count2(s, F_DISTANCE, dist_bin(x), bad);
	if (!rc && jstr(a, "vertical")) {
		/* the interaction's approx answer: no hand means the hand is not asked */
		rc = count_str(s, F_VERTICAL, a, "vertical", bad);
		rc = rc ? rc : count2(s, F_HAND, jstr(a, "hand") ? jstr(a, "hand") : "none", bad);
	} else if (!rc) {
		rc = count_str(s, F_HAND, a, "hand", bad);
	}
	rc = rc ? rc : count_str(s, F_VERB, a, "verb", bad);
	rc = rc ? rc : count_str(s, F_RELATION, a, "relation", bad);
	rc = rc ? rc : count_str(s, F_OBJECT, a, "object", bad);
	rc = rc ? rc : count_str(s, F_REFERENCE, a, "reference", bad);
	v = cJSON_GetObjectItemCaseSensitive(a, "nodes");
	if (!rc && cJSON_IsArray(v)) {
		snprintf(b, sizeof(b), "%d", cJSON_GetArraySize(v));
		rc = count2(s, F_CHAIN_LENGTH, b, bad);
	}
	return rc ? rc : count_list(s, F_EDGES, a, "edges", bad);
}

int report_add_qa(struct report *r, const struct store_qa *qa)
{
	struct scope *s[2];
	cJSON *a = NULL, *q = NULL, *o = NULL;
	const cJSON *z;
	char name[256];
	size_t bad = 0;
	int rc = 0, i, k;

	if (!r || r->finished)
		return err_set(ENG_EINVAL, "report: the report is finished");
	if (!qa || !qa->category || !qa->subtask || !qa->metric)
		return err_set(ENG_EINVAL, "report: qa '%s': no category, sub-task or metric",
			       qa && qa->id ? qa->id : "?");
	snprintf(name, sizeof(name), "%s.%s/%s", qa->category, qa->subtask, qa->metric);
	s[0] = scope_get(r, ALL);
	s[1] = scope_get(r, name);
	if (!s[0] || !s[1])
		return ENG_ENOMEM;
	r->added++;
	for (i = 0; !rc && i < 2; i++) {
		s[i]->n++;
		rc = tally_use(&s[i]->f[F_RECORDING], NULL);
		rc = rc ? rc : tally_add(&s[i]->f[F_RECORDING],
					 qa->recording_id ? qa->recording_id : "?", 1);
	}
	if (rc)
		return ENG_ENOMEM;
	o = qa->options_json ? cJSON_Parse(qa->options_json) : NULL;
	k = cJSON_IsArray(o) ? cJSON_GetArraySize(o) : 0;
	if (qa->answer_index >= 0 && k >= 2 && k <= REPORT_MAX_OPTIONS && qa->answer_index < k)
		for (i = 0; i < 2; i++)
			s[i]->letters[k][qa->answer_index]++;
	q = qa->qc_json ? cJSON_Parse(qa->qc_json) : NULL;
	z = cJSON_GetObjectItemCaseSensitive(q, "z");
	if (cJSON_IsNumber(z) && isfinite(z->valuedouble)) {
		for (i = 0; !rc && i < 2; i++) {
			s[i]->z_sum += z->valuedouble;
			s[i]->z_n++;
			rc = tally_use(&s[i]->f[F_Z], fields[F_Z].seed);
			rc = rc ? rc : tally_add(&s[i]->f[F_Z], z_bin(z->valuedouble), 1);
		}
	}
	a = qa->answer_json ? cJSON_Parse(qa->answer_json) : NULL;
	if (!rc && cJSON_IsObject(a))
		rc = count_answer(s, a, &bad);
	else if (!rc)
		bad++;
	if (bad)
		r->unreadable++;
	cJSON_Delete(a);
	cJSON_Delete(q);
	cJSON_Delete(o);
	return rc;
}

/* ============================== Charts ============================== */

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *dupf(const char *fmt, ...)
{
	struct buf b;
	va_list ap;
	int rc;

	buf_init(&b, 1u << 16);
	va_start(ap, fmt);
	rc = buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (rc || !b.ptr) {
		buf_release(&b);
		return rc ? NULL : strdup("");
	}
	return buf_detach(&b);
}

/* A string the chart owns (a copy of s). NULL when out of memory. */
static const char *plot_own(struct plot *p, const char *s)
{
	char *c;

	if (p->nowned == p->capowned) {
		size_t cap = p->capowned ? 2 * p->capowned : 16;
		char **v = realloc(p->owned, cap * sizeof(*v));

		if (!v)
			return NULL;
		p->owned = v;
		p->capowned = cap;
	}
	c = strdup(s);
	if (c)
		p->owned[p->nowned++] = c;
	return c;
}

/* Appends a value; the key is copied. NULL when out of memory. */
static struct svg_value *plot_val(struct plot *p, const char *key, double value)
{
	struct svg_value *v;

	if (p->nvals == p->capvals) {
		size_t cap = p->capvals ? 2 * p->capvals : 8;

		v = realloc(p->vals, cap * sizeof(*v));
		if (!v)
			return NULL;
		p->vals = v;
		p->capvals = cap;
	}
	v = &p->vals[p->nvals];
	memset(v, 0, sizeof(*v));
	v->key = plot_own(p, key);
	if (!v->key)
		return NULL;
	v->value = value;
	p->nvals++;
	return v;
}

/* A new chart of scope s; title is "<scope label>: <what>". NULL when out of memory. */
static struct plot *plot_new(struct report *r, const struct scope *s, const char *plot,
			     enum svg_kind kind, const char *what)
{
	struct plot *p;
	size_t i;
	int dup = 1;

	if (r->nplots == r->capplots) {
		size_t cap = r->capplots ? 2 * r->capplots : 64;

		p = realloc(r->plots, cap * sizeof(*p));
		if (!p)
			return NULL;
		r->plots = p;
		r->capplots = cap;
	}
	p = &r->plots[r->nplots];
	memset(p, 0, sizeof(*p));
	r->nplots++; /* counted now so that report_free() releases it */
	p->plot = plot_own(p, plot);
	p->scope = strdup(s->name);
	p->name = dupf("%s.%s", s->file, plot);
	/* two odd group names may map to one file name: number the later ones */
	for (i = 0; p->name && i + 1 < r->nplots; i++) {
		if (strcmp(r->plots[i].name, p->name))
			continue;
		free(p->name);
		p->name = dupf("%s-%d.%s", s->file, ++dup, plot);
		i = (size_t)-1;
	}
	p->title = dupf("%s: %s", s->order < 0 ? "All groups" : s->name, what);
	p->file = p->name ? dupf("%s.svg", p->name) : NULL;
	if (!p->plot || !p->scope || !p->name || !p->title || !p->file)
		return NULL;
	p->svg.kind = kind;
	return p;
}

static int cmp_count(const void *a, const void *b)
{
	const struct tally_item *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->key, y->key);
}

static int cmp_number(const void *a, const void *b)
{
	const struct tally_item *x = a, *y = b;
	double u = strtod(x->key, NULL), v = strtod(y->key, NULL);

	return (u > v) - (u < v);
}

/* The chart of one counted field. */
static int field_plot(struct report *r, const struct scope *s, enum field f)
{
	const struct field_spec *fs = &fields[f];
	const struct tally *t = &s->f[f];
	struct tally_item *v = NULL;
	struct plot *p;
	double total = 0, other = 0;
	size_t i, n = t->n, nother = 0;
	int rc = 0;

	if (!t->used)
		return 0;
	if (fs->kind == SVG_POLAR && n > 8)
		n = 8; /* only the 8 seeded sectors are counted */
	v = malloc((t->n ? t->n : 1) * sizeof(*v));
	if (!v)
		return ENG_ENOMEM;
	if (t->n)
		memcpy(v, t->v, t->n * sizeof(*v));
	if (fs->order == ORDER_COUNT && t->n)
		qsort(v, t->n, sizeof(*v), cmp_count);
	else if (fs->order == ORDER_NUMBER && t->n)
		qsort(v, t->n, sizeof(*v), cmp_number);
	p = plot_new(r, s, fs->plot, fs->kind, fs->what);
	if (!p) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < t->n; i++)
		total += v[i].n;
	for (i = 0; !rc && i < n; i++) {
		if (fs->order == ORDER_COUNT && i >= REPORT_TOP) {
			other += v[i].n;
			nother++;
			continue;
		}
		if (!plot_val(p, v[i].key, v[i].n))
			rc = ENG_ENOMEM;
	}
	if (!rc && nother) {
		char key[64];

		snprintf(key, sizeof(key), "other (%zu more)", nother);
		if (!plot_val(p, key, other))
			rc = ENG_ENOMEM;
	}
	if (!rc) {
		p->subtitle = fs->subtitle ? dupf("%.0f values from %zu QAs; %s", total, s->n,
						  fs->subtitle)
					   : dupf("%.0f values from %zu QAs", total, s->n);
		if (!p->subtitle)
			rc = ENG_ENOMEM;
	}
	if (!rc && f == F_Z && s->z_n) {
		free(p->subtitle);
		p->subtitle = dupf("qc_json z of %zu QAs, mean %.3f; QC keeps |z| <= 1.5", s->z_n,
				   s->z_sum / (double)s->z_n);
		p->extra = cJSON_CreateObject();
		if (!p->subtitle || !p->extra ||
		    !cJSON_AddNumberToObject(p->extra, "mean", s->z_sum / (double)s->z_n) ||
		    !cJSON_AddNumberToObject(p->extra, "n", (double)s->z_n))
			rc = ENG_ENOMEM;
	}
out:
	free(v);
	return rc;
}

/* The answer letters over k options, against a uniform answer. */
static int letters_plot(struct report *r, const struct scope *s, int k)
{
	const int64_t *c = s->letters[k];
	struct plot *p;
	char plot[32], what[64], key[2] = "A";
	double n = 0, chi2 = 0, e, pv;
	int i;

	for (i = 0; i < k; i++)
		n += (double)c[i];
	if (n == 0)
		return 0;
	e = n / k;
	for (i = 0; i < k; i++)
		chi2 += ((double)c[i] - e) * ((double)c[i] - e) / e;
	pv = store_chi2_sf(chi2, k - 1);
	snprintf(plot, sizeof(plot), "letters-%d", k);
	snprintf(what, sizeof(what), "answer letters (%d options)", k);
	p = plot_new(r, s, plot, SVG_BARS, what);
	if (!p)
		return ENG_ENOMEM;
	for (i = 0; i < k; i++) {
		key[0] = (char)('A' + i);
		if (!plot_val(p, key, (double)c[i]))
			return ENG_ENOMEM;
	}
	p->svg.has_ref = true;
	p->svg.ref = e;
	p->svg.ref_label = "uniform";
	p->subtitle = dupf("%.0f QAs; chi-square %.2f, df %d, p %.4g (against uniform)", n, chi2,
			   k - 1, pv);
	p->extra = cJSON_CreateObject();
	if (!p->subtitle || !p->extra ||
	    !cJSON_AddNumberToObject(p->extra, "options", k) ||
	    !cJSON_AddNumberToObject(p->extra, "n", n) ||
	    !cJSON_AddNumberToObject(p->extra, "expected", e) ||
	    !cJSON_AddNumberToObject(p->extra, "chi2", chi2) ||
	    !cJSON_AddNumberToObject(p->extra, "df", k - 1) ||
	    !(isfinite(pv) ? cJSON_AddNumberToObject(p->extra, "p", pv)
			   : cJSON_AddNullToObject(p->extra, "p")))
		return ENG_ENOMEM;
	return 0;
}

static double jnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : NO_NUM;
}

/* The store's counts by status of the scope (every status, not only the chosen ones). */
static int status_plot(struct report *r, const struct scope *s)
{
	const cJSON *src;
	const char *const *st;
	struct plot *p;
	double total = 0;

	if (!r->stats)
		return 0;
	src = s->order < 0 ? cJSON_GetObjectItemCaseSensitive(r->stats, "by_status")
			   : cJSON_GetObjectItemCaseSensitive(
				     cJSON_GetObjectItemCaseSensitive(r->stats, "groups"), s->name);
	if (!cJSON_IsObject(src))
		return 0;
	p = plot_new(r, s, "status", SVG_BARS, "QAs by status");
	if (!p)
		return ENG_ENOMEM;
	for (st = statuses; *st; st++) {
		double v = jnum(src, *st);

		if (!isfinite(v))
			v = 0;
		total += v;
		if (!plot_val(p, *st, v))
			return ENG_ENOMEM;
	}
	p->subtitle = dupf("%.0f QAs in the store, every status; %zu of them chosen (%s)", total,
			   s->n, r->status ? r->status : REPORT_DEFAULT_STATUS);
	return p->subtitle ? 0 : ENG_ENOMEM;
}

/* The drop reasons: store-wide for all, the group's own for a group. */
static int drops_plot(struct report *r, const struct scope *s)
{
	const cJSON *src, *e;
	struct tally t;
	struct plot *p;
	double total = 0;
	size_t i;
	int rc = 0;

	if (!r->stats)
		return 0;
	src = s->order < 0
		? cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r->stats, "drops"),
						   "by_reason")
		: cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
			  cJSON_GetObjectItemCaseSensitive(r->stats, "groups"), s->name), "drop_reasons");
	memset(&t, 0, sizeof(t));
	if (!cJSON_IsObject(src))
		return 0;
	cJSON_ArrayForEach(e, src)
		if (!rc && cJSON_IsNumber(e) && e->valuedouble > 0 && e->string) {
			rc = tally_add(&t, e->string, e->valuedouble);
			total += e->valuedouble;
		}
	if (rc || !t.n)
		goto out;
	qsort(t.v, t.n, sizeof(*t.v), cmp_count);
	p = plot_new(r, s, "drops", SVG_BARS, "dropped candidates by reason");
	for (i = 0; p && i < t.n; i++)
		if (!plot_val(p, t.v[i].key, t.v[i].n))
			p = NULL;
	if (p)
		p->subtitle = dupf("%.0f candidates dropped (the drops table, counted once each)", total);
	if (!p || !p->subtitle)
		rc = ENG_ENOMEM;
out:
	tally_release(&t);
	return rc;
}

/* A solver's accuracy with its interval and the group's chance. */
static struct svg_value *audit_val(struct plot *p, const char *key, const cJSON *solver,
				   double chance)
{
	struct svg_value *v = plot_val(p, key, jnum(solver, "accuracy"));

	if (!v)
		return NULL;
	v->has_interval = true;
	v->lo = jnum(solver, "lower_95");
	v->hi = jnum(solver, "upper_95");
	v->has_ref = true;
	v->ref = chance;
	return v;
}

/* The audit group object of a scope, or NULL. */
static const cJSON *audit_group(const struct report *r, const char *name)
{
	const cJSON *g;

	if (!r->audit)
		return NULL;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(r->audit, "groups")) {
		const char *n = jstr(g, "group");

		if (n && !strcmp(n, name))
			return g;
	}
	return NULL;
}

/* The blind audit: every solver of a group; the best solver of each group for all. */
static int audit_plot(struct report *r, const struct scope *s)
{
	const cJSON *g, *sv, *groups;
	struct plot *p;
	size_t n = 0;

	if (!r->audit)
		return 0;
	if (s->order >= 0) {
		g = audit_group(r, s->name);
		if (!g || !cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(g, "solvers")))
			return 0; /* too few QAs for any solver */
		p = plot_new(r, s, "audit", SVG_BARS,
			     "blind solvers' accuracy, 95% interval, against chance");
		if (!p)
			return ENG_ENOMEM;
		cJSON_ArrayForEach(sv, cJSON_GetObjectItemCaseSensitive(g, "solvers")) {
			struct svg_value *v = audit_val(p, jstr(sv, "name") ? jstr(sv, "name") : "?", sv,
							jnum(g, "chance"));

			if (!v)
				return ENG_ENOMEM;
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sv, "learned")))
				v->note = "learned";
		}
		p->svg.format = SVG_SHARE;
		p->svg.max = 1;
		p->svg.has_ref = true;
		p->svg.ref = jnum(g, "chance");
		p->svg.ref_label = "chance";
		p->subtitle = dupf("%.0f QAs, %.1f options, chance %.1f%%, best %s%s", jnum(g, "n"),
				   jnum(g, "options"), 100 * jnum(g, "chance"),
				   jstr(g, "best") ? jstr(g, "best") : "-",
				   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "flagged"))
					   ? "; FLAGGED: a solver is over the gate" : "");
		return p->subtitle ? 0 : ENG_ENOMEM;
	}
	groups = cJSON_GetObjectItemCaseSensitive(r->audit, "groups");
	cJSON_ArrayForEach(g, groups)
		if (jstr(g, "best"))
			n++;
	if (!n)
		return 0;
	n = 0;
	p = plot_new(r, s, "audit", SVG_BARS, "best blind solver per group, against chance");
	if (!p)
		return ENG_ENOMEM;
	cJSON_ArrayForEach(g, groups) {
		const char *best = jstr(g, "best");
		const cJSON *b = NULL;
		struct svg_value *v;

		cJSON_ArrayForEach(sv, cJSON_GetObjectItemCaseSensitive(g, "solvers"))
			if (best && jstr(sv, "name") && !strcmp(jstr(sv, "name"), best))
				b = sv;
		if (!b)
			continue; /* too few QAs for any solver */
		v = audit_val(p, jstr(g, "group") ? jstr(g, "group") : "?", b, jnum(g, "chance"));
		if (!v || !(v->note = plot_own(p, best ? best : "no solver")))
			return ENG_ENOMEM;
		n++;
	}
	p->svg.format = SVG_SHARE;
	p->svg.max = 1;
	p->subtitle = dupf("%zu groups; the tick is each group's chance; the whiskers the 95%% "
			   "interval", n);
	return p->subtitle ? 0 : ENG_ENOMEM;
}

/* The reviewers' figures (all only): acceptance by group, items, times, kappa. */
static int review_plots(struct report *r, const struct scope *s)
{
	const cJSON *groups, *g, *rv, *who, *e;
	struct plot *p = NULL;
	size_t i;

	if (!r->stats)
		return 0;
	groups = cJSON_GetObjectItemCaseSensitive(r->stats, "groups");
	rv = cJSON_GetObjectItemCaseSensitive(r->stats, "reviews");
	/* acceptance, in the scopes' order */
	for (i = 0; i < r->nscopes; i++) {
		const struct scope *x = r->scopes[i];
		double a;

		g = cJSON_GetObjectItemCaseSensitive(groups, x->name);
		a = jnum(g, "acceptance");
		if (x->order < 0 || !isfinite(a))
			continue;
		if (!p && !(p = plot_new(r, s, "acceptance", SVG_BARS,
					 "reviewer acceptance by group")))
			return ENG_ENOMEM;
		if (!plot_val(p, x->name, a))
			return ENG_ENOMEM;
	}
	if (p) {
		p->svg.format = SVG_SHARE;
		p->svg.max = 1;
		p->subtitle = dupf("(approved + edited) / (approved + edited + rejected); overall %.0f%%",
				   100 * jnum(rv, "acceptance"));
		if (!p->subtitle)
			return ENG_ENOMEM;
	}
	who = cJSON_GetObjectItemCaseSensitive(rv, "reviewers");
	if (cJSON_GetArraySize(who) > 0) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(rv, "blind");

		p = plot_new(r, s, "reviewers", SVG_BARS, "items reviewed per reviewer");
		if (!p)
			return ENG_ENOMEM;
		cJSON_ArrayForEach(e, who)
			if (!plot_val(p, e->string ? e->string : "?", jnum(e, "items")))
				return ENG_ENOMEM;
		p->subtitle = dupf("%.0f reviews; blind answers %.0f, %.0f agree with the key", jnum(rv, "total"),
				   jnum(b, "n"), jnum(b, "agree"));
		if (!p->subtitle)
			return ENG_ENOMEM;
		p = NULL;
		cJSON_ArrayForEach(e, who) {
			double ms = jnum(e, "median_time_ms");

			if (!isfinite(ms))
				continue;
			if (!p && !(p = plot_new(r, s, "review_time", SVG_BARS,
						 "median time per item (s)")))
				return ENG_ENOMEM;
			if (!plot_val(p, e->string ? e->string : "?", ms / 1000.0))
				return ENG_ENOMEM;
		}
		if (p) {
			p->svg.format = SVG_NUMBER;
			p->subtitle = dupf("decided - shown, per reviewer; overall median %.1f s",
					   jnum(rv, "median_time_ms") / 1000.0);
			if (!p->subtitle)
				return ENG_ENOMEM;
		}
	}
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rv, "kappa")) > 0) {
		p = plot_new(r, s, "kappa", SVG_BARS, "agreement between reviewers (Cohen's kappa)");
		if (!p)
			return ENG_ENOMEM;
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(rv, "kappa")) {
			char key[300];

			snprintf(key, sizeof(key), "%s / %s", jstr(e, "a") ? jstr(e, "a") : "?",
				 jstr(e, "b") ? jstr(e, "b") : "?");
			if (!plot_val(p, key, jnum(e, "kappa")))
				return ENG_ENOMEM;
		}
		p->svg.format = SVG_NUMBER;
		p->svg.max = 1;
		p->subtitle = dupf("accept vs reject over the items both decided; below 0 draws no bar");
		if (!p->subtitle)
			return ENG_ENOMEM;
	}
	return 0;
}

static int cmp_scope(const void *a, const void *b)
{
	const struct scope *x = *(struct scope *const *)a, *y = *(struct scope *const *)b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int scope_plots(struct report *r, const struct scope *s)
{
	int rc = status_plot(r, s), k, f;

	for (f = F_RECORDING; !rc && f <= F_RECORDING; f++)
		rc = field_plot(r, s, (enum field)f);
	for (k = 2; !rc && k <= REPORT_MAX_OPTIONS; k++)
		rc = letters_plot(r, s, k);
	rc = rc ? rc : field_plot(r, s, F_Z);
	for (f = F_DIRECTION; !rc && f < F_Z; f++)
		rc = field_plot(r, s, (enum field)f);
	rc = rc ? rc : drops_plot(r, s);
	rc = rc ? rc : audit_plot(r, s);
	if (!rc && s->order < 0)
		rc = review_plots(r, s);
	return rc;
}

/* Copies s into *dst (NULL stays NULL). Returns 0 or ENG_ENOMEM. */
static int set_str(char **dst, const char *s)
{
	*dst = s ? strdup(s) : NULL;
	return s && !*dst ? ENG_ENOMEM : 0;
}

static void now_iso(char *out, size_t size)
{
	struct timespec ts;
	struct tm tm;
	char b[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, size, "%s.%03dZ", b, (int)(ts.tv_nsec / 1000000));
}

int report_finish(struct report *r, const struct report_info *info,
		  const struct cJSON *stats, const struct cJSON *audit)
{
	const cJSON *g, *groups;
	size_t i;
	int rc = 0;

	if (!r || r->finished)
		return err_set(ENG_EINVAL, "report: the report is finished");
	r->finished = true;
	if (info) {
		rc = set_str(&r->title, info->title);
		rc = rc ? rc : set_str(&r->store, info->store);
		rc = rc ? rc : set_str(&r->status, info->status);
		rc = rc ? rc : set_str(&r->tasks, info->tasks);
		rc = rc ? rc : set_str(&r->engine_version, info->engine_version);
	}
	now_iso(r->created_at, sizeof(r->created_at));
	if (!rc && stats && !(r->stats = cJSON_Duplicate(stats, 1)))
		rc = ENG_ENOMEM;
	if (!rc && audit && !(r->audit = cJSON_Duplicate(audit, 1)))
		rc = ENG_ENOMEM;
	/* the store's groups that hold QAs or drops get their charts too */
	groups = r->stats ? cJSON_GetObjectItemCaseSensitive(r->stats, "groups") : NULL;
	cJSON_ArrayForEach(g, groups)
		if (!rc && g->string && (jnum(g, "total") > 0 || jnum(g, "drops") > 0) &&
		    !scope_get(r, g->string))
			rc = ENG_ENOMEM;
	if (rc)
		return rc;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	qsort(r->scopes, r->nscopes, sizeof(*r->scopes), cmp_scope);
	for (i = 0; !rc && i < r->nscopes; i++)
		rc = scope_plots(r, r->scopes[i]);
	for (i = 0; i < r->nplots; i++) {
		struct plot *p = &r->plots[i];

		p->svg.name = p->name;
		p->svg.title = p->title;
		p->svg.subtitle = p->subtitle;
		p->svg.values = p->vals;
		p->svg.n = p->nvals;
	}
	return rc;
}

/* Collects the QAs of a store for report_build(). */
static int on_qa(const struct store_qa *qa, void *ctx)
{
	return report_add_qa(ctx, qa);
}

int report_build(struct store *st, const char *status, const struct report_info *info,
		 const struct cJSON *audit, struct report **out)
{
	struct store_filter flt;
	struct report_info in;
	struct report *r = NULL;
	cJSON *stats = NULL;
	int rc;

	if (!status)
		status = REPORT_DEFAULT_STATUS;
	rc = store_status_list_check(status);
	if (rc)
		return rc;
	rc = report_new(&r);
	if (rc)
		return rc;
	memset(&flt, 0, sizeof(flt));
	flt.status = status;
	rc = store_qa_iter(st, &flt, 0, on_qa, r);
	rc = rc ? rc : store_stats(st, &stats);
	if (!rc) {
		if (info)
			in = *info;
		else
			memset(&in, 0, sizeof(in));
		if (!in.status)
			in.status = status;
		if (!in.store)
			in.store = store_path(st);
		rc = report_finish(r, &in, stats, audit);
	}
	cJSON_Delete(stats);
	if (rc) {
		report_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* ============================== Access ============================== */

size_t report_nplots(const struct report *r)
{
	return r && r->finished ? r->nplots : 0;
}

int report_plot(const struct report *r, size_t i, struct report_plot_info *out)
{
	const struct plot *p;

	if (i >= report_nplots(r))
		return err_set(ENG_EINVAL, "report: no chart %zu", i);
	p = &r->plots[i];
	out->name = p->name;
	out->scope = p->scope;
	out->plot = p->plot;
	out->title = p->title;
	out->file = p->file;
	out->values = p->nvals;
	return 0;
}

long report_plot_find(const struct report *r, const char *name)
{
	size_t i;

	for (i = 0; name && i < report_nplots(r); i++)
		if (!strcmp(r->plots[i].name, name))
			return (long)i;
	return -1;
}

int report_plot_svg(const struct report *r, size_t i, struct buf *out)
{
	if (i >= report_nplots(r))
		return err_set(ENG_EINVAL, "report: no chart %zu", i);
	return svg_render(&r->plots[i].svg, out);
}

/* ============================== report.json ============================== */

static const char *kind_name(enum svg_kind k)
{
	return k == SVG_POLAR ? "polar" : k == SVG_COLUMNS ? "columns" : "bars";
}

static const char *format_name(enum svg_format f)
{
	return f == SVG_SHARE ? "share" : f == SVG_NUMBER ? "number" : "count";
}

/* Adds v as a number, or null when it is not finite. False when out of memory. */
static bool add_num(cJSON *o, const char *k, double v)
{
	return isfinite(v) ? cJSON_AddNumberToObject(o, k, v) != NULL
			   : cJSON_AddNullToObject(o, k) != NULL;
}

static bool add_str(cJSON *o, const char *k, const char *s)
{
	return s ? cJSON_AddStringToObject(o, k, s) != NULL : cJSON_AddNullToObject(o, k) != NULL;
}

static cJSON *plot_json(const struct report *r, size_t i, bool with_svg)
{
	const struct plot *p = &r->plots[i];
	cJSON *o = cJSON_CreateObject(), *vals = NULL, *e;
	bool ok = o != NULL;
	size_t j;

	ok = ok && add_str(o, "name", p->name) && add_str(o, "scope", p->scope) &&
	     add_str(o, "plot", p->plot) && add_str(o, "title", p->title) &&
	     add_str(o, "subtitle", p->subtitle) && add_str(o, "kind", kind_name(p->svg.kind)) &&
	     add_str(o, "format", format_name(p->svg.format)) && add_str(o, "file", p->file);
	if (ok && p->svg.has_ref)
		ok = add_num(o, "ref", p->svg.ref) && add_str(o, "ref_label", p->svg.ref_label);
	vals = ok ? cJSON_AddArrayToObject(o, "values") : NULL;
	ok = vals != NULL;
	for (j = 0; ok && j < p->nvals; j++) {
		const struct svg_value *v = &p->vals[j];

		e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(vals, e);
		if (!ok) {
			cJSON_Delete(e);
			break;
		}
		ok = add_str(e, "key", v->key) && add_num(e, "value", v->value);
		if (ok && v->has_interval)
			ok = add_num(e, "lo", v->lo) && add_num(e, "hi", v->hi);
		if (ok && v->has_ref)
			ok = add_num(e, "ref", v->ref);
		if (ok && v->note)
			ok = add_str(e, "note", v->note);
	}
	cJSON_ArrayForEach(e, p->extra)
		if (ok) {
			cJSON *c = cJSON_Duplicate(e, 1);

			ok = c && cJSON_AddItemToObject(o, e->string, c);
			if (!ok)
				cJSON_Delete(c);
		}
	if (ok && with_svg) {
		struct buf b;

		buf_init(&b, 16u << 20);
		ok = !svg_render(&p->svg, &b) && add_str(o, "svg", buf_str(&b));
		buf_release(&b);
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int report_json(const struct report *r, bool with_svg, struct cJSON **out)
{
	cJSON *o, *a, *e;
	bool ok;
	size_t i;

	if (!r || !r->finished)
		return err_set(ENG_EINVAL, "report: the report is not finished");
	o = cJSON_CreateObject();
	ok = o && add_str(o, "format", "proxima-report/1") &&
	     add_str(o, "title", r->title ? r->title : "Proxima report") &&
	     add_str(o, "engine_version", r->engine_version) &&
	     add_str(o, "created_at", r->created_at) && add_str(o, "store", r->store) &&
	     add_str(o, "status", r->status ? r->status : REPORT_DEFAULT_STATUS) &&
	     add_str(o, "tasks", r->tasks) && add_num(o, "qas", (double)r->added) &&
	     add_num(o, "unreadable", (double)r->unreadable);
	a = ok ? cJSON_AddArrayToObject(o, "scopes") : NULL;
	ok = a != NULL;
	for (i = 0; ok && i < r->nscopes; i++) {
		e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(a, e);
		if (!ok) {
			cJSON_Delete(e);
			break;
		}
		ok = add_str(e, "name", r->scopes[i]->name) && add_str(e, "file", r->scopes[i]->file) &&
		     add_num(e, "qas", (double)r->scopes[i]->n);
	}
	a = ok ? cJSON_AddArrayToObject(o, "plots") : NULL;
	ok = a != NULL;
	for (i = 0; ok && i < r->nplots; i++) {
		e = plot_json(r, i, with_svg);
		ok = e && cJSON_AddItemToArray(a, e);
		if (!ok)
			cJSON_Delete(e);
	}
	if (ok)
		ok = cJSON_AddItemToObject(o, "stats", r->stats ? cJSON_Duplicate(r->stats, 1)
							       : cJSON_CreateNull());
	if (ok)
		ok = cJSON_AddItemToObject(o, "audit", r->audit ? cJSON_Duplicate(r->audit, 1)
							       : cJSON_CreateNull());
	if (!ok) {
		cJSON_Delete(o);
		return err_set(ENG_ENOMEM, "report: out of memory");
	}
	*out = o;
	return 0;
}

/* ============================== The page ============================== */

static const char page_style[] =
	"body{font-family:sans-serif;margin:1.5em auto;max-width:1260px;color:#222;padding:0 1em}"
	"h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:.6em 0;font-size:.9em}"
	"td,th{border:1px solid #ddd;padding:.2em .5em;text-align:right}"
	"th:first-child,td:first-child{text-align:left}"
	".plots{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}"
	"figure{margin:0;border:1px solid #eee}figcaption{font-size:.8em;padding:.2em .5em}"
	"nav{line-height:1.8}nav a{margin-right:.8em;white-space:nowrap}.flag{color:#c0392b;font-weight:bold}.muted{color:#666}";

/* Appends s escaped. */
static int esc(struct buf *b, const char *s)
{
	return svg_escape(b, s ? s : "", 0);
}

/* <td>v</td> with `decimals` decimals (and a unit), or a dash for a missing one. */
static int td_num(struct buf *b, double v, int decimals, const char *unit)
{
	if (!isfinite(v))
		return buf_adds(b, "<td>\xe2\x80\x94</td>");
	return buf_addf(b, "<td>%.*f%s</td>", decimals, v, unit ? unit : "");
}

static int td_str(struct buf *b, const char *s)
{
	int rc = buf_adds(b, "<td>");

	rc = rc ? rc : esc(b, s);
	return rc ? rc : buf_adds(b, "</td>");
}

/* The counts of every group (store figures and the chosen QAs). */
static int counts_table(const struct report *r, struct buf *b)
{
	const cJSON *groups = r->stats ? cJSON_GetObjectItemCaseSensitive(r->stats, "groups") : NULL;
	const char *const *st;
	size_t i;
	int rc;

	rc = buf_adds(b, "<table class=\"counts\"><tr><th>group</th><th>chosen</th>");
	for (st = statuses; !rc && *st; st++)
		rc = buf_addf(b, "<th>%s</th>", *st);
	rc = rc ? rc : buf_adds(b, "<th>drops</th><th>acceptance</th><th>mean z</th>"
				"<th>audit</th></tr>\n");
	for (i = 0; !rc && i < r->nscopes; i++) {
		const struct scope *s = r->scopes[i];
		const cJSON *g = s->order < 0 ? NULL : cJSON_GetObjectItemCaseSensitive(groups, s->name);
		const cJSON *ag = s->order < 0 ? NULL : audit_group(r, s->name);

		if (s->order < 0)
			continue;
		rc = buf_adds(b, "<tr>");
		rc = rc ? rc : td_str(b, s->name);
		rc = rc ? rc : td_num(b, (double)s->n, 0, NULL);
		for (st = statuses; !rc && *st; st++)
			rc = td_num(b, g ? jnum(g, *st) : NO_NUM, 0, NULL);
		rc = rc ? rc : td_num(b, g ? jnum(g, "drops") : NO_NUM, 0, NULL);
		rc = rc ? rc : td_num(b, g ? jnum(g, "acceptance") : NO_NUM, 2, NULL);
		rc = rc ? rc : td_num(b, s->z_n ? s->z_sum / (double)s->z_n : NO_NUM, 3, NULL);
		if (!rc && ag)
			rc = buf_addf(b, "<td%s>", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ag, "flagged"))
				      ? " class=\"flag\"" : "");
		if (!rc && ag) {
			rc = esc(b, jstr(ag, "best") ? jstr(ag, "best") : "-");
			rc = rc ? rc : buf_adds(b, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ag, "flagged"))
						? " (flagged)</td>" : "</td>");
		} else if (!rc) {
			rc = buf_adds(b, "<td>\xe2\x80\x94</td>");
		}
		rc = rc ? rc : buf_adds(b, "</tr>\n");
	}
	return rc ? rc : buf_adds(b, "</table>\n");
}

/* The audit of one group as a table. */
static int audit_table(const struct report *r, const struct scope *s, struct buf *b)
{
	const cJSON *g = audit_group(r, s->name), *sv;
	int rc;

	if (!g)
		return 0;
	rc = buf_adds(b, "<table class=\"audit\"><tr><th>blind solver</th><th>n</th>"
		      "<th>accuracy</th><th>95% interval</th><th>over chance</th></tr>\n");
	cJSON_ArrayForEach(sv, cJSON_GetObjectItemCaseSensitive(g, "solvers")) {
		bool learned = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sv, "learned"));
		double over = jnum(sv, "lower_95") - jnum(g, "chance");
		double margin = learned ? jnum(r->audit, "learned_margin") : jnum(r->audit, "rule_margin");

		if (rc)
			break;
		rc = buf_adds(b, "<tr>");
		rc = rc ? rc : td_str(b, jstr(sv, "name"));
		rc = rc ? rc : td_num(b, jnum(sv, "n"), 0, NULL);
		rc = rc ? rc : td_num(b, 100 * jnum(sv, "accuracy"), 1, "%");
		rc = rc ? rc : buf_addf(b, "<td>%.1f%% &#8211; %.1f%%</td>", 100 * jnum(sv, "lower_95"),
					100 * jnum(sv, "upper_95"));
		rc = rc ? rc : buf_addf(b, "<td%s>%+.1f points%s</td></tr>\n",
					over > margin ? " class=\"flag\"" : "", 100 * over,
					over > margin ? " (over the gate)" : "");
	}
	return rc ? rc : buf_addf(b, "</table>\n<p class=\"muted\">chance %.1f%%; a group is "
				  "flagged when a rule's one-sided 95%% lower bound is more than %.0f "
				  "points over chance, or the learned solver's more than %.0f</p>\n",
				  100 * jnum(g, "chance"), 100 * jnum(r->audit, "rule_margin"),
				  100 * jnum(r->audit, "learned_margin"));
}

/* The reviewers as tables (store-wide). */
static int reviewer_tables(const struct report *r, struct buf *b)
{
	const cJSON *rv = r->stats ? cJSON_GetObjectItemCaseSensitive(r->stats, "reviews") : NULL;
	const cJSON *e, *blind = cJSON_GetObjectItemCaseSensitive(rv, "blind");
	int rc;

	if (!rv)
		return 0;
	rc = buf_adds(b, "<h3>Reviewers</h3>\n<table class=\"reviewers\"><tr><th>reviewer</th>"
		      "<th>reviews</th><th>items</th><th>median time per item (s)</th></tr>\n");
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(rv, "reviewers")) {
		if (rc)
			break;
		rc = buf_adds(b, "<tr>");
		rc = rc ? rc : td_str(b, e->string);
		rc = rc ? rc : td_num(b, jnum(e, "reviews"), 0, NULL);
		rc = rc ? rc : td_num(b, jnum(e, "items"), 0, NULL);
		rc = rc ? rc : td_num(b, jnum(e, "median_time_ms") / 1000.0, 1, NULL);
		rc = rc ? rc : buf_adds(b, "</tr>\n");
	}
	rc = rc ? rc : buf_adds(b, "</table>\n<table class=\"agreement\"><tr><th>figure</th>"
				"<th>value</th></tr>\n<tr><td>reviews</td>");
	rc = rc ? rc : td_num(b, jnum(rv, "total"), 0, NULL);
	rc = rc ? rc : buf_adds(b, "</tr>\n<tr><td>acceptance</td>");
	rc = rc ? rc : td_num(b, jnum(rv, "acceptance"), 3, NULL);
	rc = rc ? rc : buf_adds(b, "</tr>\n<tr><td>blind answers</td>");
	rc = rc ? rc : td_num(b, jnum(blind, "n"), 0, NULL);
	rc = rc ? rc : buf_adds(b, "</tr>\n<tr><td>blind answers that agree with the key</td>");
	rc = rc ? rc : td_num(b, jnum(blind, "rate"), 3, NULL);
	rc = rc ? rc : buf_adds(b, "</tr>\n<tr><td>median time per item (s)</td>");
	rc = rc ? rc : td_num(b, jnum(rv, "median_time_ms") / 1000.0, 1, NULL);
	rc = rc ? rc : buf_adds(b, "</tr>\n</table>\n");
	if (!rc && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rv, "kappa")) > 0) {
		rc = buf_adds(b, "<table class=\"kappa\"><tr><th>reviewers</th><th>items both decided"
			      "</th><th>agree</th><th>kappa</th></tr>\n");
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(rv, "kappa")) {
			if (rc)
				break;
			rc = buf_adds(b, "<tr><td>");
			rc = rc ? rc : esc(b, jstr(e, "a"));
			rc = rc ? rc : buf_adds(b, " / ");
			rc = rc ? rc : esc(b, jstr(e, "b"));
			rc = rc ? rc : buf_adds(b, "</td>");
			rc = rc ? rc : td_num(b, jnum(e, "n"), 0, NULL);
			rc = rc ? rc : td_num(b, jnum(e, "agree"), 0, NULL);
			rc = rc ? rc : td_num(b, jnum(e, "kappa"), 3, NULL);
			rc = rc ? rc : buf_adds(b, "</tr>\n");
		}
		rc = rc ? rc : buf_adds(b, "</table>\n");
	}
	return rc;
}

static int meta_row(struct buf *b, const char *k, const char *v)
{
	int rc = buf_addf(b, "<tr><th>%s</th>", k);

	rc = rc ? rc : td_str(b, v ? v : "\xe2\x80\x94");
	return rc ? rc : buf_adds(b, "</tr>\n");
}

int report_html(const struct report *r, struct buf *b)
{
	char n[32];
	size_t i, j;
	int rc;

	if (!r || !r->finished)
		return err_set(ENG_EINVAL, "report: the report is not finished");
	rc = buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		      "<title>");
	rc = rc ? rc : esc(b, r->title ? r->title : "Proxima report");
	rc = rc ? rc : buf_addf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", page_style);
	rc = rc ? rc : esc(b, r->title ? r->title : "Proxima report");
	rc = rc ? rc : buf_adds(b, "</h1>\n<table class=\"meta\">\n");
	snprintf(n, sizeof(n), "%zu", r->added);
	rc = rc ? rc : meta_row(b, "store", r->store);
	rc = rc ? rc : meta_row(b, "statuses", r->status ? r->status : REPORT_DEFAULT_STATUS);
	rc = rc ? rc : meta_row(b, "groups", r->tasks ? r->tasks : "all");
	rc = rc ? rc : meta_row(b, "QAs", n);
	rc = rc ? rc : meta_row(b, "engine", r->engine_version);
	rc = rc ? rc : meta_row(b, "written", r->created_at);
	rc = rc ? rc : buf_adds(b, "</table>\n<nav>");
	for (i = 0; !rc && i < r->nscopes; i++) {
		rc = buf_addf(b, "<a href=\"#scope-%zu\">", i);
		rc = rc ? rc : esc(b, r->scopes[i]->order < 0 ? "All groups" : r->scopes[i]->name);
		rc = rc ? rc : buf_adds(b, "</a>");
	}
	rc = rc ? rc : buf_adds(b, "</nav>\n");
	for (i = 0; !rc && i < r->nscopes; i++) {
		const struct scope *s = r->scopes[i];

		rc = buf_addf(b, "<section id=\"scope-%zu\">\n<h2>", i);
		rc = rc ? rc : esc(b, s->order < 0 ? "All groups" : s->name);
		rc = rc ? rc : buf_addf(b, "</h2>\n<p>%zu QAs chosen</p>\n", s->n);
		if (!rc && s->order < 0)
			rc = counts_table(r, b);
		if (!rc && s->order >= 0)
			rc = audit_table(r, s, b);
		rc = rc ? rc : buf_adds(b, "<div class=\"plots\">\n");
		for (j = 0; !rc && j < r->nplots; j++) {
			const struct plot *p = &r->plots[j];

			if (strcmp(p->scope, s->name))
				continue;
			rc = buf_adds(b, "<figure id=\"plot-");
			rc = rc ? rc : esc(b, p->name);
			rc = rc ? rc : buf_adds(b, "\">\n");
			rc = rc ? rc : svg_render(&p->svg, b);
			rc = rc ? rc : buf_adds(b, "<figcaption><a href=\"");
			rc = rc ? rc : esc(b, p->file);
			rc = rc ? rc : buf_adds(b, "\">");
			rc = rc ? rc : esc(b, p->file);
			rc = rc ? rc : buf_adds(b, "</a></figcaption>\n</figure>\n");
		}
		rc = rc ? rc : buf_adds(b, "</div>\n");
		if (!rc && s->order < 0)
			rc = reviewer_tables(r, b);
		rc = rc ? rc : buf_adds(b, "</section>\n");
	}
	rc = rc ? rc : buf_adds(b, "<p class=\"muted\">Written by proxima report; report.json holds "
				"the same figures. No script runs on this page.</p>\n</body>\n</html>\n");
	return rc;
}

/* ============================== Files ============================== */

/* Writes len bytes to DIR/name through DIR/name.tmp. Returns 0 or ENG_EIO. */
static int write_text(const char *dir, const char *name, const char *text, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *fp;
	int e = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return err_set(ENG_EIO, "'%s/%s': path too long", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fp = fopen(tmp, "we");
	if (!fp) {
		e = errno;
		return err_set(ENG_EIO, "'%s': cannot write: %s", path, strerror(e));
	}
	if (fwrite(text, 1, len, fp) != len)
		e = errno ? errno : EIO;
	if (fclose(fp) && !e)
		e = errno;
	if (!e && rename(tmp, path))
		e = errno;
	if (e) {
		remove(tmp);
		return err_set(ENG_EIO, "'%s': cannot write: %s", path, strerror(e));
	}
	return 0;
}

/* Creates dir when missing. Returns 0 or ENG_EIO naming it. */
static int make_dir(const char *dir)
{
	struct stat sb;
	int e;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		e = errno;
		return err_set(ENG_EIO, "'%s': cannot create folder: %s", dir, strerror(e));
	}
	if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
		return err_set(ENG_EIO, "'%s': not a folder", dir);
	return 0;
}

int report_write_svgs(const struct report *r, const char *dir)
{
	struct buf b;
	size_t i;
	int rc;

	if (!r || !r->finished || !dir || !*dir)
		return err_set(ENG_EINVAL, "report: not finished, or no folder");
	rc = make_dir(dir);
	buf_init(&b, 16u << 20);
	for (i = 0; !rc && i < r->nplots; i++) {
		buf_reset(&b);
		rc = svg_render(&r->plots[i].svg, &b);
		rc = rc ? rc : write_text(dir, r->plots[i].file, buf_str(&b), b.len);
	}
	buf_release(&b);
	return rc;
}

int report_write(const struct report *r, const char *dir)
{
	struct buf b;
	cJSON *j = NULL;
	char *text = NULL;
	int rc;

	rc = report_write_svgs(r, dir);
	if (rc)
		return rc;
	buf_init(&b, 256u << 20);
	rc = report_html(r, &b);
	rc = rc ? rc : write_text(dir, "index.html", buf_str(&b), b.len);
	buf_release(&b);
	rc = rc ? rc : report_json(r, false, &j);
	if (!rc) {
		text = cJSON_Print(j);
		rc = text ? write_text(dir, "report.json", text, strlen(text))
			  : err_set(ENG_ENOMEM, "report: out of memory");
	}
	cJSON_free(text);
	cJSON_Delete(j);
	return rc;
}
