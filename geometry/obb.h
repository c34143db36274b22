/* SPDX-License-Identifier: MIT */
/*
 * Oriented boxes in the world frame and rays against them (slab test in
 * the box frame). Pure functions over caller memory.
 */
#ifndef OBB_H
#define OBB_H

#include <stdbool.h>

#include <cglm/cglm.h>

#include "pose.h"

struct obb {
	vec3 c;    /* centre, world frame, m */
	vec3 ax[3]; /* unit box axes in the world frame (columns of R) */
	vec3 h;    /* half-extents along ax[0..2], m, >= 0 */
};

struct ray {
	vec3 o; /* origin, world frame */
	vec3 d; /* unit direction */
};

/*
 * The world box of an object: its local axis-aligned box (centre
 * local_c, half-extents half, in the object frame) placed by T_world_obj.
 */
void obb_from_local(const struct pose *T_world_obj, const vec3 local_c,
		    const vec3 half, struct obb *out);

/* The world-axis-aligned bounds of b. */
void obb_aabb(const struct obb *b, vec3 lo, vec3 hi);

/*
 * The 8 corners, bottom face first, in the order of projectaria_tools'
 * bbox3dToCoordinates when ax[2] is the box's local z.
 */
void obb_corners(const struct obb *b, vec3 out[8]);

/* True if the world point p lies inside or on b. */
bool obb_contains(const struct obb *b, const vec3 p);

/*
 * Ray against box: on a hit with entry distance in [0, tmax] stores it in
 * *t and returns true. A ray starting inside the box hits at t = 0. A ray
 * parallel to a face hits only if its origin lies within that slab
 * (touching a face or an edge counts as a hit).
 */
bool ray_obb(const struct ray *r, const struct obb *b, float tmax, float *t);

/* The same test against a world-axis-aligned box [lo, hi]. */
bool ray_aabb(const struct ray *r, const vec3 lo, const vec3 hi, float tmax,
	      float *t);

#endif /* OBB_H */
