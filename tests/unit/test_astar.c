/* SPDX-License-Identifier: MIT */
/*
 * A* against the Moving AI benchmark lengths and an independent Dijkstra;
 * nearest reachable cell; path legs; the Moving AI readers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "astar.h"
#include "err.h"
#include "grid.h"
#include "movingai.h"

#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#define DATA "tests/data/movingai/"

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return rng_state >> 8;
}

/* ---------------------------------------------------------------- */
/* Moving AI benchmarks                                               */

static void run_benchmark(const char *map_path, const char *scen_path,
			  size_t want_n)
{
	struct movingai_map m;
	struct movingai_scenset s;
	struct astar_ws *ws;
	size_t i;

	assert_int_equal(movingai_map_load(map_path, &m), 0);
	assert_int_equal(movingai_scen_load(scen_path, &s), 0);
	assert_int_equal(s.n, want_n);
	assert_int_equal(movingai_scen_check(&s, scen_path, &m), 0);
	ws = astar_ws_new(m.grid.w, m.grid.h);
	assert_non_null(ws);
	assert_int_equal(astar_ws_load(ws, &m.grid), 0);
	for (i = 0; i < s.n; i++) {
		double cost = -1;

		assert_int_equal(astar_search(ws, s.v[i].sx, s.v[i].sy, s.v[i].gx,
					      s.v[i].gy, &cost), 0);
		if (fabs(cost - s.v[i].optimal) > 1e-3)
			fail_msg("%s:%zu: computed %.8f, expected %.8f", scen_path,
				 s.v[i].line, cost, s.v[i].optimal);
	}
	astar_ws_free(ws);
	movingai_scen_release(&s);
	movingai_map_release(&m);
}

static void test_movingai_arena(void **state)
{
	struct movingai_map m;
	struct movingai_scenset s;

	(void)state;
	/* the file's known contents */
	assert_int_equal(movingai_map_load(DATA "arena.map", &m), 0);
	assert_int_equal(m.grid.w, 49);
	assert_int_equal(m.grid.h, 49);
	assert_int_equal(m.cells[0], GRID_OCCUPIED);         /* 'T' */
	assert_int_equal(m.cells[49 + 3], GRID_FREE);        /* row 1 "TTT." */
	assert_int_equal(m.cells[49 + 2], GRID_OCCUPIED);
	movingai_map_release(&m);
	assert_int_equal(movingai_scen_load(DATA "arena.map.scen", &s), 0);
	assert_int_equal(s.v[0].bucket, 0);
	assert_string_equal(s.v[0].map, "arena.map");
	assert_int_equal(s.v[0].sx, 19);
	assert_int_equal(s.v[0].sy, 26);
	assert_int_equal(s.v[0].gx, 19);
	assert_int_equal(s.v[0].gy, 29);
	NEAR(s.v[0].optimal, 3.0, 1e-12);
	assert_int_equal(s.v[0].line, 2);
	movingai_scen_release(&s);
	run_benchmark(DATA "arena.map", DATA "arena.map.scen", 130);
}

static void test_movingai_maze(void **state)
{
	(void)state;
	run_benchmark(DATA "maze-100-1.map", DATA "maze-100-1.map.scen", 2430);
}

/* ---------------------------------------------------------------- */
/* Against Dijkstra                                                   */

/*
 * Plain O(V^2) Dijkstra from s over the same move rules, written
 * independently of the A* code: dist[v] = INFINITY when unreachable.
 */
static void dijkstra(const uint8_t *cells, int w, int h, int s, double *dist)
{
	int n = w * h, i, k;
	char *done = calloc((size_t)n, 1);

	assert_non_null(done);
	for (i = 0; i < n; i++)
		dist[i] = INFINITY;
	dist[s] = 0;
	for (;;) {
		int u = -1, ux, uy, dx, dy;

		for (i = 0; i < n; i++)
			if (!done[i] && dist[i] < HUGE_VAL && (u < 0 || dist[i] < dist[u]))
				u = i;
		if (u < 0)
			break;
		done[u] = 1;
		ux = u % w;
		uy = u / w;
		for (dy = -1; dy <= 1; dy++) {
			for (dx = -1; dx <= 1; dx++) {
				int vx = ux + dx, vy = uy + dy;
				double c;

				if ((!dx && !dy) || vx < 0 || vy < 0 || vx >= w || vy >= h)
					continue;
				if (cells[vy * w + vx])
					continue;
				if (dx && dy && (cells[uy * w + vx] || cells[vy * w + ux]))
					continue;
				c = dx && dy ? sqrt(2.0) : 1.0;
				k = vy * w + vx;
				if (dist[u] + c < dist[k])
					dist[k] = dist[u] + c;
			}
		}
	}
	free(done);
}

/* The path must be legal and its steps must add up to cost. */
static void check_path(const struct astar_ws *ws, const uint8_t *cells,
		       int w, int s, int t, double cost)
{
	static int32_t path[64 * 64];
	size_t n, i;
	double sum = 0;

	assert_int_equal(astar_path(ws, path, 64 * 64, &n), 0);
	assert_int_equal(path[0], s);
	assert_int_equal(path[n - 1], t);
	for (i = 0; i < n; i++)
		assert_int_equal(cells[path[i]], GRID_FREE);
	for (i = 1; i < n; i++) {
		int ax = path[i - 1] % w, ay = path[i - 1] / w;
		int bx = path[i] % w, by = path[i] / w;
		int dx = bx - ax, dy = by - ay;

		assert_true(abs(dx) <= 1 && abs(dy) <= 1 && (dx || dy));
		if (dx && dy) {
			assert_int_equal(cells[ay * w + bx], GRID_FREE);
			assert_int_equal(cells[by * w + ax], GRID_FREE);
		}
		sum += dx && dy ? sqrt(2.0) : 1.0;
	}
	NEAR(sum, cost, 1e-9);
}

static void test_random_vs_dijkstra(void **state)
{
	static const int sizes[][2] = { { 8, 8 }, { 20, 13 }, { 1, 30 }, { 40, 40 },
					{ 64, 33 } };
	static const int dens[] = { 10, 30, 45 };
	static uint8_t cells[64 * 64];
	static double dist[64 * 64];
	struct astar_ws *ws = astar_ws_new(64, 64);
	size_t si, di;
	int found = 0, unreachable = 0;

	(void)state;
	assert_non_null(ws);
	rng_state = 2024;
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (di = 0; di < sizeof(dens) / sizeof(dens[0]); di++) {
			int w = sizes[si][0], h = sizes[si][1], n = w * h, src, k, q;
			struct grid g;

			assert_int_equal(grid_init(&g, cells, w, h, 0, 0, 1), 0);
			for (k = 0; k < n; k++)
				cells[k] = (int)(rng() % 100) < dens[di] ? GRID_OCCUPIED
									 : GRID_FREE;
			assert_int_equal(astar_ws_load(ws, &g), 0);
			for (src = 0; src < 4; src++) {
				int s = (int)(rng() % (uint32_t)n);

				cells[s] = GRID_FREE;
				assert_int_equal(astar_ws_load(ws, &g), 0);
				dijkstra(cells, w, h, s, dist);
				for (q = 0; q < 25; q++) {
					int t = (int)(rng() % (uint32_t)n);
					double cost = -1;
					int rc = astar_search(ws, s % w, s / w, t % w, t / w, &cost);

					if (dist[t] == HUGE_VAL) {
						assert_int_equal(rc, ENG_ENOTFOUND);
						unreachable++;
						continue;
					}
					assert_int_equal(rc, 0);
					NEAR(cost, dist[t], 1e-9);
					check_path(ws, cells, w, s, t, cost);
					found++;
				}
			}
		}
	}
	/* both outcomes were exercised */
	assert_true(found > 500);
	assert_true(unreachable > 100);
	astar_ws_free(ws);
}

/*
 * With the open list capped, compaction must keep the answers exact (or
 * report ENG_ENOMEM when even one entry per open node does not fit).
 */
static void test_open_list_compaction(void **state)
{
	static uint8_t cells[40 * 40];
	static double dist[40 * 40];
	struct astar_ws *ws = astar_ws_new(40, 40);
	struct grid g;
	int k, q, ok = 0, nomem = 0;

	(void)state;
	assert_non_null(ws);
	rng_state = 99;
	assert_int_equal(grid_init(&g, cells, 40, 40, 0, 0, 1), 0);
	for (k = 0; k < 1600; k++)
		cells[k] = rng() % 100 < 30 ? GRID_OCCUPIED : GRID_FREE;
	cells[0] = GRID_FREE;
	assert_int_equal(astar_ws_load(ws, &g), 0);
	astar__set_open_cap(ws, 48);
	dijkstra(cells, 40, 40, 0, dist);
	for (q = 0; q < 200; q++) {
		int t = (int)(rng() % 1600);
		double cost = -1;
		int rc = astar_search(ws, 0, 0, t % 40, t / 40, &cost);

		if (rc == ENG_ENOMEM) {
			nomem++;
			continue;
		}
		if (dist[t] == HUGE_VAL) {
			assert_int_equal(rc, ENG_ENOTFOUND);
			continue;
		}
		assert_int_equal(rc, 0);
		NEAR(cost, dist[t], 1e-9);
		check_path(ws, cells, 40, 0, t, cost);
		ok++;
	}
	assert_true(astar__compactions(ws) > 0);
	assert_true(ok > 50);
	/* a single entry cannot hold a frontier: some query must fail */
	astar__set_open_cap(ws, 1);
	for (q = 0, nomem = 0; q < 1600; q++) {
		double cost;

		if (dist[q] < HUGE_VAL && dist[q] > 3 &&
		    astar_search(ws, 0, 0, q % 40, q / 40, &cost) == ENG_ENOMEM)
			nomem++;
	}
	assert_true(nomem > 0);
	astar_ws_free(ws);
}

/* ---------------------------------------------------------------- */
/* Edge cases                                                         */

static uint8_t mem[32 * 32];

static void grid_from(struct grid *g, const char *const *rows, int h)
{
	int w = (int)strlen(rows[0]), x, y;

	assert_int_equal(grid_init(g, mem, w, h, 0, 0, 1), 0);
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			mem[y * w + x] = rows[y][x] == '#' ? GRID_OCCUPIED : GRID_FREE;
}

static void test_edge_cases(void **state)
{
	static const char *const rows[] = {
		"..#..",
		"..#..",
		"#.#..",
		".#...",
	};
	struct astar_ws *ws = astar_ws_new(8, 8);
	int32_t path[8];
	struct grid g;
	double cost = -1;
	size_t n;

	(void)state;
	assert_non_null(ws);
	assert_null(astar_ws_new(0, 5));
	assert_int_equal(astar_search(ws, 0, 0, 1, 1, &cost), ENG_EINVAL);
	grid_from(&g, rows, 4);
	assert_int_equal(astar_ws_load(ws, &g), 0);
	/* start == goal */
	assert_int_equal(astar_search(ws, 1, 1, 1, 1, &cost), 0);
	NEAR(cost, 0, 0);
	assert_int_equal(astar_path(ws, path, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(path[0], 6);
	/* (0,3) is boxed in: its only way out is a diagonal past two walls */
	assert_int_equal(astar_search(ws, 0, 3, 0, 0, &cost), ENG_ENOTFOUND);
	assert_int_equal(astar_path(ws, path, 8, &n), ENG_EINVAL);
	/* the wall column 2 can only be passed by (1,2)->(2,3), a cut corner */
	assert_int_equal(astar_search(ws, 0, 0, 4, 0, &cost), ENG_ENOTFOUND);
	/* blocked goal, out of range */
	assert_int_equal(astar_search(ws, 0, 0, 2, 0, &cost), ENG_ENOTFOUND);
	assert_int_equal(astar_search(ws, 0, 0, 5, 0, &cost), ENG_ERANGE);
	assert_int_equal(astar_search(ws, -1, 0, 1, 0, &cost), ENG_ERANGE);
	/* a real path, and a too small path buffer */
	assert_int_equal(astar_search(ws, 0, 0, 1, 2, &cost), 0);
	NEAR(cost, 1 + sqrt(2.0), 1e-12);
	assert_int_equal(astar_path(ws, path, 2, &n), ENG_ETOOBIG);
	assert_int_equal(n, 3);
	/* a grid larger than the workspace */
	assert_int_equal(grid_init(&g, mem, 9, 2, 0, 0, 1), 0);
	assert_int_equal(astar_ws_load(ws, &g), ENG_EINVAL);
	astar_ws_free(ws);
	astar_ws_free(NULL);
}

static void test_nearest_reachable(void **state)
{
	/* the target (6, 2) sits in a closed pocket east of the wall */
	static const char *const rows[] = {
		"....####",
		"....#..#",
		"....#..#",
		"....####",
	};
	struct astar_ws *ws = astar_ws_new(8, 4);
	struct grid g;
	int x = -1, y = -1;

	(void)state;
	assert_non_null(ws);
	grid_from(&g, rows, 4);
	assert_int_equal(astar_ws_load(ws, &g), 0);
	/* nearest free cell ignoring reachability: inside the pocket */
	assert_int_equal(grid_nearest_free(&g, 6, 2, 10, &x, &y), 0);
	assert_int_equal(x, 6);
	assert_int_equal(y, 2);
	/* reachable from (0, 0): (3, 2) at distance 3 */
	assert_int_equal(astar_nearest_reachable(ws, 0, 0, 6, 2, 10, &x, &y), 0);
	assert_int_equal(x, 3);
	assert_int_equal(y, 2);
	/* from inside the pocket the pocket cell itself */
	assert_int_equal(astar_nearest_reachable(ws, 5, 1, 6, 2, 10, &x, &y), 0);
	assert_int_equal(x, 6);
	assert_int_equal(y, 2);
	/* (3,1) and (3,2) tie from (6, 1.5): the smaller row wins */
	assert_int_equal(astar_nearest_reachable(ws, 0, 0, 6, 1.5, 10, &x, &y), 0);
	assert_int_equal(x, 3);
	assert_int_equal(y, 1);
	assert_int_equal(astar_nearest_reachable(ws, 0, 0, 6, 2, 2.5, &x, &y),
			 ENG_ENOTFOUND);
	assert_int_equal(astar_nearest_reachable(ws, 4, 0, 6, 2, 9, &x, &y),
			 ENG_ENOTFOUND);
	astar_ws_free(ws);
}

/*
 * The component is kept between calls on one load: any sequence of calls
 * gives what each call gives on a freshly loaded workspace (random grids,
 * starts inside and outside the last component, a search in between).
 */
static void test_nearest_reachable_reuse(void **state)
{
	enum { W = 24, H = 18 };
	struct astar_ws *a = astar_ws_new(W, H), *b = astar_ws_new(W, H);
	uint8_t cells[W * H];
	struct grid g;
	uint64_t st = 12345;
	int trial, q;
#define NEXT() (st = st * 6364136223846793005ull + 1442695040888963407ull, st >> 33)

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (trial = 0; trial < 40; trial++) {
		int i;

		/* grid_init clears the cells: the blocks come after */
		assert_int_equal(grid_init(&g, cells, W, H, 0, 0, 1), 0);
		for (i = 0; i < W * H; i++)
			cells[i] = (NEXT() % 100) < 30 ? GRID_OCCUPIED : GRID_FREE;
		assert_int_equal(astar_ws_load(a, &g), 0);
		for (q = 0; q < 30; q++) {
			int sx = (int)(NEXT() % W), sy = (int)(NEXT() % H);
			double fx = (double)(NEXT() % (W * 10)) / 10;
			double fy = (double)(NEXT() % (H * 10)) / 10;
			int x1 = -1, y1 = -1, x2 = -1, y2 = -1, r1, r2;
			double cost;

			r1 = astar_nearest_reachable(a, sx, sy, fx, fy, 6, &x1, &y1);
			assert_int_equal(astar_ws_load(b, &g), 0);
			r2 = astar_nearest_reachable(b, sx, sy, fx, fy, 6, &x2, &y2);
			assert_int_equal(r1, r2);
			if (!r1) {
				assert_int_equal(x1, x2);
				assert_int_equal(y1, y2);
				/* a search between calls leaves the kept component intact */
				assert_int_equal(astar_search(a, sx, sy, x1, y1, &cost), 0);
			}
		}
	}
	astar_ws_free(a);
	astar_ws_free(b);
#undef NEXT
}

/*
 * The brute force of the nearest-reachable tests: of the cells Dijkstra's
 * dist[] (w x h) reaches within r of (fx, fy), the one at the least squared
 * distance to it, ties (within 1e-9) to the least squared distance to
 * (sx, sy), then the scan order (row, then column), in (*bx, *by), or -1
 * and -1 when none is; returns how many cells tie at the least distance.
 */
static int brute_nearest(const double *dist, int w, int h, int sx, int sy, double fx, double fy,
			 double r, int *bx, int *by)
{
	double bd = INFINITY, bt = INFINITY;
	int x, y, nbest = 0;

	*bx = *by = -1;
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			double d2 = (x - fx) * (x - fx) + (y - fy) * (y - fy);
			double t2 = (double)((x - sx) * (x - sx) + (y - sy) * (y - sy));

			if (dist[y * w + x] == HUGE_VAL || d2 > r * r)
				continue;
			if (d2 < bd - 1e-9 || (fabs(d2 - bd) <= 1e-9 && t2 < bt)) {
				nbest = fabs(d2 - bd) <= 1e-9 ? nbest + 1 : 1;
				bd = d2 < bd ? d2 : bd;
				bt = t2;
				*bx = x;
				*by = y;
			} else if (fabs(d2 - bd) <= 1e-9) {
				nbest++;
			}
		}
	return nbest;
}

/*
 * astar_nearest_reachable against brute force: the cells the independent
 * Dijkstra (8 moves, no corner cutting) reaches, every one within the
 * radius scanned for the least squared distance to the point, ties (the
 * points sit on a 0.1 lattice, so equal distances are common) to the least
 * squared distance to the start, then the smaller row, then column.
 */
static void test_nearest_reachable_brute_force(void **state)
{
	enum { W = 28, H = 20 };
	static double dist[W * H];
	struct astar_ws *a = astar_ws_new(W, H);
	uint8_t cells[W * H];
	struct grid g;
	uint64_t st = 4242;
	int trial, q, found = 0, none = 0, ties = 0;
#define NEXT() (st = st * 6364136223846793005ull + 1442695040888963407ull, st >> 33)

	(void)state;
	assert_non_null(a);
	for (trial = 0; trial < 60; trial++) {
		int i, pct = 20 + (int)(NEXT() % 30); /* 20-49% blocked: islands appear */

		/* grid_init clears the cells: the blocks come after */
		assert_int_equal(grid_init(&g, cells, W, H, 0, 0, 1), 0);
		for (i = 0; i < W * H; i++)
			cells[i] = (int)(NEXT() % 100) < pct ? GRID_OCCUPIED : GRID_FREE;
		assert_int_equal(astar_ws_load(a, &g), 0);
		for (q = 0; q < 20; q++) {
			int sx = (int)(NEXT() % W), sy = (int)(NEXT() % H), bx, by;
			double fx = (double)(NEXT() % (W * 10)) / 10, fy = (double)(NEXT() % (H * 10)) / 10;
			double r = 0.2 + (double)(NEXT() % 60) / 10;
			int cx = -1, cy = -1, rc, nbest;

			cells[sy * W + sx] = GRID_FREE;
			assert_int_equal(astar_ws_load(a, &g), 0);
			dijkstra(cells, W, H, sy * W + sx, dist);
			nbest = brute_nearest(dist, W, H, sx, sy, fx, fy, r, &bx, &by);
			rc = astar_nearest_reachable(a, sx, sy, fx, fy, r, &cx, &cy);
			if (bx < 0) {
				assert_int_equal(rc, ENG_ENOTFOUND);
				none++;
				continue;
			}
			assert_int_equal(rc, 0);
			assert_int_equal(cx, bx);
			assert_int_equal(cy, by);
			found++;
			ties += nbest > 1;
		}
	}
	/* 718 found, 482 with none in reach, 78 with tied distances at this seed */
	assert_true(found > 600);
	assert_true(none > 300);
	assert_true(ties > 50);
	astar_ws_free(a);
#undef NEXT
}

/*
 * astar_search_nearest against the same brute force: the cell is the
 * nearest reachable one, the cost Dijkstra's distance to it, and the path
 * astar_path gives runs from the start to it. Each query on a new load
 * (no component flooded) and then again on the same load (the flood of a
 * walled-off try, or none); the nearest free cell ignoring reachability is
 * walled off from the start in many queries, which takes the flood.
 */
static void test_search_nearest_brute_force(void **state)
{
	enum { W = 28, H = 20 };
	static double dist[W * H];
	static int32_t path[W * H];
	struct astar_ws *a = astar_ws_new(W, H);
	uint8_t cells[W * H];
	struct grid g;
	uint64_t st = 977;
	int trial, q, found = 0, none = 0, walled = 0;
#define NEXT() (st = st * 6364136223846793005ull + 1442695040888963407ull, st >> 33)

	(void)state;
	assert_non_null(a);
	for (trial = 0; trial < 60; trial++) {
		int i, pct = 20 + (int)(NEXT() % 30);

		/* grid_init clears the cells: the blocks come after */
		assert_int_equal(grid_init(&g, cells, W, H, 0, 0, 1), 0);
		for (i = 0; i < W * H; i++)
			cells[i] = (int)(NEXT() % 100) < pct ? GRID_OCCUPIED : GRID_FREE;
		for (q = 0; q < 20; q++) {
			int sx = (int)(NEXT() % W), sy = (int)(NEXT() % H), bx, by;
			int fxc = -1, fyc = -1, pass;
			double fx = (double)(NEXT() % (W * 10)) / 10, fy = (double)(NEXT() % (H * 10)) / 10;
			double r = 0.2 + (double)(NEXT() % 60) / 10;

			cells[sy * W + sx] = GRID_FREE;
			assert_int_equal(astar_ws_load(a, &g), 0);
			dijkstra(cells, W, H, sy * W + sx, dist);
			brute_nearest(dist, W, H, sx, sy, fx, fy, r, &bx, &by);
			/* the nearest free cell, reachable or not */
			if (!grid_nearest_free_toward(&g, fx, fy, r, sx, sy, &fxc, &fyc) &&
			    (fxc != bx || fyc != by))
				walled++;
			for (pass = 0; pass < 2; pass++) {
				int cx = 0, cy = 0, rc;
				double cost = -1;
				size_t n = 0;

				rc = astar_search_nearest(a, &g, sx, sy, fx, fy, r, &cx, &cy, &cost);
				if (bx < 0) {
					assert_int_equal(rc, ENG_ENOTFOUND);
					assert_int_equal(cx, -1);
					assert_int_equal(cy, -1);
					none += !pass;
					continue;
				}
				assert_int_equal(rc, 0);
				assert_int_equal(cx, bx);
				assert_int_equal(cy, by);
				assert_true(fabs(cost - dist[by * W + bx]) < 1e-9);
				assert_int_equal(astar_path(a, path, W * H, &n), 0);
				assert_true(n >= 1);
				assert_int_equal(path[0], sy * W + sx);
				assert_int_equal(path[n - 1], by * W + bx);
				found += !pass;
			}
		}
	}
	/* 737 found, 463 with none in reach, 507 walled off at this seed */
	assert_true(found > 600);
	assert_true(none > 300);
	assert_true(walled > 300);
	astar_ws_free(a);
#undef NEXT
}

/*
 * Loads of a changed grid into a loaded workspace (a few cells, a block of
 * cells far from the start's component, or a quarter of the grid, which
 * takes the full load) answer as a newly made workspace loaded once does,
 * and their costs are Dijkstra's: the kept move masks and the kept
 * component follow every change.
 */
static void test_incremental_load(void **state)
{
	enum { W = 30, H = 22 };
	static double dist[W * H];
	struct astar_ws *a = astar_ws_new(W, H);
	uint8_t cells[W * H];
	struct grid g;
	uint64_t st = 777;
	int step, q, checked = 0, reach_hits = 0;
#define NEXT() (st = st * 6364136223846793005ull + 1442695040888963407ull, st >> 33)

	(void)state;
	assert_non_null(a);
	/* grid_init clears the cells: the blocks come after */
	assert_int_equal(grid_init(&g, cells, W, H, 0, 0, 1), 0);
	for (q = 0; q < W * H; q++)
		cells[q] = (NEXT() % 100) < 25 ? GRID_OCCUPIED : GRID_FREE;
	assert_int_equal(astar_ws_load(a, &g), 0);
	for (step = 0; step < 300; step++) {
		static const int nflip[] = { 1, 4, 12, W * H / 4 };
		int kind = (int)(NEXT() % 4), i, n = nflip[kind];
		int sx = (int)(NEXT() % W), sy = (int)(NEXT() % H);
		struct astar_ws *b;

		if (kind == 2) {
			/* a block in the grid's right part, the starts in its left */
			int bx = W / 2 + (int)(NEXT() % (W / 2 - 3)), by = (int)(NEXT() % (H - 3));

			for (i = 0; i < n; i++)
				cells[(by + i / 4) * W + bx + i % 4] =
					NEXT() % 2 ? GRID_OCCUPIED : GRID_INFLATED;
			sx = (int)(NEXT() % (W / 4));
		} else {
			for (i = 0; i < n; i++) {
				int c = (int)(NEXT() % (W * H));

				cells[c] = cells[c] == GRID_FREE ? GRID_OCCUPIED : GRID_FREE;
			}
		}
		if (NEXT() % 3 == 0)
			for (i = 0; i < W * H; i++)
				if (cells[i] == GRID_INFLATED)
					cells[i] = GRID_FREE;
		cells[sy * W + sx] = GRID_FREE;
		assert_int_equal(astar_ws_load(a, &g), 0);
		b = astar_ws_new(W, H);
		assert_non_null(b);
		assert_int_equal(astar_ws_load(b, &g), 0);
		dijkstra(cells, W, H, sy * W + sx, dist);
		for (q = 0; q < 6; q++) {
			double fx = (double)(NEXT() % (W * 10)) / 10;
			double fy = (double)(NEXT() % (H * 10)) / 10;
			int x1 = -1, y1 = -1, x2 = -1, y2 = -1, r1, r2, t;
			double cost = -1;

			r1 = astar_nearest_reachable(a, sx, sy, fx, fy, 5, &x1, &y1);
			r2 = astar_nearest_reachable(b, sx, sy, fx, fy, 5, &x2, &y2);
			assert_int_equal(r1, r2);
			if (r1)
				continue;
			reach_hits++;
			assert_int_equal(x1, x2);
			assert_int_equal(y1, y2);
			assert_true(dist[y1 * W + x1] < HUGE_VAL);
			assert_int_equal(astar_search(a, sx, sy, x1, y1, &cost), 0);
			NEAR(cost, dist[y1 * W + x1], 1e-9);
			check_path(a, cells, W, sy * W + sx, y1 * W + x1, cost);
			t = (int)(NEXT() % (W * H));
			r1 = astar_search(a, sx, sy, t % W, t / W, &cost);
			if (dist[t] == HUGE_VAL) {
				assert_int_equal(r1, ENG_ENOTFOUND);
				continue;
			}
			assert_int_equal(r1, 0);
			NEAR(cost, dist[t], 1e-9);
			check_path(a, cells, W, sy * W + sx, t, cost);
			checked++;
		}
		astar_ws_free(b);
	}
	assert_true(checked > 40);
	assert_true(reach_hits > 400);
	astar_ws_free(a);
#undef NEXT
}

/* ---------------------------------------------------------------- */
/* Legs                                                               */

static void test_legs_l_corridor(void **state)
{
	/* a corridor 1 cell wide: east along row 1, then north up column 8 */
	static const char *const rows[] = {
		"##########",
		"#........#",
		"########.#",
		"########.#",
		"########.#",
		"########.#",
		"########.#",
		"##########",
	};
	struct astar_ws *ws = astar_ws_new(10, 8);
	struct astar_leg legs[4];
	int32_t path[64];
	struct grid g;
	double cost;
	size_t n, nl;

	(void)state;
	assert_non_null(ws);
	grid_from(&g, rows, 8);
	g.x0 = 2.0f; /* world: x = 2 + 0.1 (cx + 0.5), y = 0.1 (cy + 0.5) */
	g.cell = 0.1f;
	assert_int_equal(astar_ws_load(ws, &g), 0);
	assert_int_equal(astar_search(ws, 1, 1, 8, 6, &cost), 0);
	NEAR(cost, 12, 1e-12);
	assert_int_equal(astar_path(ws, path, 64, &n), 0);
	assert_int_equal(n, 13);
	/* camera heading +X: first leg front, then +Y: a left turn */
	assert_int_equal(astar_legs(&g, path, n, 0, legs, 4, &nl), 0);
	assert_int_equal(nl, 2);
	NEAR(legs[0].x0, 2.15, 1e-5);
	NEAR(legs[0].y0, 0.15, 1e-5);
	NEAR(legs[0].x1, 2.85, 1e-5);
	NEAR(legs[0].y1, 0.15, 1e-5);
	NEAR(legs[0].length_m, 0.7, 1e-5);
	NEAR(legs[0].heading, 0, 1e-6);
	NEAR(legs[0].yaw_deg, 0, 1e-4);
	assert_int_equal(legs[0].dir, BEV_FRONT);
	assert_int_equal(legs[0].first, 0);
	assert_int_equal(legs[0].last, 7);
	NEAR(legs[1].x1, 2.85, 1e-5);
	NEAR(legs[1].y1, 0.65, 1e-5);
	NEAR(legs[1].length_m, 0.5, 1e-5);
	NEAR(legs[1].heading, M_PI / 2, 1e-6);
	NEAR(legs[1].yaw_deg, 90, 1e-4);
	assert_int_equal(legs[1].dir, BEV_LEFT);
	assert_int_equal(legs[1].last, 12);
	/* camera facing +Y: the first leg is to the right */
	assert_int_equal(astar_legs(&g, path, n, (float)(M_PI / 2), legs, 4, &nl), 0);
	NEAR(legs[0].yaw_deg, -90, 1e-4);
	assert_int_equal(legs[0].dir, BEV_RIGHT);
	assert_int_equal(legs[1].dir, BEV_LEFT);
	/* too little room, and a broken path */
	assert_int_equal(astar_legs(&g, path, n, 0, legs, 1, &nl), ENG_ETOOBIG);
	assert_int_equal(nl, 2);
	path[5] = path[7];
	assert_int_equal(astar_legs(&g, path, n, 0, legs, 4, &nl), ENG_EINVAL);
	/* one cell: no leg */
	assert_int_equal(astar_legs(&g, path, 1, 0, legs, 4, &nl), 0);
	assert_int_equal(nl, 0);
	astar_ws_free(ws);
}

static void test_legs_open_field(void **state)
{
	/* in the open, the diagonal and straight runs pull into one leg */
	struct astar_ws *ws = astar_ws_new(16, 8);
	struct astar_leg legs[4];
	int32_t path[64];
	struct grid g;
	double cost;
	size_t n, nl, i;

	(void)state;
	assert_non_null(ws);
	assert_int_equal(grid_init(&g, mem, 16, 8, 0, 0, 0.5f), 0);
	assert_int_equal(astar_ws_load(ws, &g), 0);
	assert_int_equal(astar_search(ws, 1, 1, 11, 4, &cost), 0);
	NEAR(cost, 7 + 3 * sqrt(2.0), 1e-12);
	assert_int_equal(astar_path(ws, path, 64, &n), 0);
	assert_int_equal(astar_legs(&g, path, n, 0, legs, 4, &nl), 0);
	assert_int_equal(nl, 1);
	NEAR(legs[0].length_m, 0.5 * sqrt(109.0), 1e-5);
	NEAR(legs[0].heading, atan2(3.0, 10.0), 1e-6);
	assert_int_equal(legs[0].dir, BEV_FRONT);
	/* a wall at column 6 rows 0..2 keeps the pull from crossing it */
	mem[0 * 16 + 6] = mem[1 * 16 + 6] = mem[2 * 16 + 6] = GRID_OCCUPIED;
	assert_int_equal(astar_ws_load(ws, &g), 0);
	assert_int_equal(astar_search(ws, 1, 1, 11, 1, &cost), 0);
	assert_int_equal(astar_path(ws, path, 64, &n), 0);
	assert_int_equal(astar_legs(&g, path, n, 0, legs, 4, &nl), 0);
	assert_true(nl >= 2);
	for (i = 0; i < nl; i++) {
		int ax = path[legs[i].first] % 16, ay = path[legs[i].first] / 16;
		int bx = path[legs[i].last] % 16, by = path[legs[i].last] / 16;

		assert_true(grid_line_free(&g, ax, ay, bx, by));
	}
	assert_int_equal(legs[nl - 1].last, (int32_t)n - 1);
	astar_ws_free(ws);
}

/* ---------------------------------------------------------------- */
/* Readers                                                            */

static void expect_map_error(const char *text, const char *msg)
{
	struct movingai_map m;

	assert_int_equal(movingai_map_parse(text, strlen(text), "t.map", &m),
			 ENG_EPARSE);
	if (!strstr(err_msg(), msg))
		fail_msg("message '%s' lacks '%s'", err_msg(), msg);
	assert_null(m.cells);
}

static void test_map_parse(void **state)
{
	static const char crlf[] =
		"type octile\r\nwidth 3\r\nheight 2\r\nmap\r\n.@T\r\nGSW\r\ntrailing junk\n";
	struct movingai_map m;

	(void)state;
	assert_int_equal(movingai_map_parse(crlf, strlen(crlf), "t.map", &m), 0);
	assert_int_equal(m.grid.w, 3);
	assert_int_equal(m.grid.h, 2);
	assert_memory_equal(m.cells, ((uint8_t[]){ 0, 1, 1, 0, 0, 1 }), 6);
	movingai_map_release(&m);
	expect_map_error("typo octile\nheight 1\nwidth 1\nmap\n.\n", "t.map:1:");
	expect_map_error("type octile\nheight x\nwidth 1\nmap\n.\n", "t.map:2: bad height");
	expect_map_error("type octile\nheight 2\nwidth 2\nmap\n..\n", "t.map:6: expected 2 map rows, found 1");
	expect_map_error("type octile\nheight 2\nwidth 2\nmap\n..\n...\n", "t.map:6: row 1 has 3");
	expect_map_error("type octile\nheight 1\nwidth 2\nmap\n.x\n", "t.map:5: bad map character 0x78 at column 2");
	expect_map_error("type octile\nheight 1\nmap\n.\n", "before 'width'");
	expect_map_error("type octile\nheight 1\nwidth 1\n", "missing 'map'");
	assert_int_equal(movingai_map_load(DATA "no-such.map", &m), ENG_ENOENT);
	assert_non_null(strstr(err_msg(), "no-such.map"));
}

static void expect_scen_error(const char *text, const char *msg)
{
	struct movingai_scenset s;

	assert_int_equal(movingai_scen_parse(text, strlen(text), "t.scen", &s),
			 ENG_EPARSE);
	if (!strstr(err_msg(), msg))
		fail_msg("message '%s' lacks '%s'", err_msg(), msg);
	assert_null(s.v);
}

static void test_scen_parse(void **state)
{
	static const char ok[] =
		"version 1.0\r\n0\tm.map\t3\t2\t0\t0\t2\t1\t2.41421356\r\n\n";
	struct movingai_map m;
	struct movingai_scenset s;
	static const char map[] = "type octile\nheight 2\nwidth 3\nmap\n...\n...\n";

	(void)state;
	assert_int_equal(movingai_scen_parse(ok, strlen(ok), "t.scen", &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].gx, 2);
	NEAR(s.v[0].optimal, 2.41421356, 1e-12);
	assert_int_equal(movingai_map_parse(map, strlen(map), "t.map", &m), 0);
	assert_int_equal(movingai_scen_check(&s, "t.scen", &m), 0);
	s.v[0].map_w = 4;
	assert_int_equal(movingai_scen_check(&s, "t.scen", &m), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "t.scen:2: scenario map is 4x2"));
	s.v[0].map_w = 3;
	s.v[0].gy = 2;
	assert_int_equal(movingai_scen_check(&s, "t.scen", &m), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "goal (2, 2) outside"));
	movingai_scen_release(&s);
	movingai_map_release(&m);
	expect_scen_error("0\tm.map\t3\t2\t0\t0\t2\t1\t2\n", "t.scen:1: expected 'version");
	expect_scen_error("version 1\n0\tm.map\t3\t2\t0\t0\t2\t1\n", "t.scen:2: expected 9 tab-separated fields, found 8");
	expect_scen_error("version 1\n0 m.map 3 2 0 0 2 1 2\n", "found 1");
	expect_scen_error("version 1\n0\tm.map\t3\t2\t0\t-1\t2\t1\t2\n", "t.scen:2: bad start y");
	expect_scen_error("version 1\n\n0\tm.map\t3\t2\t0\t0\t2\t1\tx\n", "t.scen:3: bad optimal length");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_movingai_arena),
		cmocka_unit_test(test_movingai_maze),
		cmocka_unit_test(test_random_vs_dijkstra),
		cmocka_unit_test(test_open_list_compaction),
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_nearest_reachable),
		cmocka_unit_test(test_nearest_reachable_reuse),
		cmocka_unit_test(test_nearest_reachable_brute_force),
		cmocka_unit_test(test_search_nearest_brute_force),
		cmocka_unit_test(test_incremental_load),
		cmocka_unit_test(test_legs_l_corridor),
		cmocka_unit_test(test_legs_open_field),
		cmocka_unit_test(test_map_parse),
		cmocka_unit_test(test_scen_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
