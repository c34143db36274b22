/* SPDX-License-Identifier: MIT */
/* The occupancy grid at a time, and the build_occupancy tool. */
#include "occupancy.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "gridio.h"
#include "registry.h"
#include "scene.h"

/*
 * The static layer: the static boxes rasterised once for a key (the
 * excluded target, the boxes skipped, the bounds, the floor and the
 * settings) and copied under the dynamic boxes at each call. Marking is a
 * union (a blocked cell stays blocked, occupied wins over inflated), so two
 * passes give the cells of one pass over all boxes. The clip sampler plans
 * to one target at many times in a row, which keeps the key.
 */
struct occ_layer {
	bool valid;
	long target;            /* excluded static object, or -1 */
	uint64_t skip_hash;     /* of the skipped box indices */
	float lo[2], hi[2];     /* bounds */
	int w, h;
	float floor_z;
	struct grid_params p;
	uint8_t *cells;
	size_t cap;
	uint64_t used;          /* tick of the last use */
};

/*
 * Static layers kept: one per key, the least recently used replaced. The
 * clip sampler's enumeration goes from target to target within a span of
 * time and comes back to each in the next span.
 */
#define OCC_LAYERS 16

/*
 * A dynamic box's footprint: the cells it marks on an empty grid, as
 * (cell, value) pairs, for the pose it had. Objects sit still most of the
 * time, so a box is rasterised again only when it has moved. Marking is a
 * union (occupied over inflated over free), so merging the footprints into
 * the static layer gives the cells of rasterising the boxes onto it.
 */
struct occ_footprint {
	bool valid;
	struct obb b;
	uint32_t *idx;
	uint8_t *val;
	size_t n, cap;
};

/* The footprints of the dynamic boxes, for one grid placement and setting. */
struct occ_dynamic {
	struct occ_footprint *fp;   /* one per box */
	size_t nfp;
	struct grid geo;            /* size and placement (cells unused) */
	struct grid_params p;
	float floor_z;
	uint8_t *scratch;           /* an empty grid of geo's size */
	size_t scap;
};

/* Cell memory, the masks and the static layers, kept across calls. */
struct occ_cache {
	uint8_t *cells;
	size_t cap;
	uint8_t *skip;   /* boxes holding the camera */
	uint8_t *mask;   /* boxes left out of one pass */
	size_t nskip;    /* capacity of skip and mask */
	struct occ_layer layers[OCC_LAYERS];
	uint64_t tick;
	struct occ_dynamic dyn;
};

static void occ_cache_free(void *p)
{
	struct occ_cache *c = p;
	size_t i;

	if (!c)
		return;
	free(c->cells);
	free(c->skip);
	free(c->mask);
	for (i = 0; i < OCC_LAYERS; i++)
		free(c->layers[i].cells);
	for (i = 0; i < c->dyn.nfp; i++) {
		free(c->dyn.fp[i].idx);
		free(c->dyn.fp[i].val);
	}
	free(c->dyn.fp);
	free(c->dyn.scratch);
	free(c);
}

static int occ_cache_get(struct tool_ctx *ctx, struct occ_cache **out)
{
	struct occ_cache *c = tool_ctx_slot(ctx, TOOL_SLOT_OCCUPANCY);
	int rc;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return ENG_ENOMEM;
		rc = tool_ctx_set_slot(ctx, TOOL_SLOT_OCCUPANCY, c, occ_cache_free);
		if (rc) {
			free(c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

const char *occupancy_cell_name(int v)
{
	switch (v) {
	case GRID_FREE: return "free";
	case GRID_OCCUPIED: return "occupied";
	case GRID_INFLATED: return "inflated";
	default: return "?";
	}
}

static bool is_dynamic(const struct recording *rec, size_t i)
{
	return rec->objects[i].motion == REC_DYNAMIC && rec->objects[i].pose_count > 0;
}

static int reserve_bytes(uint8_t **p, size_t *cap, size_t n)
{
	uint8_t *m;

	if (n <= *cap)
		return 0;
	m = realloc(*p, n);
	if (!m)
		return ENG_ENOMEM;
	*p = m;
	*cap = n;
	return 0;
}

/*
 * The static layer for this key in *out: a kept one, or one rasterised now
 * in place of the least recently used.
 */
static int static_layer(struct occ_cache *c, const struct recording *rec,
			const struct obb *boxes, size_t n, long target, uint64_t skip_hash,
			const float lo[2], const float hi[2], int w, int h, float floor_z,
			const struct grid_params *p, const uint8_t **out)
{
	struct occ_layer *l = &c->layers[0];
	struct grid g;
	size_t i;
	int rc;

	for (i = 0; i < OCC_LAYERS; i++) {
		struct occ_layer *k = &c->layers[i];

		if (k->valid && k->target == target && k->skip_hash == skip_hash &&
		    k->lo[0] == lo[0] && k->lo[1] == lo[1] && k->hi[0] == hi[0] &&
		    k->hi[1] == hi[1] && k->w == w && k->h == h && k->floor_z == floor_z &&
		    /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): floats only; -0 != 0 just misses */
		    !memcmp(&k->p, p, sizeof(*p))) {
			k->used = ++c->tick;
			*out = k->cells;
			return 0;
		}
		if (!k->valid || (l->valid && k->used < l->used))
			l = k;
	}
	l->valid = false;
	rc = reserve_bytes(&l->cells, &l->cap, grid_cells_needed(w, h));
	if (!rc)
		rc = grid_init(&g, l->cells, w, h, lo[0], lo[1], p->cell_m);
	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		c->mask[i] = c->skip[i] || is_dynamic(rec, i) || (long)i == target;
	rc = grid_rasterize(&g, boxes, n, p, floor_z, GRID_SKIP_NONE, c->mask);
	if (rc)
		return rc;
	l->valid = true;
	l->target = target;
	l->skip_hash = skip_hash;
	memcpy(l->lo, lo, sizeof(l->lo));
	memcpy(l->hi, hi, sizeof(l->hi));
	l->w = w;
	l->h = h;
	l->floor_z = floor_z;
	l->p = *p;
	l->used = ++c->tick;
	*out = l->cells;
	return 0;
}

/*
 * Makes d's footprints those of grids like g under p and floor_z, with a
 * slot per box: a new placement or setting drops every footprint.
 */
static int dynamic_reset(struct occ_dynamic *d, size_t n, const struct grid *g,
			 const struct grid_params *p, float floor_z)
{
	size_t cells = grid_cells_needed(g->w, g->h), i;
	int rc;

	if (n > d->nfp) {
		struct occ_footprint *f = realloc(d->fp, n * sizeof(*f));

		if (!f)
			return ENG_ENOMEM;
		memset(f + d->nfp, 0, (n - d->nfp) * sizeof(*f));
		d->fp = f;
		d->nfp = n;
	}
	if (d->geo.w == g->w && d->geo.h == g->h && d->geo.x0 == g->x0 && d->geo.y0 == g->y0 &&
	    d->geo.cell == g->cell && d->floor_z == floor_z &&
	    /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): floats only; -0 != 0 just misses */
	    !memcmp(&d->p, p, sizeof(*p)))
		return 0;
	for (i = 0; i < d->nfp; i++)
		d->fp[i].valid = false;
	rc = reserve_bytes(&d->scratch, &d->scap, cells);
	if (rc)
		return rc;
	memset(d->scratch, GRID_FREE, cells);
	d->geo = *g;
	d->geo.cells = NULL;
	d->p = *p;
	d->floor_z = floor_z;
	return 0;
}

/* The footprint of box b (index i): kept when b has not moved, else rasterised again. */
static int footprint(struct occ_dynamic *d, size_t i, const struct obb *b)
{
	struct occ_footprint *f = &d->fp[i];
	size_t cells = grid_cells_needed(d->geo.w, d->geo.h), k, n = 0;
	struct grid e;
	int rc, x, y, x_lo = 0, x_hi = -1, y_lo = 0, y_hi = -1;

	/* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): floats only; -0 != 0 just misses */
	if (f->valid && !memcmp(&f->b, b, sizeof(*b)))
		return 0;
	f->valid = false;
	rc = grid_init(&e, d->scratch, d->geo.w, d->geo.h, d->geo.x0, d->geo.y0, d->geo.cell);
	if (!rc)
		rc = grid_rasterize(&e, b, 1, &d->p, d->floor_z, GRID_SKIP_NONE, NULL);
	/* the box marks cells of its range only: the rest of the scratch grid stays free */
	if (!rc)
		rc = grid_box_range(&e, b, d->p.inflate_m, &x_lo, &x_hi, &y_lo, &y_hi);
	if (rc) {
		memset(d->scratch, GRID_FREE, cells);
		return rc;
	}
	for (y = y_lo; y <= y_hi; y++)
		for (x = x_lo, k = (size_t)y * (size_t)e.w + (size_t)x; x <= x_hi; x++, k++)
			n += d->scratch[k] != GRID_FREE;
	if (n > f->cap) {
		uint32_t *ix = realloc(f->idx, n * sizeof(*ix));
		uint8_t *v;

		if (!ix)
			return ENG_ENOMEM;
		f->idx = ix;
		v = realloc(f->val, n);
		if (!v)
			return ENG_ENOMEM;
		f->val = v;
		f->cap = n;
	}
	f->n = 0;
	for (y = y_lo; y <= y_hi; y++)
		for (x = x_lo, k = (size_t)y * (size_t)e.w + (size_t)x; x <= x_hi; x++, k++)
			if (d->scratch[k] != GRID_FREE) {
				f->idx[f->n] = (uint32_t)k;
				f->val[f->n++] = d->scratch[k];
				d->scratch[k] = GRID_FREE; /* the scratch grid stays empty */
			}
	f->b = *b;
	f->valid = true;
	return 0;
}

/* Marks footprint f in g: occupied wins, inflated only over free. */
static void footprint_apply(const struct occ_footprint *f, struct grid *g)
{
	size_t k;

	for (k = 0; k < f->n; k++) {
		uint8_t *c = &g->cells[f->idx[k]];

		if (f->val[k] == GRID_OCCUPIED)
			*c = GRID_OCCUPIED;
		else if (*c == GRID_FREE)
			*c = GRID_INFLATED;
	}
}

int occupancy_build(struct tool_ctx *ctx, int64_t t, const struct pose *cam,
		    long target, const struct grid_params *p, struct occupancy *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	struct occ_cache *c;
	struct scene *s;
	const struct obb *boxes;
	uint64_t skip_hash = 1469598103934665603ull;
	const uint8_t *layer = NULL;
	size_t n, i;
	float lo[2], hi[2];
	int w, h, rc;

	rc = occ_cache_get(ctx, &c);
	if (!rc)
		rc = scene_get(ctx, &s);
	if (!rc)
		rc = scene_at(s, t);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	if (p)
		out->params = *p;
	else
		grid_defaults(&out->params);
	p = &out->params;
	n = scene_count(s);
	boxes = scene_boxes(s);
	if (c->nskip < n) {
		uint8_t *m = realloc(c->skip, n), *k;

		if (!m)
			return ENG_ENOMEM;
		c->skip = m;
		k = realloc(c->mask, n);
		if (!k)
			return ENG_ENOMEM;
		c->mask = k;
		c->nskip = n;
	}
	for (i = 0; i < n; i++) {
		c->skip[i] = obb_contains(&boxes[i], cam->t);
		out->nskipped += c->skip[i];
		if (c->skip[i])
			skip_hash = (skip_hash ^ (uint64_t)i) * 1099511628211ull;
	}
	out->floor_z = grid_floor(boxes, n, cam->t[2], p);
	rc = grid_scene_bounds(boxes, n, cam->t, p, lo, hi);
	if (rc)
		return err_set(rc, "the scene at %" PRId64 " ns has no finite bounds", t);
	rc = grid_shape(lo, hi, p->cell_m, &w, &h);
	if (rc)
		return err_set(rc, "the scene spans %.1f x %.1f m, more than %d cells of %.2f m a side",
			       (double)(hi[0] - lo[0]), (double)(hi[1] - lo[1]), GRID_MAX_DIM,
			       (double)p->cell_m);
	rc = reserve_bytes(&c->cells, &c->cap, grid_cells_needed(w, h));
	if (!rc)
		rc = static_layer(c, rec, boxes, n, target >= 0 && !is_dynamic(rec, (size_t)target) ?
				  target : -1, skip_hash, lo, hi, w, h, out->floor_z, p, &layer);
	if (!rc)
		rc = grid_init(&out->grid, c->cells, w, h, lo[0], lo[1], p->cell_m);
	if (!rc) {
		memcpy(c->cells, layer, grid_cells_needed(w, h));
		rc = dynamic_reset(&c->dyn, n, &out->grid, p, out->floor_z);
		for (i = 0; i < n && !rc; i++) {
			if (c->skip[i] || !is_dynamic(rec, i) || (long)i == target)
				continue;
			rc = footprint(&c->dyn, i, &boxes[i]);
			if (!rc)
				footprint_apply(&c->dyn.fp[i], &out->grid);
		}
	}
	if (rc)
		return err_set(rc, "cannot rasterise the boxes at %" PRId64 " ns", t);
	out->t_ns = t;
	out->target = target;
	out->cam[0] = cam->t[0];
	out->cam[1] = cam->t[1];
	out->cam[2] = cam->t[2];
	/* the bounds hold the camera, so its cell is inside the grid */
	if (grid_world_to_cell(&out->grid, cam->t[0], cam->t[1], &out->cam_cx, &out->cam_cy)) {
		out->cam_cx = 0;
		out->cam_cy = 0;
	}
	return 0;
}

/* ======================= build_occupancy ======================= */

void occupancy_read_params(const cJSON *args, struct grid_params *p)
{
	grid_defaults(p);
	p->cell_m = (float)tool__num(args, "cell_m", p->cell_m);
	p->inflate_m = (float)tool__num(args, "inflate_m", p->inflate_m);
}

/* A new JSON array [a, b], or NULL when out of memory. */
static cJSON *pair(double a, double b)
{
	cJSON *arr = cJSON_CreateArray(), *x = cJSON_CreateNumber(a), *y = cJSON_CreateNumber(b);

	if (!arr || !x || !y) {
		cJSON_Delete(arr);
		cJSON_Delete(x);
		cJSON_Delete(y);
		return NULL;
	}
	cJSON_AddItemToArray(arr, x);
	cJSON_AddItemToArray(arr, y);
	return arr;
}

static int add_cell(cJSON *obj, const char *key, int cx, int cy)
{
	cJSON *a = pair(cx, cy);

	if (!a)
		return ENG_ENOMEM;
	if (!cJSON_AddItemToObject(obj, key, a)) {
		cJSON_Delete(a);
		return ENG_ENOMEM;
	}
	return 0;
}

/* The cells as [[value, count], ...] runs in row-major order (row 0 first). */
static int add_rle(cJSON *obj, const struct grid *g)
{
	size_t total = (size_t)g->w * (size_t)g->h, i = 0;
	cJSON *arr = cJSON_AddArrayToObject(obj, "rle");

	if (!arr)
		return ENG_ENOMEM;
	while (i < total) {
		size_t j = i;
		cJSON *run;

		while (j < total && g->cells[j] == g->cells[i])
			j++;
		run = pair(g->cells[i], (double)(j - i));
		if (!run)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(arr, run);
		i = j;
	}
	return 0;
}

/* A relative path without "..", ending in ".pgm". */
static bool pgm_path_ok(const char *p)
{
	size_t n = strlen(p);
	const char *q;

	if (n < 5 || strcmp(p + n - 4, ".pgm") || p[0] == '/')
		return false;
	for (q = p; *q; q++)
		if (q[0] == '.' && q[1] == '.' && (q == p || q[-1] == '/') &&
		    (q[2] == '/' || q[2] == '\0'))
			return false;
	return true;
}

int occupancy_compute(struct tool_ctx *ctx, const struct occupancy_args *a,
		      struct occupancy_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	int rc;

	memset(out, 0, sizeof(*out));
	out->t = a->t;
	out->target = a->target;
	out->params = a->grid;
	rc = tool__camera(ctx, "t", a->t, &out->cam, &out->heading);
	if (rc)
		return rc;
	if (a->target >= 0 && (size_t)a->target >= rec->nobjects)
		return tool__reject(ctx, "/target", "no object with index %ld", a->target);
	rc = occupancy_build(ctx, a->t, &out->cam, a->target, &a->grid, &out->occ);
	if (rc)
		return rc;
	if (a->target >= 0) {
		struct scene *s;

		rc = scene_get(ctx, &s);
		if (rc)
			return rc;
		memcpy(out->target_pos, scene_box(s, (size_t)a->target)->c, sizeof(out->target_pos));
	}
	return 0;
}

int occupancy_write(struct tool_ctx *ctx, const struct occupancy_result *r, bool rle,
		    cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct occupancy *occ = &r->occ;
	const struct grid_params *gp = &r->params;
	struct grid_summary sum;
	cJSON *g, *c;

	grid_summarize(&occ->grid, &sum);
	if (!tool__add_time(result, "t_ns", r->t) ||
	    !tool__add_object_ref(result, "target", rec, r->target))
		return ENG_ENOMEM;
	g = cJSON_AddObjectToObject(result, "grid");
	if (!g ||
	    !cJSON_AddNumberToObject(g, "w", occ->grid.w) ||
	    !cJSON_AddNumberToObject(g, "h", occ->grid.h) ||
	    !tool__add_num(g, "cell_m", occ->grid.cell, 3) ||
	    !tool__add_num(g, "x0", occ->grid.x0, 3) ||
	    !tool__add_num(g, "y0", occ->grid.y0, 3) ||
	    !tool__add_num(g, "floor_z", occ->floor_z, 3) ||
	    !tool__add_num(g, "band_lo_z", occ->floor_z + gp->band_lo_m, 3) ||
	    !tool__add_num(g, "band_hi_z", occ->floor_z + gp->band_hi_m, 3) ||
	    !tool__add_num(g, "inflate_m", gp->inflate_m, 3) ||
	    !cJSON_AddNumberToObject(result, "free", (double)sum.free) ||
	    !cJSON_AddNumberToObject(result, "occupied", (double)sum.occupied) ||
	    !cJSON_AddNumberToObject(result, "inflated", (double)sum.inflated) ||
	    !cJSON_AddNumberToObject(result, "skipped_boxes", (double)occ->nskipped))
		return ENG_ENOMEM;
	c = cJSON_AddObjectToObject(result, "camera");
	if (!c || !tool__add_vec3(c, "position", r->cam.t, 3) ||
	    add_cell(c, "cell", occ->cam_cx, occ->cam_cy) ||
	    !cJSON_AddStringToObject(c, "state", occupancy_cell_name(
		    occ->grid.cells[(size_t)occ->cam_cy * (size_t)occ->grid.w + (size_t)occ->cam_cx])) ||
	    !cJSON_AddBoolToObject(c, "free", grid_is_free(&occ->grid, occ->cam_cx, occ->cam_cy)))
		return ENG_ENOMEM;
	if (r->target >= 0) {
		int cx, cy;

		c = cJSON_AddObjectToObject(result, "target_cell");
		if (!c || !tool__add_vec3(c, "position", r->target_pos, 3))
			return ENG_ENOMEM;
		if (!grid_world_to_cell(&occ->grid, r->target_pos[0], r->target_pos[1], &cx, &cy)) {
			if (add_cell(c, "cell", cx, cy) ||
			    !cJSON_AddStringToObject(c, "state", occupancy_cell_name(
				    occ->grid.cells[(size_t)cy * (size_t)occ->grid.w + (size_t)cx])))
				return ENG_ENOMEM;
		} else if (!cJSON_AddNullToObject(c, "cell") || !cJSON_AddNullToObject(c, "state")) {
			return ENG_ENOMEM;
		}
	} else if (!cJSON_AddNullToObject(result, "target_cell")) {
		return ENG_ENOMEM;
	}
	return rle ? add_rle(result, &occ->grid) : 0;
}

int tool_build_occupancy(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	const char *pgm = tool__str(args, "pgm_path");
	bool rle = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "rle"));
	struct occupancy_args a;
	struct occupancy_result r;
	struct pose cam;
	float heading;
	int rc;

	if (pgm && !pgm_path_ok(pgm))
		return tool__reject(ctx, "/pgm_path",
				    "must be a relative path ending in .pgm without '..', got '%.100s'",
				    pgm);
	a.t = tool__time(args, "t", 0);
	a.target = -1;
	occupancy_read_params(args, &a.grid);
	rc = tool__camera(ctx, "t", a.t, &cam, &heading);
	if (!rc && tool__has(args, "target"))
		rc = tool__object_arg(ctx, args, "target", &a.target);
	if (!rc)
		rc = occupancy_compute(ctx, &a, &r);
	if (!rc)
		rc = occupancy_write(ctx, &r, rle, result);
	if (rc)
		return rc;
	if (pgm) {
		rc = gridio_write_pgm(pgm, &r.occ.grid, NULL, 0, true);
		if (rc)
			return rc;
		if (!cJSON_AddStringToObject(result, "pgm_path", pgm))
			return ENG_ENOMEM;
	}
	return 0;
}
