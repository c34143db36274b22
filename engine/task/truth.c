/* SPDX-License-Identifier: MIT */
/*
 * Ground truth recomputed with the tools for the brain's clip and target,
 * discretised into a structured answer, checked for ambiguity, turned into
 * options with hard negatives and text QC, and packed for the store. The
 * sub-task's own part is its truth function (task.h, st_*.c).
 */
#include "truth.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "hash.h"
#include "jsonfile.h"
#include "scene.h"
#include "truth_int.h"
#include "keybal.h"

void truth_defaults(struct truth_params *p)
{
	p->frames = CLIPS_FRAMES;
	p->window_s = CLIPS_WINDOW_S;
	p->gaze_lead_s = 0.3;
	p->interaction_lead_s = 1.0;
	p->min_nav_m = 1.5;
	p->key_cap = KEYBAL_DEFAULT_CAP;
	p->prior_keys = TRUTH_PRIOR_MAX;
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

/* ======================= Helpers of the sub-tasks ======================= */

int truth__reject(struct build *b, const char *code, const char *fmt, ...)
{
	va_list ap;

	snprintf(b->code, b->code_size, "%s", code);
	va_start(ap, fmt);
	err_setv(ENG_EINVAL, fmt, ap);
	va_end(ap);
	return ENG_EINVAL;
}

double truth__rounded(double v, int decimals)
{
	return tool__round(v, decimals);
}

int truth__name(const struct recording *rec, long idx, char *out, size_t size)
{
	if (idx < 0)
		return ENG_EINVAL;
	return ans_object_name(rec, (size_t)idx, out, size);
}

int64_t truth__seen_between(struct build *b, long obj, int64_t from, int64_t to)
{
	const struct recording *rec = b->rec;
	struct visibility_view v;
	struct scene *s;
	size_t i;

	if (scene_get(b->ctx, &s))
		return from ? from : 1;
	i = time_floor_index(rec->traj, rec->ntraj, sizeof(*rec->traj), from - 1);
	i = i == SIZE_MAX ? 0 : i + 1;
	for (; i < rec->ntraj && rec->traj[i].t_ns <= to; i++) {
		int64_t t = rec->traj[i].t_ns;

		if (visibility_view_at(s, rec, t, VISIBILITY_MAX_RANGE_M, &v))
			return t ? t : 1;
		if (visibility_test(s, &v, (size_t)obj, false, NULL) == VIS_VISIBLE)
			return t ? t : 1;
	}
	return 0;
}

bool truth__structural(const struct recording *rec, long i)
{
	const float *h = rec->objects[i].half;
	float lo = fminf(h[0], fminf(h[1], h[2])), hi = fmaxf(h[0], fmaxf(h[1], h[2]));

	return 2 * hi > 2.5f && 2 * lo < 0.15f;
}

bool truth__graspable(const struct recording *rec, long i)
{
	const float *h = rec->objects[i].half;
	size_t k, dyn = 0;

	for (k = 0; k < rec->nobjects && dyn < 3; k++)
		dyn += rec->objects[k].motion == REC_DYNAMIC;
	if (dyn >= 3)
		return rec->objects[i].motion == REC_DYNAMIC;
	return 2 * fmaxf(h[0], fmaxf(h[1], h[2])) <= 0.4f;
}

/* Adds obj to the ground truth under key (consumed, also on failure). */
static int gt_add(struct build *b, const char *key, cJSON *obj)
{
	if (!obj)
		return ENG_ENOMEM;
	if (!cJSON_AddItemToObject(b->gt, key, obj)) {
		cJSON_Delete(obj);
		return ENG_ENOMEM;
	}
	return 0;
}

/* A tool's failure as a truth error: "tool: detail", ENG_EINVAL for rejections. */
static int tool_error(const char *tool, int rc)
{
	if (rc == ENG_EINVAL || rc == ENG_ERANGE)
		return err_set(ENG_EINVAL, "%s: %s", tool, err_msg());
	return rc;
}

int truth__spatial(struct build *b, long obj, bool has_t2, int64_t t2, long ref,
		   const char *key, struct spatial_result *out)
{
	struct spatial_args a;
	cJSON *j;
	int rc;

	memset(&a, 0, sizeof(a));
	a.t = b->t;
	a.object = obj;
	a.has_t2 = has_t2;
	a.t2 = t2;
	a.reference = ref;
	rc = spatial_compute(b->ctx, &a, out);
	if (rc)
		return tool_error("spatial_relation", rc);
	if (!key)
		return 0;
	j = cJSON_CreateObject();
	if (!j)
		return ENG_ENOMEM;
	rc = spatial_write(b->ctx, out, j);
	if (rc) {
		cJSON_Delete(j);
		return rc;
	}
	return gt_add(b, key, j);
}

int truth__visible_context(struct build *b, long except, long except2, bool grasp)
{
	struct visible_args a = { b->t, VISIBILITY_MAX_RANGE_M, false };
	cJSON *j;
	size_t i;
	int rc;

	if (!b->have_vis) {
		rc = visible_compute(b->ctx, &a, &b->vis);
		if (rc)
			return tool_error("visible_objects", rc);
		b->have_vis = true;
	}
	b->qctx.refs = b->refs;
	b->qctx.nrefs = 0;
	for (i = 0; i < b->vis.nvisible; i++) {
		const struct visible_object *o = &b->vis.visible[i];
		long idx = (long)o->obj;
		size_t k = b->qctx.nrefs;

		/* the tool lists the first 50, nearest first */
		if (i >= 50)
			break;
		if (idx == except || idx == except2 || k >= ARRAY_SIZE(b->refs))
			continue;
		if (truth__structural(b->rec, idx) || (grasp && !truth__graspable(b->rec, idx)))
			continue;
		if (truth__name(b->rec, idx, b->refbuf[k], sizeof(b->refbuf[k])))
			continue;
		b->refs[k] = b->refbuf[k];
		b->qctx.nrefs++;
	}
	j = cJSON_CreateObject();
	if (!j)
		return ENG_ENOMEM;
	rc = visible_write(b->ctx, &b->vis, 50, false, j);
	if (rc) {
		cJSON_Delete(j);
		return rc;
	}
	return gt_add(b, "visible_at_t", j);
}

/* ======================= The clip ======================= */

/*
 * Asks the clip sampler whether (subtask, T, target) satisfies the
 * sub-task's clip rule; the sampler re-derives the facts (last seen time,
 * fixation, interaction, path) itself. On success b->clip is its candidate
 * and the ground truth holds it as "clip".
 */
static int check_clip(struct build *b, int k)
{
	struct clips_args a;
	struct clips_result r;
	cJSON *why = NULL;
	const char *what = b->target >= 0 ? b->rec->objects[b->target].id : "the chain";
	int rc;

	memset(&a, 0, sizeof(a));
	a.subtask = b->subtask;
	a.metric = b->metric;
	a.count = 1;
	a.target = b->target;
	a.t0 = b->t;
	a.t1 = b->t;
	a.window_s = b->p->window_s;
	/* chains: the one window of T (one K per clip time), whatever K the brain asks */
	a.k = 0;
	(void)k;
	rc = clips_sample(b->ctx, &a, &r);
	if (rc == ENG_EINVAL) {
		char detail[512];

		snprintf(detail, sizeof(detail), "sample_clips: %s", err_msg());
		return truth__reject(b, "clip_rule", "no %s clip qualifies at T = %lld for '%s' (%s)",
				     subtask_name(b->subtask), (long long)b->t, what, detail);
	}
	if (rc)
		return rc;
	if (r.n < 1 || clips_get(&r, 0)->T != b->t)
		return truth__reject(b, "clip_rule", "no %s clip qualifies at T = %lld for '%s'",
				     subtask_name(b->subtask), (long long)b->t, what);
	b->clip = *clips_get(&r, 0);
	rc = clips_cand_json(b->ctx, &r, &b->clip, 0, b->p->frames, &why);
	if (!rc)
		return gt_add(b, "clip", why);
	cJSON_Delete(why);
	return rc;
}

int truth_frame_times(int64_t t, const struct truth_params *p, int64_t *out)
{
	int64_t w = (int64_t)llround(p->window_s * TRUTH_NS_PER_S);
	int i, n = p->frames < 2 ? 2 : p->frames;

	for (i = 0; i < n; i++)
		/* NOLINTNEXTLINE(bugprone-integer-division): whole nanoseconds are meant */
		out[i] = t - w + w * i / (n - 1);
	return n;
}

static char *frames_json(int64_t t, const struct truth_params *p, int64_t *start)
{
	cJSON *a = cJSON_CreateArray();
	int64_t *ft = malloc((size_t)(p->frames < 2 ? 2 : p->frames) * sizeof(*ft));
	int i, n;
	char *s;

	*start = t - (int64_t)llround(p->window_s * TRUTH_NS_PER_S);
	if (!a || !ft) {
		cJSON_Delete(a);
		free(ft);
		return NULL;
	}
	n = truth_frame_times(t, p, ft);
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)ft[i]));
	free(ft);
	s = jsonfile_print(a);
	cJSON_Delete(a);
	return s;
}

/* ======================= Assembly ======================= */

static int make_id(const char *rec_id, enum subtask st, enum metric m, int64_t t,
		   const char *target, char out[HASH_HEX_LEN + 1])
{
	struct hash *h = NULL;
	char tb[32];
	int rc = hash_new(&h);

	if (rc)
		return rc;
	snprintf(tb, sizeof(tb), "%lld", (long long)t);
	rc = hash_add_field(h, rec_id);
	if (!rc)
		rc = hash_add_field(h, subtask_name(st));
	if (!rc)
		rc = hash_add_field(h, metric_name(m));
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

static const char *arg_str(const cJSON *args, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, key));
}

/* A time of the submit_qa arguments (a JSON number or its text), 0 when absent. */
static int64_t arg_time(const cJSON *args, const char *key)
{
	return jsonfile_get_time(args, key, 0);
}

/* The disagreement note when the brain's stated answer differs from the truth. */
static void compare_statement(struct build *b, struct truth *out)
{
	const char *said = arg_str(b->args, "answer");
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

/*
 * The prior of the negatives: the answers the group's first candidates (in
 * the sampler's balanced order) would have, so that distractors are drawn
 * from the distribution the keys come from.
 */
/*
 * The prior of each group, built once per tool context: the answers of
 * the group's first candidates (in the sampler's seed-0 order) under the
 * key balance. Keyed by everything it depends on.
 */
struct prior_entry {
	enum subtask subtask;
	enum metric metric;
	enum ans_kind kind;
	double window_s, key_cap;
	int prior_keys;
	struct disc_params disc;
	struct answer *v;
	size_t n;
	unsigned fields;   /* the key-balanced fields (keybal_fields) */
};

struct prior_cache {
	struct prior_entry e[2 * SUBTASK_NGROUPS];
	size_t n;
};

static void prior_cache_free(void *p)
{
	struct prior_cache *c = p;
	size_t i;

	for (i = 0; c && i < c->n; i++)
		free(c->e[i].v);
	free(c);
}

/* The answers of the group's candidates, into e->v (at most TRUTH_PRIOR_MAX). */
static int prior_compute(struct build *b, struct prior_entry *e)
{
	const struct task_def *task = task_get(b->subtask);
	struct clips_args a;
	struct clips_result r;
	struct answer *pool = NULL;
	bool *keep = NULL;
	size_t i, n = 0, nkept, want;
	int rc;

	/*
	 * As many answers as the keys will be, taken the way they are (the
	 * sampler's stratified order, the key balance): a prior of the whole
	 * recording would hold the order's tail, which the keys of a quota
	 * never reach, and distractors would differ from keys in what the
	 * order spreads first (the vertical class of an interaction, say).
	 */
	want = b->p->prior_keys < 1 ? 1 : (size_t)b->p->prior_keys;
	if (want > TRUTH_PRIOR_MAX)
		want = TRUTH_PRIOR_MAX;
	memset(&a, 0, sizeof(a));
	a.subtask = b->subtask;
	a.metric = b->metric;
	a.count = TRUTH_PRIOR_POOL;
	a.target = -1;
	a.t0 = INT64_MIN;
	a.t1 = INT64_MAX;
	a.window_s = b->p->window_s;
	rc = clips_sample(b->ctx, &a, &r);
	if (rc)
		return rc == ENG_EINVAL ? 0 : rc;
	pool = malloc((r.n ? r.n : 1) * sizeof(*pool));
	keep = malloc((r.n ? r.n : 1) * sizeof(*keep));
	e->v = malloc(TRUTH_PRIOR_MAX * sizeof(*e->v));
	if (!pool || !keep || !e->v) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < r.n; i++) {
		ans_init(&pool[n], b->ans.kind);
		if (task->prior(b, clips_get(&r, i), &pool[n]) ||
		    ans_normalise(&pool[n], &b->p->qc.disc))
			continue;
		n++;
	}
	/* the keys are balanced (keybal.h): so is what distractors are drawn from */
	rc = keybal_fields(pool, n, &e->fields);
	if (!rc)
		rc = keybal_select(pool, n, b->p->key_cap, e->fields, want, keep, &nkept);
	for (i = 0; !rc && i < n && e->n < want; i++)
		if (keep[i])
			e->v[e->n++] = pool[i];
out:
	free(pool);
	free(keep);
	return rc;
}

struct prior_make {
	struct build *b;
	const struct prior_entry *key;
};

static void prior_entry_free(void *p)
{
	struct prior_entry *e = p;

	if (e)
		free(e->v);
	free(e);
}

/* tool_shared_get's maker: the prior of the key's group, in a new entry. */
static int prior_make_fn(void *arg, void **data, void (**destroy)(void *data))
{
	const struct prior_make *m = arg;
	struct prior_entry *e = malloc(sizeof(*e));
	int rc;

	if (!e)
		return ENG_ENOMEM;
	*e = *m->key;
	e->v = NULL;
	e->n = 0;
	rc = prior_compute(m->b, e);
	if (rc) {
		prior_entry_free(e);
		return rc;
	}
	*data = e;
	*destroy = prior_entry_free;
	return 0;
}

/* FNV-1a of the discretisation settings, for the shared prior's name. */
static uint64_t disc_hash(const struct disc_params *d)
{
	return hash_fnv1a(HASH_FNV_BASIS, d, sizeof(*d));
}

/* The cached prior of b's group, built on first use; *out NULL for a group without one. */
static int prior_get(struct build *b, const struct prior_entry **out)
{
	struct prior_cache *c = tool_ctx_slot(b->ctx, TOOL_SLOT_PRIOR);
	struct prior_entry *e = NULL, key;
	size_t i;
	int rc;

	*out = NULL;
	if (!task_get(b->subtask)->prior)
		return 0;
	memset(&key, 0, sizeof(key));
	key.subtask = b->subtask;
	key.metric = b->metric;
	key.kind = b->ans.kind;
	key.window_s = b->p->window_s;
	key.key_cap = b->p->key_cap;
	key.prior_keys = b->p->prior_keys;
	key.disc = b->p->qc.disc;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return ENG_ENOMEM;
		rc = tool_ctx_set_slot(b->ctx, TOOL_SLOT_PRIOR, c, prior_cache_free);
		if (rc) {
			free(c);
			return rc;
		}
	}
	for (i = 0; i < c->n && !e; i++)
		if (c->e[i].subtask == key.subtask && c->e[i].metric == key.metric &&
		    c->e[i].kind == key.kind && c->e[i].window_s == key.window_s &&
		    c->e[i].key_cap == key.key_cap && c->e[i].prior_keys == key.prior_keys &&
		    !memcmp(&c->e[i].disc, &key.disc, sizeof(key.disc)))
			e = &c->e[i];
	if (!e) {
		struct prior_make m = { b, &key };
		struct prior_entry *made = NULL;
		char name[160];
		bool owned;

		/* built once per recording, by the first worker that needs it */
		snprintf(name, sizeof(name), "prior/%d/%d/%d/%.17g/%.17g/%d/%016llx", (int)key.subtask,
			 (int)key.metric, (int)key.kind, key.window_s, key.key_cap, key.prior_keys,
			 (unsigned long long)disc_hash(&key.disc));
		rc = tool_shared_get(b->ctx, name, prior_make_fn, &m, (void **)&made, &owned);
		if (rc)
			return rc;
		if (!owned) {
			*out = made;
			return 0;
		}
		if (c->n == ARRAY_SIZE(c->e)) {
			free(c->e[0].v);
			memmove(&c->e[0], &c->e[1], (c->n - 1) * sizeof(c->e[0]));
			c->n--;
		}
		c->e[c->n] = *made;
		free(made);
		e = &c->e[c->n++];
	}
	*out = e;
	return 0;
}

static int build_prior(struct build *b)
{
	const struct prior_entry *e;
	int rc = prior_get(b, &e);

	b->qctx.prior = e ? e->v : NULL;
	b->qctx.nprior = e ? e->n : 0;
	return rc;
}

int truth_key_fields(struct tool_ctx *ctx, enum subtask st, enum metric m,
		     const struct truth_params *p, unsigned *fields)
{
	const struct prior_entry *e;
	struct build b;
	int rc;

	*fields = 0;
	memset(&b, 0, sizeof(b));
	b.ctx = ctx;
	b.rec = tool_ctx_rec(ctx);
	b.p = p;
	b.subtask = st;
	b.metric = m;
	b.target = -1;
	ans_init(&b.ans, ans_kind_from_task(subtask_info(st)->short_name, metric_name(m)));
	if (b.ans.kind == ANS_NKIND)
		return 0;
	rc = prior_get(&b, &e);
	if (!rc && e)
		*fields = e->fields;
	return rc;
}

/* The options of a multiple-choice QA: negatives, text QC, shuffle. */
static int finish_mc(struct build *b, struct truth *out)
{
	struct qc_options *o = NULL;
	const cJSON *d, *it;
	const char *props[8];
	cJSON *arr = NULL, *aj = NULL, *q = NULL;
	int rc, i;

	rc = ans_normalise(&b->ans, &b->p->qc.disc);
	if (rc)
		return truth__reject(b, "bad_truth", "%s", err_msg());
	rc = build_prior(b);
	if (rc)
		return rc;
	d = cJSON_GetObjectItemCaseSensitive(b->args, "distractors");
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
		rc = truth__reject(b, qc_reason_name(o->qc.reason), "qc: %s", o->qc.detail);
		goto out;
	}
	arr = cJSON_CreateArray();
	for (i = 0; arr && i < o->n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(o->text[i]));
	out->options_json = arr ? jsonfile_print(arr) : NULL;
	out->answer_index = o->answer;
	aj = ans_to_json(&b->ans);
	out->answer_json = aj ? jsonfile_print(aj) : NULL;
	q = qc_options_to_json(o);
	/* the store reads the answer-length z-score at the top level */
	if (q)
		cJSON_AddNumberToObject(q, "z", o->qc.z);
	out->qc_json = q ? jsonfile_print(q) : NULL;
	if (!out->options_json || !out->answer_json || !out->qc_json)
		rc = ENG_ENOMEM;
out:
	cJSON_Delete(q);
	cJSON_Delete(arr);
	cJSON_Delete(aj);
	free(o);
	return rc;
}

/* Reads the sub-task, metric and target of the submission into b and out. */
static int read_submit(struct build *b, struct truth *out)
{
	const char *st = arg_str(b->args, "subtask"), *m = arg_str(b->args, "metric");
	const char *target = arg_str(b->args, "target");
	const struct subtask_info *si;

	if (!st || !m || !target)
		return truth__reject(b, "bad_submit", "submit_qa lacks subtask, metric or target");
	b->subtask = subtask_from_name(st);
	b->metric = metric_from_name(m);
	si = subtask_info(b->subtask);
	if (!si || strcmp(st, si->name))
		return truth__reject(b, "bad_submit", "unknown sub-task '%s'", st);
	if (b->metric == METRIC_COUNT)
		return truth__reject(b, "bad_submit", "unknown metric '%s'", m);
	if (!subtask_has_metric(b->subtask, b->metric))
		return truth__reject(b, "bad_submit", "%s has only the relative metric", st);
	snprintf(out->category, sizeof(out->category), "%s", si->category);
	snprintf(out->subtask, sizeof(out->subtask), "%s", si->short_name);
	snprintf(out->metric, sizeof(out->metric), "%s", metric_name(b->metric));
	if (b->subtask == SUBTASK_CHAIN)
		return 0;
	b->target = recording_find_object(b->rec, target);
	if (b->target < 0)
		return truth__reject(b, "bad_target", "no object with id '%s'", target);
	if (truth__structural(b->rec, b->target))
		return truth__reject(b, "structural_target",
				     "'%s' is part of the room (a wall or floor), not an object to ask about",
				     target);
	if (truth__name(b->rec, b->target, b->target_name, sizeof(b->target_name)))
		return truth__reject(b, "unnamed", "object '%s' cannot be named apart from another",
				     target);
	return 0;
}

/* The camera at T for the review page's picture. */
static void add_camera(struct build *b)
{
	struct pose cam;
	float heading;
	cJSON *c, *pos;

	if (recording_camera_at(b->rec, b->t, &cam) || bev_heading(&cam, &heading))
		return;
	c = cJSON_AddObjectToObject(b->gt, "camera");
	pos = cJSON_AddArrayToObject(c, "position");
	cJSON_AddItemToArray(pos, cJSON_CreateNumber(cam.t[0]));
	cJSON_AddItemToArray(pos, cJSON_CreateNumber(cam.t[1]));
	cJSON_AddItemToArray(pos, cJSON_CreateNumber(cam.t[2]));
	cJSON_AddNumberToObject(c, "heading_deg", (double)heading * POSE_RAD2DEG);
}

/* The clip check, the id and the clip fields of out. */
static int prepare(struct build *b, const char *rec_id, struct truth *out)
{
	const char *target = arg_str(b->args, "target");
	int64_t brain_event = arg_time(b->args, "event_ns");
	int rc;

	if (b->t - (int64_t)llround(b->p->window_s * TRUTH_NS_PER_S) < recording_t0(b->rec) ||
	    b->t > recording_t1(b->rec))
		return truth__reject(b, "clip_rule", "the clip [T - %g s, T] leaves the recording",
				     b->p->window_s);
	rc = check_clip(b, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(b->args, "actions")));
	if (rc)
		return rc;
	/* the event time is the sampler's, never the brain's */
	b->event = b->clip.event_t;
	if (brain_event && brain_event != b->event &&
	    (b->subtask == SUBTASK_GAZE_TARGET || b->subtask == SUBTASK_NEXT_INTERACTION))
		b->event_note = true;
	if (b->subtask == SUBTASK_CHAIN) {
		/* one window can ask for K = 3, 4 or 5 actions: K is part of the id */
		char tk[300];

		snprintf(tk, sizeof(tk), "%s#k=%d", target, b->clip.k);
		rc = make_id(rec_id, b->subtask, b->metric, b->t, tk, out->id);
	} else {
		rc = make_id(rec_id, b->subtask, b->metric, b->t, target, out->id);
	}
	if (rc)
		return rc;
	out->t_ns = b->t;
	out->clip_end_ns = b->t;
	out->frames_json = frames_json(b->t, b->p, &out->clip_start_ns);
	out->target = strdup(target);
	out->question = strdup(arg_str(b->args, "question") ? arg_str(b->args, "question") : "");
	if (!out->frames_json || !out->target || !out->question)
		return ENG_ENOMEM;
	add_camera(b);
	return 0;
}

int truth_build(struct tool_ctx *ctx, const char *rec_id, const cJSON *args,
		const struct truth_params *p, struct truth *out, char *code,
		size_t code_size)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct task_def *task;
	struct build *b = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->answer_index = -1;
	code[0] = '\0';
	if (!rec) {
		snprintf(code, code_size, "bad_submit");
		return err_set(ENG_EINVAL, "no recording");
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return ENG_ENOMEM;
	b->ctx = ctx;
	b->rec = rec;
	b->p = p;
	b->args = args;
	b->t = arg_time(args, "t_ns");
	b->target = -1;
	b->code = code;
	b->code_size = code_size;
	b->gt = cJSON_CreateObject();
	if (!b->gt) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = read_submit(b, out);
	if (!rc)
		rc = prepare(b, rec_id, out);
	if (rc)
		goto out;
	task = task_get(b->subtask);
	ENG_ASSERT(task && task->subtask == b->subtask);
	ENG_ASSERT(b->subtask == SUBTASK_CHAIN || b->target >= 0);
	rc = task->truth(b, out);
	if (rc)
		goto out;
	if (b->subtask != SUBTASK_CHAIN) {
		if (!rc)
			rc = finish_mc(b, out);
		if (rc)
			goto out;
		compare_statement(b, out);
		if (b->event_note && !out->note)
			out->note = strdup("the brain's event time differs from the sampler's; the sampler's is used");
	}
	out->gt_json = jsonfile_print(b->gt);
	if (!out->gt_json)
		rc = ENG_ENOMEM;
out:
	if (b) {
		cJSON_Delete(b->gt);
		visible_release(&b->vis);
	}
	free(b);
	if (rc) {
		char keep[64];

		snprintf(keep, sizeof(keep), "%s", code);
		truth_release(out);
		snprintf(code, code_size, "%s", keep);
	}
	return rc;
}

/* Swaps items i and j of the array at key of obj (no-op when absent). */
static void swap_items(cJSON *obj, const char *key, int i, int j)
{
	cJSON *arr = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
	cJSON *a, *b, *ca, *cb;

	if (!cJSON_IsArray(arr) || i == j)
		return;
	a = cJSON_GetArrayItem(arr, i);
	b = cJSON_GetArrayItem(arr, j);
	if (!a || !b)
		return;
	ca = cJSON_Duplicate(a, 1);
	cb = cJSON_Duplicate(b, 1);
	if (!ca || !cb) {
		cJSON_Delete(ca);
		cJSON_Delete(cb);
		return;
	}
	cJSON_ReplaceItemInArray(arr, i, cb);
	cJSON_ReplaceItemInArray(arr, j, ca);
}

int truth_place_key(struct truth *t, int pos)
{
	cJSON *opts = NULL, *qc = NULL;
	char *o2 = NULL, *q2 = NULL, letter[2];
	int n, rc = 0;

	if (t->answer_index < 0 || pos == t->answer_index)
		return 0;
	opts = cJSON_Parse(t->options_json);
	qc = t->qc_json ? cJSON_Parse(t->qc_json) : NULL;
	n = cJSON_GetArraySize(opts);
	if (!cJSON_IsArray(opts) || t->answer_index >= n) {
		rc = err_set(ENG_EPARSE, "qa %s: options are not an array holding the key", t->id);
		goto out;
	}
	if (pos < 0 || pos >= n)
		goto out;
	{
		/* options_json is the array itself */
		cJSON *holder = cJSON_CreateObject();

		if (!holder) {
			rc = ENG_ENOMEM;
			goto out;
		}
		cJSON_AddItemToObject(holder, "a", opts);
		swap_items(holder, "a", t->answer_index, pos);
		opts = cJSON_DetachItemFromObject(holder, "a");
		cJSON_Delete(holder);
	}
	swap_items(qc, "options", t->answer_index, pos);
	swap_items(qc, "structured", t->answer_index, pos);
	letter[0] = (char)('A' + pos);
	letter[1] = '\0';
	if (qc) {
		cJSON_ReplaceItemInObject(qc, "answer_index", cJSON_CreateNumber(pos));
		cJSON_ReplaceItemInObject(qc, "answer_letter", cJSON_CreateString(letter));
		q2 = jsonfile_print(qc);
	}
	o2 = jsonfile_print(opts);
	if (!o2 || (qc && !q2)) {
		rc = ENG_ENOMEM;
		goto out;
	}
	free(t->options_json);
	t->options_json = o2;
	o2 = NULL;
	if (q2) {
		free(t->qc_json);
		t->qc_json = q2;
		q2 = NULL;
	}
	t->answer_index = pos;
out:
	free(o2);
	free(q2);
	cJSON_Delete(opts);
	cJSON_Delete(qc);
	return rc;
}
