/* SPDX-License-Identifier: MIT */
/*
 * Discretisation of angles and distances into the coarse, human-readable
 * values that answers use, and the ambiguity margins that reject values
 * too close to a bin edge (docs/design.md section 3).
 */
#ifndef DISCRETISE_H
#define DISCRETISE_H

#include <stdbool.h>

/* The discretisation settings; disc_defaults() fills the docs/design.md values. */
struct disc_params {
	float angle_step_deg;   /* rounding step for angles (5) */
	float dist_step_m;      /* rounding step up to dist_coarse_from_m (0.1) */
	float dist_coarse_step_m; /* rounding step above it (0.5) */
	float dist_coarse_from_m; /* where the coarse step starts (5.0) */
	float forward_deg;      /* |yaw| below this: "keep facing forward" (15) */
	float around_deg;       /* |yaw| above this: "turn around" (165) */
	float vertical_m;       /* |dz| above this: "up"/"down" (0.3) */
	float near_m;           /* below: near (1.0) */
	float far_m;            /* above: far (2.0) */
	float angle_margin_deg; /* ambiguity margin at sector and class edges (5) */
	float dist_margin_m;    /* ambiguity margin at distance class edges (0.05) */
};

/* Fills p with the defaults of docs/design.md. Can't fail. */
void disc_defaults(struct disc_params *p);

/* |deg| rounded to the angle step (so 93 -> 95). Can't fail. */
float disc_angle(const struct disc_params *p, float deg);

/* A distance rounded to its step (0.1 m, 0.5 m above 5 m). Can't fail. */
float disc_distance(const struct disc_params *p, float m);

/* Coarse turn classes of a signed yaw. */
enum disc_turn {
	DISC_TURN_FORWARD = 0, /* |yaw| < forward_deg */
	DISC_TURN_LEFT,        /* yaw > 0 */
	DISC_TURN_RIGHT,       /* yaw < 0 */
	DISC_TURN_AROUND       /* |yaw| > around_deg */
};

/* The turn class of a signed yaw in degrees. Can't fail. */
enum disc_turn disc_turn_class(const struct disc_params *p, float yaw_deg);

/*
 * True when a signed yaw lies within the angle margin of the forward or
 * around thresholds, so that its turn class is ambiguous.
 */
bool disc_turn_ambiguous(const struct disc_params *p, float yaw_deg);

/* Vertical class: -1 down, 0 level, +1 up. */
int disc_vertical(const struct disc_params *p, float dz);

/* True when |dz| is within dist_margin_m of vertical_m. */
bool disc_vertical_ambiguous(const struct disc_params *p, float dz);

/* Proximity classes. */
enum disc_prox { DISC_NEAR = 0, DISC_MID, DISC_FAR };

enum disc_prox disc_proximity(const struct disc_params *p, float m);

/* True when m is within dist_margin_m of near_m or far_m. */
bool disc_proximity_ambiguous(const struct disc_params *p, float m);

#endif /* DISCRETISE_H */
