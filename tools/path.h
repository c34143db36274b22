/* SPDX-License-Identifier: MIT */
/*
 * Path planning from the camera to a target object on the occupancy grid
 * of occupancy.h: shared by plan_path and the navigation clip check.
 *
 * Start: the camera cell at t; when it is blocked (the wearer stands
 * within the inflation of some furniture) the nearest free cell within
 * PATH_START_RADIUS_M of the camera (grid_nearest_free), and the plan says
 * it moved. Goal: "the nearest free cell by the target" that the start
 * can reach: astar_nearest_reachable() towards the target's box centre,
 * among cells within (target footprint radius + goal radius) of it, where
 * the footprint radius is half the diagonal of the box's XY bounds and
 * the goal radius defaults to 1 m. The target is not an obstacle. The
 * path is 8-connected A* (octile, no corner cutting) and its legs come
 * from astar_legs(), the first relative to the camera heading at t.
 */
#ifndef PATH_H
#define PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "astar.h"
#include "occupancy.h"

struct tool_ctx;

/* How far the start may move off a blocked camera cell, m. */
#define PATH_START_RADIUS_M 1.0f
/* Default goal radius around the target's footprint, m. */
#define PATH_GOAL_RADIUS_M 1.0f

/* Why a target is unreachable. */
enum path_status {
	PATH_OK = 0,
	PATH_START_BLOCKED, /* no free cell near the camera */
	PATH_NO_GOAL        /* no reachable free cell by the target */
};

/* A plan. Arrays are owned by the context and valid until its next plan. */
struct path_plan {
	enum path_status status;
	struct occupancy occ;     /* the grid planned on */
	float heading;            /* camera heading at t, rad */
	int sx, sy;               /* start cell */
	bool start_moved;         /* the camera cell was blocked */
	float start_offset_m;     /* camera -> start cell centre, XY, m */
	int gx, gy;               /* goal cell (when PATH_OK) */
	float goal_offset_m;      /* goal cell centre -> target centre, XY, m */
	double length_m;          /* path length, m */
	const int32_t *cells;     /* the path, start first (grid indices) */
	size_t ncells;
	const struct astar_leg *legs;
	size_t nlegs;
	size_t expanded;          /* nodes A* closed */
};

/*
 * Plans from the camera at t (pose cam, heading `heading`) to object
 * `target` with grid settings gp (NULL for the defaults) and goal radius
 * goal_radius_m (< 0 for PATH_GOAL_RADIUS_M). An unreachable target is
 * not an error: out->status says why. Returns 0, or ENG_ENOMEM /
 * ENG_ETOOBIG / a scene error (occupancy_build).
 */
int path_plan(struct tool_ctx *ctx, int64_t t, const struct pose *cam, float heading,
	      long target, const struct grid_params *gp, float goal_radius_m,
	      struct path_plan *out);

/* "ok", "start_blocked", "no_reachable_cell_by_target". Can't fail. */
const char *path_status_name(enum path_status s);

/* ======================= plan_path ======================= */

/* Path points written by plan_path when the call gives no max_points. */
#define PATH_MAX_POINTS 40

struct path_args {
	int64_t t;               /* camera time, ns */
	long target;             /* target object index */
	float goal_radius_m;     /* < 0 for PATH_GOAL_RADIUS_M */
	struct grid_params grid; /* grid settings (grid_defaults() for the design's) */
};

struct path_result {
	int64_t t;
	long target;
	struct pose cam;         /* camera at t */
	float heading;           /* rad */
	struct path_plan plan;   /* arrays owned by the context, valid until its next plan */
};

/*
 * The typed entry of plan_path: the camera at t, then path_plan(). An
 * unreachable target is not an error (plan.status). Returns 0; ENG_EINVAL
 * (t outside the recording, bad target; through tool__reject); ENG_ERANGE
 * (no heading); or a path_plan() error.
 */
int path_compute(struct tool_ctx *ctx, const struct path_args *args,
		 struct path_result *out);

/* Writes the tool's JSON (at most max_points path points) into obj. 0 or ENG_ENOMEM. */
int path_write(struct tool_ctx *ctx, const struct path_result *r, size_t max_points,
	       cJSON *obj);

#endif /* PATH_H */
