/* SPDX-License-Identifier: MIT */
/*
 * exploration.navigate: how does the wearer walk to the target? The truth
 * is the 8-connected A* path from the camera cell at T to the nearest free
 * cell by the target, simplified into legs (approx: the first leg's
 * direction and the path length; relative: up to two legs).
 */
#include "truth_int.h"

#include <math.h>
#include <string.h>

#include "err.h"
#include "path.h"

/* The path and the grid it was planned on, into the ground truth. */
static int write_path(struct build *b, const struct path_result *r)
{
	struct occupancy_result o;
	cJSON *pj = cJSON_CreateObject(), *gj = NULL;
	int rc;

	if (!pj)
		return ENG_ENOMEM;
	rc = path_write(b->ctx, r, PATH_MAX_POINTS, pj);
	if (rc || !cJSON_AddItemToObject(b->gt, "path", pj)) {
		cJSON_Delete(pj);
		return rc ? rc : ENG_ENOMEM;
	}
	/* the grid the path was planned on, for the review page's picture */
	memset(&o, 0, sizeof(o));
	o.t = r->t;
	o.target = r->target;
	o.cam = r->cam;
	o.heading = r->heading;
	o.params = r->plan.occ.params;
	o.occ = r->plan.occ;
	tool__object_pos(b->rec, (size_t)r->target, r->t, o.target_pos);
	gj = cJSON_CreateObject();
	if (!gj)
		return ENG_ENOMEM;
	rc = occupancy_write(b->ctx, &o, true, gj);
	if (rc || !cJSON_AddItemToObject(b->gt, "occupancy", gj)) {
		cJSON_Delete(gj);
		return rc ? rc : ENG_ENOMEM;
	}
	return 0;
}

/* The sector margin of a leg as the tool writes it (2 decimals). */
static double leg_margin(const struct astar_leg *l)
{
	return truth__rounded(bev_dir_margin(l->yaw_deg), 2);
}

int truth__navigate(struct build *b, struct truth *out)
{
	struct path_args a;
	struct path_result r;
	double len;
	size_t i;
	int rc;

	(void)out;
	if (truth__seen_between(b, b->target, b->t - 1000000000LL, b->t))
		return truth__reject(b, "premise", "the target is in view within the last second "
				     "before T");
	a.t = b->t;
	a.target = b->target;
	a.goal_radius_m = PATH_GOAL_RADIUS_M;
	grid_defaults(&a.grid);
	rc = path_compute(b->ctx, &a, &r);
	if (rc)
		return rc == ENG_EINVAL || rc == ENG_ERANGE
			       ? err_set(ENG_EINVAL, "plan_path: %s", err_msg()) : rc;
	rc = write_path(b, &r);
	if (rc)
		return rc;
	if (r.plan.status != PATH_OK)
		return truth__reject(b, "unreachable", "no path to the target");
	len = truth__rounded(r.plan.length_m, 3);
	if (r.plan.nlegs < 1 || !isfinite(len))
		return truth__reject(b, "no_path", "the path has no legs");
	if (b->metric == METRIC_APPROX) {
		ans_init(&b->ans, ANS_NAV_APPROX);
		b->ans.dir = r.plan.legs[0].dir;
		b->ans.dist_m = (float)len;
		if (leg_margin(&r.plan.legs[0]) < (double)b->p->qc.disc.angle_margin_deg)
			return truth__reject(b, "ambiguous",
					     "the first leg is within the margin of a sector boundary");
	} else {
		if (r.plan.nlegs > 2)
			return truth__reject(b, "too_many_legs",
					     "the path has %zu legs; relative answers describe at most 2",
					     r.plan.nlegs);
		ans_init(&b->ans, ANS_NAV_RELATIVE);
		b->ans.nlegs = (int)r.plan.nlegs;
		for (i = 0; i < r.plan.nlegs; i++) {
			b->ans.legs[i] = r.plan.legs[i].dir;
			if (leg_margin(&r.plan.legs[i]) < (double)b->p->qc.disc.angle_margin_deg)
				return truth__reject(b, "ambiguous",
						     "leg %zu is within the margin of a sector boundary",
						     i + 1);
		}
	}
	return 0;
}

int plan__navigate(const struct plan_in *in, struct plan_out *out)
{
	if (!in->result(in, "plan_path")) {
		cJSON *a = cJSON_CreateObject();

		plan__add_time(a, "t", in->t);
		cJSON_AddStringToObject(a, "target", in->target);
		out->tool = "plan_path";
		out->args = a;
		return a ? 0 : ENG_ENOMEM;
	}
	return plan__object_question(in, out);
}

int prior__navigate(struct build *b, const struct clip_cand *c, struct answer *out)
{
	int i;

	/* the candidates a truth would refuse are no key, so no part of the prior */
	if (c->target < 0 || truth__structural(b->rec, c->target))
		return 1;
	if (c->nlegs < 1 || !isfinite(c->leg_yaw[0]))
		return 1;
	if (b->metric == METRIC_APPROX) {
		out->dir = bev_dir_from_yaw(c->leg_yaw[0]);
		out->dist_m = c->path_m;
		return 0;
	}
	if (c->nlegs > 2)
		return 1;
	out->nlegs = c->nlegs;
	for (i = 0; i < c->nlegs; i++) {
		if (!isfinite(c->leg_yaw[i]))
			return 1;
		out->legs[i] = bev_dir_from_yaw(c->leg_yaw[i]);
	}
	return 0;
}
