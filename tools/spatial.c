/* SPDX-License-Identifier: MIT */
/*
 * spatial_relation: the spatial calculator. From the camera at t to a
 * point or an object: 3D distance, signed BEV yaw, 8-way direction,
 * vertical class, proximity class, their discretised values and ambiguity
 * margins; and the relation of one object to another as seen from the
 * camera. The typed entry and the result are described in spatial.h.
 */
#include "spatial.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "banned.h"
#include "bev.h"
#include "err.h"
#include "registry.h"

/* Below this horizontal separation (m) the side of A relative to B is undefined. */
#define SIDE_MIN_M 0.01

static const char *turn_name(enum disc_turn t)
{
	switch (t) {
	case DISC_TURN_LEFT: return "left";
	case DISC_TURN_RIGHT: return "right";
	case DISC_TURN_AROUND: return "around";
	default: return "forward";
	}
}

static const char *vertical_name(int v)
{
	return v > 0 ? "up" : v < 0 ? "down" : "level";
}

static const char *prox_name(enum disc_prox p)
{
	return p == DISC_NEAR ? "near" : p == DISC_FAR ? "far" : "mid";
}

static double prox_margin(const struct disc_params *dp, double m)
{
	double a = fabs(m - (double)dp->near_m), b = fabs(m - (double)dp->far_m);

	return a < b ? a : b;
}

/* Signed value rounded by a discretiser that works on magnitudes. */
static double signed_disc(double v, double mag)
{
	if (mag == 0)
		return 0;
	return v < 0 ? -mag : mag;
}

static int add_str_item(cJSON *arr, const char *s)
{
	cJSON *v = cJSON_CreateString(s);

	if (!v)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, v);
	return 0;
}

/* ======================= Computing ======================= */

/* The camera -> target fields. */
static void camera_fields(struct spatial_result *r, const struct disc_params *dp)
{
	vec3 d;
	int i;

	for (i = 0; i < 3; i++)
		d[i] = r->target[i] - r->cam.t[i];
	r->distance_m = sqrt((double)d[0] * (double)d[0] + (double)d[1] * (double)d[1] +
			     (double)d[2] * (double)d[2]);
	r->bev_distance_m = hypot(d[0], d[1]);
	r->dz_m = d[2];
	glm_vec3_zero(r->local);
	bev_local(r->heading, d, r->local);
	r->has_yaw = bev_yaw_to(r->heading, r->cam.t, r->target, &r->yaw_deg) == 0;
	r->ambiguous = 0;
	if (r->has_yaw) {
		r->dir = bev_dir_from_yaw(r->yaw_deg);
		r->sector_margin_deg = bev_dir_margin(r->yaw_deg);
		r->turn = disc_turn_class(dp, r->yaw_deg);
		if (r->sector_margin_deg < dp->angle_margin_deg)
			r->ambiguous |= SPATIAL_AMB_DIRECTION;
		if (disc_turn_ambiguous(dp, r->yaw_deg))
			r->ambiguous |= SPATIAL_AMB_TURN;
	} else {
		r->yaw_deg = NAN;
		r->ambiguous |= SPATIAL_AMB_DIRECTION | SPATIAL_AMB_TURN;
	}
	r->vertical = disc_vertical(dp, (float)r->dz_m);
	r->vertical_margin_m = fabs(fabs(r->dz_m) - (double)dp->vertical_m);
	r->proximity = disc_proximity(dp, (float)r->distance_m);
	r->proximity_margin_m = prox_margin(dp, r->distance_m);
	if (disc_vertical_ambiguous(dp, (float)r->dz_m))
		r->ambiguous |= SPATIAL_AMB_VERTICAL;
	if (disc_proximity_ambiguous(dp, (float)r->distance_m))
		r->ambiguous |= SPATIAL_AMB_PROXIMITY;
}

/*
 * The relation of A to B as seen from a camera heading: the displacement
 * B -> A in the camera's BEV frame (forward f, left l). The dominant axis
 * decides: left of (l > 0) / right of (l < 0) when |l| >= |f|, else
 * behind (f > 0: A is farther from the camera than B along the heading) or
 * in front of (f < 0: A is closer). The margin is the angle of (f, l) to
 * the nearest 45-degree diagonal. "near" is the 3D distance below near_m.
 */
static void relation(struct spatial_relation *rel, const struct disc_params *dp,
		     float heading, const struct recording *rec, long a, long b, int64_t t)
{
	vec3 pa = { 0 }, d;
	double f, l;

	memset(rel, 0, sizeof(*rel));
	rel->object = a;
	rel->reference = b;
	tool__object_pos(rec, (size_t)a, t, pa);
	tool__object_pos(rec, (size_t)b, t, rel->reference_pos);
	glm_vec3_sub(pa, rel->reference_pos, d);
	bev_local(heading, d, rel->local);
	f = rel->local[0];
	l = rel->local[1];
	rel->bev_distance_m = hypot(f, l);
	rel->distance_m = glm_vec3_norm(d);
	rel->has_side = rel->bev_distance_m >= SIDE_MIN_M;
	if (rel->has_side) {
		double r90;

		rel->angle_deg = atan2(l, f) * POSE_RAD2DEG;
		if (fabs(l) >= fabs(f))
			rel->label = l > 0 ? SPATIAL_LEFT_OF : SPATIAL_RIGHT_OF;
		else
			rel->label = f > 0 ? SPATIAL_BEHIND : SPATIAL_IN_FRONT_OF;
		r90 = fmod(fabs(rel->angle_deg) + 45.0, 90.0);
		rel->side_margin_deg = r90 < 90.0 - r90 ? r90 : 90.0 - r90;
		rel->dir = bev_dir_from_yaw((float)rel->angle_deg);
		rel->dir_margin_deg = bev_dir_margin((float)rel->angle_deg);
	} else {
		rel->label = SPATIAL_NEAR;
	}
	rel->near = rel->distance_m < (double)dp->near_m;
	rel->near_margin_m = fabs(rel->distance_m - (double)dp->near_m);
	if (!rel->has_side || rel->side_margin_deg < (double)dp->angle_margin_deg)
		rel->ambiguous |= SPATIAL_REL_AMB_SIDE;
	if (rel->has_side && rel->dir_margin_deg < dp->angle_margin_deg)
		rel->ambiguous |= SPATIAL_REL_AMB_DIRECTION;
	if (rel->near_margin_m < (double)dp->dist_margin_m)
		rel->ambiguous |= SPATIAL_REL_AMB_NEAR;
}

int spatial_compute(struct tool_ctx *ctx, const struct spatial_args *a,
		    struct spatial_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct disc_params *dp = tool_ctx_disc(ctx);
	bool has_obj = a->object >= 0;
	int rc;

	memset(out, 0, sizeof(*out));
	out->t = a->t;
	out->object = a->object;
	out->t2 = a->t;
	if (!has_obj && a->reference >= 0)
		return tool__reject(ctx, "/reference",
				    "a relation to a reference object needs an object target, not a point");
	if (!has_obj && a->has_t2)
		return tool__reject(ctx, "/t2", "applies only to an object target");
	rc = tool__camera(ctx, "t", a->t, &out->cam, &out->heading);
	if (rc)
		return rc;
	if (has_obj) {
		if ((size_t)a->object >= rec->nobjects)
			return tool__reject(ctx, "/object", "no object with index %ld", a->object);
		if (a->reference >= 0 && (size_t)a->reference >= rec->nobjects)
			return tool__reject(ctx, "/reference", "no object with index %ld",
					    a->reference);
		if (a->reference == a->object)
			return tool__reject(ctx, "/reference", "must differ from object");
		out->t2 = a->has_t2 ? a->t2 : a->t;
		if (out->t2 < recording_t0(rec) || out->t2 > recording_t1(rec))
			return tool__reject(ctx, "/t2",
					    "must be within the recording [%" PRId64 ", %" PRId64
					    "] ns, got %" PRId64, recording_t0(rec),
					    recording_t1(rec), out->t2);
		tool__object_pos(rec, (size_t)a->object, out->t2, out->target);
	} else {
		out->target[0] = a->point[0];
		out->target[1] = a->point[1];
		out->target[2] = a->point[2];
	}
	camera_fields(out, dp);
	if (a->reference >= 0) {
		out->has_relation = true;
		relation(&out->rel, dp, out->heading, rec, a->object, a->reference, out->t2);
	}
	return 0;
}

/* ======================= JSON ======================= */

const char *spatial_label_name(enum spatial_label l)
{
	static const char *const names[] = { "left of", "right of", "in front of", "behind",
					     "near" };

	return (unsigned)l < ARRAY_SIZE(names) ? names[l] : "near";
}

static int write_camera_fields(cJSON *r, const struct disc_params *dp,
			       const struct spatial_result *x)
{
	cJSON *disc, *amb;
	int rc = 0;

	if (!tool__add_num(r, "distance_m", x->distance_m, 3) ||
	    !tool__add_num(r, "bev_distance_m", x->bev_distance_m, 3) ||
	    !tool__add_vec3(r, "local_m", x->local, 3))
		return ENG_ENOMEM;
	if (x->has_yaw) {
		char letter[2] = { bev_dir_letter(x->dir), 0 };

		if (!tool__add_num(r, "yaw_deg", x->yaw_deg, 2) ||
		    !cJSON_AddStringToObject(r, "direction", bev_dir_name(x->dir)) ||
		    !cJSON_AddStringToObject(r, "letter", letter) ||
		    !tool__add_num(r, "sector_margin_deg", x->sector_margin_deg, 2) ||
		    !cJSON_AddStringToObject(r, "turn", turn_name(x->turn)))
			return ENG_ENOMEM;
	} else if (!cJSON_AddNullToObject(r, "yaw_deg") || !cJSON_AddNullToObject(r, "direction") ||
		   !cJSON_AddNullToObject(r, "letter") ||
		   !cJSON_AddNullToObject(r, "sector_margin_deg") ||
		   !cJSON_AddNullToObject(r, "turn")) {
		return ENG_ENOMEM;
	}
	if (!tool__add_num(r, "dz_m", x->dz_m, 3) ||
	    !cJSON_AddStringToObject(r, "vertical", vertical_name(x->vertical)) ||
	    !tool__add_num(r, "vertical_margin_m", x->vertical_margin_m, 3) ||
	    !cJSON_AddStringToObject(r, "proximity", prox_name(x->proximity)) ||
	    !tool__add_num(r, "proximity_margin_m", x->proximity_margin_m, 3))
		return ENG_ENOMEM;
	disc = cJSON_AddObjectToObject(r, "discrete");
	if (!disc)
		return ENG_ENOMEM;
	if ((x->has_yaw ? !tool__add_num(disc, "yaw_deg",
					 signed_disc(x->yaw_deg, disc_angle(dp, x->yaw_deg)), 1) ||
			  !tool__add_num(disc, "angle_deg", disc_angle(dp, x->yaw_deg), 1)
			: !cJSON_AddNullToObject(disc, "yaw_deg") ||
			  !cJSON_AddNullToObject(disc, "angle_deg")) ||
	    !tool__add_num(disc, "distance_m", disc_distance(dp, (float)x->distance_m), 2) ||
	    !tool__add_num(disc, "bev_distance_m", disc_distance(dp, (float)x->bev_distance_m), 2) ||
	    !tool__add_num(disc, "dz_m", signed_disc(x->dz_m, disc_distance(dp, (float)x->dz_m)), 2))
		return ENG_ENOMEM;
	amb = cJSON_AddArrayToObject(r, "ambiguous");
	if (!amb)
		return ENG_ENOMEM;
	if (x->ambiguous & SPATIAL_AMB_DIRECTION)
		rc = add_str_item(amb, "direction");
	if (!rc && (x->ambiguous & SPATIAL_AMB_TURN))
		rc = add_str_item(amb, "turn");
	if (!rc && (x->ambiguous & SPATIAL_AMB_VERTICAL))
		rc = add_str_item(amb, "vertical");
	if (!rc && (x->ambiguous & SPATIAL_AMB_PROXIMITY))
		rc = add_str_item(amb, "proximity");
	return rc;
}

static int write_relation(cJSON *r, const struct recording *rec,
			  const struct spatial_relation *x)
{
	cJSON *rel = cJSON_AddObjectToObject(r, "relation"), *amb;
	int rc = 0;

	if (!rel || !tool__add_object_ref(rel, "object", rec, x->object) ||
	    !tool__add_object_ref(rel, "reference", rec, x->reference) ||
	    !tool__add_vec3(rel, "reference_position", x->reference_pos, 3) ||
	    !cJSON_AddStringToObject(rel, "label", spatial_label_name(x->label)) ||
	    !cJSON_AddBoolToObject(rel, "near", x->near) ||
	    !tool__add_num(rel, "distance_m", x->distance_m, 3) ||
	    !tool__add_num(rel, "bev_distance_m", x->bev_distance_m, 3) ||
	    !tool__add_vec3(rel, "local_m", x->local, 3) ||
	    !(x->has_side ? tool__add_num(rel, "angle_deg", x->angle_deg, 2)
			  : cJSON_AddNullToObject(rel, "angle_deg")) ||
	    !tool__add_num(rel, "side_margin_deg", x->side_margin_deg, 2) ||
	    !tool__add_num(rel, "near_margin_m", x->near_margin_m, 3))
		return ENG_ENOMEM;
	if (x->has_side) {
		char letter[2] = { bev_dir_letter(x->dir), 0 };

		if (!cJSON_AddStringToObject(rel, "direction", bev_dir_name(x->dir)) ||
		    !cJSON_AddStringToObject(rel, "letter", letter) ||
		    !tool__add_num(rel, "sector_margin_deg", x->dir_margin_deg, 2))
			return ENG_ENOMEM;
	} else if (!cJSON_AddNullToObject(rel, "direction") ||
		   !cJSON_AddNullToObject(rel, "letter") ||
		   !cJSON_AddNullToObject(rel, "sector_margin_deg")) {
		return ENG_ENOMEM;
	}
	amb = cJSON_AddArrayToObject(rel, "ambiguous");
	if (!amb)
		return ENG_ENOMEM;
	if (x->ambiguous & SPATIAL_REL_AMB_SIDE)
		rc = add_str_item(amb, "side");
	if (!rc && (x->ambiguous & SPATIAL_REL_AMB_DIRECTION))
		rc = add_str_item(amb, "direction");
	if (!rc && (x->ambiguous & SPATIAL_REL_AMB_NEAR))
		rc = add_str_item(amb, "near");
	return rc;
}

int spatial_write(struct tool_ctx *ctx, const struct spatial_result *x, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	cJSON *c, *tg;
	int rc;

	c = cJSON_AddObjectToObject(result, "camera");
	if (!c || !tool__add_time(c, "t_ns", x->t) || !tool__add_vec3(c, "position", x->cam.t, 3) ||
	    !tool__add_num(c, "heading_deg",
			   bev_wrap_deg((float)((double)x->heading * POSE_RAD2DEG)), 2))
		return ENG_ENOMEM;
	tg = cJSON_AddObjectToObject(result, "target");
	if (!tg || !cJSON_AddStringToObject(tg, "kind", x->object >= 0 ? "object" : "point"))
		return ENG_ENOMEM;
	if (x->object >= 0 && (!tool__add_object_ref(tg, "object", rec, x->object) ||
			       !tool__add_time(tg, "t_ns", x->t2)))
		return ENG_ENOMEM;
	if (!tool__add_vec3(tg, "position", x->target, 3))
		return ENG_ENOMEM;
	rc = write_camera_fields(result, tool_ctx_disc(ctx), x);
	if (!rc && x->has_relation)
		rc = write_relation(result, rec, &x->rel);
	return rc;
}

int tool_spatial_relation(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	struct spatial_args a;
	struct spatial_result r;
	bool has_point = tool__has(args, "point"), has_obj = tool__has(args, "object");
	int rc, i;

	memset(&a, 0, sizeof(a));
	a.object = -1;
	a.reference = -1;
	if (has_point == has_obj)
		return tool__reject(ctx, has_point ? "/object" : "/point",
				    "give exactly one of point and object (the other null)");
	a.t = tool__time(args, "t", 0);
	if (has_obj) {
		rc = tool__object_arg(ctx, args, "object", &a.object);
		if (!rc && tool__has(args, "reference"))
			rc = tool__object_arg(ctx, args, "reference", &a.reference);
		if (rc)
			return rc;
	} else {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(args, "point");

		for (i = 0; i < 3; i++)
			a.point[i] = (float)cJSON_GetArrayItem(p, i)->valuedouble;
		if (tool__has(args, "reference"))
			a.reference = 0; /* only to be refused by spatial_compute */
	}
	a.has_t2 = tool__has(args, "t2");
	a.t2 = tool__time(args, "t2", a.t);
	rc = spatial_compute(ctx, &a, &r);
	if (rc)
		return rc;
	return spatial_write(ctx, &r, result);
}
