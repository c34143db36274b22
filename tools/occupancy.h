/* SPDX-License-Identifier: MIT */
/*
 * The occupancy grid of a recording at one time (docs/design.md section 3),
 * shared by build_occupancy, plan_path and the navigation clip check.
 *
 * Obstacles are the object boxes at t whose vertical span overlaps
 * [floor + 0.05 m, floor + 1.8 m], inflated by 0.25 m, on 0.10 m cells
 * (geometry/grid.h). The floor is the lowest box bottom at t (the camera
 * height - 1.6 m without boxes). The bounds hold every box and the
 * camera, plus a 0.5 m margin. Two kinds of box are left out: the target
 * (by index), and any box that holds the camera position (a room-sized
 * box is where the wearer walks, not an obstacle).
 */
#ifndef OCCUPANCY_H
#define OCCUPANCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "grid.h"
#include "pose.h"

struct tool_ctx;

/* A built grid and the facts around it. */
struct occupancy {
	struct grid grid;          /* cells owned by the context (see occupancy_build) */
	struct grid_params params; /* the settings used */
	float floor_z;             /* floor height, m */
	int64_t t_ns;              /* time of the boxes */
	long target;               /* excluded object, -1 for none */
	size_t nskipped;           /* boxes left out because they hold the camera */
	vec3 cam;                  /* camera position at t */
	int cam_cx, cam_cy;        /* camera cell */
};

/*
 * Builds the grid at time t around the camera pose `cam`, with object
 * `target` (-1 for none) excluded, using settings p (NULL for the
 * defaults of grid_defaults()). The cells live in the context's
 * TOOL_SLOT_OCCUPANCY slot and stay valid until the next call on the same
 * context. Returns 0, ENG_ENOMEM, ENG_ETOOBIG (the scene needs more than
 * GRID_MAX_DIM cells on a side; err_msg() gives the size), or a scene
 * error.
 */
int occupancy_build(struct tool_ctx *ctx, int64_t t, const struct pose *cam,
		    long target, const struct grid_params *p, struct occupancy *out);

/*
 * The grid settings of a tool call: grid_defaults() with the arguments
 * "cell_m" and "inflate_m" when present and not null. Can't fail.
 */
void occupancy_read_params(const cJSON *args, struct grid_params *p);

/* "free", "occupied", "inflated" for a cell value. Can't fail. */
const char *occupancy_cell_name(int v);

/* ======================= build_occupancy ======================= */

struct occupancy_args {
	int64_t t;               /* time of the boxes and the camera, ns */
	long target;             /* object left out, -1 for none */
	struct grid_params grid; /* grid settings */
};

struct occupancy_result {
	int64_t t;
	long target;
	struct pose cam;
	float heading;
	struct grid_params params;
	struct occupancy occ;    /* cells owned by the context, valid until its next build */
	vec3 target_pos;         /* the target's box centre at t (target >= 0) */
};

/*
 * The typed entry of build_occupancy. Returns 0, ENG_EINVAL (t outside the
 * recording, bad target; through tool__reject), ENG_ERANGE (no heading), or
 * an occupancy_build() error.
 */
int occupancy_compute(struct tool_ctx *ctx, const struct occupancy_args *args,
		      struct occupancy_result *out);

/* Writes the tool's JSON (with the cells as runs when rle) into obj. 0 or ENG_ENOMEM. */
int occupancy_write(struct tool_ctx *ctx, const struct occupancy_result *r, bool rle,
		    cJSON *obj);

#endif /* OCCUPANCY_H */
