/* SPDX-License-Identifier: MIT */
/*
 * build_occupancy, plan_path and cast_gaze on hand-made recordings: the
 * occupancy of a furnished room against a brute-force rasteriser for
 * axis-aligned boxes, the PGM it writes, a path around a wall against
 * Dijkstra on the same cells and against the geometry of the detour,
 * unreachable and blocked-start cases, a gaze stream hitting a known box,
 * and argument errors that name the field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "grid.h"
#include "registry.h"
#include "tools2_fixture.h"

static cJSON *run_ok(struct tool_ctx *ctx, const char *name, const char *args)
{
	cJSON *res = NULL;
	int rc = tool_call(ctx, name, args, &res);

	if (rc) {
		char *s = cJSON_PrintUnformatted(res);

		print_error("%s %s -> %s\n", name, args, s ? s : "?");
		free(s);
	}
	assert_int_equal(rc, 0);
	return res;
}

static cJSON *jget(cJSON *o, const char *path)
{
	char key[64];
	const char *p = path;

	while (o && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (key[0] >= '0' && key[0] <= '9')
			o = cJSON_GetArrayItem(o, (int)strtol(key, NULL, 10));
		else
			o = cJSON_GetObjectItemCaseSensitive(o, key);
		p += n;
		if (*p == '.')
			p++;
	}
	return o;
}

static double jnum(cJSON *o, const char *path)
{
	const cJSON *v = jget(o, path);

	assert_non_null(v);
	if (cJSON_IsRaw(v))
		return strtod(v->valuestring, NULL);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

/* True when an invalid_arguments result names the field at path. */
static bool names_field(const cJSON *res, const char *path)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItem(res, "violations"))
		if (!strcmp(cJSON_GetObjectItem(v, "path")->valuestring, path))
			return true;
	return false;
}

static void expect_field_error(struct tool_ctx *ctx, const char *name, const char *args,
			       const char *path)
{
	cJSON *res = NULL;

	assert_int_equal(tool_call(ctx, name, args, &res), ENG_ESCHEMA);
	if (!names_field(res, path)) {
		char *s = cJSON_PrintUnformatted(res);

		print_error("%s %s: wanted a violation at %s, got %s\n", name, args, path, s);
		free(s);
	}
	assert_true(names_field(res, path));
	cJSON_Delete(res);
}

/* ======================= Occupancy ======================= */

/*
 * A room: a table (an obstacle), a lamp above the band and a rug below
 * it (neither is), and a room-sized box holding the camera (left out).
 */
static struct recording *room(void)
{
	struct recording *r = fx_new();
	vec3 p = { 1.03f, 1.02f, 1.6f };

	fx_traj(r, 4 * FX_S, FX_S / 10, p, 0, 0);
	fx_box(r, "table", 2.0f, 1.5f, 0.4f, 0.6f, 0.4f, 0.4f, 0);
	fx_box(r, "lamp", 3.5f, 2.5f, 2.2f, 0.1f, 0.1f, 0.1f, 0);
	fx_box(r, "rug", 1.0f, 2.5f, 0.01f, 0.5f, 0.3f, 0.01f, 0);
	fx_box(r, "room", 2.0f, 1.5f, 1.5f, 2.52f, 2.03f, 1.5f, 0);
	assert_int_equal(fx_finish(r), 0);
	return r;
}

/* The expected cell value of (cx, cy) for axis-aligned obstacle rectangles. */
static int brute_cell(double x0, double y0, int cx, int cy, const double (*rect)[4],
		      int nrect, double inflate)
{
	double x = x0 + 0.1 * (cx + 0.5), y = y0 + 0.1 * (cy + 0.5);
	int i, v = GRID_FREE;

	for (i = 0; i < nrect; i++) {
		double dx = fmax(fmax(rect[i][0] - x, x - rect[i][1]), 0);
		double dy = fmax(fmax(rect[i][2] - y, y - rect[i][3]), 0);

		if (dx == 0 && dy == 0)
			return GRID_OCCUPIED;
		if (dx * dx + dy * dy <= inflate * inflate)
			v = GRID_INFLATED;
	}
	return v;
}

static void test_occupancy_room(void **state)
{
	static const double table[1][4] = { { 1.4, 2.6, 1.1, 1.9 } };
	struct recording *r = room();
	struct tool_ctx *ctx = NULL;
	cJSON *res, *run;
	size_t nfree = 0, nocc = 0, ninf = 0, i = 0, mismatches = 0;
	int cx = 0, cy = 0;

	(void)state;
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run_ok(ctx, "build_occupancy", "{\"t\":1000000000,\"target\":null,\"cell_m\":null,"
		     "\"inflate_m\":null,\"rle\":true,\"pgm_path\":null}");
	/* bounds: the room box +-0.5 m: x [-1.02, 5.02], y [-1.03, 4.03] */
	assert_int_equal((int)jnum(res, "grid.w"), 61);
	assert_int_equal((int)jnum(res, "grid.h"), 51);
	assert_float_equal(jnum(res, "grid.x0"), -1.02, 1e-6);
	assert_float_equal(jnum(res, "grid.y0"), -1.03, 1e-6);
	assert_float_equal(jnum(res, "grid.floor_z"), 0, 1e-6);
	assert_int_equal((int)jnum(res, "skipped_boxes"), 1);
	/* the table covers 12 x 8 cell centres (x 1.43..2.53, y 1.12..1.82) */
	assert_int_equal((int)jnum(res, "occupied"), 96);
	assert_int_equal((int)jnum(res, "camera.cell.0"), 20);
	assert_int_equal((int)jnum(res, "camera.cell.1"), 20);
	assert_string_equal(jget(res, "camera.state")->valuestring, "free");
	assert_true(cJSON_IsNull(jget(res, "target_cell")));
	/* every cell against the brute-force rasteriser */
	cJSON_ArrayForEach(run, jget(res, "rle")) {
		int v = (int)cJSON_GetArrayItem(run, 0)->valuedouble;
		int n = (int)cJSON_GetArrayItem(run, 1)->valuedouble, j;

		for (j = 0; j < n; j++, i++) {
			cx = (int)(i % 61);
			cy = (int)(i / 61);
			mismatches += v != brute_cell(-1.02, -1.03, cx, cy, table, 1, 0.25);
			nfree += v == GRID_FREE;
			nocc += v == GRID_OCCUPIED;
			ninf += v == GRID_INFLATED;
		}
	}
	assert_int_equal(i, 61 * 51);
	assert_int_equal(mismatches, 0);
	assert_int_equal(nocc, 96);
	assert_int_equal(nfree, (size_t)jnum(res, "free"));
	assert_int_equal(ninf, (size_t)jnum(res, "inflated"));
	/* the ring is 17 x 13 cells less the table and the rounded corners */
	assert_true(ninf > 221 - 96 - 4 * 6 && ninf < 221 - 96);
	cJSON_Delete(res);

	/* the target is not an obstacle */
	res = run_ok(ctx, "build_occupancy", "{\"t\":1000000000,\"target\":\"table\",\"cell_m\":null,"
		     "\"inflate_m\":null,\"rle\":null,\"pgm_path\":null}");
	assert_int_equal((int)jnum(res, "occupied"), 0);
	assert_int_equal((int)jnum(res, "inflated"), 0);
	assert_int_equal((int)jnum(res, "free"), 61 * 51);
	assert_int_equal((int)jnum(res, "target_cell.cell.0"), 30); /* x 2.0 -> (2.0 + 1.02) / 0.1 */
	assert_int_equal((int)jnum(res, "target_cell.cell.1"), 25);
	assert_string_equal(jget(res, "target_cell.state")->valuestring, "free");
	assert_null(jget(res, "rle"));
	cJSON_Delete(res);

	/* no inflation, coarser cells */
	res = run_ok(ctx, "build_occupancy", "{\"t\":0,\"target\":null,\"cell_m\":0.2,"
		     "\"inflate_m\":0,\"rle\":null,\"pgm_path\":null}");
	assert_int_equal((int)jnum(res, "inflated"), 0);
	assert_int_equal((int)jnum(res, "grid.w"), 31); /* 6.04 / 0.2 = 30.2 */
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

static void test_occupancy_pgm(void **state)
{
	struct recording *r = room();
	struct tool_ctx *ctx = NULL;
	char dir[] = "/tmp/proxima-occ-XXXXXX", cwd[4096], hdr[32];
	unsigned char *img;
	size_t i, n0 = 0, n160 = 0, n255 = 0;
	FILE *f;
	cJSON *res;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run_ok(ctx, "build_occupancy", "{\"t\":0,\"target\":null,\"cell_m\":null,"
		     "\"inflate_m\":null,\"rle\":null,\"pgm_path\":\"occ.pgm\"}");
	assert_string_equal(jget(res, "pgm_path")->valuestring, "occ.pgm");
	f = fopen("occ.pgm", "rb");
	assert_non_null(f);
	assert_non_null(fgets(hdr, sizeof(hdr), f));
	assert_string_equal(hdr, "P5\n");
	assert_non_null(fgets(hdr, sizeof(hdr), f));
	assert_string_equal(hdr, "61 51\n");
	assert_non_null(fgets(hdr, sizeof(hdr), f));
	img = malloc(61 * 51);
	assert_int_equal(fread(img, 1, 61 * 51, f), 61 * 51);
	fclose(f);
	for (i = 0; i < 61 * 51; i++) {
		n0 += img[i] == 0;
		n160 += img[i] == 160;
		n255 += img[i] == 255;
	}
	assert_int_equal(n0, (size_t)jnum(res, "occupied"));
	assert_int_equal(n160, (size_t)jnum(res, "inflated"));
	assert_int_equal(n255, (size_t)jnum(res, "free"));
	free(img);
	cJSON_Delete(res);
	unlink("occ.pgm");
	assert_int_equal(chdir(cwd), 0);
	rmdir(dir);
	expect_field_error(ctx, "build_occupancy", "{\"t\":0,\"target\":null,\"cell_m\":null,"
			   "\"inflate_m\":null,\"rle\":null,\"pgm_path\":\"../occ.pgm\"}", "/pgm_path");
	expect_field_error(ctx, "build_occupancy", "{\"t\":0,\"target\":null,\"cell_m\":null,"
			   "\"inflate_m\":null,\"rle\":null,\"pgm_path\":\"/tmp/occ.pgm\"}", "/pgm_path");
	expect_field_error(ctx, "build_occupancy", "{\"t\":0,\"target\":null,\"cell_m\":null,"
			   "\"inflate_m\":null,\"rle\":null,\"pgm_path\":\"occ.png\"}", "/pgm_path");
	expect_field_error(ctx, "build_occupancy", "{\"t\":0,\"target\":\"sofa\",\"cell_m\":null,"
			   "\"inflate_m\":null,\"rle\":null,\"pgm_path\":null}", "/target");
	expect_field_error(ctx, "build_occupancy", "{\"t\":0,\"target\":null,\"cell_m\":5,"
			   "\"inflate_m\":null,\"rle\":null,\"pgm_path\":null}", "/cell_m");
	tool_ctx_free(ctx);
	recording_free(r);
}

/* The cells of build_occupancy at t, decoded from its RLE, into cells (w x h). */
static void occ_cells(struct tool_ctx *ctx, int64_t t, const char *target, uint8_t *cells,
		      int *w, int *h)
{
	char args[256];
	cJSON *res, *run;
	int i = 0;

	snprintf(args, sizeof(args), "{\"t\":%lld,\"target\":%s%s%s,\"cell_m\":null,"
		 "\"inflate_m\":null,\"rle\":true,\"pgm_path\":null}", (long long)t,
		 target ? "\"" : "", target ? target : "null", target ? "\"" : "");
	res = run_ok(ctx, "build_occupancy", args);
	*w = (int)jnum(res, "grid.w");
	*h = (int)jnum(res, "grid.h");
	cJSON_ArrayForEach(run, jget(res, "rle")) {
		int v = (int)cJSON_GetArrayItem(run, 0)->valuedouble;
		int n = (int)cJSON_GetArrayItem(run, 1)->valuedouble;

		memset(cells + i, v, (size_t)n);
		i += n;
	}
	assert_int_equal(i, *w * *h);
	cJSON_Delete(res);
}

/* One grid_rasterize() pass over every box at t, as docs/design.md states the grid. */
static void direct_cells(const struct recording *r, int64_t t, long target, uint8_t *cells,
			 int *w, int *h)
{
	struct obb boxes[8];
	uint8_t skip[8];
	struct grid_params p;
	struct grid g;
	struct pose cam;
	float lo[2], hi[2];
	size_t i;

	grid_defaults(&p);
	assert_true(r->nobjects <= 8);
	assert_int_equal(recording_camera_at(r, t, &cam), 0);
	for (i = 0; i < r->nobjects; i++) {
		recording_object_box_at(r, i, t, &boxes[i]);
		skip[i] = obb_contains(&boxes[i], cam.t);
	}
	assert_int_equal(grid_scene_bounds(boxes, r->nobjects, cam.t, &p, lo, hi), 0);
	assert_int_equal(grid_shape(lo, hi, p.cell_m, w, h), 0);
	assert_int_equal(grid_init(&g, cells, *w, *h, lo[0], lo[1], p.cell_m), 0);
	assert_int_equal(grid_rasterize(&g, boxes, r->nobjects, &p,
					grid_floor(boxes, r->nobjects, cam.t[2], &p),
					target >= 0 ? (size_t)target : GRID_SKIP_NONE, skip), 0);
}

static void test_occupancy_static_layer(void **state)
{
	static const char *const targets[] = { NULL, "table", "table", "cart", NULL, "lamp" };
	struct recording *r = fx_new();
	struct tool_ctx *ctx = NULL;
	int64_t times[2] = { 0, 4 * FX_S };
	vec3 pos[2] = { { 3.2f, 0.3f, 0.3f }, { 0.6f, 2.6f, 0.3f } };
	uint8_t *a = malloc(100000), *b = malloc(100000);
	size_t k, diff_t = 0;
	int wa, ha, wb, hb;

	(void)state;
	/* the room of room() with a yawed lamp in the band and a cart rolling over 4 s */
	{
		vec3 p = { 1.03f, 1.02f, 1.6f };

		fx_traj(r, 4 * FX_S, FX_S / 10, p, 0, 0);
	}
	fx_box(r, "table", 2.0f, 1.5f, 0.4f, 0.6f, 0.4f, 0.4f, 0);
	fx_box(r, "lamp", 3.5f, 2.5f, 1.2f, 0.1f, 0.1f, 0.1f, 30);
	fx_box(r, "room", 2.0f, 1.5f, 1.5f, 2.52f, 2.03f, 1.5f, 0);
	fx_box(r, "cart", 0, 0, 0, 0.3f, 0.2f, 0.3f, 0);
	fx_dynamic(r, 3, times, pos, 2);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	/* calls that keep and change the cached static layer, at several times */
	for (k = 0; k < 6 * 3; k++) {
		const char *tg = targets[k % 6];
		int64_t t = (int64_t)(k / 6) * 2 * FX_S;
		long ti = tg ? recording_find_object(r, tg) : -1;

		occ_cells(ctx, t, tg, a, &wa, &ha);
		direct_cells(r, t, ti, b, &wb, &hb);
		assert_int_equal(wa, wb);
		assert_int_equal(ha, hb);
		assert_memory_equal(a, b, (size_t)wa * (size_t)ha);
		if (k == 0)
			memcpy(b + 50000, a, (size_t)wa * (size_t)ha);
		if (k == 12) /* the cart moved: the grid at 4 s differs from the one at 0 s */
			diff_t = (size_t)memcmp(b + 50000, a, (size_t)wa * (size_t)ha);
	}
	assert_true(diff_t != 0);
	free(a);
	free(b);
	tool_ctx_free(ctx);
	recording_free(r);
}

/* ======================= Paths ======================= */

/*
 * Dijkstra over the decoded cells with the A* move rules (8-connected,
 * 1 and sqrt 2, both orthogonal neighbours free for a diagonal).
 */
static double dijkstra(const uint8_t *cells, int w, int h, int s, int g)
{
	static const int dx[8] = { 1, -1, 0, 0, 1, 1, -1, -1 };
	static const int dy[8] = { 0, 0, 1, -1, 1, -1, 1, -1 };
	size_t n = (size_t)w * (size_t)h, it;
	double *d = malloc(n * sizeof(*d)), best;
	bool *done = calloc(n, 1);
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = INFINITY;
	d[s] = 0;
	for (it = 0; it < n; it++) {
		long u = -1;
		int k;

		for (i = 0; i < n; i++)
			if (!done[i] && isfinite(d[i]) && (u < 0 || d[i] < d[u]))
				u = (long)i;
		if (u < 0)
			break;
		done[u] = true;
		for (k = 0; k < 8; k++) {
			int x = (int)(u % w) + dx[k], y = (int)(u / w) + dy[k];
			double c = k < 4 ? 1 : sqrt(2);
			size_t v;

			if (x < 0 || y < 0 || x >= w || y >= h || cells[(size_t)y * w + x])
				continue;
			if (k >= 4 && (cells[(u / w) * w + x] || cells[(size_t)y * w + u % w]))
				continue;
			v = (size_t)y * w + x;
			if (d[u] + c < d[v])
				d[v] = d[u] + c;
		}
	}
	best = d[g];
	free(d);
	free(done);
	return best;
}

/* Camera at (0.03, 0.02) facing +X; a wall at x = 1.5 from y = -0.48 to 1.52; the target at x = 3.03. */
static struct recording *walled(void)
{
	struct recording *r = fx_new();
	vec3 p = { 0.03f, 0.02f, 1.6f };

	fx_traj(r, 4 * FX_S, FX_S / 10, p, 0, 0);
	fx_box(r, "wall", 1.5f, 0.52f, 1.0f, 0.05f, 1.0f, 1.0f, 0);
	fx_box(r, "bin", 3.03f, 0.02f, 0.5f, 0.1f, 0.1f, 0.1f, 0);
	assert_int_equal(fx_finish(r), 0);
	return r;
}

static void test_plan_path_around_wall(void **state)
{
	struct recording *r = walled();
	struct tool_ctx *ctx = NULL;
	cJSON *res, *occ, *run, *legs;
	uint8_t *cells;
	int w, h, sx, sy, gx, gy, i = 0, nlegs, k;
	double len, dj, below, sum = 0;

	(void)state;
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run_ok(ctx, "plan_path", "{\"t\":0,\"target\":\"bin\",\"cell_m\":null,\"inflate_m\":null,"
		     "\"goal_radius_m\":null,\"max_points\":null}");
	assert_true(cJSON_IsTrue(jget(res, "reachable")));
	assert_string_equal(jget(res, "status")->valuestring, "ok");
	assert_false(cJSON_IsTrue(jget(res, "start.moved")));
	len = jnum(res, "length_m");
	/*
	 * Around the lower end: cell centres below y = -0.73 (0.25 under the
	 * wall) are the first free ones, so the path passes (1.5, <= -0.83):
	 * at least |S - (1.5, -0.83)| + |(1.5, -0.83) - G| = 1.698 + 1.750;
	 * the octile metric is at most 8.3% longer than the Euclidean one.
	 */
	below = hypot(1.47, 0.85) + hypot(1.53, 0.85);
	assert_true(len >= below - 0.15);
	assert_true(len <= below * 1.083 + 0.3);
	/*
	 * By cells (centres at x = -0.42 + 0.1 k, y = -0.93 + 0.1 j): columns
	 * 17..22 are inflated along the wall, row 3 is blocked at k = 17..21
	 * and row 2 at k = 19, 20 (0.25 m exactly below the wall end), so the
	 * no-corner-cutting rule sends the path through row 1: from (4, 10)
	 * to (34, 10) it takes 12 straight and 18 diagonal moves.
	 */
	assert_float_equal(len, ((12 + 18 * sqrt(2)) * 0.1), 1e-3);
	/* the goal is the bin's own cell: the target is not an obstacle */
	assert_true(jnum(res, "goal.offset_to_target_m") <= 0.0711); /* half a cell diagonal */

	/* the same length as Dijkstra on the same cells */
	occ = run_ok(ctx, "build_occupancy", "{\"t\":0,\"target\":\"bin\",\"cell_m\":null,"
		     "\"inflate_m\":null,\"rle\":true,\"pgm_path\":null}");
	w = (int)jnum(occ, "grid.w");
	h = (int)jnum(occ, "grid.h");
	cells = malloc((size_t)w * (size_t)h);
	cJSON_ArrayForEach(run, jget(occ, "rle")) {
		int v = (int)cJSON_GetArrayItem(run, 0)->valuedouble;
		int n = (int)cJSON_GetArrayItem(run, 1)->valuedouble;

		memset(cells + i, v, (size_t)n);
		i += n;
	}
	assert_int_equal(i, w * h);
	sx = (int)jnum(res, "start.cell.0");
	sy = (int)jnum(res, "start.cell.1");
	gx = (int)jnum(res, "goal.cell.0");
	gy = (int)jnum(res, "goal.cell.1");
	dj = dijkstra(cells, w, h, sy * w + sx, gy * w + gx);
	assert_float_equal(len, (dj * 0.1), 1e-3);
	free(cells);
	cJSON_Delete(occ);

	/* legs: continuous, from the start to the goal, first one front-right */
	legs = jget(res, "legs");
	nlegs = cJSON_GetArraySize(legs);
	assert_true(nlegs >= 2);
	assert_float_equal(jnum(res, "legs.0.start.0"), jnum(res, "start.position.0"), 1e-6);
	assert_float_equal(jnum(legs, "0.start.1"), jnum(res, "start.position.1"), 1e-6);
	for (k = 0; k < nlegs; k++) {
		char p0[32], p1[32];

		snprintf(p0, sizeof(p0), "%d.length_m", k);
		sum += jnum(legs, p0);
		if (k + 1 < nlegs) {
			snprintf(p0, sizeof(p0), "%d.end.0", k);
			snprintf(p1, sizeof(p1), "%d.start.0", k + 1);
			assert_float_equal(jnum(legs, p0), jnum(legs, p1), 1e-6);
		}
	}
	{
		char p0[32];

		snprintf(p0, sizeof(p0), "%d.end.0", nlegs - 1);
		assert_float_equal(jnum(legs, p0), jnum(res, "goal.position.0"), 1e-6);
	}
	assert_true(sum <= len + 1e-3);   /* string pulling only shortens */
	assert_true(sum >= below - 0.15);  /* and still goes around the wall */
	assert_string_equal(jget(legs, "0.direction")->valuestring, "front-right");
	assert_true(jnum(legs, "0.yaw_deg") < -22.5 && jnum(legs, "0.yaw_deg") > -67.5);
	/* the path points: both ends kept, at most max_points */
	assert_true(cJSON_GetArraySize(jget(res, "path")) <= 40);
	assert_float_equal(jnum(res, "path.0.0"), jnum(res, "start.position.0"), 1e-6);
	cJSON_Delete(res);
	res = run_ok(ctx, "plan_path", "{\"t\":0,\"target\":\"bin\",\"cell_m\":null,\"inflate_m\":null,"
		     "\"goal_radius_m\":null,\"max_points\":3}");
	assert_int_equal(cJSON_GetArraySize(jget(res, "path")), 3);
	assert_float_equal(jnum(res, "path.2.0"), jnum(res, "goal.position.0"), 1e-6);
	cJSON_Delete(res);

	expect_field_error(ctx, "plan_path", "{\"t\":0,\"target\":\"sofa\",\"cell_m\":null,"
			   "\"inflate_m\":null,\"goal_radius_m\":null,\"max_points\":null}", "/target");
	expect_field_error(ctx, "plan_path", "{\"t\":0}", "/target");
	expect_field_error(ctx, "plan_path", "{\"t\":-5,\"target\":\"bin\",\"cell_m\":null,"
			   "\"inflate_m\":null,\"goal_radius_m\":null,\"max_points\":null}", "/t");
	tool_ctx_free(ctx);
	recording_free(r);
}

static void test_plan_path_straight(void **state)
{
	struct recording *r = fx_new();
	struct tool_ctx *ctx = NULL;
	vec3 p = { 0.03f, 0.02f, 1.6f };
	cJSON *res;

	(void)state;
	/* heading 90 deg (+Y): the target 3 m along +X is to the right */
	fx_traj(r, 4 * FX_S, FX_S / 10, p, 90, 0);
	fx_box(r, "bin", 3.03f, 0.02f, 0.5f, 0.1f, 0.1f, 0.1f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run_ok(ctx, "plan_path", "{\"t\":0,\"target\":\"bin\",\"cell_m\":null,\"inflate_m\":null,"
		     "\"goal_radius_m\":null,\"max_points\":null}");
	assert_float_equal(jnum(res, "length_m"), 3.0, 1e-3);
	assert_int_equal(cJSON_GetArraySize(jget(res, "legs")), 1);
	assert_float_equal(jnum(res, "legs.0.yaw_deg"), -90, 1e-3);
	assert_string_equal(jget(res, "legs.0.direction")->valuestring, "right");
	assert_string_equal(jget(res, "legs.0.letter")->valuestring, "A");
	assert_float_equal(jnum(res, "legs.0.sector_margin_deg"), 22.5, 1e-3);
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

static void test_plan_path_unreachable_and_blocked(void **state)
{
	struct recording *r = fx_new();
	struct tool_ctx *ctx = NULL;
	vec3 p = { 0.03f, 0.02f, 1.6f };
	cJSON *res;

	(void)state;
	fx_traj(r, 4 * FX_S, FX_S / 10, p, 0, 0);
	/* a closed pen around the bin, 1.2 m across */
	fx_box(r, "bin", 3.03f, 0.02f, 0.5f, 0.1f, 0.1f, 0.1f, 0);
	fx_box(r, "pen_w", 2.43f, 0.02f, 0.5f, 0.05f, 0.65f, 0.5f, 0);
	fx_box(r, "pen_e", 3.63f, 0.02f, 0.5f, 0.05f, 0.65f, 0.5f, 0);
	fx_box(r, "pen_s", 3.03f, -0.58f, 0.5f, 0.65f, 0.05f, 0.5f, 0);
	fx_box(r, "pen_n", 3.03f, 0.62f, 0.5f, 0.65f, 0.05f, 0.5f, 0);
	/* a crate the camera stands 0.1 m from */
	fx_box(r, "crate", 0.03f, -0.38f, 0.4f, 0.3f, 0.3f, 0.4f, 0);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	/* goal radius 0.3: only cells inside the pen are by the bin */
	res = run_ok(ctx, "plan_path", "{\"t\":0,\"target\":\"bin\",\"cell_m\":null,\"inflate_m\":null,"
		     "\"goal_radius_m\":0.3,\"max_points\":null}");
	assert_false(cJSON_IsTrue(jget(res, "reachable")));
	assert_string_equal(jget(res, "status")->valuestring, "no_reachable_cell_by_target");
	assert_true(cJSON_IsNull(jget(res, "length_m")));
	assert_int_equal(cJSON_GetArraySize(jget(res, "legs")), 0);
	/* the camera cell is inflated by the crate: the start moved off it */
	assert_string_equal(jget(res, "camera.state")->valuestring, "inflated");
	assert_true(cJSON_IsTrue(jget(res, "start.moved")));
	assert_true(jnum(res, "start.offset_m") > 0.1 && jnum(res, "start.offset_m") <= 1.0);
	cJSON_Delete(res);
	/* a wider goal radius reaches a cell outside the pen */
	res = run_ok(ctx, "plan_path", "{\"t\":0,\"target\":\"pen_w\",\"cell_m\":null,\"inflate_m\":null,"
		     "\"goal_radius_m\":null,\"max_points\":null}");
	assert_true(cJSON_IsTrue(jget(res, "reachable")));
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(r);
}

/* ======================= Gaze ======================= */

static void test_cast_gaze_known_box(void **state)
{
	struct recording *r = fx_new();
	struct tool_ctx *ctx = NULL;
	vec3 p = { 0, 0, 0 }, fwd = { 1, 0, 0 }, side = { 0, 1, 0 };
	cJSON *res;
	int k;

	(void)state;
	fx_traj(r, 2 * FX_S, FX_S / 30, p, 0, 0);
	fx_box(r, "target", 3, 0, 0, 0.2f, 0.2f, 0.2f, 0);
	fx_box(r, "room", 0, 0, 0, 5, 5, 3, 0); /* holds the gaze origin: never hit */
	/* 60 Hz: on the box for the first second, then along +Y (nothing there) */
	for (k = 0; k <= 120; k++)
		fx_gaze(r, (int64_t)k * FX_S / 60, p, k <= 60 ? fwd : side);
	assert_int_equal(fx_finish(r), 0);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	res = run_ok(ctx, "cast_gaze", "{\"t0\":0,\"t1\":2000000000,\"step\":10,\"limit\":null}");
	assert_int_equal((int)jnum(res, "samples_total"), 121);
	assert_int_equal((int)jnum(res, "samples_hit"), 61);
	assert_int_equal(cJSON_GetArraySize(jget(res, "samples")), 13);
	assert_string_equal(jget(res, "samples.0.object.id")->valuestring, "target");
	assert_float_equal(jnum(res, "samples.0.distance_m"), 2.8, 1e-6);
	assert_float_equal(jnum(res, "samples.6.t_ns"), 1e9, 1);
	assert_string_equal(jget(res, "samples.6.object.id")->valuestring, "target");
	assert_true(cJSON_IsNull(jget(res, "samples.7.object")));
	assert_int_equal(cJSON_GetArraySize(jget(res, "objects")), 1);
	assert_int_equal((int)jnum(res, "objects.0.samples"), 61);
	/* two fixations split by the 90-degree jump: the box, then nothing */
	assert_int_equal((int)jnum(res, "fixations_total"), 2);
	assert_float_equal(jnum(res, "fixations.0.start_ns"), 0, 0.5);
	assert_float_equal(jnum(res, "fixations.0.end_ns"), 1e9, 1);
	assert_float_equal(jnum(res, "fixations.0.duration_ms"), 1000, 0.1);
	assert_int_equal((int)jnum(res, "fixations.0.samples"), 61);
	assert_string_equal(jget(res, "fixations.0.object.id")->valuestring, "target");
	assert_float_equal(jnum(res, "fixations.0.distance_m"), 2.8, 1e-6);
	assert_true(cJSON_IsNull(jget(res, "fixations.1.object")));
	assert_float_equal(jnum(res, "fixations.1.start_ns"), 61e9 / 60, 1);
	cJSON_Delete(res);
	/* a sub-range lists only what it holds */
	res = run_ok(ctx, "cast_gaze", "{\"t0\":1500000000,\"t1\":2000000000,\"step\":null,"
		     "\"limit\":5}");
	assert_int_equal((int)jnum(res, "samples_total"), 31);
	assert_int_equal((int)jnum(res, "samples_hit"), 0);
	assert_int_equal(cJSON_GetArraySize(jget(res, "samples")), 5);
	assert_true(cJSON_IsTrue(jget(res, "truncated")));
	assert_int_equal((int)jnum(res, "fixations_total"), 1);
	cJSON_Delete(res);
	expect_field_error(ctx, "cast_gaze", "{\"t0\":5,\"t1\":4,\"step\":null,\"limit\":null}", "/t1");
	expect_field_error(ctx, "cast_gaze", "{\"t0\":0,\"t1\":4,\"step\":0,\"limit\":null}", "/step");
	tool_ctx_free(ctx);
	recording_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_occupancy_room),
		cmocka_unit_test(test_occupancy_pgm),
		cmocka_unit_test(test_occupancy_static_layer),
		cmocka_unit_test(test_plan_path_around_wall),
		cmocka_unit_test(test_plan_path_straight),
		cmocka_unit_test(test_plan_path_unreachable_and_blocked),
		cmocka_unit_test(test_cast_gaze_known_box),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
