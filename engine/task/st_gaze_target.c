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

/* Whether another object visible at T has the display name of object k. */
static bool name_shared(struct build *b, long k, const char *name)
{
	char other[ANS_NAME_MAX];
	size_t i;

	for (i = 0; i < b->vis.nvisible && i < 50; i++) {
		long j = (long)b->vis.visible[i].obj;

		if (j != k && !truth__name(b->rec, j, other, sizeof(other)) &&
		    ans_name_equal(other, name))
			return true;
	}
	return false;
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

/*
 * The references a key may use: objects visible at T, not structural, not
 * named like the target, named by no other visible object (else "the
 * mug" would not say which), whose relation to the target is clear of
 * every margin. Their names and the target's relation to each go into the
 * negatives context: distractors draw their (relation, reference) pairs
 * from the same list as the key. Indices into idx; returns the count.
 */
static size_t clear_references(struct build *b, long *idx)
{
	size_t i, n = 0;

	for (i = 0; i < b->vis.nvisible && i < 50 && n < TRUTH_MAX_OBJECTS; i++) {
		long k = (long)b->vis.visible[i].obj;
		struct spatial_result r;

		if (k == b->target || truth__structural(b->rec, k))
			continue;
		if (truth__name(b->rec, k, b->refbuf[n], sizeof(b->refbuf[n])) ||
		    ans_name_equal(b->refbuf[n], b->target_name) || name_shared(b, k, b->refbuf[n]))
			continue;
		if (truth__spatial(b, b->target, false, 0, k, NULL, &r) || r.rel.ambiguous ||
		    rel_of(r.rel.label) == ANS_REL_NEAR)
			continue;
		b->refs[n] = b->refbuf[n];
		b->ref_rels[n] = rel_of(r.rel.label);
		idx[n++] = k;
	}
	b->qctx.refs = b->refs;
	b->qctx.nrefs = n;
	b->qctx.ref_rels = b->ref_rels;
	return n;
}

/*
 * The reference is drawn uniformly (seeded by T and the target) among the
 * clear ones, never the brain's choice nor the clearest: a key that named
 * the most salient object, or always an object of the kind a relation
 * comes out clear for, would stand out among distractors drawn from the
 * same list. A brain's differing choice is kept in the ground truth.
 */
static int gaze_relative(struct build *b)
{
	const char *ref = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b->args, "reference"));
	uint64_t h = rng_mix64((uint64_t)b->t ^ ((uint64_t)b->target << 40));
	long idx[TRUTH_MAX_OBJECTS], ri;
	struct spatial_result r;
	size_t n, j;
	int rc;

	rc = truth__visible_context(b, b->target, -1, false);
	if (rc)
		return rc;
	n = clear_references(b, idx);
	if (!n)
		return truth__reject(b, "no_reference",
				     "no visible reference object with a clear relation at T");
	j = (size_t)rng_below(&h, n);
	ri = idx[j];
	if (ref && *ref && strcmp(ref, b->rec->objects[ri].id) &&
	    !cJSON_AddStringToObject(b->gt, "brain_reference", ref))
		return ENG_ENOMEM;
	rc = truth__spatial(b, b->target, false, 0, ri, "spatial", &r);
	if (rc)
		return rc;
	ans_init(&b->ans, ANS_GAZE_RELATIVE);
	b->ans.rel = rel_of(r.rel.label);
	rc = ans_set_text(b->ans.object, sizeof(b->ans.object), b->target_name);
	if (!rc)
		rc = ans_set_text(b->ans.ref, sizeof(b->ans.ref), b->refs[j]);
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
