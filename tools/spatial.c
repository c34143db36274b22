/* SPDX-License-Identifier: MIT */
/*
 * spatial_relation: the spatial calculator. From the camera at t to a
 * point or an object: 3D distance, signed BEV yaw, 8-way direction,
 * vertical class, proximity class, their discretised values and ambiguity
 * margins; and the relation of one object to another as seen from the
 * camera.
 */
#include "registry.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "banned.h"
#include "bev.h"
#include "err.h"


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

/* The camera -> target fields of the result. */
static int add_camera_fields(cJSON *r, const struct disc_params *dp,
			     const struct pose *cam, float heading, const vec3 target)
{
	vec3 d, loc = { 0 };
	double dist, bev, dz;
	float yaw = 0;
	bool has_yaw;
	cJSON *disc, *amb;
	int rc = 0, i;

	for (i = 0; i < 3; i++)
		d[i] = target[i] - cam->t[i];
	dist = sqrt((double)d[0] * (double)d[0] + (double)d[1] * (double)d[1] +
		    (double)d[2] * (double)d[2]);
	bev = hypot(d[0], d[1]);
	dz = d[2];
	bev_local(heading, d, loc);
	has_yaw = bev_yaw_to(heading, cam->t, target, &yaw) == 0;

	amb = cJSON_CreateArray();
	if (!amb)
		return ENG_ENOMEM;
	if (!tool__add_num(r, "distance_m", dist, 3) ||
	    !tool__add_num(r, "bev_distance_m", bev, 3) ||
	    !tool__add_vec3(r, "local_m", loc, 3)) {
		cJSON_Delete(amb);
		return ENG_ENOMEM;
	}
	if (has_yaw) {
		enum bev_dir dir = bev_dir_from_yaw(yaw);
		char letter[2] = { bev_dir_letter(dir), 0 };
		float margin = bev_dir_margin(yaw);

		if (!tool__add_num(r, "yaw_deg", yaw, 2) ||
		    !cJSON_AddStringToObject(r, "direction", bev_dir_name(dir)) ||
		    !cJSON_AddStringToObject(r, "letter", letter) ||
		    !tool__add_num(r, "sector_margin_deg", margin, 2) ||
		    !cJSON_AddStringToObject(r, "turn", turn_name(disc_turn_class(dp, yaw))))
			rc = ENG_ENOMEM;
		if (!rc && margin < dp->angle_margin_deg)
			rc = add_str_item(amb, "direction");
		if (!rc && disc_turn_ambiguous(dp, yaw))
			rc = add_str_item(amb, "turn");
	} else {
		if (!cJSON_AddNullToObject(r, "yaw_deg") || !cJSON_AddNullToObject(r, "direction") ||
		    !cJSON_AddNullToObject(r, "letter") ||
		    !cJSON_AddNullToObject(r, "sector_margin_deg") ||
		    !cJSON_AddNullToObject(r, "turn"))
			rc = ENG_ENOMEM;
		if (!rc)
			rc = add_str_item(amb, "direction");
		if (!rc)
			rc = add_str_item(amb, "turn");
	}
	if (rc) {
		cJSON_Delete(amb);
		return rc;
	}
	if (!tool__add_num(r, "dz_m", dz, 3) ||
	    !cJSON_AddStringToObject(r, "vertical", vertical_name(disc_vertical(dp, (float)dz))) ||
	    !tool__add_num(r, "vertical_margin_m", fabs(fabs(dz) - (double)dp->vertical_m), 3) ||
	    !cJSON_AddStringToObject(r, "proximity", prox_name(disc_proximity(dp, (float)dist))) ||
	    !tool__add_num(r, "proximity_margin_m", prox_margin(dp, dist), 3)) {
		cJSON_Delete(amb);
		return ENG_ENOMEM;
	}
	if (disc_vertical_ambiguous(dp, (float)dz))
		rc = add_str_item(amb, "vertical");
	if (!rc && disc_proximity_ambiguous(dp, (float)dist))
		rc = add_str_item(amb, "proximity");
	if (rc) {
		cJSON_Delete(amb);
		return rc;
	}

	disc = cJSON_AddObjectToObject(r, "discrete");
	if (!disc) {
		cJSON_Delete(amb);
		return ENG_ENOMEM;
	}
	if ((has_yaw ? !tool__add_num(disc, "yaw_deg",
				      signed_disc(yaw, disc_angle(dp, yaw)), 1) ||
		       !tool__add_num(disc, "angle_deg", disc_angle(dp, yaw), 1)
		     : !cJSON_AddNullToObject(disc, "yaw_deg") ||
		       !cJSON_AddNullToObject(disc, "angle_deg")) ||
	    !tool__add_num(disc, "distance_m", disc_distance(dp, (float)dist), 2) ||
	    !tool__add_num(disc, "bev_distance_m", disc_distance(dp, (float)bev), 2) ||
	    !tool__add_num(disc, "dz_m", signed_disc(dz, disc_distance(dp, (float)dz)), 2)) {
		cJSON_Delete(amb);
		return ENG_ENOMEM;
	}
	cJSON_AddItemToObject(r, "ambiguous", amb);
	return 0;
}

/*
 * The relation of A to B as seen from a camera heading: the displacement
 * B -> A in the camera's BEV frame (forward f, left l). The dominant axis
 * decides: left of (l > 0) / right of (l < 0) when |l| >= |f|, else
 * behind (f > 0: A is farther from the camera than B along the heading) or
 * in front of (f < 0: A is closer). The margin is the angle of (f, l) to
 * the nearest 45-degree diagonal. "near" is the 3D distance below near_m.
 */
static int add_relation(cJSON *r, const struct disc_params *dp, float heading,
			const struct recording *rec, long a, long b, int64_t t)
{
	vec3 pa = { 0 }, pb = { 0 }, d, loc = { 0 };
	double f, l, bev, dist, theta = 0, margin = 0, near_margin;
	const char *label;
	bool side_ok;
	cJSON *rel, *amb;
	int rc = 0;

	tool__object_pos(rec, (size_t)a, t, pa);
	tool__object_pos(rec, (size_t)b, t, pb);
	glm_vec3_sub(pa, pb, d);
	bev_local(heading, d, loc);
	f = loc[0];
	l = loc[1];
	bev = hypot(f, l);
	dist = glm_vec3_norm(d);
	side_ok = bev >= SIDE_MIN_M;
	if (side_ok) {
		double r90;

		theta = atan2(l, f) * POSE_RAD2DEG;
		if (fabs(l) >= fabs(f))
			label = l > 0 ? "left of" : "right of";
		else
			label = f > 0 ? "behind" : "in front of";
		r90 = fmod(fabs(theta) + 45.0, 90.0);
		margin = r90 < 90.0 - r90 ? r90 : 90.0 - r90;
	} else {
		label = "near";
	}
	near_margin = fabs(dist - (double)dp->near_m);

	rel = cJSON_AddObjectToObject(r, "relation");
	if (!rel || !tool__add_object_ref(rel, "object", rec, a) ||
	    !tool__add_object_ref(rel, "reference", rec, b) ||
	    !tool__add_vec3(rel, "reference_position", pb, 3) ||
	    !cJSON_AddStringToObject(rel, "label", label) ||
	    !cJSON_AddBoolToObject(rel, "near", dist < (double)dp->near_m) ||
	    !tool__add_num(rel, "distance_m", dist, 3) ||
	    !tool__add_num(rel, "bev_distance_m", bev, 3) ||
	    !tool__add_vec3(rel, "local_m", loc, 3) ||
	    !(side_ok ? tool__add_num(rel, "angle_deg", theta, 2) : cJSON_AddNullToObject(rel, "angle_deg")) ||
	    !tool__add_num(rel, "side_margin_deg", margin, 2) ||
	    !tool__add_num(rel, "near_margin_m", near_margin, 3))
		return ENG_ENOMEM;
	if (side_ok) {
		enum bev_dir dir = bev_dir_from_yaw((float)theta);
		char letter[2] = { bev_dir_letter(dir), 0 };

		if (!cJSON_AddStringToObject(rel, "direction", bev_dir_name(dir)) ||
		    !cJSON_AddStringToObject(rel, "letter", letter) ||
		    !tool__add_num(rel, "sector_margin_deg", bev_dir_margin((float)theta), 2))
			return ENG_ENOMEM;
	} else if (!cJSON_AddNullToObject(rel, "direction") ||
		   !cJSON_AddNullToObject(rel, "letter") ||
		   !cJSON_AddNullToObject(rel, "sector_margin_deg")) {
		return ENG_ENOMEM;
	}
	amb = cJSON_AddArrayToObject(rel, "ambiguous");
	if (!amb)
		return ENG_ENOMEM;
	if (!side_ok || margin < (double)dp->angle_margin_deg)
		rc = add_str_item(amb, "side");
	if (!rc && side_ok && bev_dir_margin((float)theta) < dp->angle_margin_deg)
		rc = add_str_item(amb, "direction");
	if (!rc && near_margin < (double)dp->dist_margin_m)
		rc = add_str_item(amb, "near");
	return rc;
}

int tool_spatial_relation(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct disc_params *dp = tool_ctx_disc(ctx);
	bool has_point = tool__has(args, "point"), has_obj = tool__has(args, "object");
	int64_t t = tool__time(args, "t", 0), t2 = t;
	long a = -1, b = -1;
	struct pose cam;
	float heading;
	vec3 target;
	cJSON *c, *tg;
	int rc, i;

	if (has_point == has_obj)
		return tool__reject(ctx, has_point ? "/object" : "/point",
				    "give exactly one of point and object (the other null)");
	if (has_point && tool__has(args, "reference"))
		return tool__reject(ctx, "/reference",
				    "a relation to a reference object needs an object target, not a point");
	if (has_point && tool__has(args, "t2"))
		return tool__reject(ctx, "/t2", "applies only to an object target");
	rc = tool__camera(ctx, "t", t, &cam, &heading);
	if (rc)
		return rc;
	if (has_obj) {
		rc = tool__object_arg(ctx, args, "object", &a);
		if (rc)
			return rc;
		if (tool__has(args, "reference")) {
			rc = tool__object_arg(ctx, args, "reference", &b);
			if (rc)
				return rc;
			if (a == b)
				return tool__reject(ctx, "/reference", "must differ from object");
		}
		t2 = tool__time(args, "t2", t);
		if (t2 < recording_t0(rec) || t2 > recording_t1(rec))
			return tool__reject(ctx, "/t2",
					    "must be within the recording [%" PRId64 ", %" PRId64
					    "] ns, got %" PRId64, recording_t0(rec),
					    recording_t1(rec), t2);
		tool__object_pos(rec, (size_t)a, t2, target);
	} else {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(args, "point");

		for (i = 0; i < 3; i++)
			target[i] = (float)cJSON_GetArrayItem(p, i)->valuedouble;
	}

	c = cJSON_AddObjectToObject(result, "camera");
	if (!c || !tool__add_time(c, "t_ns", t) || !tool__add_vec3(c, "position", cam.t, 3) ||
	    !tool__add_num(c, "heading_deg", bev_wrap_deg((float)((double)heading * POSE_RAD2DEG)), 2))
		return ENG_ENOMEM;
	tg = cJSON_AddObjectToObject(result, "target");
	if (!tg || !cJSON_AddStringToObject(tg, "kind", has_obj ? "object" : "point"))
		return ENG_ENOMEM;
	if (has_obj && (!tool__add_object_ref(tg, "object", rec, a) ||
			!tool__add_time(tg, "t_ns", t2)))
		return ENG_ENOMEM;
	if (!tool__add_vec3(tg, "position", target, 3))
		return ENG_ENOMEM;
	rc = add_camera_fields(result, dp, &cam, heading, target);
	if (rc)
		return rc;
	if (b >= 0)
		rc = add_relation(result, dp, heading, rec, a, b, t2);
	return rc;
}
