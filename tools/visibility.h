/* SPDX-License-Identifier: MIT */
/*
 * The visibility predicate of docs/design.md section 3 and the visibility
 * timeline built from it.
 *
 * Object O is visible from the camera at time t when its box centre c:
 * 1. lies in front of the camera (camera-frame z > 0);
 * 2. is within the maximum range (3D distance camera -> c, 6 m);
 * 3. projects inside the image: pinhole u = fx x / z + cx in [0, width),
 *    v = fy y / z + cy in [0, height); fisheye (equidistant, r = fx
 *    theta) with theta, the angle from the optical axis, <= fov / 2 and
 *    the pixel inside the image;
 * 4. is not occluded: the segment camera -> c enters no other box, where
 *    boxes that contain the camera (a room) or contain c (the shelf
 *    holding a book) do not count (scene_occluded).
 * The tests run in that order and the first that fails is the reason.
 *
 * The timeline holds the predicate for every object at every frame of a
 * fixed 10 Hz grid (frame k at recording start + k * 100 ms), computed
 * once per context and kept in its TOOL_SLOT_VISIBILITY slot.
 */
#ifndef VISIBILITY_H
#define VISIBILITY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bev.h"
#include "recording.h"
#include "scene.h"

struct tool_ctx;

/* Default maximum range of the predicate, m. */
#define VISIBILITY_MAX_RANGE_M 6.0f

enum visibility_reason {
	VIS_VISIBLE = 0,
	VIS_BEHIND,        /* camera-frame z <= 0 */
	VIS_OUT_OF_RANGE,  /* farther than the maximum range */
	VIS_OUTSIDE_IMAGE, /* projects outside the image (or the fisheye circle) */
	VIS_OCCLUDED       /* another box is in the way */
};

/* The camera at one time, prepared for many tests. */
struct visibility_view {
	int64_t t_ns;            /* the time */
	struct pose T_world_cam; /* camera pose */
	float axes[3][3];        /* camera x, y, z axes in the world (rows) */
	struct rec_camera cam;   /* intrinsics */
	float max_range_m;       /* range limit */
};

/* The facts behind one answer. */
struct visibility_info {
	enum visibility_reason reason;
	vec3 p_cam;       /* box centre in the camera frame, m */
	float distance_m; /* camera centre to box centre, m */
	float u, v;       /* pixel of the centre (meaningful when z > 0) */
	long occluder;    /* nearest occluding object when asked for, else -1 */
};

/*
 * Prepares the view at t and moves the scene to t (scene_at). Returns 0,
 * ENG_ERANGE when t is outside the trajectory, or a scene_at() error.
 */
int visibility_view_at(struct scene *s, const struct recording *rec, int64_t t,
		       float max_range_m, struct visibility_view *out);

/*
 * The part of the predicate that needs no occluder: is object obj at time
 * t behind the camera, out of range or outside the image? Returns that
 * reason, or VIS_VISIBLE when only the occlusion test can decide (then
 * visibility_view_at() and visibility_test() must). The same arithmetic
 * as visibility_test(), so the two never disagree; it does not move the
 * scene. ENG_ERANGE (through *rc) when t is outside the trajectory.
 */
enum visibility_reason visibility_precheck(const struct scene *s, const struct recording *rec,
					   int64_t t, float max_range_m, size_t obj, int *rc);

/*
 * The predicate for object obj with the scene at v->t_ns. With
 * want_occluder, an occluded answer also names the nearest occluder
 * (slower). out may be NULL. Can't fail.
 */
enum visibility_reason visibility_test(const struct scene *s,
				       const struct visibility_view *v, size_t obj,
				       bool want_occluder, struct visibility_info *out);

/* "visible", "behind", "out_of_range", "outside_image", "occluded". */
const char *visibility_reason_name(enum visibility_reason r);

/*
 * The visibility of every object on the 10 Hz grid, computed where asked:
 * in chunks of VISIBILITY_CHUNK frames, each once.
 */
struct visibility_timeline {
	int64_t t0_ns;    /* time of frame 0 (the recording start) */
	int64_t step_ns;  /* frame spacing (SCENE_STEP_NS) */
	size_t nframes;   /* frames k with t0 + k * step <= recording end */
	size_t nobjects;  /* rows */
	size_t words;     /* 64-bit words per row */
	uint64_t *bits;   /* bit k of row o set: object o visible at frame k */
	size_t chunks;    /* runs of VISIBILITY_CHUNK frames, the unit of computing */
	unsigned char *done; /* per chunk: 0 not computed, 1 being computed, 2 computed */
	pthread_mutex_t lock; /* guards done; a chunk's bits are set by its claimer only */
	pthread_cond_t cond;  /* a chunk finished */
};

/* Frames computed together (a divisor of 64: a chunk's bits lie in one word). */
#define VISIBILITY_CHUNK 8

/*
 * The timeline of the context's recording (default range) with every
 * frame computed (O(frames x objects) predicate tests, once), owned by
 * the context. Returns 0, ENG_ENOMEM, or a scene error.
 */
int visibility_timeline_get(struct tool_ctx *ctx,
			    const struct visibility_timeline **out);

/*
 * The same timeline with at least frames [k0, k1) computed (k1 past the
 * end means the end): a frame not computed reads as not visible, so a
 * caller reads only the frames it asked for. This keeps the cost of a
 * scan over part of a long recording to that part.
 */
int visibility_timeline_range(struct tool_ctx *ctx, size_t k0, size_t k1,
			      const struct visibility_timeline **out);

/* Whether object o is visible at frame k (false past the end). Can't fail. */
bool visibility_timeline_visible(const struct visibility_timeline *tl,
				 size_t o, size_t k);

/* The time of frame k. Can't fail. */
int64_t visibility_timeline_time(const struct visibility_timeline *tl, size_t k);

/* ======================= visible_objects ======================= */

struct visible_args {
	int64_t t;           /* camera time, ns */
	float max_range_m;   /* range of the predicate (VISIBILITY_MAX_RANGE_M) */
	bool include_hidden; /* also list the hidden objects with their reasons */
};

/* One object in (or out of) view. */
struct visible_object {
	size_t obj;                  /* object index */
	struct visibility_info info; /* the predicate's facts (occluder named for hidden ones) */
	vec3 position;               /* box centre at t (visible objects) */
	bool has_yaw;                /* false straight above or below the camera */
	float yaw_deg;               /* signed BEV yaw from the heading, + = left */
	enum bev_dir dir;            /* its sector */
	float sector_margin_deg;     /* to the nearest sector boundary */
};

/* The objects in view at t, nearest first; arrays owned (visible_release). */
struct visible_result {
	int64_t t;
	struct pose cam;
	float heading;
	float max_range_m;
	struct visible_object *visible;
	size_t nvisible;
	struct visible_object *hidden; /* only with include_hidden */
	size_t nhidden;
};

/*
 * The typed entry of the visible_objects tool. Returns 0 (release *out
 * with visible_release), ENG_EINVAL (t outside the recording, through
 * tool__reject), ENG_ERANGE (no heading at t), ENG_ENOMEM or a scene error;
 * *out holds nothing to release on failure.
 */
int visible_compute(struct tool_ctx *ctx, const struct visible_args *args,
		    struct visible_result *out);

/* Frees the arrays of r. Can't fail. */
void visible_release(struct visible_result *r);

/*
 * Writes the tool's JSON fields of r into obj, at most `limit` objects per
 * list, the hidden list when `hidden`. Returns 0 or ENG_ENOMEM.
 */
int visible_write(struct tool_ctx *ctx, const struct visible_result *r, size_t limit,
		  bool hidden, cJSON *obj);

#endif /* VISIBILITY_H */
