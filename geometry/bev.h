/* SPDX-License-Identifier: MIT */
/*
 * Bird's-eye-view (BEV) angles in a Z-up world: the camera heading, the
 * signed yaw from the heading to a point (positive = counter-clockwise =
 * left), displacements in the BEV frame of a camera, and the 8 direction
 * sectors of 45 degrees centred on the heading.
 */
#ifndef BEV_H
#define BEV_H

#include <cglm/cglm.h>

#include "pose.h"

/* The 8 sectors, counter-clockwise from the heading. */
enum bev_dir {
	BEV_FRONT = 0,
	BEV_FRONT_LEFT,
	BEV_LEFT,
	BEV_BACK_LEFT,
	BEV_BACK,
	BEV_BACK_RIGHT,
	BEV_RIGHT,
	BEV_FRONT_RIGHT,
	BEV_NDIR
};

/*
 * Heading of an OpenCV camera pose (T_world_camera, +Z forward): the angle
 * in radians of its forward axis projected on the XY plane, measured
 * counter-clockwise from +X. Returns 0 and stores it in *out, or
 * ENG_ERANGE when the forward axis is within 1e-6 of vertical.
 */
int bev_heading(const struct pose *T_world_cam, float *out);

/* Wraps an angle in degrees to (-180, 180]. Can't fail. */
float bev_wrap_deg(float deg);

/*
 * Signed BEV yaw in degrees, in (-180, 180], from the heading `heading`
 * (radians, as bev_heading gives) at position `from` to the point `to`.
 * Returns ENG_ERANGE when the two points coincide in XY (within 1e-6 m).
 */
int bev_yaw_to(float heading, const vec3 from, const vec3 to, float *yaw_deg);

/*
 * A world displacement d expressed in the BEV frame of a heading:
 * out[0] forward, out[1] left, out[2] up (metres). Can't fail.
 */
void bev_local(float heading, const vec3 d, vec3 out);

/* The sector containing a yaw in degrees. Can't fail. */
enum bev_dir bev_dir_from_yaw(float yaw_deg);

/*
 * Distance in degrees from a yaw to the nearest sector boundary
 * (boundaries at +-22.5, +-67.5, +-112.5, +-157.5). Can't fail.
 */
float bev_dir_margin(float yaw_deg);

/* The sector's centre yaw in degrees (0, 45, 90, 135, 180, -135, -90, -45). */
float bev_dir_yaw(enum bev_dir d);

/* "front", "front-left", ... Can't fail; "?" for an invalid value. */
const char *bev_dir_name(enum bev_dir d);

/*
 * EgoProx's edge letters: A right, B left, C front, D back, E front-right,
 * F front-left, G back-left, H back-right. Returns '?' for invalid input.
 */
char bev_dir_letter(enum bev_dir d);

/* Inverse of bev_dir_letter / bev_dir_name; BEV_NDIR when unknown. */
enum bev_dir bev_dir_from_letter(char c);
enum bev_dir bev_dir_from_name(const char *s);

/* The sector mirrored left-right (front-left <-> front-right, ...). */
enum bev_dir bev_dir_mirror(enum bev_dir d);

#endif /* BEV_H */
