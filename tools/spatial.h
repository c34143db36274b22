/* SPDX-License-Identifier: MIT */
/*
 * The spatial calculator (tool spatial_relation): from the camera at t to a
 * point or an object, the 3D and BEV distances, the signed BEV yaw, the
 * 8-way direction, the turn, vertical and proximity classes with their
 * margins to the class edges and the ambiguity flags of docs/design.md
 * section 3; and the relation of one object to a reference object as seen
 * from the camera.
 *
 * spatial_compute() is the typed entry the engine calls; the tool's JSON
 * entry (tool_spatial_relation) parses its arguments into struct
 * spatial_args, calls it and writes the result with spatial_write().
 */
#ifndef SPATIAL_H
#define SPATIAL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bev.h"
#include "discretise.h"
#include "pose.h"

struct tool_ctx;

struct spatial_args {
	int64_t t;        /* camera time, ns */
	long object;      /* target object index, or -1 to use `point` */
	vec3 point;       /* target world point, when object < 0 */
	bool has_t2;      /* place the object (and reference) at t2 instead of t */
	int64_t t2;
	long reference;   /* reference object index for `relation`, or -1 */
};

/* Answers too close to a class edge to be asked (spatial_result.ambiguous). */
enum spatial_ambiguous {
	SPATIAL_AMB_DIRECTION = (1 << 0), /* yaw within the margin of a sector boundary */
	SPATIAL_AMB_TURN = (1 << 1),      /* yaw within the margin of a turn class edge */
	SPATIAL_AMB_VERTICAL = (1 << 2),  /* |dz| within the margin of the up/down threshold */
	SPATIAL_AMB_PROXIMITY = (1 << 3)  /* distance within the margin of near/far */
};

/* The relation label of A to the reference B. */
enum spatial_label {
	SPATIAL_LEFT_OF = 0,
	SPATIAL_RIGHT_OF,
	SPATIAL_IN_FRONT_OF,
	SPATIAL_BEHIND,
	SPATIAL_NEAR   /* less than 1 cm apart horizontally: no side */
};

/* Ambiguity of a relation (spatial_relation.ambiguous). */
enum spatial_rel_ambiguous {
	SPATIAL_REL_AMB_SIDE = (1 << 0),      /* within the margin of a diagonal (or no side) */
	SPATIAL_REL_AMB_DIRECTION = (1 << 1), /* B->A within the margin of a sector boundary */
	SPATIAL_REL_AMB_NEAR = (1 << 2)       /* distance within the margin of near_m */
};

/* A relative to B from the camera heading (docs/design.md section 3). */
struct spatial_relation {
	long object, reference;  /* A and B (object indices) */
	vec3 reference_pos;      /* B's box centre, world */
	enum spatial_label label;
	bool near;               /* 3D distance below near_m */
	double distance_m;       /* A-B, 3D */
	double bev_distance_m;   /* A-B, horizontal */
	vec3 local;              /* B->A in the camera's BEV frame [forward, left, up] */
	bool has_side;           /* false when A and B coincide horizontally */
	double angle_deg;        /* angle of (forward, left), when has_side */
	double side_margin_deg;  /* to the nearest 45-degree diagonal */
	double near_margin_m;    /* to near_m */
	enum bev_dir dir;        /* sector of B->A, when has_side */
	float dir_margin_deg;
	unsigned ambiguous;      /* enum spatial_rel_ambiguous */
};

struct spatial_result {
	int64_t t;               /* camera time */
	struct pose cam;         /* camera pose at t */
	float heading;           /* camera heading, rad */
	long object;             /* target object, -1 for a point */
	int64_t t2;              /* time the object is placed at */
	vec3 target;             /* target position, world */
	double distance_m, bev_distance_m, dz_m;
	vec3 local;              /* camera->target in the BEV frame */
	bool has_yaw;            /* false when the target is straight above or below */
	float yaw_deg;           /* signed BEV yaw, + = left */
	enum bev_dir dir;        /* 8-way sector (when has_yaw) */
	float sector_margin_deg; /* to the nearest boundary */
	enum disc_turn turn;     /* turn class (when has_yaw) */
	int vertical;            /* -1 down, 0 level, +1 up */
	double vertical_margin_m;
	enum disc_prox proximity;
	double proximity_margin_m;
	unsigned ambiguous;      /* enum spatial_ambiguous */
	bool has_relation;       /* args.reference >= 0 */
	struct spatial_relation rel;
};

/*
 * Computes the result for args with the context's discretisation
 * settings. Returns 0; ENG_EINVAL (through tool__reject, err_msg() naming
 * the argument) for a time outside the recording, an unknown or equal
 * reference, a reference or t2 with a point target; ENG_ERANGE when the
 * camera has no heading at t.
 */
int spatial_compute(struct tool_ctx *ctx, const struct spatial_args *args,
		    struct spatial_result *out);

/* Writes the tool's JSON fields of r into obj. Returns 0 or ENG_ENOMEM. */
int spatial_write(struct tool_ctx *ctx, const struct spatial_result *r, cJSON *obj);

/* "left of", "right of", "in front of", "behind", "near". Can't fail. */
const char *spatial_label_name(enum spatial_label l);

#endif /* SPATIAL_H */
