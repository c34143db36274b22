/* SPDX-License-Identifier: MIT */
/*
 * intention.head_turn: where must the wearer turn the head to see the
 * target again? The truth is the signed BEV yaw from the heading at T to
 * the target (approx: a turn in degrees; relative: its 8-way sector).
 */
#include "truth_int.h"

#include <math.h>
#include <string.h>

#include "err.h"

int truth__head_turn(struct build *b, struct truth *out)
{
	struct spatial_result r;
	int rc;

	(void)out;
	/* the premise at the camera's rate: unseen over the whole of [T - 1 s, T] */
	if (truth__seen_between(b, b->target, b->t - 1000000000LL, b->t))
		return truth__reject(b, "premise", "the target is in view within the last second "
				     "before T");
	rc = truth__spatial(b, b->target, false, 0, -1, "spatial", &r);
	if (rc)
		return rc;
	if (!r.has_yaw)
		return truth__reject(b, "no_heading", "no yaw to the target at T");
	if (b->metric == METRIC_APPROX) {
		ans_init(&b->ans, ANS_HEAD_TURN_APPROX);
		b->ans.yaw_deg = (float)truth__rounded(r.yaw_deg, 2);
		if (r.ambiguous & SPATIAL_AMB_TURN)
			return truth__reject(b, "ambiguous",
					     "yaw %.1f is within the margin of a turn class edge",
					     (double)r.yaw_deg);
	} else {
		ans_init(&b->ans, ANS_HEAD_TURN_RELATIVE);
		b->ans.dir = bev_dir_from_yaw((float)truth__rounded(r.yaw_deg, 2));
		if (r.ambiguous & SPATIAL_AMB_DIRECTION)
			return truth__reject(b, "ambiguous",
					     "yaw %.1f is within the margin of a sector boundary",
					     (double)r.yaw_deg);
	}
	return 0;
}

int plan__head_turn(const struct plan_in *in, struct plan_out *out)
{
	if (!in->result(in, "spatial_relation")) {
		out->tool = "spatial_relation";
		out->args = plan__spatial_args(in->t, in->target, 0, NULL);
		return out->args ? 0 : ENG_ENOMEM;
	}
	return plan__object_question(in, out);
}

int prior__head_turn(struct build *b, const struct clip_cand *c, struct answer *out)
{
	/* the candidates a truth would refuse are no key, so no part of the prior */
	if (c->target < 0 || truth__structural(b->rec, c->target))
		return 1;
	if (!isfinite(c->yaw_deg))
		return 1;
	if (b->metric == METRIC_APPROX)
		out->yaw_deg = c->yaw_deg;
	else
		out->dir = bev_dir_from_yaw(c->yaw_deg);
	return 0;
}
