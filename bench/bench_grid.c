/* SPDX-License-Identifier: MIT */
/*
 * Occupancy rasterisation throughput: the docs/design.md grid (0.10 m cells,
 * 0.25 m inflation, height band) built from scenes of random furniture-
 * and object-sized oriented boxes in a room, timed per grid and per box.
 * Prints one line per scene: `occupancy N boxes: ours X grids/s ...`.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "grid.h"
#include "obb.h"
#include "pose.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* n boxes in a side x side room: a tenth furniture (0.3-1.2 m), the rest small. */
static void scene(struct obb *b, size_t n, float side)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct pose p;
		float yaw = (float)(urand() * 2 * M_PI);
		int big = i % 10 == 0;
		vec3 c = { 0, 0, 0 }, h;

		h[0] = (float)(big ? 0.3 + 0.9 * urand() : 0.03 + 0.12 * urand());
		h[1] = (float)(big ? 0.3 + 0.9 * urand() : 0.03 + 0.12 * urand());
		h[2] = (float)(big ? 0.4 + 0.5 * urand() : 0.05 + 0.1 * urand());
		pose_set(&p, 0, 0, sinf(yaw / 2), cosf(yaw / 2), (float)(urand() * (double)side),
			 (float)(urand() * (double)side), big ? h[2] : (float)(0.9 + urand()));
		obb_from_local(&p, c, h, &b[i]);
	}
}

int main(void)
{
	static const size_t sizes[] = { 32, 256, 2048 };
	struct grid_params gp;
	size_t si;

	grid_defaults(&gp);
	printf("head: grid | scene | grid | grids/s | boxes/s | cells/s\n");
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si], cells_n;
		float side = 6.0f * sqrtf((float)n / 32.0f), lo[2], hi[2], cam[3], fz;
		struct obb *b = malloc(n * sizeof(*b));
		uint8_t *cells;
		struct grid g;
		int w, h, reps = 0, r;
		double t0, best = 1e30;

		if (!b)
			return 1;
		scene(b, n, side);
		cam[0] = side / 2;
		cam[1] = side / 2;
		cam[2] = 1.6f;
		fz = grid_floor(b, n, cam[2], &gp);
		if (grid_scene_bounds(b, n, cam, &gp, lo, hi) || grid_shape(lo, hi, gp.cell_m, &w, &h))
			return 1;
		cells_n = grid_cells_needed(w, h);
		cells = malloc(cells_n);
		if (!cells)
			return 1;
		for (r = 0; r < 5; r++) {
			double dt;

			reps = 0;
			t0 = now_s();
			do {
				grid_init(&g, cells, w, h, lo[0], lo[1], gp.cell_m);
				grid_rasterize(&g, b, n, &gp, fz, GRID_SKIP_NONE, NULL);
				reps++;
				dt = now_s() - t0;
			} while (dt < 0.2);
			if (dt / reps < best)
				best = dt / reps;
		}
		printf("occupancy %zu boxes (%dx%d cells): ours %.0f grids/s, %.2f Mboxes/s, %.1f Mcells/s\n",
		       n, w, h, 1.0 / best, (double)n / best * 1e-6,
		       (double)w * h / best * 1e-6);
		printf("row: grid | %zu boxes | %d x %d | %.0f | %.2f M | %.1f M\n", n, w, h,
		       1.0 / best, (double)n / best * 1e-6, (double)w * h / best * 1e-6);
		free(cells);
		free(b);
	}
	return 0;
}
