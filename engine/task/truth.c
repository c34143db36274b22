/* SPDX-License-Identifier: MIT */
/*
 * Ground truth recomputed with the tools for the brain's clip and target,
 * discretised into a structured answer, checked for ambiguity, turned into
 * options with hard negatives and text QC, and packed for the store.
 */
#include "truth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "hash.h"
#include "schema.h"
#include "template.h"

#define NS_PER_S 1000000000.0

void truth_defaults(struct truth_params *p)
{
	p->frames = 8;
	p->window_s = 8.0;
	p->gaze_lead_s = 0.3;
	p->interaction_lead_s = 1.0;
	p->min_nav_m = 1.5;
	qc_defaults(&p->qc);
}

void truth_release(struct truth *t)
{
	free(t->frames_json);
	free(t->target);
	free(t->question);
	free(t->options_json);
	free(t->answer_json);
	free(t->gt_json);
	free(t->qc_json);
	free(t->note);
	memset(t, 0, sizeof(*t));
	t->answer_index = -1;
}

/* ======================= JSON helpers ======================= */

static const cJSON *jget(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double jnum(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = jget(o, key);

	if (cJSON_IsRaw(v) && v->valuestring)
		return strtod(v->valuestring, NULL);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *jstr(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(jget(o, key));
}

static int64_t jtime(const cJSON *o, const char *key)
{
	const cJSON *v = jget(o, key);

	if (cJSON_IsNumber(v))
		return (int64_t)llround(v->valuedouble);
	/* tools write exact int64 times as raw JSON numbers */
	if ((cJSON_IsRaw(v) || cJSON_IsString(v)) && v->valuestring)
		return strtoll(v->valuestring, NULL, 10);
	return 0;
}

/* True when the tool result lists `what` in its "ambiguous" array. */
static bool ambiguous_has(const cJSON *res, const char *what)
{
	const cJSON *a = jget(res, "ambiguous"), *it;

	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, what))
			return true;
	return false;
}

/* Adds null for every optional argument left out (the schemas are strict). */
static void fill_nulls(const char *name, cJSON *args)
{
	const struct tool_def *t = tool_find(name);
	const struct schema *sc;

	if (t && !tool_schema(t, &sc))
		schema_fill_nulls(sc, args);
}

/* Runs a tool on args (consumed); on success *res holds its result. */
static int run_tool(struct tool_ctx *ctx, const char *name, cJSON *args, cJSON **res)
{
	int rc;

	if (!args)
		return ENG_ENOMEM;
	fill_nulls(name, args);
	rc = tool_call_value(ctx, name, args, res);
	cJSON_Delete(args);
	if (rc && *res) {
		char *txt = cJSON_PrintUnformatted(*res);

		err_set(ENG_EINVAL, "%s: %s", name, txt ? txt : "failed");
		free(txt);
		cJSON_Delete(*res);
		*res = NULL;
		return ENG_EINVAL;
	}
	return rc;
}

static cJSON *args_new(void)
{
	return cJSON_CreateObject();
}

static void add_time(cJSON *o, const char *key, int64_t t)
{
	cJSON_AddNumberToObject(o, key, (double)t);
}

static int reject(char *code, size_t size, const char *c, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int reject(char *code, size_t size, const char *c, const char *fmt, ...)
{
	va_list ap;

	snprintf(code, size, "%s", c);
	va_start(ap, fmt);
	err_setv(ENG_EINVAL, fmt, ap);
	va_end(ap);
	return ENG_EINVAL;
}

/* ======================= Names ======================= */

/*
 * The display name of object `id` for questions, disambiguated against the
 * other objects of the recording (ans_display_name). Returns 0 or
 * ENG_EINVAL when the instance cannot be named apart from another.
 */
static int display_name(const struct recording *rec, long idx, char *out, size_t size)
{
	if (idx < 0)
		return ENG_EINVAL;
	return ans_object_name(rec, (size_t)idx, out, size);
}

/*
 * Walls, floors and ceilings: a box longer than 2.5 m that is thinner than
 * 0.15 m. Nobody turns to "see the north wall".
 */
static bool structural(const struct recording *rec, long i)
{
	const float *h = rec->objects[i].half;
	float lo = fminf(h[0], fminf(h[1], h[2])), hi = fmaxf(h[0], fmaxf(h[1], h[2]));

	return 2 * hi > 2.5f && 2 * lo < 0.15f;
}

/*
 * Something a hand picks up: an object that moves in the recording when
 * the recording has a few of those (ADT's dynamic objects, the carried
 * synthetic ones), else anything with no side longer than 0.4 m.
 */
static bool graspable(const struct recording *rec, long i)
{
	const float *h = rec->objects[i].half;
	size_t k, dyn = 0;

	for (k = 0; k < rec->nobjects && dyn < 3; k++)
		dyn += rec->objects[k].motion == REC_DYNAMIC;
	if (dyn >= 3)
		return rec->objects[i].motion == REC_DYNAMIC;
	return 2 * fmaxf(h[0], fmaxf(h[1], h[2])) <= 0.4f;
}

/* ======================= The clip ======================= */

/*
 * Asks the clip sampler whether (subtask, T, target, event) satisfies the
 * sub-task's clip rule; the sampler re-derives the facts (last seen time,
 * fixation, interaction, path) itself. On success *why is its account.
 */
static int check_clip(struct tool_ctx *ctx, const struct truth_params *p,
		      const char *subtask, const char *metric, int64_t t, const char *target,
		      int k, cJSON **why, char *code, size_t code_size)
{
	cJSON *a = args_new(), *res = NULL, *cand;
	int rc;

	cJSON_AddStringToObject(a, "subtask", subtask);
	cJSON_AddStringToObject(a, "metric", metric);
	cJSON_AddNumberToObject(a, "index", 0);
	cJSON_AddNumberToObject(a, "count", 1);
	cJSON_AddNumberToObject(a, "seed", 0);
	if (target)
		cJSON_AddStringToObject(a, "target", target);
	else
		cJSON_AddNullToObject(a, "target");
	add_time(a, "t0", t);
	add_time(a, "t1", t);
	cJSON_AddNumberToObject(a, "frames", p->frames);
	cJSON_AddNumberToObject(a, "window_s", p->window_s);
	if (k >= 3 && k <= 5)
		cJSON_AddNumberToObject(a, "k", k);
	else
		cJSON_AddNullToObject(a, "k");
	rc = run_tool(ctx, "sample_clips", a, &res);
	if (rc == ENG_EINVAL) {
		char detail[512];

		snprintf(detail, sizeof(detail), "%s", err_msg());
		return reject(code, code_size, "clip_rule",
			      "no %s clip qualifies at T = %lld for '%s' (%s)", subtask,
			      (long long)t, target ? target : "the chain", detail);
	}
	if (rc)
		return rc;
	cand = cJSON_DetachItemFromArray(cJSON_GetObjectItemCaseSensitive(res, "candidates"), 0);
	cJSON_Delete(res);
	if (!cand || jtime(cand, "t_ns") != t) {
		cJSON_Delete(cand);
		return reject(code, code_size, "clip_rule",
			      "no %s clip qualifies at T = %lld for '%s'", subtask, (long long)t,
			      target ? target : "the chain");
	}
	*why = cand;
	return 0;
}

static char *frames_json(int64_t t, const struct truth_params *p, int64_t *start)
{
	cJSON *a = cJSON_CreateArray();
	int64_t w = (int64_t)llround(p->window_s * NS_PER_S);
	int i, n = p->frames < 2 ? 2 : p->frames;
	char *s;

	*start = t - w;
	for (i = 0; i < n; i++)
		/* NOLINTNEXTLINE(bugprone-integer-division): whole nanoseconds are meant */
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)(t - w + w * i / (n - 1))));
	s = cJSON_PrintUnformatted(a);
	cJSON_Delete(a);
	return s;
}

/* ======================= Per sub-task truths ======================= */

struct build {
	struct tool_ctx *ctx;
	const struct recording *rec;
	const struct truth_params *p;
	const cJSON *args;
	const char *subtask, *metric;
	int64_t t;
	long target;             /* object index, -1 for chains */
	char target_name[ANS_NAME_MAX];
	struct answer ans;       /* the truth */
	cJSON *gt;               /* ground truth document (owned) */
	struct qc_context qctx;
	const char *objs[64];    /* other visible objects for negatives */
	char objbuf[64][ANS_NAME_MAX];
	float yaws[64];
	float lengths[8];
	char *code;
	size_t code_size;
	const cJSON *clip;       /* the sampler's candidate for (T, target), owned by gt */
	int event_note;          /* the brain's event time differed from the sampler's */
};

/*
 * Fills the negatives context with the objects visible at T (only what a
 * hand can pick up when `grasp` is set), never walls.
 */
static int visible_context(struct build *b, long except, long except2, bool grasp)
{
	cJSON *a = args_new(), *res = NULL;
	const cJSON *it;
	int rc;

	add_time(a, "t", b->t);
	rc = run_tool(b->ctx, "visible_objects", a, &res);
	if (rc)
		return rc;
	b->qctx.objects = b->objs;
	b->qctx.object_yaws = b->yaws;
	cJSON_ArrayForEach(it, jget(res, "objects")) {
		const char *id = jstr(it, "id");
		long idx = id ? recording_find_object(b->rec, id) : -1;
		size_t k = b->qctx.nobjects;

		if (idx < 0 || idx == except || idx == except2 || k >= ARRAY_SIZE(b->objs))
			continue;
		if (structural(b->rec, idx) || (grasp && !graspable(b->rec, idx)))
			continue;
		if (display_name(b->rec, idx, b->objbuf[k], sizeof(b->objbuf[k])))
			continue;
		b->objs[k] = b->objbuf[k];
		b->yaws[k] = (float)jnum(it, "yaw_deg", NAN);
		b->qctx.nobjects++;
	}
	cJSON_AddItemToObject(b->gt, "visible_at_t", res);
	return 0;
}

static int spatial(struct build *b, long obj, int64_t t2, const char *ref, cJSON **res)
{
	cJSON *a = args_new();

	add_time(a, "t", b->t);
	cJSON_AddNullToObject(a, "point");
	cJSON_AddStringToObject(a, "object", b->rec->objects[obj].id);
	if (t2)
		add_time(a, "t2", t2);
	else
		cJSON_AddNullToObject(a, "t2");
	if (ref)
		cJSON_AddStringToObject(a, "reference", ref);
	else
		cJSON_AddNullToObject(a, "reference");
	return run_tool(b->ctx, "spatial_relation", a, res);
}

static int truth_head_turn(struct build *b)
{
	cJSON *res = NULL;
	int rc = spatial(b, b->target, 0, NULL, &res);
	float yaw;

	if (rc)
		return rc;
	yaw = (float)jnum(res, "yaw_deg", NAN);
	cJSON_AddItemToObject(b->gt, "spatial", res);
	if (!isfinite(yaw))
		return reject(b->code, b->code_size, "no_heading", "no yaw to the target at T");
	if (!strcmp(b->metric, "approx")) {
		ans_init(&b->ans, ANS_HEAD_TURN_APPROX);
		b->ans.yaw_deg = yaw;
		if (ambiguous_has(res, "turn"))
			return reject(b->code, b->code_size, "ambiguous",
				      "yaw %.1f is within the margin of a turn class edge", yaw);
	} else {
		ans_init(&b->ans, ANS_HEAD_TURN_RELATIVE);
		b->ans.dir = bev_dir_from_yaw(yaw);
		if (ambiguous_has(res, "direction"))
			return reject(b->code, b->code_size, "ambiguous",
				      "yaw %.1f is within the margin of a sector boundary", yaw);
	}
	return 0;
}

/* The gaze ray at time t (the sample nearest within 100 ms), for the picture. */
static void add_gaze_ray(struct build *b, int64_t t)
{
	const struct recording *rec = b->rec;
	size_t i = time_nearest_index(rec->gaze, rec->ngaze, sizeof(*rec->gaze), t, 100000000LL);
	cJSON *g, *o, *d;
	int k;

	if (i == SIZE_MAX)
		return;
	g = cJSON_AddObjectToObject(b->gt, "gaze");
	add_time(g, "t_ns", rec->gaze[i].t_ns);
	o = cJSON_AddArrayToObject(g, "origin");
	d = cJSON_AddArrayToObject(g, "direction");
	for (k = 0; k < 3; k++) {
		cJSON_AddItemToArray(o, cJSON_CreateNumber(rec->gaze[i].o[k]));
		cJSON_AddItemToArray(d, cJSON_CreateNumber(rec->gaze[i].d[k]));
	}
}

static int truth_gaze(struct build *b, int64_t event)
{
	cJSON *res = NULL;
	int rc;

	add_gaze_ray(b, event);

	if (!strcmp(b->metric, "approx")) {
		float yaw;

		rc = spatial(b, b->target, 0, NULL, &res);
		if (rc)
			return rc;
		yaw = (float)jnum(res, "yaw_deg", NAN);
		cJSON_AddItemToObject(b->gt, "spatial", res);
		if (!isfinite(yaw))
			return reject(b->code, b->code_size, "no_heading", "no yaw to the target");
		if (ambiguous_has(res, "turn"))
			return reject(b->code, b->code_size, "ambiguous",
				      "yaw %.1f is within the margin of a turn class edge", yaw);
		ans_init(&b->ans, ANS_GAZE_APPROX);
		b->ans.yaw_deg = yaw;
		return ans_set_text(b->ans.object, sizeof(b->ans.object), b->target_name);
	}
	/* relative: the reference is the brain's, if it is visible at T, else the engine's */
	{
		const char *ref = jstr(b->args, "reference");
		long ri = (ref && *ref) ? recording_find_object(b->rec, ref) : -1;
		const cJSON *vis = NULL, *it, *rel;
		double best = -1;
		char refname[ANS_NAME_MAX];
		const char *lab;
		bool ok_ref = false;

		rc = visible_context(b, b->target, -1, false);
		if (rc)
			return rc;
		vis = jget(jget(b->gt, "visible_at_t"), "objects");
		cJSON_ArrayForEach(it, vis)
			if (ri >= 0 && jstr(it, "id") && !strcmp(jstr(it, "id"), b->rec->objects[ri].id))
				ok_ref = true;
		if (!ok_ref) {
			/* the visible object with the clearest relation */
			ri = -1;
			cJSON_ArrayForEach(it, vis) {
				long k = jstr(it, "id") ? recording_find_object(b->rec, jstr(it, "id")) : -1;
				cJSON *r2 = NULL;
				double m;

				if (k < 0 || k == b->target || structural(b->rec, k))
					continue;
				if (display_name(b->rec, k, refname, sizeof(refname)))
					continue;
				if (spatial(b, b->target, 0, b->rec->objects[k].id, &r2))
					continue;
				rel = jget(r2, "relation");
				m = jnum(rel, "side_margin_deg", -1);
				if (jget(rel, "ambiguous") && cJSON_GetArraySize(jget(rel, "ambiguous")) > 0)
					m = -1;
				if (m > best) {
					best = m;
					ri = k;
				}
				cJSON_Delete(r2);
			}
		}
		if (ri < 0)
			return reject(b->code, b->code_size, "no_reference",
				      "no visible reference object with a clear relation at T");
		rc = display_name(b->rec, ri, refname, sizeof(refname));
		if (rc)
			return reject(b->code, b->code_size, "unnamed", "the reference cannot be named");
		rc = spatial(b, b->target, 0, b->rec->objects[ri].id, &res);
		if (rc)
			return rc;
		rel = jget(res, "relation");
		cJSON_AddItemToObject(b->gt, "spatial", res);
		if (jget(rel, "ambiguous") && cJSON_GetArraySize(jget(rel, "ambiguous")) > 0)
			return reject(b->code, b->code_size, "ambiguous",
				      "the relation to the reference is within a margin");
		lab = jstr(rel, "label");
		ans_init(&b->ans, ANS_GAZE_RELATIVE);
		{
			/* the tool says "left of", the answer names are "left_of" */
			char key[32];
			size_t q;

			snprintf(key, sizeof(key), "%s", lab ? lab : "");
			for (q = 0; key[q]; q++)
				if (key[q] == ' ')
					key[q] = '_';
			b->ans.rel = ans_rel_from_name(key);
		}
		if (b->ans.rel >= ANS_NREL)
			return reject(b->code, b->code_size, "no_relation", "no relation label");
		rc = ans_set_text(b->ans.object, sizeof(b->ans.object), b->target_name);
		if (!rc)
			rc = ans_set_text(b->ans.ref, sizeof(b->ans.ref), refname);
		cJSON_AddStringToObject(b->gt, "reference", b->rec->objects[ri].id);
		return rc;
	}
}

static int truth_navigate(struct build *b)
{
	cJSON *a = args_new(), *res = NULL;
	const cJSON *legs, *l0;
	int rc, n;
	double len;

	add_time(a, "t", b->t);
	cJSON_AddStringToObject(a, "target", b->rec->objects[b->target].id);
	rc = run_tool(b->ctx, "plan_path", a, &res);
	if (rc)
		return rc;
	cJSON_AddItemToObject(b->gt, "path", res);
	{
		/* the grid the path was planned on, for the review page's picture */
		cJSON *g = args_new(), *grid = NULL;

		add_time(g, "t", b->t);
		cJSON_AddStringToObject(g, "target", b->rec->objects[b->target].id);
		cJSON_AddBoolToObject(g, "rle", 1);
		if (!run_tool(b->ctx, "build_occupancy", g, &grid))
			cJSON_AddItemToObject(b->gt, "occupancy", grid);
	}
	if (!cJSON_IsTrue(jget(res, "reachable")))
		return reject(b->code, b->code_size, "unreachable", "no path to the target");
	legs = jget(res, "legs");
	n = cJSON_GetArraySize(legs);
	len = jnum(res, "length_m", NAN);
	if (n < 1 || !isfinite(len))
		return reject(b->code, b->code_size, "no_path", "the path has no legs");
	l0 = cJSON_GetArrayItem(legs, 0);
	if (!strcmp(b->metric, "approx")) {
		ans_init(&b->ans, ANS_NAV_APPROX);
		b->ans.dir = bev_dir_from_name(jstr(l0, "direction") ? jstr(l0, "direction") : "");
		b->ans.dist_m = (float)len;
		if (jnum(l0, "sector_margin_deg", 90) < b->p->qc.disc.angle_margin_deg)
			return reject(b->code, b->code_size, "ambiguous",
				      "the first leg is within the margin of a sector boundary");
	} else {
		int i;

		if (n > 2)
			return reject(b->code, b->code_size, "too_many_legs",
				      "the path has %d legs; relative answers describe at most 2", n);
		ans_init(&b->ans, ANS_NAV_RELATIVE);
		b->ans.nlegs = n;
		for (i = 0; i < n; i++) {
			const cJSON *l = cJSON_GetArrayItem(legs, i);

			b->ans.legs[i] = bev_dir_from_name(jstr(l, "direction") ? jstr(l, "direction") : "");
			if (jnum(l, "sector_margin_deg", 90) < b->p->qc.disc.angle_margin_deg)
				return reject(b->code, b->code_size, "ambiguous",
					      "leg %d is within the margin of a sector boundary", i + 1);
		}
	}
	b->lengths[0] = (float)(len * 0.6);
	b->lengths[1] = (float)(len * 1.6);
	b->qctx.lengths = b->lengths;
	b->qctx.nlengths = 2;
	return 0;
}

static int truth_interaction(struct build *b, int64_t event)
{
	cJSON *a = args_new(), *res = NULL, *ev = NULL;
	const cJSON *it, *best = NULL;
	const char *verb = NULL, *hand = NULL;
	float yaw;
	int rc;

	add_time(a, "t0", event - 500000000LL);
	add_time(a, "t1", event + 500000000LL);
	cJSON_AddStringToObject(a, "object", b->rec->objects[b->target].id);
	cJSON_AddNullToObject(a, "min_move_m");
	cJSON_AddNullToObject(a, "window_s");
	cJSON_AddNullToObject(a, "limit");
	rc = run_tool(b->ctx, "find_interactions", a, &ev);
	if (rc)
		return rc;
	cJSON_ArrayForEach(it, jget(ev, "events")) {
		int64_t te = jtime(it, "t_ns");

		if (!best || llabs(te - event) < llabs(jtime(best, "t_ns") - event))
			best = it;
	}
	if (best) {
		verb = jstr(best, "verb");
		hand = jstr(best, "hand");
	}
	rc = spatial(b, b->target, event, NULL, &res);
	if (rc) {
		cJSON_Delete(ev);
		return rc;
	}
	cJSON_AddItemToObject(b->gt, "interactions", ev);
	cJSON_AddItemToObject(b->gt, "spatial", res);
	if (!best)
		return reject(b->code, b->code_size, "no_interaction",
			      "no interaction with the target near the event time");
	yaw = (float)jnum(res, "yaw_deg", NAN);
	if (!isfinite(yaw))
		return reject(b->code, b->code_size, "no_heading", "no yaw to the target");
	if (ambiguous_has(res, "direction"))
		return reject(b->code, b->code_size, "ambiguous",
			      "the direction is within the margin of a sector boundary");
	if (!strcmp(b->metric, "approx")) {
		const char *vert = jstr(res, "vertical");

		if (ambiguous_has(res, "vertical"))
			return reject(b->code, b->code_size, "ambiguous",
				      "the vertical part is within the margin of the up/down threshold");
		ans_init(&b->ans, ANS_INTERACT_APPROX);
		b->ans.dist_m = (float)jnum(res, "distance_m", NAN);
		b->ans.vertical = vert && !strcmp(vert, "up") ? 1 : vert && !strcmp(vert, "down") ? -1 : 0;
		b->ans.hand = !hand ? REC_HAND_NONE : !strcmp(hand, "left") ? REC_HAND_LEFT
			    : !strcmp(hand, "right") ? REC_HAND_RIGHT
			    : !strcmp(hand, "both") ? REC_HAND_BOTH : REC_HAND_NONE;
	} else {
		ans_init(&b->ans, ANS_INTERACT_RELATIVE);
	}
	b->ans.dir = bev_dir_from_yaw(yaw);
	rc = ans_set_text(b->ans.object, sizeof(b->ans.object), b->target_name);
	if (!rc)
		rc = ans_set_text(b->ans.verb, sizeof(b->ans.verb), verb && *verb ? verb : "pick up");
	if (rc)
		return rc;
	return visible_context(b, b->target, -1, true);
}

/* ======================= Assembly ======================= */

static int make_id(const char *rec_id, const char *subtask, const char *metric,
		   int64_t t, const char *target, char out[HASH_HEX_LEN + 1])
{
	struct hash *h = NULL;
	char tb[32];
	int rc = hash_new(&h);

	if (rc)
		return rc;
	snprintf(tb, sizeof(tb), "%lld", (long long)t);
	rc = hash_add_field(h, rec_id);
	if (!rc)
		rc = hash_add_field(h, subtask);
	if (!rc)
		rc = hash_add_field(h, metric);
	if (!rc)
		rc = hash_add_field(h, tb);
	if (!rc)
		rc = hash_add_field(h, target);
	if (rc) {
		hash_free(h);
		return rc;
	}
	rc = hash_finish(h, out);
	out[32] = '\0'; /* 128 bits are plenty for an id */
	return rc;
}

static int split_subtask(const char *full, struct truth *out)
{
	const char *dot = strchr(full, '.');

	if (!dot || (size_t)(dot - full) >= sizeof(out->category) ||
	    strlen(dot + 1) >= sizeof(out->subtask))
		return err_set(ENG_EINVAL, "bad sub-task '%s'", full);
	memcpy(out->category, full, (size_t)(dot - full));
	out->category[dot - full] = '\0';
	snprintf(out->subtask, sizeof(out->subtask), "%s", dot + 1);
	return 0;
}

/* The disagreement note when the brain's stated answer differs from the truth. */
static void compare_statement(struct build *b, struct truth *out)
{
	const char *said = jstr(b->args, "answer");
	struct answer a;
	struct buf t;

	if (!said || !*said)
		return;
	if (!ans_parse(b->ans.kind, said, &b->p->qc.disc, &a) && ans_equal(&a, &b->ans))
		return;
	buf_init(&t, 4096);
	if (!ans_render(&b->ans, &t)) {
		struct buf n;

		buf_init(&n, 8192);
		if (!buf_addf(&n, "brain stated \"%s\"; the tools give \"%s\"", said, buf_str(&t)))
			out->note = buf_detach(&n);
		buf_release(&n);
	}
	buf_release(&t);
}

static int finish_mc(struct build *b, struct truth *out)
{
	struct qc_options *o = NULL;
	const cJSON *d, *it;
	const char *props[8];
	cJSON *arr = NULL, *aj = NULL;
	int rc, i;

	rc = ans_normalise(&b->ans, &b->p->qc.disc);
	if (rc)
		return reject(b->code, b->code_size, "bad_truth", "%s", err_msg());
	d = jget(b->args, "distractors");
	b->qctx.proposals = props;
	cJSON_ArrayForEach(it, d)
		if (cJSON_IsString(it) && b->qctx.nproposals < ARRAY_SIZE(props))
			props[b->qctx.nproposals++] = it->valuestring;
	o = calloc(1, sizeof(*o));
	if (!o)
		return ENG_ENOMEM;
	rc = qc_build_options(&b->ans, &b->qctx, out->question, out->id, &b->p->qc, o);
	if (rc)
		goto out;
	if (!o->qc.pass) {
		rc = reject(b->code, b->code_size, qc_reason_name(o->qc.reason), "qc: %s",
			    o->qc.detail);
		goto out;
	}
	arr = cJSON_CreateArray();
	for (i = 0; i < o->n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(o->text[i]));
	out->options_json = cJSON_PrintUnformatted(arr);
	out->answer_index = o->answer;
	aj = ans_to_json(&b->ans);
	out->answer_json = aj ? cJSON_PrintUnformatted(aj) : NULL;
	{
		cJSON *q = qc_options_to_json(o);

		/* the store reads the answer-length z-score at the top level */
		if (q)
			cJSON_AddNumberToObject(q, "z", o->qc.z);
		out->qc_json = q ? cJSON_PrintUnformatted(q) : NULL;
		cJSON_Delete(q);
	}
	if (!out->options_json || !out->answer_json || !out->qc_json)
		rc = ENG_ENOMEM;
out:
	cJSON_Delete(arr);
	cJSON_Delete(aj);
	free(o);
	return rc;
}

static int truth_chain(struct build *b, struct truth *out)
{
	const struct recording *rec = b->rec;
	cJSON *a = args_new(), *res = NULL, *acts, *ans = NULL, *valid;
	const cJSON *it, *orders;
	const char *truth[ANS_CHAIN_MAX], **pool = NULL;
	size_t first, i, npool = 0;
	struct qc_chain *ch = NULL;
	struct answer an;
	int k, rc, j;
	const char *goal;
	struct buf q, cands;

	buf_init(&q, 1 << 16);
	buf_init(&cands, 1 << 16);
	/* the K future actions and the goal are the sampler's, never the brain's */
	{
		const cJSON *why = jget(b->clip, "why"), *fut = jget(why, "future");

		k = cJSON_GetArraySize(fut);
		first = k > 0 ? (size_t)cJSON_GetArrayItem(fut, 0)->valuedouble : 0;
		for (j = 1; j < k; j++)
			if ((size_t)cJSON_GetArrayItem(fut, j)->valuedouble != first + (size_t)j)
				k = -1;
	}
	if (k < 2 || first + (size_t)k > rec->nactions) {
		rc = reject(b->code, b->code_size, "clip_rule", "the clip has no run of future actions");
		goto out;
	}
	acts = cJSON_AddArrayToObject(a, "actions");
	for (j = 0; j < k; j++)
		cJSON_AddItemToArray(acts, cJSON_CreateNumber((double)(first + (size_t)j)));
	cJSON_AddNullToObject(a, "t");
	cJSON_AddNullToObject(a, "k");
	cJSON_AddNullToObject(a, "before");
	cJSON_AddBoolToObject(a, "keep_goal_order", 1);
	cJSON_AddNullToObject(a, "limit");
	rc = run_tool(b->ctx, "build_chain", a, &res);
	if (rc)
		goto out;
	cJSON_AddItemToObject(b->gt, "chain", res);
	{
		/* the brain's list disagrees with the recording: the tools win */
		const cJSON *ba = jget(b->args, "actions");
		int same = cJSON_GetArraySize(ba) == k;

		for (j = 0; same && j < k; j++)
			same = (size_t)cJSON_GetArrayItem(ba, j)->valuedouble == first + (size_t)j;
		if (!same && cJSON_GetArraySize(ba) > 0)
			out->note = strdup("brain's action list differs from the actions that follow T");
	}
	for (j = 0; j < k; j++)
		truth[j] = rec->actions[first + (size_t)j].description
			 ? rec->actions[first + (size_t)j].description : "";
	pool = calloc(rec->nactions, sizeof(*pool));
	if (!pool) {
		rc = ENG_ENOMEM;
		goto out;
	}
	goal = jstr(jget(b->clip, "why"), "goal");
	if (!goal)
		goal = rec->actions[first].goal;
	for (i = 0; i < rec->nactions; i++)
		if ((i < first || i >= first + (size_t)k) && rec->actions[i].description)
			pool[npool++] = rec->actions[i].description;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = qc_chain_candidates(truth, k, pool, npool, out->id, 0, &b->p->qc, ch);
	if (rc) {
		rc = reject(b->code, b->code_size, "no_distractors", "%s", err_msg());
		goto out;
	}
	/* every valid order with its own edges, the observed one first */
	ans = cJSON_CreateObject();
	valid = cJSON_AddArrayToObject(ans, "correct_answer");
	orders = jget(res, "valid_orders");
	cJSON_ArrayForEach(it, orders) {
		int order[ANS_CHAIN_MAX];
		enum bev_dir edges[ANS_CHAIN_MAX];
		const cJSON *o = jget(it, "order"), *l = jget(it, "letters");
		cJSON *one, *nodes, *eds;

		if (cJSON_GetArraySize(o) != k || cJSON_GetArraySize(l) != k - 1)
			continue;
		for (j = 0; j < k; j++)
			order[j] = (int)((size_t)cJSON_GetArrayItem(o, j)->valuedouble - first);
		for (j = 0; j < k - 1; j++) {
			const char *s = cJSON_GetArrayItem(l, j)->valuestring;

			/* NOLINTNEXTLINE(bugprone-narrowing-conversions): both arms are chars */
			edges[j] = bev_dir_from_letter(s ? s[0] : '?');
		}
		if (qc_chain_answer(ch, order, edges, &an))
			continue;
		one = cJSON_CreateObject();
		nodes = cJSON_AddArrayToObject(one, "node");
		eds = cJSON_AddArrayToObject(one, "edge");
		for (j = 0; j < k; j++)
			cJSON_AddItemToArray(nodes, cJSON_CreateNumber(an.nodes[j]));
		for (j = 0; j < k - 1; j++) {
			char e[2] = { bev_dir_letter(an.edges[j]), 0 };

			cJSON_AddItemToArray(eds, cJSON_CreateString(e));
		}
		cJSON_AddItemToArray(valid, one);
		if (cJSON_GetArraySize(valid) == 1)
			b->ans = an;
	}
	if (cJSON_GetArraySize(valid) == 0) {
		rc = reject(b->code, b->code_size, "ambiguous", "no valid order has unambiguous edges");
		goto out;
	}
	{
		const cJSON *edges = jget(res, "edges");

		cJSON_ArrayForEach(it, edges)
			if (cJSON_IsTrue(jget(it, "ambiguous"))) {
				rc = reject(b->code, b->code_size, "ambiguous",
					    "an edge of the observed chain is within a sector margin");
				goto out;
			}
	}
	rc = qc_chain_list(ch, &cands);
	if (rc)
		goto out;
	{
		char gb[256];
		size_t gl;
		const struct tmpl_var vars[] = { { "goal", gb }, { "candidates", buf_str(&cands) } };

		snprintf(gb, sizeof(gb), "%s", goal ? goal : "the task");
		gl = strlen(gb);
		if (gl && gb[gl - 1] == '.')
			gb[gl - 1] = '\0';
		if (jstr(b->args, "question") && strlen(jstr(b->args, "question")) > 20 &&
		    strstr(jstr(b->args, "question"), "[[")) {
			rc = buf_adds(&q, jstr(b->args, "question"));
		} else {
			rc = tmpl_question("chain.actions.relative", qc_seed_from_id(out->id), vars,
					   ARRAY_SIZE(vars), &q);
		}
		if (rc)
			goto out;
	}
	free(out->question);
	out->question = buf_detach(&q);
	{
		cJSON *opts = cJSON_CreateArray(), *aj = ans_to_json(&b->ans);

		for (j = 0; j < ch->n; j++)
			cJSON_AddItemToArray(opts, cJSON_CreateString(ch->desc[j]));
		out->options_json = cJSON_PrintUnformatted(opts);
		cJSON_Delete(opts);
		cJSON_AddItemToObject(ans, "chain", aj);
		cJSON_AddNumberToObject(ans, "k", k);
		cJSON_AddStringToObject(ans, "goal", goal ? goal : "");
		out->answer_json = cJSON_PrintUnformatted(ans);
		out->qc_json = strdup("{\"pass\":true,\"kind\":\"chain\"}");
		out->answer_index = -1;
		if (!out->options_json || !out->answer_json || !out->qc_json)
			rc = ENG_ENOMEM;
	}
out:
	cJSON_Delete(ans);
	buf_release(&q);
	buf_release(&cands);
	free(pool);
	free(ch);
	return rc;
}

int truth_build(struct tool_ctx *ctx, const char *rec_id, const cJSON *args,
		const struct truth_params *p, struct truth *out, char *code,
		size_t code_size)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	struct build *b = NULL;
	const char *subtask = jstr(args, "subtask"), *metric = jstr(args, "metric");
	const char *target = jstr(args, "target");
	int64_t t = jtime(args, "t_ns"), event = jtime(args, "event_ns");
	cJSON *why = NULL;
	int rc = 0;
	bool chain;

	memset(out, 0, sizeof(*out));
	out->answer_index = -1;
	code[0] = '\0';
	if (!rec || !subtask || !metric || !target)
		return reject(code, code_size, "bad_submit", "submit_qa lacks subtask, metric or target");
	chain = !strcmp(subtask, "chain.actions");
	if (chain && strcmp(metric, "relative"))
		return reject(code, code_size, "bad_submit", "chain.actions has only the relative metric");
	rc = split_subtask(subtask, out);
	if (rc)
		return reject(code, code_size, "bad_submit", "%s", err_msg());
	snprintf(out->metric, sizeof(out->metric), "%s", metric);
	b = calloc(1, sizeof(*b));
	if (!b)
		return ENG_ENOMEM;
	b->ctx = ctx;
	b->rec = rec;
	b->p = p;
	b->args = args;
	b->subtask = subtask;
	b->metric = metric;
	b->t = t;
	b->target = -1;
	b->code = code;
	b->code_size = code_size;
	b->gt = cJSON_CreateObject();
	if (!b->gt) {
		rc = ENG_ENOMEM;
		goto out;
	}
	if (t - (int64_t)llround(p->window_s * NS_PER_S) < recording_t0(rec) || t > recording_t1(rec)) {
		rc = reject(code, code_size, "clip_rule", "the clip [T - %g s, T] leaves the recording",
			    p->window_s);
		goto out;
	}
	if (!chain) {
		b->target = recording_find_object(rec, target);
		if (b->target < 0) {
			rc = reject(code, code_size, "bad_target", "no object with id '%s'", target);
			goto out;
		}
		if (structural(rec, b->target)) {
			rc = reject(code, code_size, "structural_target",
				    "'%s' is part of the room (a wall or floor), not an object to ask about",
				    target);
			goto out;
		}
		if (display_name(rec, b->target, b->target_name, sizeof(b->target_name))) {
			rc = reject(code, code_size, "unnamed",
				    "object '%s' cannot be named apart from another", target);
			goto out;
		}
	}
	rc = check_clip(ctx, p, subtask, metric, t, chain ? NULL : target,
			cJSON_GetArraySize(jget(args, "actions")), &why, code, code_size);
	if (rc)
		goto out;
	cJSON_AddItemToObject(b->gt, "clip", why);
	b->clip = why;
	/* the event time is the sampler's, never the brain's */
	if (event && event != jtime(why, "event_t_ns") &&
	    (!strcmp(subtask, "intention.gaze_target") ||
	     !strcmp(subtask, "exploitation.next_interaction")))
		b->event_note = 1;
	event = jtime(why, "event_t_ns");
	if (chain) {
		/* one window can ask for K = 3, 4 or 5 actions: K is part of the id */
		char tk[300];

		snprintf(tk, sizeof(tk), "%s#k=%d", target,
			 cJSON_GetArraySize(jget(jget(why, "why"), "future")));
		rc = make_id(rec_id, subtask, metric, t, tk, out->id);
	} else {
		rc = make_id(rec_id, subtask, metric, t, target, out->id);
	}
	if (rc)
		goto out;
	out->t_ns = t;
	out->clip_end_ns = t;
	out->frames_json = frames_json(t, p, &out->clip_start_ns);
	out->target = strdup(target);
	out->question = strdup(jstr(args, "question") ? jstr(args, "question") : "");
	if (!out->frames_json || !out->target || !out->question) {
		rc = ENG_ENOMEM;
		goto out;
	}
	{
		struct pose cam;
		float heading;

		if (!recording_camera_at(rec, t, &cam) && !bev_heading(&cam, &heading)) {
			cJSON *c = cJSON_AddObjectToObject(b->gt, "camera");
			cJSON *pos = cJSON_AddArrayToObject(c, "position");

			cJSON_AddItemToArray(pos, cJSON_CreateNumber(cam.t[0]));
			cJSON_AddItemToArray(pos, cJSON_CreateNumber(cam.t[1]));
			cJSON_AddItemToArray(pos, cJSON_CreateNumber(cam.t[2]));
			cJSON_AddNumberToObject(c, "heading_deg", heading * POSE_RAD2DEG);
		}
	}
	if (!strcmp(subtask, "intention.head_turn"))
		rc = truth_head_turn(b);
	else if (!strcmp(subtask, "intention.gaze_target"))
		rc = truth_gaze(b, event);
	else if (!strcmp(subtask, "exploration.navigate"))
		rc = truth_navigate(b);
	else if (!strcmp(subtask, "exploitation.next_interaction"))
		rc = truth_interaction(b, event);
	else if (chain)
		rc = truth_chain(b, out);
	else
		rc = reject(code, code_size, "bad_submit", "unknown sub-task '%s'", subtask);
	if (rc)
		goto out;
	if (!chain) {
		if (b->qctx.nobjects == 0 && !strcmp(subtask, "intention.gaze_target"))
			rc = visible_context(b, b->target, -1, false);
		if (!rc)
			rc = finish_mc(b, out);
		if (rc)
			goto out;
		compare_statement(b, out);
		if (b->event_note && !out->note)
			out->note = strdup("the brain's event time differs from the sampler's; the sampler's is used");
	}
	out->gt_json = cJSON_PrintUnformatted(b->gt);
	if (!out->gt_json)
		rc = ENG_ENOMEM;
out:
	if (b)
		cJSON_Delete(b->gt);
	free(b);
	if (rc) {
		char keep[64];

		snprintf(keep, sizeof(keep), "%s", code);
		truth_release(out);
		snprintf(code, code_size, "%s", keep);
	}
	return rc;
}
