/* SPDX-License-Identifier: MIT */
/*
 * Rigid poses over cglm: a rotation (unit quaternion x,y,z,w) and a
 * translation. `struct pose` read as T_a_b maps points of frame b into
 * frame a: p_a = R(q) * p_b + t. Pure functions, no allocation.
 */
#ifndef POSE_H
#define POSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cglm/cglm.h>

#include "errcode.h"

/* Degrees per radian and radians per degree, in double precision. */
#define POSE_RAD2DEG 57.29577951308232
#define POSE_DEG2RAD 0.017453292519943295

struct pose {
	versor q; /* rotation, unit quaternion, x,y,z,w (Hamilton) */
	vec3 t;   /* translation, metres */
};

/* Sets p to the identity. Can't fail. */
void pose_identity(struct pose *p);

/* Builds a pose from a quaternion given as x,y,z,w and a translation. */
void pose_set(struct pose *p, float qx, float qy, float qz, float qw,
	      float tx, float ty, float tz);

/*
 * Normalises q in place. Returns 0, or ENG_EINVAL when the quaternion
 * has zero length or a non-finite component (the pose is then unchanged).
 */
int pose_normalize(struct pose *p);

/* out = a * b (T_a_c = T_a_b * T_b_c). out may alias a or b. */
void pose_mul(const struct pose *a, const struct pose *b, struct pose *out);

/* out = p^-1. out may alias p. */
void pose_inv(const struct pose *p, struct pose *out);

/* out = T * in for a point. out may alias in. */
void pose_apply(const struct pose *p, const vec3 in, vec3 out);

/* out = R * in for a direction. out may alias in. */
void pose_rotate(const struct pose *p, const vec3 in, vec3 out);

/*
 * Interpolates between a (alpha 0) and b (alpha 1): lerp of the
 * translation, shortest-arc slerp of the rotation. alpha is clamped to
 * [0, 1]. out may alias a or b.
 */
void pose_interp(const struct pose *a, const struct pose *b, float alpha,
		 struct pose *out);

/* One timestamped pose of a trajectory. */
struct pose_sample {
	int64_t t_ns;     /* device time, ns */
	struct pose pose; /* T_world_x at t_ns */
};

/* Whether a and b hold the same pose, bit for bit. Can't fail. */
bool pose_same(const struct pose *a, const struct pose *b);

/*
 * Pose at time t from samples sorted by t_ns: bracketing samples are
 * interpolated, unless they share their time or their pose, which is then
 * the first one's. Returns 0, or ENG_ERANGE when t lies outside
 * [s[0].t_ns - tol_ns, s[n-1].t_ns + tol_ns] (inside the tolerance the
 * end sample is used) or n is 0.
 */
int pose_sample_at(const struct pose_sample *s, size_t n, int64_t t,
		   int64_t tol_ns, struct pose *out);

/*
 * Index of the sample nearest to t, or of the first/last sample when t is
 * outside. Returns SIZE_MAX when n is 0.
 */
size_t pose_sample_nearest(const struct pose_sample *s, size_t n, int64_t t);

/*
 * Index of the last element of a sorted int64 array with value <= t, or
 * SIZE_MAX when none. Shared by every time-indexed stream. Uses stride
 * bytes between elements so it works on arrays of structs whose first
 * member is the int64 time.
 */
size_t time_floor_index(const void *base, size_t n, size_t stride, int64_t t);

/*
 * Index of the element nearest to t within tol_ns, or SIZE_MAX when none is
 * that close (a nearest-timestamp join with tolerance).
 */
size_t time_nearest_index(const void *base, size_t n, size_t stride,
			  int64_t t, int64_t tol_ns);

#endif /* POSE_H */
