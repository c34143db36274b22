/* SPDX-License-Identifier: MIT */
/* Occupancy grid: shape, box rasterisation, lookups, line of sight. */
#include "grid.h"

#include <math.h>
#include <string.h>

#include "errcode.h"

void grid_defaults(struct grid_params *p)
{
	p->cell_m = 0.10f;
	p->inflate_m = 0.25f;
	p->band_lo_m = 0.05f;
	p->band_hi_m = 1.8f;
	p->margin_m = 0.5f;
	p->cam_floor_m = 1.6f;
}

size_t grid_cells_needed(int w, int h)
{
	if (w < 1 || h < 1 || w > GRID_MAX_DIM || h > GRID_MAX_DIM)
		return 0;
	return (size_t)w * (size_t)h;
}

int grid_init(struct grid *g, uint8_t *cells, int w, int h, float x0,
	      float y0, float cell)
{
	size_t n = grid_cells_needed(w, h);

	if (!n || !cells || !isfinite(cell) || cell <= 0 || !isfinite(x0) ||
	    !isfinite(y0))
		return ENG_EINVAL;
	g->w = w;
	g->h = h;
	g->x0 = x0;
	g->y0 = y0;
	g->cell = cell;
	g->cells = cells;
	memset(cells, GRID_FREE, n);
	return 0;
}

float grid_floor(const struct obb *boxes, size_t n, float cam_z,
		 const struct grid_params *p)
{
	float f = INFINITY;
	size_t i;

	if (!n)
		return cam_z - p->cam_floor_m;
	for (i = 0; i < n; i++) {
		vec3 lo, hi;

		obb_aabb(&boxes[i], lo, hi);
		if (lo[2] < f)
			f = lo[2];
	}
	return f;
}

int grid_scene_bounds(const struct obb *boxes, size_t n, const float *cam,
		      const struct grid_params *p, float lo[2], float hi[2])
{
	float l[2] = { INFINITY, INFINITY }, u[2] = { -INFINITY, -INFINITY };
	size_t i;
	int k;

	if ((!n && !cam) || (n && !boxes))
		return ENG_EINVAL;
	for (i = 0; i < n; i++) {
		vec3 a, b;

		obb_aabb(&boxes[i], a, b);
		for (k = 0; k < 2; k++) {
			if (!isfinite(a[k]) || !isfinite(b[k]))
				return ENG_EINVAL;
			l[k] = fminf(l[k], a[k]);
			u[k] = fmaxf(u[k], b[k]);
		}
	}
	if (cam) {
		for (k = 0; k < 2; k++) {
			if (!isfinite(cam[k]))
				return ENG_EINVAL;
			l[k] = fminf(l[k], cam[k]);
			u[k] = fmaxf(u[k], cam[k]);
		}
	}
	for (k = 0; k < 2; k++) {
		lo[k] = l[k] - p->margin_m;
		hi[k] = u[k] + p->margin_m;
	}
	return 0;
}

int grid_shape(const float lo[2], const float hi[2], float cell, int *w,
	       int *h)
{
	double n[2];
	int k;

	if (!isfinite(cell) || cell <= 0)
		return ENG_EINVAL;
	for (k = 0; k < 2; k++) {
		if (!isfinite(lo[k]) || !isfinite(hi[k]) || hi[k] < lo[k])
			return ENG_EINVAL;
		n[k] = ceil(((double)hi[k] - (double)lo[k]) / (double)cell);
		if (n[k] < 1)
			n[k] = 1;
		if (n[k] > GRID_MAX_DIM)
			return ENG_ETOOBIG;
	}
	*w = (int)n[0];
	*h = (int)n[1];
	return 0;
}

/* ---------------------------------------------------------------- */
/* Footprints                                                         */

struct pt2 {
	double x, y;
};

static double cross2(struct pt2 o, struct pt2 a, struct pt2 b)
{
	return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

static int pt2_cmp(struct pt2 a, struct pt2 b)
{
	if (a.x != b.x)
		return a.x < b.x ? -1 : 1;
	if (a.y != b.y)
		return a.y < b.y ? -1 : 1;
	return 0;
}

/*
 * Convex hull (Andrew's monotone chain) of n <= 8 points, counter-
 * clockwise, collinear points dropped. Sorts p in place. Returns the
 * number of hull vertices written to out (1 or 2 for degenerate input).
 */
static int hull2(struct pt2 *p, int n, struct pt2 *out)
{
	int i, j, k = 0, lower;

	for (i = 1; i < n; i++) {
		struct pt2 v = p[i];

		for (j = i - 1; j >= 0 && pt2_cmp(p[j], v) > 0; j--)
			p[j + 1] = p[j];
		p[j + 1] = v;
	}
	for (i = 0; i < n; i++) {
		while (k >= 2 && cross2(out[k - 2], out[k - 1], p[i]) <= 0)
			k--;
		out[k++] = p[i];
	}
	lower = k + 1;
	for (i = n - 2; i >= 0; i--) {
		while (k >= lower && cross2(out[k - 2], out[k - 1], p[i]) <= 0)
			k--;
		out[k++] = p[i];
	}
	if (k > 1)
		k--; /* the last point repeats the first */
	if (k == 2 && !pt2_cmp(out[0], out[1]))
		k = 1;
	return k;
}

static double seg_dist2(struct pt2 q, struct pt2 a, struct pt2 b)
{
	double dx = b.x - a.x, dy = b.y - a.y;
	double l2 = dx * dx + dy * dy, t = 0, ex, ey;

	if (l2 > 0) {
		t = ((q.x - a.x) * dx + (q.y - a.y) * dy) / l2;
		if (t < 0)
			t = 0;
		else if (t > 1)
			t = 1;
	}
	ex = q.x - (a.x + t * dx);
	ey = q.y - (a.y + t * dy);
	return ex * ex + ey * ey;
}

/* Squared distance from q to the convex polygon hv[0..n) (0 inside). */
static double poly_dist2(struct pt2 q, const struct pt2 *hv, int n)
{
	double best = INFINITY;
	bool inside = n >= 3;
	int i;

	for (i = 0; i < n; i++) {
		struct pt2 a = hv[i], b = hv[(i + 1) % n];

		if (inside && cross2(a, b, q) < 0)
			inside = false;
	}
	if (inside)
		return 0;
	if (n == 1)
		return seg_dist2(q, hv[0], hv[0]);
	for (i = 0; i < n; i++) {
		double d = seg_dist2(q, hv[i], hv[(i + 1) % n]);

		if (d < best)
			best = d;
	}
	return best;
}

static int clampi(double v, int lo, int hi)
{
	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return (int)v;
}

/*
 * The XY footprint of b (its corners' convex hull in hv, n points) and the
 * cells whose centre may lie within infl of it, clamped to g.
 */
static int box_range(const struct grid *g, const struct obb *b, double infl, struct pt2 hv[9],
		     int *n, int *x_lo, int *x_hi, int *y_lo, int *y_hi)
{
	struct pt2 p[8];
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
	vec3 c[8];
	int i;

	obb_corners(b, c);
	for (i = 0; i < 8; i++) {
		if (!isfinite(c[i][0]) || !isfinite(c[i][1]) || !isfinite(c[i][2]))
			return ENG_EINVAL;
		p[i].x = c[i][0];
		p[i].y = c[i][1];
		xmin = fmin(xmin, p[i].x);
		xmax = fmax(xmax, p[i].x);
		ymin = fmin(ymin, p[i].y);
		ymax = fmax(ymax, p[i].y);
	}
	if (hv)
		*n = hull2(p, 8, hv);
	/* cells whose centre may lie within infl of the footprint */
	*x_lo = clampi(floor((xmin - infl - (double)g->x0) / (double)g->cell - 0.5), 0, g->w - 1);
	*x_hi = clampi(ceil((xmax + infl - (double)g->x0) / (double)g->cell - 0.5), -1, g->w - 1);
	*y_lo = clampi(floor((ymin - infl - (double)g->y0) / (double)g->cell - 0.5), 0, g->h - 1);
	*y_hi = clampi(ceil((ymax + infl - (double)g->y0) / (double)g->cell - 0.5), -1, g->h - 1);
	return 0;
}

int grid_box_range(const struct grid *g, const struct obb *b, float infl_m, int *x_lo,
		   int *x_hi, int *y_lo, int *y_hi)
{
	return box_range(g, b, (double)infl_m, NULL, NULL, x_lo, x_hi, y_lo, y_hi);
}

static int raster_box(struct grid *g, const struct obb *b, double infl)
{
	struct pt2 hv[9];
	double infl2 = infl * infl;
	int n = 0, cx, cy, x_lo, x_hi, y_lo, y_hi, rc;

	rc = box_range(g, b, infl, hv, &n, &x_lo, &x_hi, &y_lo, &y_hi);
	if (rc)
		return rc;
	for (cy = y_lo; cy <= y_hi; cy++) {
		uint8_t *row = g->cells + (size_t)cy * (size_t)g->w;
		struct pt2 q;

		q.y = (double)g->y0 + (cy + 0.5) * (double)g->cell;
		for (cx = x_lo; cx <= x_hi; cx++) {
			double d2;

			if (row[cx] == GRID_OCCUPIED)
				continue;
			q.x = (double)g->x0 + (cx + 0.5) * (double)g->cell;
			d2 = poly_dist2(q, hv, n);
			if (d2 <= 0)
				row[cx] = GRID_OCCUPIED;
			else if (d2 <= infl2)
				row[cx] = GRID_INFLATED;
		}
	}
	return 0;
}

int grid_rasterize(struct grid *g, const struct obb *boxes, size_t n,
		   const struct grid_params *p, float floor_z, size_t skip,
		   const uint8_t *skip_mask)
{
	double band_lo = (double)floor_z + (double)p->band_lo_m;
	double band_hi = (double)floor_z + (double)p->band_hi_m;
	size_t i;
	int rc;

	if (n && !boxes)
		return ENG_EINVAL;
	if (!isfinite(floor_z) || !isfinite(p->inflate_m) || p->inflate_m < 0)
		return ENG_EINVAL;
	for (i = 0; i < n; i++) {
		vec3 lo, hi;

		if (i == skip || (skip_mask && skip_mask[i]))
			continue;
		obb_aabb(&boxes[i], lo, hi);
		if (!isfinite(lo[2]) || !isfinite(hi[2]))
			return ENG_EINVAL;
		if ((double)hi[2] <= band_lo || (double)lo[2] >= band_hi)
			continue;
		rc = raster_box(g, &boxes[i], p->inflate_m);
		if (rc)
			return rc;
	}
	return 0;
}

void grid_summarize(const struct grid *g, struct grid_summary *out)
{
	size_t i, n = (size_t)g->w * (size_t)g->h;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		switch (g->cells[i]) {
		case GRID_FREE: out->free++; break;
		case GRID_INFLATED: out->inflated++; break;
		default: out->occupied++; break;
		}
	}
}

/* ---------------------------------------------------------------- */
/* Lookups                                                            */

bool grid_in(const struct grid *g, int cx, int cy)
{
	return cx >= 0 && cy >= 0 && cx < g->w && cy < g->h;
}

bool grid_is_free(const struct grid *g, int cx, int cy)
{
	return grid_in(g, cx, cy) &&
	       g->cells[(size_t)cy * (size_t)g->w + (size_t)cx] == GRID_FREE;
}

int grid_world_to_cell(const struct grid *g, float x, float y, int *cx,
		       int *cy)
{
	double fx = ((double)x - (double)g->x0) / (double)g->cell;
	double fy = ((double)y - (double)g->y0) / (double)g->cell;

	if (!isfinite(fx) || !isfinite(fy))
		return ENG_ERANGE;
	fx = floor(fx);
	fy = floor(fy);
	if (fx < 0 || fy < 0 || fx >= g->w || fy >= g->h)
		return ENG_ERANGE;
	*cx = (int)fx;
	*cy = (int)fy;
	return 0;
}

void grid_world_to_cellf(const struct grid *g, float x, float y,
			 double *fx, double *fy)
{
	*fx = ((double)x - (double)g->x0) / (double)g->cell - 0.5;
	*fy = ((double)y - (double)g->y0) / (double)g->cell - 0.5;
}

void grid_cell_to_world(const struct grid *g, int cx, int cy, float *x,
			float *y)
{
	*x = (float)((double)g->x0 + (cx + 0.5) * (double)g->cell);
	*y = (float)((double)g->y0 + (cy + 0.5) * (double)g->cell);
}

/* The search of grid_nearest_free(): the point, the tie-break point, the best so far. */
struct nearest {
	const struct grid *g;
	double fx, fy, max2;
	bool toward;        /* ties to the cell nearest (tx, ty) */
	double tx, ty;
	double best, best_t;
	long bx, by;
};

/* Keeps (x, y) when it is free and beats the best so far. */
static void nearest_try(struct nearest *n, long x, long y)
{
	const struct grid *g = n->g;
	double dx, dy, d2, t2 = 0;

	if (x < 0 || y < 0 || x >= g->w || y >= g->h)
		return;
	if (g->cells[(size_t)y * (size_t)g->w + (size_t)x] != GRID_FREE)
		return;
	dx = (double)x - n->fx;
	dy = (double)y - n->fy;
	d2 = dx * dx + dy * dy;
	if (d2 > n->max2)
		return;
	if (n->toward)
		t2 = ((double)x - n->tx) * ((double)x - n->tx) +
		     ((double)y - n->ty) * ((double)y - n->ty);
	/* distances equal to 1e-9 cells^2 are ties (float noise of the centre) */
	if (d2 < n->best - 1e-9 ||
	    (fabs(d2 - n->best) <= 1e-9 &&
	     (t2 < n->best_t - 1e-9 ||
	      (fabs(t2 - n->best_t) <= 1e-9 && (y < n->by || (y == n->by && x < n->bx)))))) {
		n->best = d2 < n->best ? d2 : n->best;
		n->best_t = t2;
		n->bx = x;
		n->by = y;
	}
}

static int nearest_free(struct nearest *n, int *cx, int *cy)
{
	const struct grid *g = n->g;
	double fx = n->fx, fy = n->fy, max_dist = sqrt(n->max2);
	long ic, jc, r, r0, r1, x, y;

	/* far outside the grid: nothing can be near enough */
	if (fx < -max_dist - 1 || fy < -max_dist - 1 ||
	    fx > g->w + max_dist || fy > g->h + max_dist ||
	    fabs(fx) > 4.0 * GRID_MAX_DIM || fabs(fy) > 4.0 * GRID_MAX_DIM)
		return ENG_ENOTFOUND;
	ic = lround(fx);
	jc = lround(fy);
	/* rings that can meet the grid: Chebyshev distance to it and across */
	r0 = 0;
	if (ic < 0 && -ic > r0)
		r0 = -ic;
	if (ic >= g->w && ic - (g->w - 1) > r0)
		r0 = ic - (g->w - 1);
	if (jc < 0 && -jc > r0)
		r0 = -jc;
	if (jc >= g->h && jc - (g->h - 1) > r0)
		r0 = jc - (g->h - 1);
	r1 = labs(ic) + labs(jc) + g->w + g->h;
	for (r = r0; r <= r1; r++) {
		double rmin = (double)r - 0.5;

		/* every cell of ring r is at least r - 0.5 from the point */
		if (r > 0 && rmin * rmin > n->best + 1e-9)
			break;
		if (r > 0 && rmin * rmin > n->max2)
			break;
		if (r == 0) {
			nearest_try(n, ic, jc);
			continue;
		}
		for (x = ic - r; x <= ic + r; x++) {
			if (x < 0 || x >= g->w)
				continue;
			nearest_try(n, x, jc - r);
			nearest_try(n, x, jc + r);
		}
		for (y = jc - r + 1; y <= jc + r - 1; y++) {
			if (y < 0 || y >= g->h)
				continue;
			nearest_try(n, ic - r, y);
			nearest_try(n, ic + r, y);
		}
	}
	if (n->bx < 0)
		return ENG_ENOTFOUND;
	*cx = (int)n->bx;
	*cy = (int)n->by;
	return 0;
}

int grid_nearest_free(const struct grid *g, double fx, double fy,
		      double max_dist, int *cx, int *cy)
{
	struct nearest n = { g, fx, fy, 0, false, 0, 0, INFINITY, INFINITY, -1, -1 };

	if (!isfinite(fx) || !isfinite(fy) || isnan(max_dist))
		return ENG_EINVAL;
	if (max_dist < 0)
		return ENG_ENOTFOUND;
	n.max2 = max_dist * max_dist;
	return nearest_free(&n, cx, cy);
}

int grid_nearest_free_toward(const struct grid *g, double fx, double fy, double max_dist,
			     double tx, double ty, int *cx, int *cy)
{
	struct nearest n = { g, fx, fy, 0, true, tx, ty, INFINITY, INFINITY, -1, -1 };

	if (!isfinite(fx) || !isfinite(fy) || !isfinite(tx) || !isfinite(ty) || isnan(max_dist))
		return ENG_EINVAL;
	if (max_dist < 0)
		return ENG_ENOTFOUND;
	n.max2 = max_dist * max_dist;
	return nearest_free(&n, cx, cy);
}

/*
 * Supercover walk (E. Dedu's Bresenham variant): visits every cell whose
 * closed square the segment between two cell centres touches, both side
 * cells when it passes exactly through a corner.
 */
bool grid_line_free(const struct grid *g, int ax, int ay, int bx, int by)
{
	int dx = bx - ax, dy = by - ay, sx = dx < 0 ? -1 : 1, sy = dy < 0 ? -1 : 1;
	int x = ax, y = ay, i, err, prev, ddx, ddy;

	dx = dx < 0 ? -dx : dx;
	dy = dy < 0 ? -dy : dy;
	ddx = 2 * dx;
	ddy = 2 * dy;
	if (!grid_is_free(g, x, y))
		return false;
	if (ddx >= ddy) {
		prev = err = dx;
		for (i = 0; i < dx; i++) {
			x += sx;
			err += ddy;
			if (err > ddx) {
				y += sy;
				err -= ddx;
				if (err + prev < ddx) {
					if (!grid_is_free(g, x, y - sy))
						return false;
				} else if (err + prev > ddx) {
					if (!grid_is_free(g, x - sx, y))
						return false;
				} else if (!grid_is_free(g, x, y - sy) ||
					   !grid_is_free(g, x - sx, y)) {
					return false;
				}
			}
			if (!grid_is_free(g, x, y))
				return false;
			prev = err;
		}
	} else {
		prev = err = dy;
		for (i = 0; i < dy; i++) {
			y += sy;
			err += ddx;
			if (err > ddy) {
				x += sx;
				err -= ddy;
				if (err + prev < ddy) {
					if (!grid_is_free(g, x - sx, y))
						return false;
				} else if (err + prev > ddy) {
					if (!grid_is_free(g, x, y - sy))
						return false;
				} else if (!grid_is_free(g, x - sx, y) ||
					   !grid_is_free(g, x, y - sy)) {
					return false;
				}
			}
			if (!grid_is_free(g, x, y))
				return false;
			prev = err;
		}
	}
	return true;
}
