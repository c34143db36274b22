/* SPDX-License-Identifier: MIT */
/*
 * intention.gaze_target: which object will the wearer look at next, and
 * where? approx: the yaw to the object of the coming fixation and its
 * name; relative: that object relative to a reference object visible at T.
 */
#include "truth_int.h"

#include <math.h>
#include <string.h>

#include "err.h"
#include "rng.h"

#define GAZE_TOL_NS 100000000LL /* the gaze sample drawn: nearest within 100 ms */

/* The gaze ray at time t (the sample nearest within 100 ms), for the picture. */
static void add_gaze_ray(struct build *b, int64_t t)
{
	const struct recording *rec = b->rec;
	size_t i = time_nearest_index(rec->gaze, rec->ngaze, sizeof(*rec->gaze), t, GAZE_TOL_NS);
	cJSON *g, *o, *d;
	int k;

	if (i == SIZE_MAX)
		return;
	g = cJSON_AddObjectToObject(b->gt, "gaze");
	cJSON_AddNumberToObject(g, "t_ns", (double)rec->gaze[i].t_ns);
	o = cJSON_AddArrayToObject(g, "origin");
	d = cJSON_AddArrayToObject(g, "direction");
	for (k = 0; k < 3; k++) {
		cJSON_AddItemToArray(o, cJSON_CreateNumber(rec->gaze[i].o[k]));
		cJSON_AddItemToArray(d, cJSON_CreateNumber(rec->gaze[i].d[k]));
	}
}

static int gaze_approx(struct build *b)
{
	struct spatial_result r;
	int rc;

	rc = truth__spatial(b, b->target, false, 0, -1, "spatial", &r);
	if (rc)
		return rc;
	if (!r.has_yaw)
		return truth__reject(b, "no_heading", "no yaw to the target");
	if (r.ambiguous & SPATIAL_AMB_TURN)
		return truth__reject(b, "ambiguous",
				     "yaw %.1f is within the margin of a turn class edge",
				     (double)r.yaw_deg);
	ans_init(&b->ans, ANS_GAZE_APPROX);
	b->ans.yaw_deg = (float)truth__rounded(r.yaw_deg, 2);
	return ans_set_text(b->ans.object, sizeof(b->ans.object), b->target_name);
}

/* True when object i is among the objects visible at T. */
static bool visible_at_t(const struct build *b, long i)
{
	size_t k;

	for (k = 0; k < b->vis.nvisible && k < 50; k++)
		if ((long)b->vis.visible[k].obj == i)
			return true;
	return false;
}

/*
 * A visible object whose relation to the target is clear of every margin,
 * chosen uniformly (seeded by T and the target) rather than the clearest
 * one: distractor references are drawn uniformly from the objects visible
 * at T, and a key that always named the "best" reference would stand out.
 * Returns -1 when none is clear.
 */
static long random_reference(struct build *b)
{
	long clear[TRUTH_MAX_OBJECTS];
	uint64_t h = rng_mix64((uint64_t)b->t ^ ((uint64_t)b->target << 40));
	size_t i, n = 0;

	for (i = 0; i < b->vis.nvisible && i < 50 && n < TRUTH_MAX_OBJECTS; i++) {
		long k = (long)b->vis.visible[i].obj;
		struct spatial_result r;
		char name[ANS_NAME_MAX];

		if (k == b->target || truth__structural(b->rec, k))
			continue;
		if (truth__name(b->rec, k, name, sizeof(name)) || ans_name_equal(name, b->target_name))
			continue;
		if (truth__spatial(b, b->target, false, 0, k, NULL, &r) || r.rel.ambiguous)
			continue;
		clear[n++] = k;
	}
	return n ? clear[rng_below(&h, n)] : -1;
}

static enum ans_rel rel_of(enum spatial_label l)
{
	switch (l) {
	case SPATIAL_LEFT_OF: return ANS_REL_LEFT_OF;
	case SPATIAL_RIGHT_OF: return ANS_REL_RIGHT_OF;
	case SPATIAL_IN_FRONT_OF: return ANS_REL_IN_FRONT_OF;
	case SPATIAL_BEHIND: return ANS_REL_BEHIND;
	default: return ANS_REL_NEAR;
	}
}

static int gaze_relative(struct build *b)
{
	const char *ref = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b->args, "reference"));
	long ri = (ref && *ref) ? recording_find_object(b->rec, ref) : -1;
	struct spatial_result r;
	char refname[ANS_NAME_MAX];
	int rc;

	rc = truth__visible_context(b, b->target, -1, false);
	if (rc)
		return rc;
	/* the reference is the brain's, if it is visible at T, else the engine's */
	if (ri == b->target || ri < 0 || !visible_at_t(b, ri))
		ri = random_reference(b);
	if (ri < 0)
		return truth__reject(b, "no_reference",
				     "no visible reference object with a clear relation at T");
	if (truth__name(b->rec, ri, refname, sizeof(refname)))
		return truth__reject(b, "unnamed", "the reference cannot be named");
	rc = truth__spatial(b, b->target, false, 0, ri, "spatial", &r);
	if (rc)
		return rc;
	if (r.rel.ambiguous)
		return truth__reject(b, "ambiguous", "the relation to the reference is within a margin");
	ans_init(&b->ans, ANS_GAZE_RELATIVE);
	b->ans.rel = rel_of(r.rel.label);
	rc = ans_set_text(b->ans.object, sizeof(b->ans.object), b->target_name);
	if (!rc)
		rc = ans_set_text(b->ans.ref, sizeof(b->ans.ref), refname);
	if (!rc && !cJSON_AddStringToObject(b->gt, "reference", b->rec->objects[ri].id))
		rc = ENG_ENOMEM;
	return rc;
}

int truth__gaze_target(struct build *b, struct truth *out)
{
	(void)out;
	add_gaze_ray(b, b->event);
	return b->metric == METRIC_APPROX ? gaze_approx(b) : gaze_relative(b);
}

/* The first visible object at T other than the target, as reference. */
static const char *pick_reference(const cJSON *vis, const char *target)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(vis, "objects")) {
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "id"));

		if (id && strcmp(id, target))
			return id;
	}
	return NULL;
}

int plan__gaze_target(const struct plan_in *in, struct plan_out *out)
{
	const cJSON *vis, *rel;

	if (in->metric == METRIC_APPROX) {
		if (!in->result(in, "cast_gaze")) {
			cJSON *a = cJSON_CreateObject();

			plan__add_time(a, "t0", in->t);
			plan__add_time(a, "t1", in->event + 500000000LL);
			out->tool = "cast_gaze";
			out->args = a;
			return a ? 0 : ENG_ENOMEM;
		}
		if (!in->result(in, "spatial_relation")) {
			out->tool = "spatial_relation";
			out->args = plan__spatial_args(in->t, in->target, 0, NULL);
			return out->args ? 0 : ENG_ENOMEM;
		}
		return plan__object_question(in, out);
	}
	vis = in->result(in, "visible_objects");
	if (!vis) {
		cJSON *a = cJSON_CreateObject();

		plan__add_time(a, "t", in->t);
		out->tool = "visible_objects";
		out->args = a;
		return a ? 0 : ENG_ENOMEM;
	}
	rel = in->result(in, "spatial_relation");
	if (!rel) {
		const char *ref = pick_reference(vis, in->target);

		if (!ref) {
			snprintf(out->give_up, sizeof(out->give_up), "no reference object is visible at T");
			return 0;
		}
		out->tool = "spatial_relation";
		out->args = plan__spatial_args(in->t, in->target, 0, ref);
		return out->args ? 0 : ENG_ENOMEM;
	}
	{
		const cJSON *ro = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(rel, "relation"), "reference");
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ro, "id"));

		snprintf(out->reference, sizeof(out->reference), "%s", id ? id : "");
	}
	return plan__object_question(in, out);
}

int prior__gaze_target(struct build *b, const struct clip_cand *c, struct answer *out)
{
	char name[ANS_NAME_MAX];

	/* the candidates a truth would refuse are no key, so no part of the prior */
	if (c->target < 0 || truth__structural(b->rec, c->target))
		return 1;
	if (!isfinite(c->yaw_deg) || truth__name(b->rec, c->target, name, sizeof(name)))
		return 1;
	ans_set_text(out->object, sizeof(out->object), name);
	if (b->metric == METRIC_APPROX) {
		out->yaw_deg = c->yaw_deg;
		return 0;
	}
	/* the relation and the reference are drawn by the design */
	out->rel = b->ans.rel;
	ans_set_text(out->ref, sizeof(out->ref), b->ans.ref);
	return 0;
}
