/* SPDX-License-Identifier: MIT */
/*
 * build_chain: the chain constructor. For K actions, the edge between
 * consecutive action locations is the 8-way direction of location(a_i+1)
 * relative to location(a_i) in the BEV frame of the camera heading at
 * a_i's start (docs/design.md section 3), written with EgoProx's letters; and
 * every order of the K actions that respects the ordering constraints,
 * each with its own edges.
 */
#include "registry.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "banned.h"
#include "bev.h"
#include "err.h"

#define CHAIN_MAX 6
#define DEFAULT_LIMIT 50
/* An edge shorter than this (BEV, m) has no reliable direction. */
#define MIN_EDGE_M 0.1


/* The directed edge between two chain members p -> q. */
struct edge {
	bool defined;  /* false when the two locations coincide in XY */
	float yaw_deg; /* of location(q) from location(p), heading at p's start */
	float margin;  /* to the nearest sector boundary, deg */
	enum bev_dir dir;
	double bev_m;  /* horizontal distance, m */
	bool ambiguous;
	bool listed;   /* already written to the edge table */
};

struct chain {
	size_t k;                     /* members */
	size_t act[CHAIN_MAX];        /* action indices, in observed (start time) order */
	vec3 loc[CHAIN_MAX];          /* locations */
	float heading[CHAIN_MAX];     /* camera heading at each start, rad */
	bool prec[CHAIN_MAX][CHAIN_MAX]; /* prec[a][b]: member a must come before b */
	struct edge e[CHAIN_MAX][CHAIN_MAX];
	/* enumeration */
	size_t order[CHAIN_MAX];
	bool used[CHAIN_MAX];
	size_t count;                 /* valid orders found */
	size_t limit;                 /* orders to list */
	cJSON *orders;                /* the listed orders */
	int rc;
};

static int cmp_start(const struct recording *rec, size_t a, size_t b)
{
	if (rec->actions[a].start_ns != rec->actions[b].start_ns)
		return rec->actions[a].start_ns < rec->actions[b].start_ns ? -1 : 1;
	return (a > b) - (a < b);
}

static void compute_edges(struct chain *c, const struct disc_params *dp)
{
	size_t p, q;

	for (p = 0; p < c->k; p++)
		for (q = 0; q < c->k; q++) {
			struct edge *e = &c->e[p][q];

			memset(e, 0, sizeof(*e));
			if (p == q)
				continue;
			e->bev_m = hypot((double)c->loc[q][0] - (double)c->loc[p][0],
					 (double)c->loc[q][1] - (double)c->loc[p][1]);
			e->defined = bev_yaw_to(c->heading[p], c->loc[p], c->loc[q],
						&e->yaw_deg) == 0;
			if (e->defined) {
				e->dir = bev_dir_from_yaw(e->yaw_deg);
				e->margin = bev_dir_margin(e->yaw_deg);
			}
			e->ambiguous = !e->defined || e->margin < dp->angle_margin_deg ||
				       e->bev_m < MIN_EDGE_M;
		}
}

static int add_letter(cJSON *arr, const struct edge *e)
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
static cJSON *order_json(const struct chain *c, const size_t *ord)
{
	cJSON *o = cJSON_CreateObject(), *idx, *let;
	bool amb = false, observed = true;
	size_t i;

	if (!o)
		return NULL;
	idx = cJSON_AddArrayToObject(o, "order");
	let = cJSON_AddArrayToObject(o, "letters");
	if (!idx || !let)
		goto fail;
	for (i = 0; i < c->k; i++) {
		cJSON *v = cJSON_CreateNumber((double)c->act[ord[i]]);

		if (!v)
			goto fail;
		cJSON_AddItemToArray(idx, v);
		if (ord[i] != i)
			observed = false;
		if (i + 1 < c->k) {
			const struct edge *e = &c->e[ord[i]][ord[i + 1]];

			if (add_letter(let, e))
				goto fail;
			amb = amb || e->ambiguous;
		}
	}
	if (!cJSON_AddBoolToObject(o, "ambiguous", amb) ||
	    !cJSON_AddBoolToObject(o, "observed", observed))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* True when the order respects every constraint. */
static bool order_valid(const struct chain *c, const size_t *ord)
{
	size_t pos[CHAIN_MAX], a, b;

	for (a = 0; a < c->k; a++)
		/* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.ArraySubscript): callers fill ord[0..k) */
		pos[ord[a]] = a;
	for (a = 0; a < c->k; a++)
		for (b = 0; b < c->k; b++)
			if (c->prec[a][b] && pos[a] > pos[b])
				return false;
	return true;
}

/* Depth-first enumeration of the orders (linear extensions of prec), lexicographic. */
static void enumerate(struct chain *c, size_t depth)
{
	size_t p, q;

	if (c->rc)
		return;
	if (depth == c->k) {
		if (c->count++ < c->limit) {
			cJSON *o = order_json(c, c->order);

			if (!o) {
				c->rc = ENG_ENOMEM;
				return;
			}
			cJSON_AddItemToArray(c->orders, o);
		}
		return;
	}
	for (p = 0; p < c->k; p++) {
		bool ready = !c->used[p];

		for (q = 0; ready && q < c->k; q++)
			if (c->prec[q][p] && !c->used[q])
				ready = false;
		if (!ready)
			continue;
		c->used[p] = true;
		c->order[depth] = p;
		enumerate(c, depth + 1);
		c->used[p] = false;
	}
}

static int add_edge_table(cJSON *result, struct chain *c)
{
	cJSON *tab = cJSON_AddArrayToObject(result, "edges");
	const cJSON *o;
	size_t p, q;

	if (!tab)
		return ENG_ENOMEM;
	/* the observed edges first, then those of the listed orders */
	for (p = 0; p + 1 < c->k; p++)
		c->e[p][p + 1].listed = true;
	cJSON_ArrayForEach(o, c->orders) {
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(o, "order"), *v;
		long prev = -1;

		cJSON_ArrayForEach(v, idx) {
			long cur = -1;

			for (q = 0; q < c->k; q++)
				if ((double)c->act[q] == v->valuedouble)
					cur = (long)q;
			if (prev >= 0 && cur >= 0)
				c->e[prev][cur].listed = true;
			prev = cur;
		}
	}
	for (p = 0; p < c->k; p++)
		for (q = 0; q < c->k; q++) {
			const struct edge *e = &c->e[p][q];
			/* NOLINTNEXTLINE(bugprone-narrowing-conversions): both arms are chars */
			char l[2] = { e->defined ? bev_dir_letter(e->dir) : 0, 0 };
			cJSON *x;

			if (!e->listed)
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
			    !tool__add_num(x, "sector_margin_deg", e->defined ? e->margin : 0, 2) ||
			    !tool__add_num(x, "bev_distance_m", e->bev_m, 3) ||
			    !cJSON_AddBoolToObject(x, "ambiguous", e->ambiguous))
				return ENG_ENOMEM;
		}
	return 0;
}

/* Picks the members: the given indices, or the k actions after t. */
static int pick_members(struct tool_ctx *ctx, const cJSON *args, struct chain *c)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(args, "actions"), *v;
	char path[48];
	size_t i, j;

	if (tool__has(args, "actions")) {
		if (tool__has(args, "t") || tool__has(args, "k"))
			return tool__reject(ctx, "/t", "give either actions or t and k (the others null)");
		i = 0;
		cJSON_ArrayForEach(v, list) {
			snprintf(path, sizeof(path), "/actions/%zu", i);
			if (v->valuedouble < 0 || v->valuedouble >= (double)rec->nactions)
				return tool__reject(ctx, path,
						    "must be an action index below %zu, got %.0f",
						    rec->nactions, v->valuedouble);
			c->act[i] = (size_t)v->valuedouble;
			for (j = 0; j < i; j++)
				if (c->act[j] == c->act[i])
					return tool__reject(ctx, path, "action %zu is listed twice",
							    c->act[i]);
			i++;
		}
		c->k = i;
	} else {
		int64_t t;

		if (!tool__has(args, "t") || !tool__has(args, "k"))
			return tool__reject(ctx, tool__has(args, "t") ? "/k" : "/t",
					    "give either actions or both t and k");
		t = tool__time(args, "t", 0);
		c->k = (size_t)tool__num(args, "k", 0);
		for (i = 0; i < rec->nactions && rec->actions[i].start_ns <= t; i++)
			;
		if (i + c->k > rec->nactions)
			return tool__reject(ctx, "/k", "only %zu actions start after t = %" PRId64
					    " ns, got k = %zu", rec->nactions - i, t, c->k);
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

static long member_of(const struct chain *c, double action)
{
	size_t i;

	for (i = 0; i < c->k; i++)
		if ((double)c->act[i] == action)
			return (long)i;
	return -1;
}

static int read_constraints(struct tool_ctx *ctx, const cJSON *args, struct chain *c)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const cJSON *before = cJSON_GetObjectItemCaseSensitive(args, "before"), *pair;
	const cJSON *keep = cJSON_GetObjectItemCaseSensitive(args, "keep_goal_order");
	char path[48];
	size_t i = 0, a, b;

	cJSON_ArrayForEach(pair, before) { /* a null has no children */
		long x = member_of(c, cJSON_GetArrayItem(pair, 0)->valuedouble);
		long y = member_of(c, cJSON_GetArrayItem(pair, 1)->valuedouble);

		if (x < 0 || y < 0) {
			snprintf(path, sizeof(path), "/before/%zu/%d", i, x < 0 ? 0 : 1);
			return tool__reject(ctx, path, "must be one of the chain's action indices");
		}
		if (x == y) {
			snprintf(path, sizeof(path), "/before/%zu", i);
			return tool__reject(ctx, path, "an action cannot come before itself");
		}
		c->prec[x][y] = true;
		i++;
	}
	if (cJSON_IsTrue(keep))
		for (a = 0; a < c->k; a++)
			for (b = a + 1; b < c->k; b++) {
				const char *ga = rec->actions[c->act[a]].goal;
				const char *gb = rec->actions[c->act[b]].goal;

				if (ga && gb && !strcmp(ga, gb))
					c->prec[a][b] = true;
			}
	return 0;
}

int tool_build_chain(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	struct chain c;
	size_t i, ident[CHAIN_MAX];
	cJSON *acts, *obs;
	struct pose cam;
	const char *src;
	int rc;

	memset(&c, 0, sizeof(c));
	c.limit = (size_t)tool__num(args, "limit", DEFAULT_LIMIT);
	rc = pick_members(ctx, args, &c);
	if (rc)
		return rc;
	rc = read_constraints(ctx, args, &c);
	if (rc)
		return rc;
	for (i = 0; i < c.k; i++) {
		tool__action_location(rec, c.act[i], c.loc[i], &src);
		rc = tool__camera_clamped(rec, rec->actions[c.act[i]].start_ns, &cam,
					  &c.heading[i]);
		if (rc)
			return rc;
		ident[i] = i;
	}
	compute_edges(&c, tool_ctx_disc(ctx));

	acts = cJSON_AddArrayToObject(result, "actions");
	if (!acts)
		return ENG_ENOMEM;
	for (i = 0; i < c.k; i++) {
		cJSON *o = tool__action_json(rec, c.act[i]);

		if (!o)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(acts, o);
		if (!tool__add_num(o, "heading_deg",
				   bev_wrap_deg((float)((double)c.heading[i] * POSE_RAD2DEG)), 2))
			return ENG_ENOMEM;
	}
	obs = order_json(&c, ident);
	if (!obs)
		return ENG_ENOMEM;
	cJSON_AddItemToObject(result, "observed", obs);
	if (!cJSON_AddBoolToObject(obs, "valid", order_valid(&c, ident)))
		return ENG_ENOMEM;

	c.orders = cJSON_CreateArray();
	if (!c.orders)
		return ENG_ENOMEM;
	enumerate(&c, 0);
	if (c.rc) {
		cJSON_Delete(c.orders);
		return c.rc;
	}
	rc = add_edge_table(result, &c);
	if (rc) {
		cJSON_Delete(c.orders);
		return rc;
	}
	cJSON_AddItemToObject(result, "valid_orders", c.orders);
	if (!cJSON_AddNumberToObject(result, "valid_order_count", (double)c.count) ||
	    !cJSON_AddBoolToObject(result, "truncated", c.count > c.limit))
		return ENG_ENOMEM;
	return 0;
}
