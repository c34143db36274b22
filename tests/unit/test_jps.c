/* SPDX-License-Identifier: MIT */
/*
 * The fast grid search (jps) against the Moving AI benchmark lengths, an
 * independent Dijkstra on random maps and plain A* (the reference) on
 * large open maps; every path it returns is checked to be a legal
 * 8-connected path whose steps add up to the optimum.
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
#include "jps.h"
#include "movingai.h"

#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#define DATA "tests/data/movingai/"

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return rng_state >> 8;
}

/*
 * The last path of ws must run from s to t over free cells, each step to
 * an 8-neighbour without cutting a corner, and its steps must add up to
 * cost (1e-9).
 */
static void check_path(const struct jps_ws *ws, const struct grid *g, int s,
		       int t, double cost)
{
	size_t cap = (size_t)g->w * (size_t)g->h, n = 0, i;
	int32_t *path = malloc(cap * sizeof(*path));
	double sum = 0;

	assert_non_null(path);
	assert_int_equal(jps_path(ws, path, cap, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(path[0], s);
	assert_int_equal(path[n - 1], t);
	for (i = 0; i < n; i++)
		assert_int_equal(g->cells[path[i]], GRID_FREE);
	for (i = 1; i < n; i++) {
		int ax = path[i - 1] % g->w, ay = path[i - 1] / g->w;
		int bx = path[i] % g->w, by = path[i] / g->w;
		int dx = bx - ax, dy = by - ay;

		assert_true(abs(dx) <= 1 && abs(dy) <= 1 && (dx || dy));
		if (dx && dy) {
			assert_int_equal(g->cells[ay * g->w + bx], GRID_FREE);
			assert_int_equal(g->cells[by * g->w + ax], GRID_FREE);
		}
		sum += dx && dy ? sqrt(2.0) : 1.0;
	}
	NEAR(sum, cost, 1e-9);
	free(path);
}

/* ---------------------------------------------------------------- */
/* Moving AI benchmarks                                               */

static void run_benchmark(const char *map_path, const char *scen_path,
			  size_t want_n, int landmarks)
{
	struct movingai_map m;
	struct movingai_scenset s;
	struct jps_ws *ws;
	size_t i;

	assert_int_equal(movingai_map_load(map_path, &m), 0);
	assert_int_equal(movingai_scen_load(scen_path, &s), 0);
	assert_int_equal(s.n, want_n);
	ws = jps_ws_new(m.grid.w, m.grid.h, landmarks);
	assert_non_null(ws);
	assert_int_equal(jps_ws_load(ws, &m.grid), 0);
	for (i = 0; i < s.n; i++) {
		const struct movingai_scen *p = &s.v[i];
		double cost = -1;

		assert_int_equal(jps_search(ws, p->sx, p->sy, p->gx, p->gy, &cost), 0);
		if (fabs(cost - p->optimal) > 1e-3)
			fail_msg("%s:%zu: %d landmarks: computed %.8f, expected %.8f",
				 scen_path, p->line, landmarks, cost, p->optimal);
		check_path(ws, &m.grid, p->sy * m.grid.w + p->sx,
			   p->gy * m.grid.w + p->gx, cost);
	}
	jps_ws_free(ws);
	movingai_scen_release(&s);
	movingai_map_release(&m);
}

static void test_movingai(void **state)
{
	static const int lms[] = { 0, 16, JPS_MAX_LANDMARKS };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(lms) / sizeof(lms[0]); k++) {
		run_benchmark(DATA "arena.map", DATA "arena.map.scen", 130, lms[k]);
		run_benchmark(DATA "maze-100-1.map", DATA "maze-100-1.map.scen", 2430,
			      lms[k]);
	}
}

/* ---------------------------------------------------------------- */
/* Against Dijkstra                                                   */

/*
 * Plain O(V^2) Dijkstra from s over the move rules (costs 1 and sqrt 2, a
 * diagonal step needs both orthogonal neighbours free), written without
 * any of the search code: dist[v] = INFINITY when unreachable.
 */
static void dijkstra(const uint8_t *cells, int w, int h, int s, double *dist)
{
	int n = w * h, i, k;
	char *done = calloc((size_t)n, 1);

	assert_non_null(done);
	for (i = 0; i < n; i++)
		dist[i] = HUGE_VAL;
	dist[s] = 0;
	for (;;) {
		int u = -1, ux, uy, dx, dy;

		for (i = 0; i < n; i++)
			if (!done[i] && isfinite(dist[i]) && (u < 0 || dist[i] < dist[u]))
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

static void test_random_vs_dijkstra(void **state)
{
	static const int sizes[][2] = { { 8, 8 }, { 20, 13 }, { 1, 30 }, { 30, 1 },
					{ 40, 40 }, { 64, 33 } };
	static const int dens[] = { 0, 10, 25, 40 };
	static const int lms[] = { 0, 8, 16 };
	static uint8_t cells[64 * 64];
	static double dist[64 * 64];
	struct jps_ws *ws[3];
	size_t si, di, li;
	int found = 0, unreachable = 0;

	(void)state;
	for (li = 0; li < 3; li++) {
		ws[li] = jps_ws_new(64, 64, lms[li]);
		assert_non_null(ws[li]);
	}
	rng_state = 2025;
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (di = 0; di < sizeof(dens) / sizeof(dens[0]); di++) {
			int w = sizes[si][0], h = sizes[si][1], n = w * h, src, k, q;
			struct grid g;

			assert_int_equal(grid_init(&g, cells, w, h, 0, 0, 1), 0);
			for (k = 0; k < n; k++)
				cells[k] = (int)(rng() % 100) < dens[di] ? GRID_OCCUPIED
									 : GRID_FREE;
			for (src = 0; src < 3; src++) {
				int s = (int)(rng() % (uint32_t)n);

				cells[s] = GRID_FREE;
				for (li = 0; li < 3; li++)
					assert_int_equal(jps_ws_load(ws[li], &g), 0);
				dijkstra(cells, w, h, s, dist);
				for (q = 0; q < 20; q++) {
					int t = (int)(rng() % (uint32_t)n);

					for (li = 0; li < 3; li++) {
						double cost = -1;
						int rc = jps_search(ws[li], s % w, s / w, t % w,
								    t / w, &cost);

						if (isinf(dist[t])) {
							assert_int_equal(rc, ENG_ENOTFOUND);
							unreachable++;
							continue;
						}
						assert_int_equal(rc, 0);
						NEAR(cost, dist[t], 1e-9);
						check_path(ws[li], &g, s, t, cost);
						found++;
					}
				}
			}
		}
	}
	/* both outcomes were exercised */
	assert_true(found > 2000);
	assert_true(unreachable > 300);
	for (li = 0; li < 3; li++)
		jps_ws_free(ws[li]);
}

/* ---------------------------------------------------------------- */
/* Large maps: jumps past 127 cells, against plain A*                 */

static void compare_with_astar(const struct grid *g, int landmarks, int queries)
{
	struct astar_ws *a = astar_ws_new(g->w, g->h);
	struct jps_ws *j = jps_ws_new(g->w, g->h, landmarks);
	int n = g->w * g->h, q, hits = 0;

	assert_non_null(a);
	assert_non_null(j);
	assert_int_equal(astar_ws_load(a, g), 0);
	assert_int_equal(jps_ws_load(j, g), 0);
	for (q = 0; q < queries; q++) {
		int s = (int)(rng() % (uint32_t)n), t = (int)(rng() % (uint32_t)n);
		double ca = -1, cj = -1;
		int ra = astar_search(a, s % g->w, s / g->w, t % g->w, t / g->w, &ca);
		int rj = jps_search(j, s % g->w, s / g->w, t % g->w, t / g->w, &cj);

		assert_int_equal(rj, ra);
		if (ra)
			continue;
		NEAR(cj, ca, 1e-9);
		check_path(j, g, s, t, cj);
		hits++;
	}
	assert_true(hits > queries / 2);
	astar_ws_free(a);
	jps_ws_free(j);
}

static void test_large_open_maps(void **state)
{
	static uint8_t cells[400 * 300];
	struct grid g;
	int k, x, y;

	(void)state;
	rng_state = 77;
	assert_int_equal(grid_init(&g, cells, 400, 300, 0, 0, 1), 0);
	/* empty: every straight and diagonal run is longer than 127 cells */
	compare_with_astar(&g, 0, 60);
	compare_with_astar(&g, 8, 60);
	/* a few long walls with gaps and 1% scattered blocks */
	for (k = 0; k < 400 * 300; k++)
		cells[k] = rng() % 100 == 0 ? GRID_OCCUPIED : GRID_FREE;
	for (y = 20; y < 280; y++)
		cells[y * 400 + 150] = y % 97 == 3 ? GRID_FREE : GRID_OCCUPIED;
	for (x = 0; x < 380; x++)
		cells[150 * 400 + x] = GRID_OCCUPIED;
	compare_with_astar(&g, 0, 60);
	compare_with_astar(&g, 16, 60);
}

/*
 * With the open list capped, compaction must keep the answers exact.
 */
static void test_open_list_compaction(void **state)
{
	static uint8_t cells[48 * 48];
	static double dist[48 * 48];
	struct jps_ws *ws = jps_ws_new(48, 48, 0);
	struct grid g;
	int k, q, ok = 0;

	(void)state;
	assert_non_null(ws);
	rng_state = 99;
	assert_int_equal(grid_init(&g, cells, 48, 48, 0, 0, 1), 0);
	for (k = 0; k < 48 * 48; k++)
		cells[k] = rng() % 100 < 25 ? GRID_OCCUPIED : GRID_FREE;
	cells[0] = GRID_FREE;
	assert_int_equal(jps_ws_load(ws, &g), 0);
	jps__set_open_cap(ws, 24);
	dijkstra(cells, 48, 48, 0, dist);
	for (q = 0; q < 300; q++) {
		int t = (int)(rng() % (48 * 48));
		double cost = -1;
		int rc = jps_search(ws, 0, 0, t % 48, t / 48, &cost);

		if (isinf(dist[t])) {
			assert_int_equal(rc, ENG_ENOTFOUND);
			continue;
		}
		assert_int_equal(rc, 0);
		NEAR(cost, dist[t], 1e-9);
		check_path(ws, &g, 0, t, cost);
		ok++;
	}
	assert_true(jps__compactions(ws) > 0);
	assert_true(ok > 100);
	jps_ws_free(ws);
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
	struct jps_ws *ws = jps_ws_new(8, 8, 8);
	int32_t path[8];
	struct grid g;
	double cost = -1;
	size_t n;

	(void)state;
	assert_non_null(ws);
	assert_null(jps_ws_new(0, 5, 0));
	assert_null(jps_ws_new(5, 5, 4));
	assert_null(jps_ws_new(5, 5, JPS_MAX_LANDMARKS + 8));
	assert_null(jps_ws_new(5, 5, -8));
	assert_int_equal(jps_search(ws, 0, 0, 1, 1, &cost), ENG_EINVAL);
	grid_from(&g, rows, 4);
	assert_int_equal(jps_ws_load(ws, &g), 0);
	/* start == goal */
	assert_int_equal(jps_search(ws, 1, 1, 1, 1, &cost), 0);
	NEAR(cost, 0, 0);
	assert_int_equal(jps_path(ws, path, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(path[0], 6);
	/* (0,3) is boxed in: its only way out is a diagonal past two walls */
	assert_int_equal(jps_search(ws, 0, 3, 0, 0, &cost), ENG_ENOTFOUND);
	assert_int_equal(jps_path(ws, path, 8, &n), ENG_EINVAL);
	/* the wall column 2 can only be passed by (1,2)->(2,3), a cut corner */
	assert_int_equal(jps_search(ws, 0, 0, 4, 0, &cost), ENG_ENOTFOUND);
	/* blocked goal, out of range */
	assert_int_equal(jps_search(ws, 0, 0, 2, 0, &cost), ENG_ENOTFOUND);
	assert_int_equal(jps_search(ws, 0, 0, 5, 0, &cost), ENG_ERANGE);
	assert_int_equal(jps_search(ws, -1, 0, 1, 0, &cost), ENG_ERANGE);
	/* a real path, and a too small path buffer */
	assert_int_equal(jps_search(ws, 0, 0, 1, 2, &cost), 0);
	NEAR(cost, 1 + sqrt(2.0), 1e-12);
	assert_int_equal(jps_path(ws, path, 2, &n), ENG_ETOOBIG);
	assert_int_equal(n, 3);
	assert_int_equal(jps_path(ws, path, 3, &n), 0);
	assert_int_equal(path[0], 0);
	assert_int_equal(path[2], 2 * 5 + 1);
	/* a grid larger than the workspace */
	assert_int_equal(grid_init(&g, mem, 9, 2, 0, 0, 1), 0);
	assert_int_equal(jps_ws_load(ws, &g), ENG_EINVAL);
	/* a grid without a free cell */
	assert_int_equal(grid_init(&g, mem, 3, 3, 0, 0, 1), 0);
	memset(mem, GRID_OCCUPIED, 9);
	assert_int_equal(jps_ws_load(ws, &g), 0);
	assert_int_equal(jps_search(ws, 0, 0, 2, 2, &cost), ENG_ENOTFOUND);
	jps_ws_free(ws);
	jps_ws_free(NULL);
}

/*
 * Diagonal first: on an open grid the path to a cell 5 right and 2 down
 * runs two diagonal steps, then three straight ones; and the same query
 * always gives the same path.
 */
static void test_path_shape(void **state)
{
	struct jps_ws *ws = jps_ws_new(10, 10, 0);
	int32_t p1[16], p2[16];
	struct grid g;
	double cost;
	size_t n1, n2;

	(void)state;
	assert_non_null(ws);
	assert_int_equal(grid_init(&g, mem, 10, 10, 0, 0, 1), 0);
	assert_int_equal(jps_ws_load(ws, &g), 0);
	assert_int_equal(jps_search(ws, 1, 1, 6, 3, &cost), 0);
	NEAR(cost, 3 + 2 * sqrt(2.0), 1e-12);
	assert_int_equal(jps_path(ws, p1, 16, &n1), 0);
	assert_int_equal(n1, 6);
	assert_int_equal(p1[1], 2 * 10 + 2);
	assert_int_equal(p1[2], 3 * 10 + 3);
	assert_int_equal(p1[3], 3 * 10 + 4);
	assert_int_equal(jps_search(ws, 1, 1, 6, 3, &cost), 0);
	assert_int_equal(jps_path(ws, p2, 16, &n2), 0);
	assert_int_equal(n2, n1);
	assert_memory_equal(p1, p2, n1 * sizeof(p1[0]));
	jps_ws_free(ws);
}

/*
 * Nearest reachable cell: the same answers as plain A*'s flood-based one
 * on random maps, for points anywhere (inside walls and pockets too).
 */
static void test_nearest_reachable(void **state)
{
	static uint8_t cells[50 * 37];
	struct astar_ws *a = astar_ws_new(50, 37);
	struct jps_ws *j = jps_ws_new(50, 37, 8);
	struct grid g;
	int k, q, found = 0, none = 0;

	(void)state;
	assert_non_null(a);
	assert_non_null(j);
	rng_state = 4242;
	assert_int_equal(grid_init(&g, cells, 50, 37, 0, 0, 1), 0);
	for (k = 0; k < 4; k++) {
		int i;

		for (i = 0; i < 50 * 37; i++)
			cells[i] = (int)(rng() % 100) < 20 + 8 * k ? GRID_OCCUPIED : GRID_FREE;
		assert_int_equal(astar_ws_load(a, &g), 0);
		assert_int_equal(jps_ws_load(j, &g), 0);
		for (q = 0; q < 200; q++) {
			int s = (int)(rng() % (50 * 37));
			double fx = (double)(rng() % 5200) / 100.0 - 1.0;
			double fy = (double)(rng() % 3900) / 100.0 - 1.0;
			double md = (double)(rng() % 30);
			int ax = -1, ay = -1, jx = -2, jy = -2;
			int ra = astar_nearest_reachable(a, s % 50, s / 50, fx, fy, md, &ax, &ay);
			int rj = jps_nearest_reachable(j, s % 50, s / 50, fx, fy, md, &jx, &jy);

			assert_int_equal(rj, ra);
			if (ra) {
				none++;
				continue;
			}
			assert_int_equal(jx, ax);
			assert_int_equal(jy, ay);
			found++;
		}
	}
	assert_true(found > 300);
	assert_true(none > 50);
	assert_int_equal(jps_nearest_reachable(j, -1, 0, 1, 1, 5, &k, &q), ENG_ERANGE);
	assert_int_equal(jps_nearest_reachable(j, 0, 0, NAN, 1, 5, &k, &q), ENG_EINVAL);
	astar_ws_free(a);
	jps_ws_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_movingai),
		cmocka_unit_test(test_random_vs_dijkstra),
		cmocka_unit_test(test_large_open_maps),
		cmocka_unit_test(test_open_list_compaction),
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_path_shape),
		cmocka_unit_test(test_nearest_reachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
