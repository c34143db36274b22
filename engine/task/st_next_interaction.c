/* SPDX-License-Identifier: MIT */
/*
 * exploitation.next_interaction: what will the wearer touch next, and
 * where? The truth is the displacement from the camera at T to the object
 * at the interaction time t_I in the BEV frame of T (approx: direction,
 * vertical part, distance, hand and verb; relative: direction and verb).
 */
#include "truth_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "interactions.h"

#define NS_PER_S 1000000000LL

/* The interactions with the target around the event, into the ground truth. */
static int find_events(struct build *b, struct interactions_result *r)
{
	struct interactions_args a = { b->event - NS_PER_S / 2, b->event + NS_PER_S / 2, b->target,
				       INTERACTIONS_MOVE_M, INTERACTIONS_WINDOW_S };
	int rc = interactions_find(b->ctx, &a, r);

	if (rc)
		return rc == ENG_EINVAL ? err_set(ENG_EINVAL, "find_interactions: %s", err_msg()) : rc;
	return 0;
}

static int write_events(struct build *b, const struct interactions_result *r)
{
	cJSON *j = cJSON_CreateObject();
	int rc;

	if (!j)
		return ENG_ENOMEM;
	rc = interactions_write(b->ctx, r, 50, j);
	if (rc || !cJSON_AddItemToObject(b->gt, "interactions", j)) {
		cJSON_Delete(j);
		return rc ? rc : ENG_ENOMEM;
	}
	return 0;
}

int truth__next_interaction(struct build *b, struct truth *out)
{
	struct interactions_result ev;
	const struct interaction *best = NULL;
	const struct rec_action *act = NULL;
	struct spatial_result r;
	float yaw;
	size_t i;
	int rc;

	(void)out;
	rc = find_events(b, &ev);
	if (rc)
		return rc;
	for (i = 0; i < ev.n && i < 50; i++)
		if (!best || llabs(ev.v[i].t_ns - b->event) < llabs(best->t_ns - b->event))
			best = &ev.v[i];
	/* the sampler's action: its verb, its hand, and where the object is then */
	if (b->clip.action >= 0 && (size_t)b->clip.action < b->rec->nactions)
		act = &b->rec->actions[b->clip.action];
	rc = truth__spatial(b, b->target, true, b->clip.loc_t ? b->clip.loc_t : b->event, -1, NULL,
			    &r);
	if (!rc)
		rc = write_events(b, &ev);
	interactions_release(&ev);
	if (!rc) {
		cJSON *j = cJSON_CreateObject();

		rc = j ? spatial_write(b->ctx, &r, j) : ENG_ENOMEM;
		if (rc || !cJSON_AddItemToObject(b->gt, "spatial", j)) {
			cJSON_Delete(j);
			rc = rc ? rc : ENG_ENOMEM;
		}
	}
	if (rc)
		return rc;
	if (!act || !act->verb || !*act->verb)
		return truth__reject(b, "no_interaction",
				     "no action names the target at the event time");
	if (act->start_ns <= b->t && (!best || best->t_ns <= b->t))
		return truth__reject(b, "premise", "the interaction began before T");
	if (!r.has_yaw)
		return truth__reject(b, "no_heading", "no yaw to the target");
	yaw = (float)truth__rounded(r.yaw_deg, 2);
	if (r.ambiguous & SPATIAL_AMB_DIRECTION)
		return truth__reject(b, "ambiguous",
				     "the direction is within the margin of a sector boundary");
	if (b->metric == METRIC_APPROX) {
		if (r.ambiguous & SPATIAL_AMB_VERTICAL)
			return truth__reject(b, "ambiguous",
					     "the vertical part is within the margin of the up/down threshold");
		ans_init(&b->ans, ANS_INTERACT_APPROX);
		b->ans.dist_m = (float)truth__rounded(r.distance_m, 3);
		b->ans.vertical = r.vertical;
		b->ans.hand = act ? act->hand : REC_HAND_NONE;
	} else {
		ans_init(&b->ans, ANS_INTERACT_RELATIVE);
	}
	b->ans.dir = bev_dir_from_yaw(yaw);
	rc = ans_set_text(b->ans.object, sizeof(b->ans.object), b->target_name);
	if (!rc)
		rc = ans_set_text(b->ans.verb, sizeof(b->ans.verb), act->verb);
	if (rc)
		return rc;
	return truth__visible_context(b, b->target, -1, true);
}

int plan__next_interaction(const struct plan_in *in, struct plan_out *out)
{
	if (!in->result(in, "find_interactions")) {
		cJSON *a = cJSON_CreateObject();

		plan__add_time(a, "t0", in->event - NS_PER_S / 2);
		plan__add_time(a, "t1", in->event + NS_PER_S / 2);
		cJSON_AddStringToObject(a, "object", in->target);
		out->tool = "find_interactions";
		out->args = a;
		return a ? 0 : ENG_ENOMEM;
	}
	if (!in->result(in, "spatial_relation")) {
		out->tool = "spatial_relation";
		out->args = plan__spatial_args(in->t, in->target, in->event, NULL);
		return out->args ? 0 : ENG_ENOMEM;
	}
	return plan__object_question(in, out);
}

int prior__next_interaction(struct build *b, const struct clip_cand *c, struct answer *out)
{
	const struct rec_action *act = c->action >= 0 ? &b->rec->actions[c->action] : NULL;
	char name[ANS_NAME_MAX];

	/* the candidates a truth would refuse are no key, so no part of the prior */
	if (c->target < 0 || truth__structural(b->rec, c->target))
		return 1;
	if (!isfinite(c->yaw_deg) || truth__name(b->rec, c->target, name, sizeof(name)))
		return 1;
	out->dir = bev_dir_from_yaw(c->yaw_deg);
	ans_set_text(out->object, sizeof(out->object), name);
	if (!act || !act->verb || !*act->verb)
		return 1;
	ans_set_text(out->verb, sizeof(out->verb), act->verb);
	if (b->metric == METRIC_APPROX) {
		out->vertical = disc_vertical(&b->p->qc.disc, c->dz_m);
		out->dist_m = c->distance_m;
		out->hand = act ? act->hand : REC_HAND_NONE;
	}
	return 0;
}
