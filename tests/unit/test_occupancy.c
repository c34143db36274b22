/* SPDX-License-Identifier: MIT */
/*
 * occupancy_build's kept layers (the static boxes per target, each dynamic
 * box's footprint while it has not moved) against one pass of
 * grid_rasterize over every box at that time: on the example recording,
 * at trajectory samples through it (objects carried and put down between
 * them), with and without a target, on one context so that every kept
 * layer is reused, the cells equal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grid.h"
#include "obb.h"
#include "occupancy.h"
#include "recording.h"
#include "registry.h"
#include "scene.h"

#ifndef EXAMPLE
#define EXAMPLE "examples/tiny"
#endif

static void test_layers_equal_one_pass(void **state)
{
	struct recording *rec = NULL;
	struct tool_ctx *ctx = NULL;
	struct scene *ref = NULL;
	struct stat st;
	uint8_t *mask = NULL, *cells = NULL;
	size_t k, i, checked = 0, dynamic_moves = 0;
	struct obb *last = NULL;

	(void)state;
	if (stat(EXAMPLE "/recording.json", &st)) {
		print_message("skipped: %s is missing (the synthetic example recording)\n", EXAMPLE);
		skip();
	}
	assert_int_equal(recording_load(EXAMPLE, REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(tool_ctx_new(rec, &ctx), 0);
	assert_int_equal(scene_new(rec, &ref), 0);
	mask = calloc(rec->nobjects + 1, 1);
	last = calloc(rec->nobjects + 1, sizeof(*last));
	assert_non_null(mask);
	assert_non_null(last);
	for (k = 0; k < rec->ntraj; k += 7) {
		const struct pose *cam = &rec->traj[k].pose;
		int64_t t = rec->traj[k].t_ns;
		/* one target (-1: none) for three samples in a row, then the next */
		long target = (long)((k / 21) % (rec->nobjects + 1)) - 1;
		struct occupancy occ;
		const struct obb *boxes;
		struct grid g;
		size_t n;

		assert_int_equal(occupancy_build(ctx, t, cam, target, NULL, &occ), 0);
		assert_int_equal(scene_at(ref, t), 0);
		n = scene_count(ref);
		boxes = scene_boxes(ref);
		for (i = 0; i < n; i++) {
			mask[i] = obb_contains(&boxes[i], cam->t) || (long)i == target;
			if (rec->objects[i].motion == REC_DYNAMIC && k &&
			    memcmp(&last[i], &boxes[i], sizeof(*boxes)))
				dynamic_moves++;
			last[i] = boxes[i];
		}
		cells = realloc(cells, grid_cells_needed(occ.grid.w, occ.grid.h));
		assert_non_null(cells);
		assert_int_equal(grid_init(&g, cells, occ.grid.w, occ.grid.h, occ.grid.x0,
					   occ.grid.y0, occ.grid.cell), 0);
		assert_int_equal(grid_rasterize(&g, boxes, n, &occ.params, occ.floor_z,
						GRID_SKIP_NONE, mask), 0);
		assert_memory_equal(g.cells, occ.grid.cells,
				    grid_cells_needed(occ.grid.w, occ.grid.h));
		checked++;
	}
	print_message("%zu grids, %zu dynamic box moves between them\n", checked, dynamic_moves);
	assert_true(checked > 100);
	assert_true(dynamic_moves > 10);
	free(cells);
	free(mask);
	free(last);
	scene_free(ref);
	tool_ctx_free(ctx);
	recording_free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers_equal_one_pass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
