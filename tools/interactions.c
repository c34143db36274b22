/* SPDX-License-Identifier: MIT */
/*
 * find_interactions: the interaction check of the salient clip sampler.
 * An interaction is a dynamic object that starts to move (it moves more
 * than min_move_m within window_s), or an action that names an object;
 * a motion and an action on the same object close in time are one event.
 * Motion segments are computed once per context and kept in its
 * TOOL_SLOT_MOTION slot.
 */
#include "interactions.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "registry.h"

#define DEFAULT_LIMIT 50
/* An action matches a motion that starts within this long of the action's span. */
#define MATCH_TOL_NS 1000000000LL
/* Rest tolerance as a fraction of min_move_m: moves below it are jitter. */
#define REST_FRACTION 0.1

/* One motion of one object. */
struct motion_seg {
	size_t obj;       /* index into rec->objects */
	int64_t start_ns; /* last sample at rest before the object leaves */
	int64_t end_ns;   /* first sample where it rests again */
	vec3 disp;        /* position(end) - position(start), m */
	bool onset_seen;  /* false when already moving at the object's first sample */
};

/* The motion segments of every dynamic object for one (move, window) setting. */
struct motion_cache {
	double move_m;
	int64_t window_ns;
	struct motion_seg *segs; /* sorted by start time */
	size_t n, cap;
	long *act;               /* per segment: the action it takes, or -1 */
	unsigned char *used;     /* per action: taken by a segment */
};

static void motion_cache_free(void *p)
{
	struct motion_cache *c = p;

	if (!c)
		return;
	free(c->segs);
	free(c->act);
	free(c->used);
	free(c);
}

static int seg_push(struct motion_cache *c, const struct motion_seg *s)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct motion_seg *n = realloc(c->segs, cap * sizeof(*n));

		if (!n)
			return ENG_ENOMEM;
		c->segs = n;
		c->cap = cap;
	}
	c->segs[c->n++] = *s;
	return 0;
}

/* Box centre of object o for pose sample k. */
static void sample_pos(const struct rec_object *o, const struct pose_sample *s,
		       vec3 out)
{
	pose_apply(&s->pose, o->local_c, out);
}

/* Box centre at time t, interpolated between the samples. */
static void time_pos(const struct rec_object *o, const struct pose_sample *s,
		     size_t n, int64_t t, vec3 out)
{
	struct pose p;

	if (pose_sample_at(s, n, t, INT64_MAX / 2, &p))
		p = s[0].pose;
	pose_apply(&p, o->local_c, out);
}

/*
 * Whether the object gets farther than `over` from p_k within (t_k,
 * t_k + win] (the samples, then the position interpolated at the window
 * end), and in *first_over the first sample that does (SIZE_MAX: none).
 * pos holds every sample's box centre.
 */
static bool reach_exceeds(const struct rec_object *o, const struct pose_sample *s,
			  vec3 *pos, size_t n, size_t k, int64_t win, double over,
			  size_t *first_over)
{
	vec3 q = { 0 };
	size_t m;

	*first_over = SIZE_MAX;
	for (m = k + 1; m < n && s[m].t_ns - s[k].t_ns <= win; m++)
		if ((double)glm_vec3_distance(pos[k], pos[m]) > over) {
			*first_over = m;
			return true;
		}
	if (m < n) { /* the window ends between two samples */
		time_pos(o, s, n, s[k].t_ns + win, q);
		if ((double)glm_vec3_distance(pos[k], q) > over) {
			*first_over = m;
			return true;
		}
	}
	return false;
}

/*
 * Scans one object's samples. A motion starts at sample i when the
 * object gets more than move_m from p_i within the window; its start is
 * the last sample before the first one farther than the rest tolerance
 * from p_i. It ends at the first sample e from which the object stays
 * within the rest tolerance for a whole window. The samples' box centres
 * are computed once.
 */
static int scan_object(struct motion_cache *c, const struct recording *rec,
		       size_t oi)
{
	const struct rec_object *o = &rec->objects[oi];
	const struct pose_sample *s = rec->obj_poses + o->pose_first;
	size_t n = o->pose_count, i = 0, m, e, dummy;
	double eps = c->move_m * REST_FRACTION;
	struct motion_seg seg;
	vec3 *pos = malloc((n ? n : 1) * sizeof(*pos));
	int rc = 0;

	if (!pos)
		return ENG_ENOMEM;
	for (i = 0; i < n; i++)
		sample_pos(o, &s[i], pos[i]);
	i = 0;
	while (i + 1 < n) {
		if (!reach_exceeds(o, s, pos, n, i, c->window_ns, c->move_m, &dummy)) {
			i++;
			continue;
		}
		reach_exceeds(o, s, pos, n, i, c->window_ns, eps, &m);
		if (m == SIZE_MAX) /* cannot happen: move_m > eps was exceeded */
			m = i + 1;
		e = m;
		while (e + 1 < n && reach_exceeds(o, s, pos, n, e, c->window_ns, eps, &dummy))
			e++;
		seg.obj = oi;
		seg.start_ns = s[m - 1].t_ns;
		seg.end_ns = s[e].t_ns;
		seg.onset_seen = m - 1 > 0;
		glm_vec3_sub(pos[e], pos[m - 1], seg.disp);
		rc = seg_push(c, &seg);
		if (rc)
			break;
		i = e > i ? e : i + 1;
	}
	free(pos);
	return rc;
}

static int cmp_seg(const void *pa, const void *pb)
{
	const struct motion_seg *a = pa, *b = pb;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return (a->obj > b->obj) - (a->obj < b->obj);
}

static long match_action(const struct recording *rec, size_t obj, int64_t t,
			 const unsigned char *used, int64_t max_len);

/*
 * The first element at or after time t of n elements of `stride` bytes
 * whose int64 time at base (each element's own) rises: a binary search.
 */
static size_t first_from(const void *base, size_t n, size_t stride, int64_t t)
{
	size_t i;

	if (t == INT64_MIN)
		return 0;
	i = time_floor_index(base, n, stride, t - 1);
	return i == SIZE_MAX ? 0 : i + 1;
}

/*
 * Each motion, in time order, takes its closest action not taken yet: done
 * once per setting, so that a call costs its time range, not the whole
 * recording's motions times its actions.
 */
static int match_all(struct motion_cache *c, const struct recording *rec)
{
	int64_t max_len = 0;
	size_t i;

	c->act = malloc((c->n ? c->n : 1) * sizeof(*c->act));
	c->used = calloc(rec->nactions ? rec->nactions : 1, 1);
	if (!c->act || !c->used)
		return ENG_ENOMEM;
	for (i = 0; i < rec->nactions; i++)
		if (rec->actions[i].end_ns - rec->actions[i].start_ns > max_len)
			max_len = rec->actions[i].end_ns - rec->actions[i].start_ns;
	for (i = 0; i < c->n; i++) {
		c->act[i] = match_action(rec, c->segs[i].obj, c->segs[i].start_ns, c->used,
					 max_len);
		if (c->act[i] >= 0)
			c->used[c->act[i]] = 1;
	}
	return 0;
}

struct motion_make {
	const struct recording *rec;
	double move_m;
	int64_t win;
};

/* tool_shared_get's maker: the motion segments of one setting, matched to the actions. */
static int motion_make_fn(void *arg, void **data, void (**destroy)(void *data))
{
	const struct motion_make *m = arg;
	const struct recording *rec = m->rec;
	struct motion_cache *c = calloc(1, sizeof(*c));
	size_t i;
	int rc;

	if (!c)
		return ENG_ENOMEM;
	c->move_m = m->move_m;
	c->window_ns = m->win;
	for (i = 0; i < rec->nobjects; i++) {
		if (rec->objects[i].motion != REC_DYNAMIC || rec->objects[i].pose_count < 2)
			continue;
		rc = scan_object(c, rec, i);
		if (rc) {
			motion_cache_free(c);
			return rc;
		}
	}
	if (c->n)
		qsort(c->segs, c->n, sizeof(*c->segs), cmp_seg);
	rc = match_all(c, rec);
	if (rc) {
		motion_cache_free(c);
		return rc;
	}
	*data = c;
	*destroy = motion_cache_free;
	return 0;
}

/*
 * The segments of one setting (move threshold, window): made once per
 * recording and setting when the contexts share a store (the context's
 * slot then borrows the last one it used), else per context.
 */
static int motion_segments(struct tool_ctx *ctx, double move_m, int64_t win,
			   const struct motion_cache **out)
{
	struct motion_cache *c = tool_ctx_slot(ctx, TOOL_SLOT_MOTION);
	struct motion_make m = { tool_ctx_rec(ctx), move_m, win };
	char key[96];
	int rc;

	if (c && c->move_m == move_m && c->window_ns == win) {
		*out = c;
		return 0;
	}
	snprintf(key, sizeof(key), "motion/%.17g/%lld", move_m, (long long)win);
	rc = tool_shared_slot(ctx, TOOL_SLOT_MOTION, key, motion_make_fn, &m, motion_cache_free,
			      (void **)&c);
	if (!rc)
		*out = c;
	return rc;
}

/* ======================= Events ======================= */

static int cmp_event(const void *pa, const void *pb)
{
	const struct interaction *a = pa, *b = pb;

	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns ? -1 : 1;
	return (a->obj > b->obj) - (a->obj < b->obj);
}

/*
 * The action on the same object closest in start time whose span (+-
 * tolerance) holds t, the first in the recording's order on a tie. Only
 * actions starting in [t - tolerance - max_len, t + tolerance] can hold t
 * (max_len: the longest action), and the actions are sorted by start: the
 * scan covers those alone.
 */
static long match_action(const struct recording *rec, size_t obj, int64_t t,
			 const unsigned char *used, int64_t max_len)
{
	long best = -1;
	int64_t best_d = INT64_MAX;
	size_t i, end;

	i = first_from(rec->actions, rec->nactions, sizeof(*rec->actions),
		       t - MATCH_TOL_NS - max_len);
	end = first_from(rec->actions, rec->nactions, sizeof(*rec->actions), t + MATCH_TOL_NS + 1);
	for (; i < end; i++) {
		const struct rec_action *a = &rec->actions[i];
		int64_t d;

		if (used[i] || a->object != (long)obj)
			continue;
		if (t < a->start_ns - MATCH_TOL_NS || t > a->end_ns + MATCH_TOL_NS)
			continue;
		d = llabs(a->start_ns - t);
		if (d < best_d) {
			best_d = d;
			best = (long)i;
		}
	}
	return best;
}

const char *interaction_kind_name(enum interaction_kind k)
{
	return k == INTERACTION_BOTH ? "motion+action" : k == INTERACTION_MOTION ? "motion"
										   : "action";
}

void interactions_release(struct interactions_result *r)
{
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

int interactions_find(struct tool_ctx *ctx, const struct interactions_args *a,
		      struct interactions_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct motion_cache *mc;
	size_t i, s0, s1, a0, a1;
	int rc;

	memset(out, 0, sizeof(*out));
	out->t0 = a->t0;
	out->t1 = a->t1;
	if (a->t1 < a->t0)
		return tool__reject(ctx, "/t1", "must be >= t0 (%" PRId64 "), got %" PRId64, a->t0,
				    a->t1);
	rc = motion_segments(ctx, a->min_move_m, (int64_t)llround(a->window_s * 1e9), &mc);
	if (rc)
		return rc;
	/* the motions and the actions starting in [t0, t1]: both sorted by start */
	s0 = !mc->n ? 0 : first_from(&mc->segs[0].start_ns, mc->n, sizeof(*mc->segs), a->t0);
	s1 = !mc->n || a->t1 == INT64_MAX
		     ? mc->n
		     : first_from(&mc->segs[0].start_ns, mc->n, sizeof(*mc->segs), a->t1 + 1);
	a0 = first_from(rec->actions, rec->nactions, sizeof(*rec->actions), a->t0);
	a1 = a->t1 == INT64_MAX ? rec->nactions
				: first_from(rec->actions, rec->nactions, sizeof(*rec->actions),
					     a->t1 + 1);
	if (s1 < s0)
		s1 = s0;
	if (a1 < a0)
		a1 = a0;
	out->v = calloc((s1 - s0) + (a1 - a0) + 1, sizeof(*out->v));
	if (!out->v) {
		rc = ENG_ENOMEM;
		goto out;
	}
	/* motions first (in time order), each with the action it took */
	for (i = s0; i < s1; i++) {
		const struct motion_seg *s = &mc->segs[i];
		long ai = mc->act[i];
		struct interaction *e;

		if (s->start_ns < a->t0 || s->start_ns > a->t1 ||
		    (a->object >= 0 && (long)s->obj != a->object))
			continue;
		e = &out->v[out->n++];
		e->t_ns = s->start_ns;
		e->obj = (long)s->obj;
		e->action = ai;
		e->kind = ai >= 0 ? INTERACTION_BOTH : INTERACTION_MOTION;
		e->has_motion = true;
		e->motion_start_ns = s->start_ns;
		e->motion_end_ns = s->end_ns;
		e->onset_seen = s->onset_seen;
		memcpy(e->displacement, s->disp, sizeof(e->displacement));
	}
	for (i = a0; i < a1; i++) {
		const struct rec_action *x = &rec->actions[i];
		struct interaction *e;

		if (mc->used[i] || x->object < 0 || (size_t)x->object >= rec->nobjects)
			continue;
		if (x->start_ns < a->t0 || x->start_ns > a->t1 ||
		    (a->object >= 0 && x->object != a->object))
			continue;
		e = &out->v[out->n++];
		e->t_ns = x->start_ns;
		e->obj = x->object;
		e->action = (long)i;
		e->kind = INTERACTION_ACTION;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_event);
	for (i = 0; i < out->n; i++)
		tool__object_pos(rec, (size_t)out->v[i].obj, out->v[i].t_ns, out->v[i].location);
out:
	if (rc)
		interactions_release(out);
	return rc;
}

static int add_event(cJSON *arr, const struct recording *rec, const struct interaction *ev)
{
	const struct rec_action *a = ev->action >= 0 ? &rec->actions[ev->action] : NULL;
	cJSON *e = cJSON_CreateObject(), *x;

	if (!e)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, e);
	if (!tool__add_time(e, "t_ns", ev->t_ns) ||
	    !cJSON_AddStringToObject(e, "kind", interaction_kind_name(ev->kind)) ||
	    !tool__add_object_ref(e, "object", rec, ev->obj) ||
	    !tool__add_str(e, "hand", a ? tool__hand_name(a->hand) : NULL) ||
	    !tool__add_str(e, "verb", a ? a->verb : NULL) ||
	    !tool__add_str(e, "description", a ? a->description : NULL) ||
	    !tool__add_str(e, "goal", a ? a->goal : NULL) ||
	    !tool__add_vec3(e, "location", ev->location, 3))
		return ENG_ENOMEM;
	if (ev->has_motion) {
		const float *d = ev->displacement;

		x = cJSON_AddObjectToObject(e, "motion");
		if (!x || !tool__add_time(x, "start_ns", ev->motion_start_ns) ||
		    !tool__add_time(x, "end_ns", ev->motion_end_ns) ||
		    !cJSON_AddBoolToObject(x, "onset_observed", ev->onset_seen) ||
		    !tool__add_vec3(x, "displacement_m", d, 3) ||
		    !tool__add_num(x, "distance_m", hypot(hypot(d[0], d[1]), d[2]), 3))
			return ENG_ENOMEM;
	} else if (!cJSON_AddNullToObject(e, "motion")) {
		return ENG_ENOMEM;
	}
	if (a) {
		x = cJSON_AddObjectToObject(e, "action");
		if (!x || !cJSON_AddNumberToObject(x, "index", (double)ev->action) ||
		    !tool__add_time(x, "start_ns", a->start_ns) ||
		    !tool__add_time(x, "end_ns", a->end_ns))
			return ENG_ENOMEM;
	} else if (!cJSON_AddNullToObject(e, "action")) {
		return ENG_ENOMEM;
	}
	return 0;
}

int interactions_write(struct tool_ctx *ctx, const struct interactions_result *r,
		       size_t limit, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	cJSON *arr;
	size_t i;
	int rc;

	if (!tool__add_time(result, "t0_ns", r->t0) || !tool__add_time(result, "t1_ns", r->t1) ||
	    !cJSON_AddNumberToObject(result, "total", (double)r->n) ||
	    !cJSON_AddBoolToObject(result, "truncated", r->n > limit))
		return ENG_ENOMEM;
	arr = cJSON_AddArrayToObject(result, "events");
	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; i < r->n && i < limit; i++) {
		rc = add_event(arr, rec, &r->v[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int tool_find_interactions(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	struct interactions_args a;
	struct interactions_result r;
	size_t limit = (size_t)tool__num(args, "limit", DEFAULT_LIMIT);
	int rc;

	a.t0 = tool__time(args, "t0", 0);
	a.t1 = tool__time(args, "t1", 0);
	a.min_move_m = tool__num(args, "min_move_m", INTERACTIONS_MOVE_M);
	a.window_s = tool__num(args, "window_s", INTERACTIONS_WINDOW_S);
	a.object = -1;
	if (a.t1 < a.t0)
		return tool__reject(ctx, "/t1", "must be >= t0 (%" PRId64 "), got %" PRId64, a.t0,
				    a.t1);
	if (tool__has(args, "object")) {
		rc = tool__object_arg(ctx, args, "object", &a.object);
		if (rc)
			return rc;
	}
	rc = interactions_find(ctx, &a, &r);
	if (rc)
		return rc;
	rc = interactions_write(ctx, &r, limit, result);
	interactions_release(&r);
	return rc;
}
