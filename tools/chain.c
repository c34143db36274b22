/* SPDX-License-Identifier: MIT */
/*
 * build_chain: the chain constructor. For K actions, the edge between
 * consecutive action locations is the 8-way direction of location(a_i+1)
 * relative to location(a_i) in the BEV frame of the camera heading at
 * a_i's start (docs/design.md section 3), written with EgoProx's letters; and
 * every order of the K actions that respects the ordering constraints,
 * each with its own edges.
 */
#include "chain.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "bev.h"
#include "err.h"
#include "registry.h"

/* An edge shorter than this (BEV, m) has no reliable direction. */
#define MIN_EDGE_M 0.1


/* The enumeration state. */
struct walk {
	struct chain_result *r;
	bool prec[CHAIN_MAX][CHAIN_MAX]; /* prec[a][b]: member a must come before b */
	size_t order[CHAIN_MAX];
	bool used[CHAIN_MAX];
	size_t limit;
};

static int cmp_start(const struct recording *rec, size_t a, size_t b)
{
	if (rec->actions[a].start_ns != rec->actions[b].start_ns)
		return rec->actions[a].start_ns < rec->actions[b].start_ns ? -1 : 1;
	return (a > b) - (a < b);
}

static void compute_edges(struct chain_result *c, const vec3 *loc, const struct disc_params *dp)
{
	size_t p, q;

	for (p = 0; p < c->k; p++)
		for (q = 0; q < c->k; q++) {
			struct chain_edge *e = &c->e[p][q];

			memset(e, 0, sizeof(*e));
			if (p == q)
				continue;
			e->bev_m = hypot((double)loc[q][0] - (double)loc[p][0],
					 (double)loc[q][1] - (double)loc[p][1]);
			e->defined = bev_yaw_to(c->heading[p], loc[p], loc[q], &e->yaw_deg) == 0;
			if (e->defined) {
				e->dir = bev_dir_from_yaw(e->yaw_deg);
				e->margin_deg = bev_dir_margin(e->yaw_deg);
			}
			e->ambiguous = !e->defined || e->margin_deg < dp->angle_margin_deg ||
				       e->bev_m < MIN_EDGE_M;
		}
}

static void make_order(const struct chain_result *c, const size_t *ord, struct chain_order *o)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	o->observed = true;
	for (i = 0; i < c->k; i++) {
		o->member[i] = ord[i];
		if (ord[i] != i)
			o->observed = false;
		if (i + 1 < c->k)
			o->ambiguous = o->ambiguous || c->e[ord[i]][ord[i + 1]].ambiguous;
	}
}

/* True when the order respects every constraint. */
static bool order_valid(const struct walk *w, const size_t *ord)
{
	size_t pos[CHAIN_MAX], a, b, k = w->r->k;

	for (a = 0; a < k; a++)
		/* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.ArraySubscript): callers fill ord[0..k) */
		pos[ord[a]] = a;
	for (a = 0; a < k; a++)
		for (b = 0; b < k; b++)
			if (w->prec[a][b] && pos[a] > pos[b])
				return false;
	return true;
}

/* Depth-first enumeration of the orders (linear extensions of prec), lexicographic. */
static void enumerate(struct walk *w, size_t depth)
{
	struct chain_result *c = w->r;
	size_t p, q;

	if (depth == c->k) {
		if (c->count++ < w->limit)
			make_order(c, w->order, &c->orders[c->norders++]);
		return;
	}
	for (p = 0; p < c->k; p++) {
		bool ready = !w->used[p];

		for (q = 0; ready && q < c->k; q++)
			if (w->prec[q][p] && !w->used[q])
				ready = false;
		if (!ready)
			continue;
		w->used[p] = true;
		w->order[depth] = p;
		enumerate(w, depth + 1);
		w->used[p] = false;
	}
}

/* Picks the members: the given indices, or the k actions after t. */
static int pick_members(struct tool_ctx *ctx, const struct chain_args *a, struct chain_result *c)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	char path[48];
	size_t i, j;

	if (a->nactions) {
		for (i = 0; i < a->nactions && i < CHAIN_MAX; i++) {
			snprintf(path, sizeof(path), "/actions/%zu", i);
			if (a->actions[i] >= rec->nactions)
				return tool__reject(ctx, path, "must be an action index below %zu, got %zu",
						    rec->nactions, a->actions[i]);
			c->act[i] = a->actions[i];
			for (j = 0; j < i; j++)
				if (c->act[j] == c->act[i])
					return tool__reject(ctx, path, "action %zu is listed twice",
							    c->act[i]);
		}
		c->k = i;
	} else {
		if (a->k > CHAIN_MAX)
			return tool__reject(ctx, "/k", "at most %d actions, got %zu", CHAIN_MAX, a->k);
		c->k = a->k;
		for (i = 0; i < rec->nactions && rec->actions[i].start_ns <= a->t; i++)
			;
		if (i + c->k > rec->nactions)
			return tool__reject(ctx, "/k", "only %zu actions start after t = %" PRId64
					    " ns, got k = %zu", rec->nactions - i, a->t, c->k);
		for (j = 0; j < c->k; j++)
			c->act[j] = i + j;
	}
	/* observed order = start-time order (insertion sort, k <= 6) */
	for (i = 1; i < c->k; i++)
		for (j = i; j > 0 && cmp_start(rec, c->act[j - 1], c->act[j]) > 0; j--) {
			size_t tmp = c->act[j];

			c->act[j] = c->act[j - 1];
			c->act[j - 1] = tmp;
		}
	return 0;
}

static long member_of(const struct chain_result *c, size_t action)
{
	size_t i;

	for (i = 0; i < c->k; i++)
		if (c->act[i] == action)
			return (long)i;
	return -1;
}

static int read_constraints(struct tool_ctx *ctx, const struct chain_args *a, struct walk *w)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct chain_result *c = w->r;
	char path[48];
	size_t i, x0, y0;

	for (i = 0; i < a->nbefore && i < CHAIN_MAX_BEFORE; i++) {
		long x = member_of(c, a->before[i][0]), y = member_of(c, a->before[i][1]);

		if (x < 0 || y < 0) {
			snprintf(path, sizeof(path), "/before/%zu/%d", i, x < 0 ? 0 : 1);
			return tool__reject(ctx, path, "must be one of the chain's action indices");
		}
		if (x == y) {
			snprintf(path, sizeof(path), "/before/%zu", i);
			return tool__reject(ctx, path, "an action cannot come before itself");
		}
		w->prec[x][y] = true;
	}
	if (a->keep_goal_order)
		for (x0 = 0; x0 < c->k; x0++)
			for (y0 = x0 + 1; y0 < c->k; y0++) {
				const char *ga = rec->actions[c->act[x0]].goal;
				const char *gb = rec->actions[c->act[y0]].goal;

				if (ga && gb && !strcmp(ga, gb))
					w->prec[x0][y0] = true;
			}
	return 0;
}

int chain_build(struct tool_ctx *ctx, const struct chain_args *a, struct chain_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	size_t i, ident[CHAIN_MAX];
	vec3 loc[CHAIN_MAX];
	struct walk w;
	struct pose cam;
	const char *src;
	int rc;

	memset(&w, 0, sizeof(w));
	out->k = 0;
	out->norders = 0;
	out->count = 0;
	w.r = out;
	w.limit = a->limit < CHAIN_ORDER_LIMIT ? a->limit : CHAIN_ORDER_LIMIT;
	rc = pick_members(ctx, a, out);
	if (!rc)
		rc = read_constraints(ctx, a, &w);
	if (rc)
		return rc;
	for (i = 0; i < out->k; i++) {
		tool__action_location(rec, out->act[i], loc[i], &src);
		rc = tool__camera_clamped(rec, rec->actions[out->act[i]].start_ns, &cam,
					  &out->heading[i]);
		if (rc)
			return rc;
		ident[i] = i;
	}
	compute_edges(out, (const vec3 *)loc, tool_ctx_disc(ctx));
	make_order(out, ident, &out->observed);
	out->observed_valid = order_valid(&w, ident);
	enumerate(&w, 0);
	return 0;
}

bool chain_ambiguous(const struct chain_result *r)
{
	size_t i, j;

	for (j = 0; j + 1 < r->k; j++)
		if (r->e[j][j + 1].ambiguous)
			return true;
	for (i = 0; i < r->norders; i++)
		for (j = 0; j + 1 < r->k; j++)
			if (r->e[r->orders[i].member[j]][r->orders[i].member[j + 1]].ambiguous)
				return true;
	return false;
}

int chain_build_actions(struct tool_ctx *ctx, size_t first, size_t k,
			struct chain_result *out)
{
	struct chain_args a;
	size_t i;

	if (k < 1 || k > CHAIN_MAX)
		return err_set(ENG_EINVAL, "a chain of %zu actions", k);
	memset(&a, 0, sizeof(a));
	a.nactions = k;
	for (i = 0; i < k; i++)
		a.actions[i] = first + i;
	a.keep_goal_order = true;
	a.limit = CHAIN_DEFAULT_LIMIT;
	return chain_build(ctx, &a, out);
}

/* ======================= JSON ======================= */

static int add_letter(cJSON *arr, const struct chain_edge *e)
{
	/* NOLINTNEXTLINE(bugprone-narrowing-conversions): both arms are chars */
	char l[2] = { e->defined ? bev_dir_letter(e->dir) : 0, 0 };
	cJSON *v = e->defined ? cJSON_CreateString(l) : cJSON_CreateNull();

	if (!v)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, v);
	return 0;
}

/* {"order":[action indices],"letters":[...],"ambiguous":bool,"observed":bool} */
static cJSON *order_json(const struct chain_result *c, const struct chain_order *ord)
{
	cJSON *o = cJSON_CreateObject(), *idx, *let;
	size_t i;

	if (!o)
		return NULL;
	idx = cJSON_AddArrayToObject(o, "order");
	let = cJSON_AddArrayToObject(o, "letters");
	if (!idx || !let)
		goto fail;
	for (i = 0; i < c->k; i++) {
		cJSON *v = cJSON_CreateNumber((double)c->act[ord->member[i]]);

		if (!v)
			goto fail;
		cJSON_AddItemToArray(idx, v);
		if (i + 1 < c->k && add_letter(let, &c->e[ord->member[i]][ord->member[i + 1]]))
			goto fail;
	}
	if (!cJSON_AddBoolToObject(o, "ambiguous", ord->ambiguous) ||
	    !cJSON_AddBoolToObject(o, "observed", ord->observed))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static int add_edge_table(cJSON *result, const struct chain_result *c)
{
	cJSON *tab = cJSON_AddArrayToObject(result, "edges");
	bool listed[CHAIN_MAX][CHAIN_MAX];
	size_t p, q, i, j;

	if (!tab)
		return ENG_ENOMEM;
	memset(listed, 0, sizeof(listed));
	/* the observed edges first, then those of the listed orders */
	for (p = 0; p + 1 < c->k; p++)
		listed[p][p + 1] = true;
	for (i = 0; i < c->norders; i++)
		for (j = 0; j + 1 < c->k; j++)
			listed[c->orders[i].member[j]][c->orders[i].member[j + 1]] = true;
	for (p = 0; p < c->k; p++)
		for (q = 0; q < c->k; q++) {
			const struct chain_edge *e = &c->e[p][q];
			/* NOLINTNEXTLINE(bugprone-narrowing-conversions): both arms are chars */
			char l[2] = { e->defined ? bev_dir_letter(e->dir) : 0, 0 };
			cJSON *x;

			if (!listed[p][q])
				continue;
			x = cJSON_CreateObject();
			if (!x)
				return ENG_ENOMEM;
			cJSON_AddItemToArray(tab, x);
			if (!cJSON_AddNumberToObject(x, "from", (double)c->act[p]) ||
			    !cJSON_AddNumberToObject(x, "to", (double)c->act[q]) ||
			    !tool__add_str(x, "direction", e->defined ? bev_dir_name(e->dir) : NULL) ||
			    !tool__add_str(x, "letter", e->defined ? l : NULL) ||
			    !(e->defined ? tool__add_num(x, "yaw_deg", e->yaw_deg, 2)
					 : cJSON_AddNullToObject(x, "yaw_deg")) ||
			    !tool__add_num(x, "sector_margin_deg", e->defined ? e->margin_deg : 0, 2) ||
			    !tool__add_num(x, "bev_distance_m", e->bev_m, 3) ||
			    !cJSON_AddBoolToObject(x, "ambiguous", e->ambiguous))
				return ENG_ENOMEM;
		}
	return 0;
}

int chain_write(struct tool_ctx *ctx, const struct chain_result *c, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	cJSON *acts, *obs, *orders;
	size_t i;
	int rc;

	acts = cJSON_AddArrayToObject(result, "actions");
	if (!acts)
		return ENG_ENOMEM;
	for (i = 0; i < c->k; i++) {
		cJSON *o = tool__action_json(rec, c->act[i]);

		if (!o)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(acts, o);
		if (!tool__add_num(o, "heading_deg",
				   bev_wrap_deg((float)((double)c->heading[i] * POSE_RAD2DEG)), 2))
			return ENG_ENOMEM;
	}
	obs = order_json(c, &c->observed);
	if (!obs)
		return ENG_ENOMEM;
	cJSON_AddItemToObject(result, "observed", obs);
	if (!cJSON_AddBoolToObject(obs, "valid", c->observed_valid))
		return ENG_ENOMEM;
	rc = add_edge_table(result, c);
	if (rc)
		return rc;
	orders = cJSON_AddArrayToObject(result, "valid_orders");
	if (!orders)
		return ENG_ENOMEM;
	for (i = 0; i < c->norders; i++) {
		cJSON *o = order_json(c, &c->orders[i]);

		if (!o)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(orders, o);
	}
	if (!cJSON_AddNumberToObject(result, "valid_order_count", (double)c->count) ||
	    !cJSON_AddBoolToObject(result, "truncated", c->count > c->norders))
		return ENG_ENOMEM;
	return 0;
}

int tool_build_chain(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(args, "actions"), *v;
	const cJSON *before = cJSON_GetObjectItemCaseSensitive(args, "before"), *pair;
	struct chain_result *r = NULL;
	struct chain_args a;
	char path[48];
	int rc;

	memset(&a, 0, sizeof(a));
	a.limit = (size_t)tool__num(args, "limit", CHAIN_DEFAULT_LIMIT);
	a.keep_goal_order = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "keep_goal_order"));
	if (tool__has(args, "actions")) {
		if (tool__has(args, "t") || tool__has(args, "k"))
			return tool__reject(ctx, "/t", "give either actions or t and k (the others null)");
		cJSON_ArrayForEach(v, list) {
			if (a.nactions >= CHAIN_MAX)
				break;
			snprintf(path, sizeof(path), "/actions/%zu", a.nactions);
			if (v->valuedouble < 0)
				return tool__reject(ctx, path, "must be an action index, got %.0f",
						    v->valuedouble);
			a.actions[a.nactions++] = (size_t)v->valuedouble;
		}
	} else {
		if (!tool__has(args, "t") || !tool__has(args, "k"))
			return tool__reject(ctx, tool__has(args, "t") ? "/k" : "/t",
					    "give either actions or both t and k");
		a.t = tool__time(args, "t", 0);
		a.k = (size_t)tool__num(args, "k", 0);
	}
	cJSON_ArrayForEach(pair, before) { /* a null has no children */
		double x = cJSON_GetArrayItem(pair, 0)->valuedouble;
		double y = cJSON_GetArrayItem(pair, 1)->valuedouble;

		if (a.nbefore >= CHAIN_MAX_BEFORE)
			break;
		/* a negative index is no member: chain_build refuses it */
		a.before[a.nbefore][0] = x < 0 ? SIZE_MAX : (size_t)x;
		a.before[a.nbefore][1] = y < 0 ? SIZE_MAX : (size_t)y;
		a.nbefore++;
	}
	r = malloc(sizeof(*r));
	if (!r)
		return ENG_ENOMEM;
	rc = chain_build(ctx, &a, r);
	if (!rc)
		rc = chain_write(ctx, r, result);
	free(r);
	return rc;
}
