/* SPDX-License-Identifier: MIT */
/* Occupancy grid: rasterisation against hand-counted cells, lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "errcode.h"
#include "grid.h"
#include "obb.h"

#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static uint8_t mem[64 * 64];

/* An upright box: centre c, half-extents h, rotated by yaw about +Z. */
static void box(struct obb *b, float cx, float cy, float cz, float hx,
		float hy, float hz, double yaw)
{
	memset(b, 0, sizeof(*b));
	b->c[0] = cx;
	b->c[1] = cy;
	b->c[2] = cz;
	b->ax[0][0] = (float)cos(yaw);
	b->ax[0][1] = (float)sin(yaw);
	b->ax[1][0] = (float)-sin(yaw);
	b->ax[1][1] = (float)cos(yaw);
	b->ax[2][2] = 1;
	b->h[0] = hx;
	b->h[1] = hy;
	b->h[2] = hz;
}

static uint8_t at(const struct grid *g, int x, int y)
{
	return g->cells[y * g->w + x];
}

/* 20 x 20 cells of 0.1 m from the origin */
static void grid20(struct grid *g)
{
	assert_int_equal(grid_init(g, mem, 20, 20, 0, 0, 0.1f), 0);
}

static void test_init_and_needed(void **state)
{
	struct grid g;

	(void)state;
	assert_int_equal(grid_cells_needed(7, 5), 35);
	assert_int_equal(grid_cells_needed(0, 5), 0);
	assert_int_equal(grid_cells_needed(5, GRID_MAX_DIM + 1), 0);
	assert_int_equal(grid_init(&g, NULL, 4, 4, 0, 0, 0.1f), ENG_EINVAL);
	assert_int_equal(grid_init(&g, mem, 4, 4, 0, 0, 0), ENG_EINVAL);
	assert_int_equal(grid_init(&g, mem, 4, 4, 0, 0, NAN), ENG_EINVAL);
	memset(mem, 7, sizeof(mem));
	assert_int_equal(grid_init(&g, mem, 4, 3, 1, 2, 0.5f), 0);
	assert_int_equal(at(&g, 3, 2), GRID_FREE);
	assert_int_equal(mem[12], 7); /* only w * h bytes are touched */
}

/*
 * Footprint x in [0.82, 1.18], y in [0.87, 1.13]: cell centres 0.05 + 0.1 k
 * inside are columns 8..11 and rows 9..10, so 4 x 2 = 8 cells.
 */
static void test_axis_aligned_box(void **state)
{
	struct grid_params p;
	struct grid_summary s;
	struct grid g;
	struct obb b;
	int x, y, n = 0;

	(void)state;
	grid_defaults(&p);
	p.inflate_m = 0;
	grid20(&g);
	box(&b, 1.0f, 1.0f, 0.5f, 0.18f, 0.13f, 0.5f, 0);
	assert_int_equal(grid_rasterize(&g, &b, 1, &p, 0, GRID_SKIP_NONE, NULL), 0);
	for (y = 0; y < 20; y++)
		for (x = 0; x < 20; x++)
			if (at(&g, x, y) == GRID_OCCUPIED) {
				n++;
				assert_true(x >= 8 && x <= 11 && y >= 9 && y <= 10);
			}
	assert_int_equal(n, 8);
	assert_int_equal(at(&g, 8, 9), GRID_OCCUPIED);
	assert_int_equal(at(&g, 11, 10), GRID_OCCUPIED);
	assert_int_equal(at(&g, 7, 9), GRID_FREE);
	assert_int_equal(at(&g, 12, 10), GRID_FREE);
	assert_int_equal(at(&g, 9, 11), GRID_FREE);
	grid_summarize(&g, &s);
	assert_int_equal(s.occupied, 8);
	assert_int_equal(s.inflated, 0);
	assert_int_equal(s.free, 400 - 8);
}

/*
 * The same box inflated by 0.25 m. Outside distances of the column
 * centres 6..13: 0.17 0.07 0 0 0 0 0.07 0.17 (0.55 and 1.45 are 0.27 off);
 * of the row centres 6..13: 0.22 0.12 0.02 0 0 0.02 0.12 0.22. A cell is
 * covered when dx^2 + dy^2 <= 0.0625: the two 0.22 rows keep the 6
 * columns with dx <= 0.07 (0.07^2 + 0.22^2 = 0.0533, 0.17^2 + 0.22^2 =
 * 0.0773), every other row keeps all 8. Total 2 * 6 + 6 * 8 = 60 cells,
 * 8 occupied and 52 inflated.
 */
static void test_inflation(void **state)
{
	struct grid_params p;
	struct grid_summary s;
	struct grid g;
	struct obb b;
	int x, y;

	(void)state;
	grid_defaults(&p);
	NEAR(p.inflate_m, 0.25, 1e-7);
	grid20(&g);
	box(&b, 1.0f, 1.0f, 0.5f, 0.18f, 0.13f, 0.5f, 0);
	assert_int_equal(grid_rasterize(&g, &b, 1, &p, 0, GRID_SKIP_NONE, NULL), 0);
	grid_summarize(&g, &s);
	assert_int_equal(s.occupied, 8);
	assert_int_equal(s.inflated, 52);
	assert_int_equal(s.free, 400 - 60);
	for (y = 0; y < 20; y++)
		for (x = 0; x < 20; x++)
			if (at(&g, x, y) != GRID_FREE)
				assert_true(x >= 6 && x <= 13 && y >= 6 && y <= 13);
	assert_int_equal(at(&g, 6, 9), GRID_INFLATED);  /* dx 0.17, dy 0 */
	assert_int_equal(at(&g, 7, 6), GRID_INFLATED);  /* 0.07, 0.22 */
	assert_int_equal(at(&g, 6, 6), GRID_FREE);      /* 0.17, 0.22 */
	assert_int_equal(at(&g, 13, 7), GRID_INFLATED); /* 0.17, 0.12 */
	assert_int_equal(at(&g, 5, 9), GRID_FREE);      /* 0.27 */
	assert_int_equal(at(&g, 9, 5), GRID_FREE);      /* 0.32 */
	assert_int_equal(at(&g, 9, 9), GRID_OCCUPIED);
}

/*
 * A square box of half-extent 0.32 / sqrt(2) turned 45 degrees about +Z,
 * centred on the centre of cell (10, 10): its footprint is the diamond
 * |dx| + |dy| <= 0.32, which holds the cells with |i| + |j| <= 3:
 * 1 + 4 + 8 + 12 = 25 (its axis-aligned bounds would hold 7 x 7 = 49).
 */
static void test_rotated_box(void **state)
{
	struct grid_params p;
	struct grid_summary s;
	struct grid g;
	struct obb b;
	float a = (float)(0.32 / M_SQRT2);
	int x, y;

	(void)state;
	grid_defaults(&p);
	p.inflate_m = 0;
	grid20(&g);
	box(&b, 1.05f, 1.05f, 1.0f, a, a, 0.5f, M_PI / 4);
	assert_int_equal(grid_rasterize(&g, &b, 1, &p, 0, GRID_SKIP_NONE, NULL), 0);
	grid_summarize(&g, &s);
	assert_int_equal(s.occupied, 25);
	for (y = 0; y < 20; y++)
		for (x = 0; x < 20; x++)
			assert_int_equal(at(&g, x, y) == GRID_OCCUPIED,
					 abs(x - 10) + abs(y - 10) <= 3);
	assert_int_equal(at(&g, 13, 10), GRID_OCCUPIED);
	assert_int_equal(at(&g, 12, 11), GRID_OCCUPIED);
	assert_int_equal(at(&g, 12, 12), GRID_FREE);
	assert_int_equal(at(&g, 10, 7), GRID_OCCUPIED);
	assert_int_equal(at(&g, 14, 10), GRID_FREE);
}

static uint64_t range_rng = 99;

static double range_unit(void)
{
	range_rng = range_rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(range_rng >> 11) / 9007199254740992.0;
}

/*
 * grid_box_range holds every cell grid_rasterize marks for a box: random
 * rotated boxes, inflated or not, inside the grid, across its edges and
 * outside it, each rasterised into an empty grid and every marked cell
 * checked against the range; and the ranges are a small part of the grid.
 */
static void test_box_range(void **state)
{
	struct grid_params p;
	struct grid g;
	struct obb b;
	long marked = 0, area = 0;
	int trial;

	(void)state;
	grid_defaults(&p);
	for (trial = 0; trial < 500; trial++) {
		int x, y, x_lo, x_hi, y_lo, y_hi;
		float cx, cy, hx, hy;

		p.inflate_m = trial % 3 ? (float)(range_unit() * 0.3) : 0;
		grid20(&g);
		memset(mem, GRID_FREE, sizeof(mem));
		cx = (float)(range_unit() * 2.6 - 0.3);
		cy = (float)(range_unit() * 2.6 - 0.3);
		hx = (float)(0.02 + range_unit() * 0.4);
		hy = (float)(0.02 + range_unit() * 0.4);
		box(&b, cx, cy, 0.5f, hx, hy, 0.5f, range_unit() * 6.2832);
		assert_int_equal(grid_rasterize(&g, &b, 1, &p, 0, GRID_SKIP_NONE, NULL), 0);
		assert_int_equal(grid_box_range(&g, &b, p.inflate_m, &x_lo, &x_hi, &y_lo, &y_hi), 0);
		if (x_hi >= x_lo && y_hi >= y_lo)
			area += (long)(x_hi - x_lo + 1) * (y_hi - y_lo + 1);
		for (y = 0; y < 20; y++)
			for (x = 0; x < 20; x++) {
				if (at(&g, x, y) == GRID_FREE)
					continue;
				marked++;
				assert_true(x >= x_lo && x <= x_hi && y >= y_lo && y <= y_hi);
			}
	}
	assert_true(marked > 5000);
	assert_true(area < 500L * 400 / 3); /* on average under a third of the grid */
}

static void test_height_band(void **state)
{
	struct grid_params p;
	struct grid_summary s;
	struct grid g;
	struct obb b[4];

	(void)state;
	grid_defaults(&p);
	p.inflate_m = 0;
	grid20(&g);
	/* floor 0.5: band [0.55, 2.3] */
	box(&b[0], 1.0f, 1.0f, 2.5f, 0.18f, 0.13f, 0.15f, 0);  /* 2.35 .. 2.65 */
	box(&b[1], 1.0f, 1.0f, 0.52f, 0.18f, 0.13f, 0.02f, 0); /* 0.50 .. 0.54 */
	assert_int_equal(grid_rasterize(&g, b, 2, &p, 0.5f, GRID_SKIP_NONE, NULL), 0);
	grid_summarize(&g, &s);
	assert_int_equal(s.free, 400);
	/* floor 0: band [0.05, 1.8]; 1.85 .. 2.2 and 0 .. 0.04 stay out */
	box(&b[0], 1.0f, 1.0f, 2.025f, 0.18f, 0.13f, 0.175f, 0);
	box(&b[1], 1.0f, 1.0f, 0.02f, 0.18f, 0.13f, 0.02f, 0);
	assert_int_equal(grid_rasterize(&g, b, 2, &p, 0, GRID_SKIP_NONE, NULL), 0);
	grid_summarize(&g, &s);
	assert_int_equal(s.free, 400);
	/* a box from 1.7 to 2.0 reaches into it */
	box(&b[3], 1.0f, 1.0f, 1.85f, 0.18f, 0.13f, 0.15f, 0);
	assert_int_equal(grid_rasterize(&g, &b[3], 1, &p, 0, GRID_SKIP_NONE, NULL), 0);
	grid_summarize(&g, &s);
	assert_int_equal(s.occupied, 8);
	grid20(&g);
	box(&b[0], 1.0f, 1.0f, 2.5f, 0.18f, 0.13f, 0.15f, 0);  /* 2.35 .. 2.65 */
	box(&b[1], 1.0f, 1.0f, 0.52f, 0.18f, 0.13f, 0.02f, 0); /* 0.50 .. 0.54 */
	/* a box from 2.2 to 2.6 reaches into the band */
	box(&b[2], 1.0f, 1.0f, 2.4f, 0.18f, 0.13f, 0.2f, 0);
	assert_int_equal(grid_rasterize(&g, b, 3, &p, 0.5f, GRID_SKIP_NONE, NULL), 0);
	grid_summarize(&g, &s);
	assert_int_equal(s.occupied, 8);
	/* the floor is the lowest box bottom, or camera z - 1.6 without boxes */
	NEAR(grid_floor(b, 3, 9, &p), 0.50, 1e-6);
	NEAR(grid_floor(b, 0, 1.7f, &p), 0.10, 1e-6);
}

static void test_excluded_target(void **state)
{
	struct grid_params p;
	struct grid_summary s;
	struct grid g;
	struct obb b[2];
	uint8_t mask[2] = { 1, 0 };

	(void)state;
	grid_defaults(&p);
	p.inflate_m = 0;
	grid20(&g);
	box(&b[0], 1.0f, 1.0f, 0.5f, 0.18f, 0.13f, 0.5f, 0); /* 8 cells */
	box(&b[1], 0.3f, 0.3f, 0.5f, 0.12f, 0.12f, 0.5f, 0); /* 0.18..0.42: 2 x 2 */
	assert_int_equal(grid_rasterize(&g, b, 2, &p, 0, 1, NULL), 0);
	grid_summarize(&g, &s);
	assert_int_equal(s.occupied, 8);
	assert_int_equal(at(&g, 2, 2), GRID_FREE);
	grid20(&g);
	assert_int_equal(grid_rasterize(&g, b, 2, &p, 0, GRID_SKIP_NONE, mask), 0);
	grid_summarize(&g, &s);
	assert_int_equal(s.occupied, 4);
	assert_int_equal(at(&g, 2, 2), GRID_OCCUPIED);
	assert_int_equal(at(&g, 3, 3), GRID_OCCUPIED);
	assert_int_equal(at(&g, 9, 9), GRID_FREE);
	/* a box with a NaN is rejected */
	b[1].c[0] = NAN;
	assert_int_equal(grid_rasterize(&g, b, 2, &p, 0, GRID_SKIP_NONE, NULL),
			 ENG_EINVAL);
}

static void test_bounds_and_shape(void **state)
{
	struct grid_params p;
	struct obb b[2];
	float cam[3] = { -1.0f, 0.5f, 1.5f }, lo[2], hi[2];
	int w, h;

	(void)state;
	grid_defaults(&p);
	box(&b[0], 1.0f, 1.0f, 0.5f, 0.2f, 0.1f, 0.5f, 0);  /* 0.8..1.2, 0.9..1.1 */
	box(&b[1], 2.0f, 3.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0);  /* 1.5..2.5, 2.5..3.5 */
	assert_int_equal(grid_scene_bounds(b, 2, cam, &p, lo, hi), 0);
	NEAR(lo[0], -1.5, 1e-6);
	NEAR(lo[1], 0.0, 1e-6);
	NEAR(hi[0], 3.0, 1e-6);
	NEAR(hi[1], 4.0, 1e-6);
	assert_int_equal(grid_shape(lo, hi, 0.1f, &w, &h), 0);
	assert_int_equal(w, 45);
	assert_int_equal(h, 40);
	assert_int_equal(grid_scene_bounds(NULL, 0, NULL, &p, lo, hi), ENG_EINVAL);
	hi[0] = 1e6f;
	assert_int_equal(grid_shape(lo, hi, 0.1f, &w, &h), ENG_ETOOBIG);
}

static void test_world_cell(void **state)
{
	struct grid g;
	double fx, fy;
	float x, y;
	int cx = -1, cy = -1;

	(void)state;
	assert_int_equal(grid_init(&g, mem, 10, 5, -1.0f, 2.0f, 0.5f), 0);
	assert_int_equal(grid_world_to_cell(&g, -0.9f, 2.1f, &cx, &cy), 0);
	assert_int_equal(cx, 0);
	assert_int_equal(cy, 0);
	assert_int_equal(grid_world_to_cell(&g, 3.99f, 4.49f, &cx, &cy), 0);
	assert_int_equal(cx, 9);
	assert_int_equal(cy, 4);
	assert_int_equal(grid_world_to_cell(&g, 4.0f, 3.0f, &cx, &cy), ENG_ERANGE);
	assert_int_equal(grid_world_to_cell(&g, -1.01f, 3.0f, &cx, &cy), ENG_ERANGE);
	assert_int_equal(grid_world_to_cell(&g, NAN, 3.0f, &cx, &cy), ENG_ERANGE);
	grid_cell_to_world(&g, 3, 2, &x, &y);
	NEAR(x, 0.75, 1e-6);
	NEAR(y, 3.25, 1e-6);
	grid_world_to_cellf(&g, 0.75f, 3.5f, &fx, &fy);
	NEAR(fx, 3.0, 1e-6);
	NEAR(fy, 2.5, 1e-6);
	assert_true(grid_is_free(&g, 9, 4));
	assert_false(grid_is_free(&g, 10, 4));
	assert_false(grid_is_free(&g, -1, 0));
}

/* Brute force: the nearest free cell, ties by row then column. */
static int brute_nearest(const struct grid *g, double fx, double fy,
			 double maxd, int *bx, int *by)
{
	double best = INFINITY;
	int x, y;

	*bx = *by = -1;
	for (y = 0; y < g->h; y++)
		for (x = 0; x < g->w; x++) {
			double d2 = (x - fx) * (x - fx) + (y - fy) * (y - fy);

			if (!grid_is_free(g, x, y) || d2 > maxd * maxd || d2 >= best)
				continue;
			best = d2;
			*bx = x;
			*by = y;
		}
	return *bx < 0 ? ENG_ENOTFOUND : 0;
}

/* The same with ties to the cell nearest (tx, ty), then row-major order. */
static int brute_toward(const struct grid *g, double fx, double fy, double maxd, double tx,
			double ty, int *bx, int *by)
{
	double best = INFINITY, bt = INFINITY;
	int x, y;

	*bx = *by = -1;
	for (y = 0; y < g->h; y++)
		for (x = 0; x < g->w; x++) {
			double d2 = (x - fx) * (x - fx) + (y - fy) * (y - fy);
			double t2 = (x - tx) * (x - tx) + (y - ty) * (y - ty);

			if (!grid_is_free(g, x, y) || d2 > maxd * maxd || d2 > best ||
			    (d2 == best && t2 >= bt))
				continue;
			best = d2;
			bt = t2;
			*bx = x;
			*by = y;
		}
	return *bx < 0 ? ENG_ENOTFOUND : 0;
}

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return rng_state >> 8;
}

static void test_nearest_free(void **state)
{
	struct grid g;
	int x, y, bx, by, i, rc;

	(void)state;
	assert_int_equal(grid_init(&g, mem, 5, 5, 0, 0, 1), 0);
	mem[2 * 5 + 2] = GRID_OCCUPIED;
	/* four cells at distance 1: the smallest row wins */
	assert_int_equal(grid_nearest_free(&g, 2, 2, 10, &x, &y), 0);
	assert_int_equal(x, 2);
	assert_int_equal(y, 1);
	assert_int_equal(grid_nearest_free(&g, 2.2, 2.0, 10, &x, &y), 0);
	assert_int_equal(x, 3);
	assert_int_equal(y, 2);
	assert_int_equal(grid_nearest_free(&g, 2, 2, 0.5, &x, &y), ENG_ENOTFOUND);
	/* a point left of the grid */
	assert_int_equal(grid_nearest_free(&g, -3, 1.9, 10, &x, &y), 0);
	assert_int_equal(x, 0);
	assert_int_equal(y, 2);
	assert_int_equal(grid_nearest_free(&g, -30, 1.9, 10, &x, &y), ENG_ENOTFOUND);
	assert_int_equal(grid_nearest_free(&g, NAN, 1, 10, &x, &y), ENG_EINVAL);
	/* ties toward a point: the cell on the side it lies */
	assert_int_equal(grid_nearest_free_toward(&g, 2, 2, 10, 4.5, 2, &x, &y), 0);
	assert_int_equal(x, 3);
	assert_int_equal(y, 2);
	assert_int_equal(grid_nearest_free_toward(&g, 2, 2, 10, -1, 2.4, &x, &y), 0);
	assert_int_equal(x, 1);
	assert_int_equal(y, 2);
	assert_int_equal(grid_nearest_free_toward(&g, 2, 2, 10, 2, 4, &x, &y), 0);
	assert_int_equal(x, 2);
	assert_int_equal(y, 3);
	/* no tie: the nearest cell whatever the side */
	assert_int_equal(grid_nearest_free_toward(&g, 2.2, 2.0, 10, -5, 2, &x, &y), 0);
	assert_int_equal(x, 3);
	assert_int_equal(y, 2);
	/* against brute force on random grids */
	rng_state = 12345;
	for (i = 0; i < 300; i++) {
		int w = 1 + (int)(rng() % 30), h = 1 + (int)(rng() % 30), k;
		double fx = (double)(rng() % 4000) / 100.0 - 5.0;
		double fy = (double)(rng() % 4000) / 100.0 - 5.0;
		double maxd = (double)(rng() % 3000) / 100.0;
		uint32_t dens = rng() % 100;

		assert_int_equal(grid_init(&g, mem, w, h, 0, 0, 1), 0);
		for (k = 0; k < w * h; k++)
			mem[k] = rng() % 100 < dens ? GRID_OCCUPIED : GRID_FREE;
		if (i % 7 == 0) { /* exact ties on integer points */
			fx = (double)(rng() % 30);
			fy = (double)(rng() % 30);
		}
		rc = grid_nearest_free(&g, fx, fy, maxd, &x, &y);
		assert_int_equal(rc, brute_nearest(&g, fx, fy, maxd, &bx, &by));
		if (!rc) {
			assert_int_equal(x, bx);
			assert_int_equal(y, by);
		}
		{
			double tx = (double)(rng() % 40), ty = (double)(rng() % 40);

			rc = grid_nearest_free_toward(&g, fx, fy, maxd, tx, ty, &x, &y);
			assert_int_equal(rc, brute_toward(&g, fx, fy, maxd, tx, ty, &bx, &by));
			if (!rc) {
				assert_int_equal(x, bx);
				assert_int_equal(y, by);
			}
		}
	}
}

/* Exact test: does segment a-b touch the closed square of cell (x, y)? */
static int seg_touches(int ax, int ay, int bx, int by, int x, int y)
{
	/* doubled coordinates: centres even, square edges odd */
	long px = 2L * ax, py = 2L * ay, qx = 2L * bx, qy = 2L * by;
	long lx = 2L * x - 1, hx = 2L * x + 1, ly = 2L * y - 1, hy = 2L * y + 1;
	long dx = qx - px, dy = qy - py, c[4];
	int i, pos = 0, neg = 0;

	if ((px < lx && qx < lx) || (px > hx && qx > hx) ||
	    (py < ly && qy < ly) || (py > hy && qy > hy))
		return 0;
	c[0] = dx * (ly - py) - dy * (lx - px);
	c[1] = dx * (ly - py) - dy * (hx - px);
	c[2] = dx * (hy - py) - dy * (lx - px);
	c[3] = dx * (hy - py) - dy * (hx - px);
	for (i = 0; i < 4; i++) {
		pos += c[i] > 0;
		neg += c[i] < 0;
	}
	return !(pos == 4 || neg == 4);
}

static void test_line_free(void **state)
{
	struct grid g;
	int i, x, y;

	(void)state;
	assert_int_equal(grid_init(&g, mem, 5, 5, 0, 0, 1), 0);
	/* a blocked cell beside a diagonal corner blocks the diagonal */
	assert_true(grid_line_free(&g, 0, 0, 4, 4));
	mem[0 * 5 + 1] = GRID_OCCUPIED;
	assert_false(grid_line_free(&g, 0, 0, 1, 1));
	assert_false(grid_line_free(&g, 0, 0, 4, 4));
	assert_true(grid_line_free(&g, 0, 1, 0, 4));
	assert_false(grid_line_free(&g, 0, 0, 5, 0)); /* outside */
	/* against the exact segment-square test on random grids */
	rng_state = 777;
	for (i = 0; i < 3000; i++) {
		int w = 2 + (int)(rng() % 20), h = 2 + (int)(rng() % 20);
		int ax = (int)(rng() % (uint32_t)w), ay = (int)(rng() % (uint32_t)h);
		int bx = (int)(rng() % (uint32_t)w), by = (int)(rng() % (uint32_t)h);
		int want = 1;

		assert_int_equal(grid_init(&g, mem, w, h, 0, 0, 1), 0);
		for (x = 0; x < w * h; x++)
			mem[x] = rng() % 100 < 4 ? GRID_OCCUPIED : GRID_FREE;
		for (y = 0; y < h; y++)
			for (x = 0; x < w; x++)
				if (mem[y * w + x] && seg_touches(ax, ay, bx, by, x, y))
					want = 0;
		assert_int_equal(grid_line_free(&g, ax, ay, bx, by), want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_and_needed),
		cmocka_unit_test(test_axis_aligned_box),
		cmocka_unit_test(test_inflation),
		cmocka_unit_test(test_rotated_box),
		cmocka_unit_test(test_box_range),
		cmocka_unit_test(test_height_band),
		cmocka_unit_test(test_excluded_target),
		cmocka_unit_test(test_bounds_and_shape),
		cmocka_unit_test(test_world_cell),
		cmocka_unit_test(test_nearest_free),
		cmocka_unit_test(test_line_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
