/* SPDX-License-Identifier: MIT */
/* Camera-to-target path planning and the plan_path tool. */
#include "path.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "bev.h"
#include "err.h"
#include "registry.h"
#include "scene.h"


/* The A* workspace and the path buffers, kept across calls. */
struct path_cache {
	struct astar_ws *ws;
	int max_w, max_h;       /* size ws was made for */
	int32_t *cells;
	size_t cap;
	struct astar_leg *legs;
	size_t legcap;
	uint8_t *loaded;        /* the cells of the grid ws holds, to skip an identical load */
	size_t loaded_cap;
	int lw, lh;             /* its size; 0 when none */
};

static void path_cache_free(void *p)
{
	struct path_cache *c = p;

	if (!c)
		return;
	astar_ws_free(c->ws);
	free(c->cells);
	free(c->legs);
	free(c->loaded);
	free(c);
}

static int path_cache_get(struct tool_ctx *ctx, int w, int h, struct path_cache **out)
{
	struct path_cache *c = tool_ctx_slot(ctx, TOOL_SLOT_ASTAR);
	int rc;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return ENG_ENOMEM;
		rc = tool_ctx_set_slot(ctx, TOOL_SLOT_ASTAR, c, path_cache_free);
		if (rc) {
			free(c);
			return rc;
		}
	}
	if (!c->ws || w > c->max_w || h > c->max_h) {
		int mw = w > c->max_w ? w : c->max_w, mh = h > c->max_h ? h : c->max_h;
		struct astar_ws *ws = astar_ws_new(mw, mh);

		if (!ws)
			return ENG_ENOMEM;
		astar_ws_free(c->ws);
		c->ws = ws;
		c->max_w = mw;
		c->max_h = mh;
		c->lw = c->lh = 0;
	}
	*out = c;
	return 0;
}

static int reserve(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n <= *cap)
		return 0;
	q = realloc(*p, n * size);
	if (!q)
		return ENG_ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/*
 * Loads g into the workspace unless it holds these very cells already:
 * consecutive plans mostly differ only where something moved, and a load
 * (with the flood it makes stale) costs more than the search.
 */
static int load_grid(struct path_cache *c, const struct grid *g)
{
	size_t n = (size_t)g->w * (size_t)g->h;
	int rc;

	if (c->lw == g->w && c->lh == g->h && !memcmp(c->loaded, g->cells, n))
		return 0;
	c->lw = c->lh = 0;
	rc = reserve((void **)&c->loaded, &c->loaded_cap, n, 1);
	if (!rc)
		rc = astar_ws_load(c->ws, g);
	if (rc)
		return rc;
	memcpy(c->loaded, g->cells, n);
	c->lw = g->w;
	c->lh = g->h;
	return 0;
}

const char *path_status_name(enum path_status s)
{
	switch (s) {
	case PATH_OK: return "ok";
	case PATH_START_BLOCKED: return "start_blocked";
	case PATH_NO_GOAL: return "no_reachable_cell_by_target";
	default: return "?";
	}
}

int path_plan(struct tool_ctx *ctx, int64_t t, const struct pose *cam, float heading,
	      long target, const struct grid_params *gp, float goal_radius_m,
	      struct path_plan *out)
{
	struct path_cache *c;
	const struct obb *tb;
	struct scene *s;
	const struct grid *g;
	double fx, fy, cost;
	vec3 lo, hi;
	float x, y, radius;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	out->heading = heading;
	rc = occupancy_build(ctx, t, cam, target, gp, &out->occ);
	if (rc)
		return rc;
	g = &out->occ.grid;
	rc = path_cache_get(ctx, g->w, g->h, &c);
	if (!rc)
		rc = load_grid(c, g);
	if (!rc)
		rc = scene_get(ctx, &s);
	if (rc)
		return rc;

	out->sx = out->occ.cam_cx;
	out->sy = out->occ.cam_cy;
	if (!grid_is_free(g, out->sx, out->sy)) {
		grid_world_to_cellf(g, cam->t[0], cam->t[1], &fx, &fy);
		if (grid_nearest_free(g, fx, fy, PATH_START_RADIUS_M / g->cell,
				      &out->sx, &out->sy)) {
			out->status = PATH_START_BLOCKED;
			return 0;
		}
		out->start_moved = true;
	}
	grid_cell_to_world(g, out->sx, out->sy, &x, &y);
	out->start_offset_m = hypotf(x - cam->t[0], y - cam->t[1]);

	tb = scene_box(s, (size_t)target);
	obb_aabb(tb, lo, hi);
	if (goal_radius_m < 0)
		goal_radius_m = PATH_GOAL_RADIUS_M;
	radius = 0.5f * hypotf(hi[0] - lo[0], hi[1] - lo[1]) + goal_radius_m;
	grid_world_to_cellf(g, tb->c[0], tb->c[1], &fx, &fy);
	rc = astar_search_nearest(c->ws, g, out->sx, out->sy, fx, fy, radius / g->cell,
				  &out->gx, &out->gy, &cost);
	if (rc == ENG_ENOTFOUND) {
		out->gx = out->gy = 0;
		out->status = PATH_NO_GOAL;
		return 0;
	}
	if (rc)
		return err_set(rc, "the path to the nearest reachable cell failed");
	grid_cell_to_world(g, out->gx, out->gy, &x, &y);
	out->goal_offset_m = hypotf(x - tb->c[0], y - tb->c[1]);
	out->length_m = cost * (double)g->cell;
	out->expanded = astar_expanded(c->ws);
	astar_path(c->ws, NULL, 0, &n);
	rc = reserve((void **)&c->cells, &c->cap, n, sizeof(*c->cells));
	if (!rc)
		rc = astar_path(c->ws, c->cells, c->cap, &out->ncells);
	if (rc)
		return rc;
	out->cells = c->cells;
	astar_legs(g, c->cells, out->ncells, heading, NULL, 0, &n);
	rc = reserve((void **)&c->legs, &c->legcap, n ? n : 1, sizeof(*c->legs));
	if (!rc)
		rc = astar_legs(g, c->cells, out->ncells, heading, c->legs, c->legcap,
				&out->nlegs);
	if (rc)
		return rc;
	out->legs = c->legs;
	out->status = PATH_OK;
	return 0;
}

/* ======================= plan_path ======================= */

static cJSON *xy(float x, float y)
{
	cJSON *a = cJSON_CreateArray(), *u, *v;

	u = cJSON_CreateNumber(tool__round(x, 3));
	v = cJSON_CreateNumber(tool__round(y, 3));
	if (!a || !u || !v) {
		cJSON_Delete(a);
		cJSON_Delete(u);
		cJSON_Delete(v);
		return NULL;
	}
	cJSON_AddItemToArray(a, u);
	cJSON_AddItemToArray(a, v);
	return a;
}

static int add_xy(cJSON *obj, const char *key, float x, float y)
{
	cJSON *a = xy(x, y);

	if (!a)
		return ENG_ENOMEM;
	if (key) {
		if (!cJSON_AddItemToObject(obj, key, a)) {
			cJSON_Delete(a);
			return ENG_ENOMEM;
		}
	} else {
		cJSON_AddItemToArray(obj, a);
	}
	return 0;
}

static int add_cell_ref(cJSON *obj, const char *key, const struct grid *g, int cx, int cy)
{
	cJSON *o = cJSON_AddObjectToObject(obj, key);
	float x, y;
	int rc;

	if (!o)
		return ENG_ENOMEM;
	grid_cell_to_world(g, cx, cy, &x, &y);
	rc = add_xy(o, "cell", (float)cx, (float)cy);
	if (!rc)
		rc = add_xy(o, "position", x, y);
	return rc;
}

static int add_legs(cJSON *result, const struct path_plan *p, const struct disc_params *dp)
{
	cJSON *arr = cJSON_AddArrayToObject(result, "legs");
	size_t i;

	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; i < p->nlegs; i++) {
		const struct astar_leg *l = &p->legs[i];
		cJSON *o = cJSON_CreateObject();
		char letter[2] = { bev_dir_letter(l->dir), 0 };
		float m = bev_dir_margin(l->yaw_deg);

		if (!o)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(arr, o);
		if (add_xy(o, "start", l->x0, l->y0) || add_xy(o, "end", l->x1, l->y1) ||
		    !tool__add_num(o, "length_m", l->length_m, 3) ||
		    !tool__add_num(o, "heading_deg", bev_wrap_deg((float)((double)l->heading * POSE_RAD2DEG)), 2) ||
		    !tool__add_num(o, "yaw_deg", l->yaw_deg, 2) ||
		    !cJSON_AddStringToObject(o, "direction", bev_dir_name(l->dir)) ||
		    !cJSON_AddStringToObject(o, "letter", letter) ||
		    !tool__add_num(o, "sector_margin_deg", m, 2) ||
		    !cJSON_AddBoolToObject(o, "ambiguous", m < dp->angle_margin_deg))
			return ENG_ENOMEM;
	}
	return 0;
}

/* At most max_points path points, evenly spaced in cells, both ends kept. */
static int add_points(cJSON *result, const struct path_plan *p, size_t max_points)
{
	const struct grid *g = &p->occ.grid;
	cJSON *arr = cJSON_AddArrayToObject(result, "path");
	size_t i, step;
	float x, y;

	if (!arr)
		return ENG_ENOMEM;
	if (!p->ncells)
		return 0;
	step = max_points > 1 ? (p->ncells - 1 + max_points - 2) / (max_points - 1) : 1;
	if (step < 1)
		step = 1;
	for (i = 0;; i += step) {
		int32_t c;

		if (i >= p->ncells - 1)
			i = p->ncells - 1;
		c = p->cells[i];
		grid_cell_to_world(g, c % g->w, c / g->w, &x, &y);
		if (add_xy(arr, NULL, x, y))
			return ENG_ENOMEM;
		if (i == p->ncells - 1)
			break;
	}
	return 0;
}

int path_compute(struct tool_ctx *ctx, const struct path_args *a, struct path_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	int rc;

	memset(out, 0, sizeof(*out));
	out->t = a->t;
	out->target = a->target;
	rc = tool__camera(ctx, "t", a->t, &out->cam, &out->heading);
	if (rc)
		return rc;
	if (a->target < 0 || (size_t)a->target >= rec->nobjects)
		return tool__reject(ctx, "/target", "no object with index %ld", a->target);
	return path_plan(ctx, a->t, &out->cam, out->heading, a->target, &a->grid,
			 a->goal_radius_m, &out->plan);
}

int path_write(struct tool_ctx *ctx, const struct path_result *r, size_t max_points,
	       cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct path_plan *p = &r->plan;
	const struct grid *g = &p->occ.grid;
	cJSON *c;
	int rc;

	if (!tool__add_time(result, "t_ns", r->t) ||
	    !tool__add_object_ref(result, "target", rec, r->target) ||
	    !cJSON_AddBoolToObject(result, "reachable", p->status == PATH_OK) ||
	    !cJSON_AddStringToObject(result, "status", path_status_name(p->status)))
		return ENG_ENOMEM;
	c = cJSON_AddObjectToObject(result, "camera");
	if (!c ||
	    !tool__add_vec3(c, "position", r->cam.t, 3) ||
	    !tool__add_num(c, "heading_deg", bev_wrap_deg((float)((double)r->heading * POSE_RAD2DEG)), 2) ||
	    add_xy(c, "cell", (float)p->occ.cam_cx, (float)p->occ.cam_cy) ||
	    !cJSON_AddStringToObject(c, "state", occupancy_cell_name(
		    g->cells[(size_t)p->occ.cam_cy * (size_t)g->w + (size_t)p->occ.cam_cx])))
		return ENG_ENOMEM;
	c = cJSON_AddObjectToObject(result, "grid");
	if (!c || !cJSON_AddNumberToObject(c, "w", g->w) || !cJSON_AddNumberToObject(c, "h", g->h) ||
	    !tool__add_num(c, "cell_m", g->cell, 3) || !tool__add_num(c, "x0", g->x0, 3) ||
	    !tool__add_num(c, "y0", g->y0, 3))
		return ENG_ENOMEM;
	if (p->status == PATH_START_BLOCKED) {
		if (!cJSON_AddNullToObject(result, "start"))
			return ENG_ENOMEM;
	} else {
		rc = add_cell_ref(result, "start", g, p->sx, p->sy);
		c = cJSON_GetObjectItemCaseSensitive(result, "start");
		if (rc || !cJSON_AddBoolToObject(c, "moved", p->start_moved) ||
		    !tool__add_num(c, "offset_m", p->start_offset_m, 3))
			return ENG_ENOMEM;
	}
	if (p->status != PATH_OK) {
		if (!cJSON_AddNullToObject(result, "goal") ||
		    !cJSON_AddNullToObject(result, "length_m") ||
		    !cJSON_AddArrayToObject(result, "path") ||
		    !cJSON_AddArrayToObject(result, "legs"))
			return ENG_ENOMEM;
		return 0;
	}
	rc = add_cell_ref(result, "goal", g, p->gx, p->gy);
	c = cJSON_GetObjectItemCaseSensitive(result, "goal");
	if (rc || !tool__add_num(c, "offset_to_target_m", p->goal_offset_m, 3) ||
	    !tool__add_num(result, "length_m", p->length_m, 3) ||
	    !cJSON_AddNumberToObject(result, "cells", (double)p->ncells) ||
	    !cJSON_AddNumberToObject(result, "expanded", (double)p->expanded))
		return ENG_ENOMEM;
	rc = add_points(result, p, max_points);
	if (!rc)
		rc = add_legs(result, p, tool_ctx_disc(ctx));
	return rc;
}

int tool_plan_path(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	struct path_args a;
	struct path_result r;
	size_t max_points = (size_t)tool__num(args, "max_points", PATH_MAX_POINTS);
	int rc;

	a.t = tool__time(args, "t", 0);
	a.goal_radius_m = (float)tool__num(args, "goal_radius_m", PATH_GOAL_RADIUS_M);
	occupancy_read_params(args, &a.grid);
	rc = tool__camera(ctx, "t", a.t, &r.cam, &r.heading);
	if (!rc)
		rc = tool__object_arg(ctx, args, "target", &a.target);
	if (!rc)
		rc = path_compute(ctx, &a, &r);
	if (!rc)
		rc = path_write(ctx, &r, max_points, result);
	return rc;
}
