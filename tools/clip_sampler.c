/* SPDX-License-Identifier: MIT */
/*
 * sample_clips: the salient clip sampler (docs/design.md section 3). For a
 * sub-task it enumerates every current time T whose clip satisfies the
 * sub-task's rule, in time order, thins them (at most one per target per
 * 2 s of T), and hands them out in an order shuffled by a seed.
 *
 * The candidate list of a (sub-task, metric, window, k) is computed once
 * per context from the cached visibility timeline, fixations, interaction
 * events and keystep windows, and kept in the TOOL_SLOT_CLIPS slot with
 * the last shuffled order, so that later calls cost a lookup.
 *
 * Rules (W = window, default 8 s; every T has T - W >= recording start):
 * - intention.head_turn: on the 10 Hz visibility grid, the target is
 *   visible at some frame of [T - W, T - 1 s] and not visible at T.
 * - exploration.navigate: the same, with the target's horizontal (BEV)
 *   distance from the camera at T >= 1.5 m, and plan_path reaching it
 *   with at least one leg (relative metric: at most two).
 * - intention.gaze_target: a fixation of >= 300 ms whose mean ray hits
 *   object O starts at t_F; T = t_F - 0.3 s; the gaze sample nearest T
 *   (within 100 ms) does not hit O.
 * - exploitation.next_interaction: an interaction on O starts at t_I (the
 *   events of find_interactions with its defaults; a motion-only event
 *   whose onset happened before the object's first sample is skipped);
 *   T = t_I - 1 s.
 * - chain.actions: a keystep-dense window of extract_keysteps (clip W,
 *   lead 1 s, horizon 60 s) for K future actions: T is between the last
 *   observed action's start and the first future action's start, at least
 *   one action starts in [T - W, T] and K start after T.
 * With a metric, candidates whose answer would sit within the ambiguity
 * margin are dropped before thinning (see the schema's description); for
 * chains, those whose build_chain (each goal's actions in their order) has
 * an ambiguous edge, which their truth refuses.
 */
#include "clips.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "bev.h"
#include "chain.h"
#include "err.h"
#include "hash.h"
#include "registry.h"
#include "rng.h"
#include "gaze.h"
#include "interactions.h"
#include "keysteps.h"
#include "path.h"
#include "scene.h"
#include "visibility.h"

#define NS_PER_S 1000000000LL
#define THIN_NS (2 * NS_PER_S)        /* one candidate per target per 2 s */
#define RETRY_NS NS_PER_S             /* a failed path check blocks its target this long */
#define SPAN_NS (10 * NS_PER_S)       /* head turn, navigate: spans enumerated lazily */
#define LAZY_CANDS 2048               /* spans are visited until a list holds this many */
                                      /* (navigation: tool_shared_set_list_size()) */
#define LOOKBACK_END_NS NS_PER_S      /* head turn: visible until T - 1 s at the latest */
#define NAV_MIN_M 1.5f                /* navigation target distance */
#define FOV_MARGIN_DEG 5.0f           /* head turn: the target this far outside the view */
#define FIX_MIN_NS 300000000LL        /* gaze target: fixation length */
#define FIX_LEAD_NS 300000000LL       /* T = t_F - 0.3 s */
#define GAZE_TOL_NS 100000000LL       /* gaze sample at T */
#define INTERACT_LEAD_NS NS_PER_S     /* T = t_I - 1 s */
#define MAX_LISTS 16


/* No metric given: no ambiguity filter. */
#define METRIC_NONE METRIC_COUNT


/* The candidates of one setting, and the last order handed out. */
#define ORDER_SLOTS 4

struct clip_order {
	bool have;
	uint64_t seed;
	long target;
	int64_t t0, t1;
	size_t *v;                  /* indices into the list's candidates */
	size_t n;
};

struct clip_list {
	enum subtask sub;
	enum metric metric;
	int k;
	int64_t window_ns;
	struct clip_cand *v;
	size_t n, cap;
	bool borrowed;              /* v belongs to the recording's shared store */
	/*
	 * The last filtered, stratified orders: a session asks with the run's
	 * seed and the truth's prior with seed 0, so one slot made every
	 * session recompute both.
	 */
	struct clip_order ord[ORDER_SLOTS];
	unsigned next_ord[2];       /* slot to evict: of the stratified half, of the other */
};

struct clip_cache {
	struct clip_list lists[MAX_LISTS];
	size_t n;
	size_t next; /* slot to evict when full */
};

static void list_release(struct clip_list *l)
{
	unsigned k;

	if (!l->borrowed)
		free(l->v);
	for (k = 0; k < ORDER_SLOTS; k++)
		free(l->ord[k].v);
	memset(l, 0, sizeof(*l));
}

static void clip_cache_free(void *p)
{
	struct clip_cache *c = p;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		list_release(&c->lists[i]);
	free(c);
}

static int push(struct clip_list *l, const struct clip_cand *c)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct clip_cand *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return ENG_ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *c;
	return 0;
}

static int cmp_cand(const void *pa, const void *pb)
{
	const struct clip_cand *a = pa, *b = pb;

	if (a->T != b->T)
		return a->T < b->T ? -1 : 1;
	return (a->key > b->key) - (a->key < b->key);
}

static void cand_init(struct clip_cand *c)
{
	memset(c, 0, sizeof(*c));
	c->target = -1;
	c->gaze_obj = -1;
	c->action = -1;
	c->yaw_deg = NAN;
	c->move_m = NAN;
}

/* ======================= Shared facts ======================= */

/* Camera pose and heading at T; false when T has no camera or no heading. */
static bool camera_at(const struct recording *rec, int64_t T, struct pose *cam,
		      float *heading)
{
	if (recording_camera_at(rec, T, cam))
		return false;
	return bev_heading(cam, heading) == 0;
}

/* Distance, yaw and BEV displacement from the camera to point p. */
static void relate(struct clip_cand *c, const struct pose *cam, float heading, const vec3 p)
{
	vec3 d = { p[0] - cam->t[0], p[1] - cam->t[1], p[2] - cam->t[2] };
	float yaw;

	c->distance_m = glm_vec3_norm(d);
	c->bev_m = hypotf(d[0], d[1]);
	c->dz_m = d[2];
	bev_local(heading, d, c->local);
	if (bev_yaw_to(heading, cam->t, p, &yaw) == 0) {
		c->yaw_deg = yaw;
		c->margin_deg = bev_dir_margin(yaw);
	} else {
		c->yaw_deg = NAN;
		c->margin_deg = 0;
	}
}

/* The sector label is asked about: the yaw must be defined and clear of the boundaries. */
static bool sector_clear(const struct disc_params *dp, float yaw, float margin)
{
	return isfinite(yaw) && margin >= dp->angle_margin_deg;
}

/* ======================= Head turn and navigation ======================= */

/* Walls, floors and ceilings (longer than 2.5 m, thinner than 0.15 m): no question target. */
static bool structural_box(const struct recording *rec, size_t i)
{
	const float *h = rec->objects[i].half;
	float lo = fminf(h[0], fminf(h[1], h[2])), hi = fmaxf(h[0], fmaxf(h[1], h[2]));

	return 2 * hi > 2.5f && 2 * lo < 0.15f;
}

/* Half the horizontal field of view of the camera, degrees. */
static float half_fov_deg(const struct rec_camera *c)
{
	double l, r;

	if (c->model == REC_CAM_FISHEYE || c->fx <= 0)
		return c->fov_deg > 0 ? c->fov_deg / 2 : 45.0f;
	l = atan((double)c->cx / (double)c->fx);
	r = atan(((double)c->width - (double)c->cx) / (double)c->fx);
	return (float)((l < r ? l : r) * POSE_RAD2DEG);
}

struct enum_ctx {
	struct tool_ctx *ctx;
	const struct recording *rec;
	const struct disc_params *dp;
	struct scene *scene;
	struct clip_list *l;
	enum metric metric;
	int64_t window_ns;
	size_t lazy;    /* lazy lists stop visiting spans at this many candidates */
};

/*
 * What the trajectory samples lo .. lo + n - 1 showed of one object:
 * SAMPLE_UNKNOWN, SAMPLE_UNSEEN or SAMPLE_SEEN each. The last-second
 * windows of a target's consecutive frames overlap by nine tenths, and a
 * sample's answer never changes, so each is tested once per span.
 */
struct sample_memo {
	size_t lo, n;
	uint8_t *st;
};

enum { SAMPLE_UNKNOWN, SAMPLE_UNSEEN, SAMPLE_SEEN };

/* The first trajectory sample after t (ntraj when none). */
static size_t traj_after(const struct recording *rec, int64_t t)
{
	size_t i = time_floor_index(rec->traj, rec->ntraj, sizeof(*rec->traj), t);

	return i == SIZE_MAX ? 0 : i + 1;
}

/*
 * The 10 Hz timeline can miss a glimpse between its frames: the premise is
 * checked again at every trajectory sample of (T - 1 s, T]. Returns 0 when
 * the target is unseen throughout, 1 when it is seen, or a scene error.
 * memo (may be NULL) holds the samples of c->target already tested.
 */
static int unseen_last_second(struct enum_ctx *e, const struct clip_cand *c,
			      struct sample_memo *memo)
{
	const struct recording *rec = e->rec;
	struct visibility_view v;
	size_t i0 = traj_after(rec, c->T - LOOKBACK_END_NS), i;
	int rc;

	/* a sample already seen decides it: no test at all */
	for (i = i0; memo && i < rec->ntraj && rec->traj[i].t_ns <= c->T; i++)
		if (i >= memo->lo && i - memo->lo < memo->n && memo->st[i - memo->lo] == SAMPLE_SEEN)
			return 1;
	for (i = i0; i < rec->ntraj && rec->traj[i].t_ns <= c->T; i++) {
		uint8_t *m = memo && i >= memo->lo && i - memo->lo < memo->n ?
			&memo->st[i - memo->lo] : NULL;

		if (m && *m == SAMPLE_UNSEEN)
			continue;
		/* out of the view without a look at the occluders: no scene refit */
		if (visibility_precheck(e->scene, rec, rec->traj[i].t_ns, VISIBILITY_MAX_RANGE_M,
					(size_t)c->target, &rc) != VIS_VISIBLE) {
			if (m)
				*m = SAMPLE_UNSEEN;
			continue;
		}
		if (rc)
			return rc;
		rc = visibility_view_at(e->scene, rec, rec->traj[i].t_ns, VISIBILITY_MAX_RANGE_M, &v);
		if (rc)
			return rc;
		if (visibility_test(e->scene, &v, (size_t)c->target, false, NULL) == VIS_VISIBLE) {
			if (m)
				*m = SAMPLE_SEEN;
			return 1;
		}
		if (m)
			*m = SAMPLE_UNSEEN;
	}
	return 0;
}

/*
 * The facts of a head-turn candidate; *ok false when T has no heading or
 * the metric rejects the target's yaw. For a navigation candidate
 * (`navigate`), the facts it shares with head turns: no rule on the yaw,
 * but navigation's distance rule (navigate_facts) is checked before the
 * last second's views, the costliest fact, which it spares.
 */
static int head_turn_facts(struct enum_ctx *e, struct clip_cand *c, bool navigate,
			   struct sample_memo *memo, bool *ok)
{
	struct visibility_view v;
	struct pose cam;
	float heading;
	int rc;

	*ok = false;
	if (!camera_at(e->rec, c->T, &cam, &heading))
		return 0;
	rc = visibility_view_at(e->scene, e->rec, c->T, VISIBILITY_MAX_RANGE_M, &v);
	if (rc)
		return rc;
	c->reason = (int)visibility_test(e->scene, &v, (size_t)c->target, false, NULL);
	relate(c, &cam, heading, scene_box(e->scene, (size_t)c->target)->c);
	if (!isfinite(c->yaw_deg))
		return 0;
	if (navigate && c->bev_m < NAV_MIN_M)
		return 0;
	/*
	 * A head turn is asked only where turning helps: the target lies
	 * outside the horizontal field of view (by a margin). In front but
	 * occluded or out of range, no turn of the head shows it.
	 */
	if (!navigate && fabsf(c->yaw_deg) < half_fov_deg(&e->rec->camera) + FOV_MARGIN_DEG)
		return 0;
	if (!navigate && e->metric == METRIC_APPROX && disc_turn_ambiguous(e->dp, c->yaw_deg))
		return 0;
	if (!navigate && e->metric == METRIC_RELATIVE &&
	    !sector_clear(e->dp, c->yaw_deg, c->margin_deg))
		return 0;
	/* last, as the costliest: a view of the scene at every sample of the last second */
	rc = unseen_last_second(e, c, memo);
	if (rc)
		return rc > 0 ? 0 : rc;
	*ok = true;
	return 0;
}

/*
 * The path facts of a navigation candidate. *ok false: rejected;
 * *expensive true: the rejection came from planning (the caller then
 * waits RETRY_NS before trying the target again).
 */
static int navigate_facts(struct enum_ctx *e, struct clip_cand *c, bool *ok, bool *expensive)
{
	struct path_plan p;
	struct pose cam;
	float heading;
	int rc, i;

	*ok = false;
	*expensive = false;
	if (c->bev_m < NAV_MIN_M)
		return 0;
	if (!camera_at(e->rec, c->T, &cam, &heading))
		return 0;
	*expensive = true;
	rc = path_plan(e->ctx, c->T, &cam, heading, c->target, NULL, -1, &p);
	if (rc)
		return rc;
	if (p.status != PATH_OK || p.nlegs == 0)
		return 0;
	c->path_m = (float)p.length_m;
	c->nlegs = (int)p.nlegs;
	c->start_moved = p.start_moved;
	for (i = 0; i < 2; i++) {
		c->leg_yaw[i] = i < c->nlegs ? p.legs[i].yaw_deg : NAN;
		c->leg_margin[i] = i < c->nlegs ? bev_dir_margin(p.legs[i].yaw_deg) : 0;
	}
	/*
	 * A relative answer describes at most two legs (the truth refuses a
	 * longer path as too_many_legs): such a target waits RETRY_NS like a
	 * failed plan, as the path's shape changes slowly.
	 */
	if (e->metric == METRIC_RELATIVE && c->nlegs > 2)
		return 0;
	*expensive = false;
	if (e->metric != METRIC_NONE && !sector_clear(e->dp, c->leg_yaw[0], c->leg_margin[0]))
		return 0;
	if (e->metric == METRIC_RELATIVE && c->nlegs > 1 &&
	    !sector_clear(e->dp, c->leg_yaw[1], c->leg_margin[1]))
		return 0;
	*ok = true;
	return 0;
}

/*
 * Lazy enumeration: the order in which a list visits the SPAN_NS spans of
 * the recording, drawn from the recording's id, the sub-task and the
 * metric (never from a session's seed, so that every session shares the
 * list). A new array of nspans indices, or NULL without memory.
 */
static size_t *span_order(const struct enum_ctx *e, size_t nspans, enum subtask sub)
{
	size_t *v = malloc((nspans ? nspans : 1) * sizeof(*v)), i;
	uint64_t seed = 0x6c617a79u; /* "lazy" */
	const char *id;

	if (!v)
		return NULL;
	for (id = e->rec->id; id && *id; id++)
		seed = rng_mix64(seed ^ (unsigned char)*id);
	seed = rng_mix64(seed ^ ((uint64_t)sub << 8 | (uint64_t)e->metric));
	for (i = 0; i < nspans; i++)
		v[i] = i;
	for (i = nspans; i > 1; i--) {
		size_t j = (size_t)rng_below(&seed, i), t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
	return v;
}

/* Frames of the visibility timeline a lost-from-view scan needs. */
struct lost_frames {
	size_t wf;    /* frames back to T - W */
	size_t back;  /* frames back to T - 1 s */
	size_t kmin;  /* the first frame with T - W >= recording start */
};

/*
 * The candidates of object o at frames [k0, k1): seen in [T - W, T - 1 s],
 * unseen over the whole of (T - 1 s, T], then the sub-task's facts. The
 * scan starts W + 1 s before k0 to know when o was last seen; the thinning
 * (one candidate per target per THIN_NS, RETRY_NS after a failed plan)
 * starts afresh at k0.
 */
static int lost_span(struct enum_ctx *e, const struct visibility_timeline *tl,
		     const struct lost_frames *f, size_t o, size_t k0, size_t k1, bool navigate,
		     struct sample_memo *memo)
{
	int64_t next_ok = INT64_MIN, t0 = recording_t0(e->rec);
	long lv = -1;   /* last visible frame <= k - back */
	long last = -1; /* last visible frame <= k */
	size_t ks = k0 > f->wf + f->back ? k0 - f->wf - f->back : 0, k;
	int rc;

	/*
	 * Only frames of [ks, k1) are read, those the caller had computed: a
	 * frame before ks could only set lv to one too old for any k >= k0.
	 */
	for (k = ks; k < k1; k++) {
		struct clip_cand c;
		bool ok, expensive = false;

		if (k >= ks + f->back && visibility_timeline_visible(tl, o, k - f->back))
			lv = (long)(k - f->back);
		if (visibility_timeline_visible(tl, o, k))
			last = (long)k;
		if (k < k0 || k < f->kmin || lv < 0 || (size_t)lv + f->wf < k || last != lv)
			continue;
		cand_init(&c);
		c.T = visibility_timeline_time(tl, k);
		if (c.T < next_ok || c.T - e->window_ns < t0)
			continue;
		c.target = (long)o;
		c.key = (int)o;
		c.event_t = visibility_timeline_time(tl, (size_t)lv);
		rc = head_turn_facts(e, &c, navigate, memo, &ok);
		if (!rc && ok && navigate)
			rc = navigate_facts(e, &c, &ok, &expensive);
		if (rc)
			return rc;
		if (!ok) {
			if (expensive)
				next_ok = c.T + RETRY_NS;
			continue;
		}
		rc = push(e->l, &c);
		if (rc)
			return rc;
		next_ok = c.T + THIN_NS;
	}
	return 0;
}

/*
 * Head turns and navigation targets, enumerated lazily: the recording is
 * cut into spans of SPAN_NS, visited in span_order(), until the list
 * holds e->lazy candidates (LAZY_CANDS; navigation: the caller's list size).
 * The facts cost (a view of the scene at every sample of the last second,
 * a path plan) is then bounded by what a group can use, not by the
 * recording's length; a recording short enough is enumerated whole.
 */
static int enum_lost_from_view(struct enum_ctx *e, bool navigate)
{
	const struct visibility_timeline *tl;
	struct lost_frames f;
	size_t *spans = NULL, nspans, span_frames, i, o;
	uint8_t *st = NULL;
	int64_t step;
	int rc;

	rc = visibility_timeline_range(e->ctx, 0, 0, &tl);
	if (rc)
		return rc;
	step = tl->step_ns;
	f.wf = (size_t)(e->window_ns / step);
	f.back = (size_t)((LOOKBACK_END_NS + step - 1) / step);
	f.kmin = (size_t)((e->window_ns + step - 1) / step);
	if (f.wf < f.back || !tl->nframes)
		return 0;
	span_frames = (size_t)(SPAN_NS / step);
	nspans = (tl->nframes + span_frames - 1) / span_frames;
	spans = span_order(e, nspans, navigate ? SUBTASK_NAVIGATE : SUBTASK_HEAD_TURN);
	if (!spans)
		return ENG_ENOMEM;
	for (i = 0; i < nspans && !rc && e->l->n < e->lazy; i++) {
		size_t k0 = spans[i] * span_frames;
		size_t k1 = k0 + span_frames < tl->nframes ? k0 + span_frames : tl->nframes;
		struct sample_memo memo;

		/* the span and the W + 1 s before it, which lost_span reads */
		rc = visibility_timeline_range(e->ctx, k0 > f.wf + f.back ? k0 - f.wf - f.back : 0,
					       k1, &tl);
		if (rc)
			break;
		/* the samples of the last seconds of the span's frames */
		memo.lo = traj_after(e->rec, visibility_timeline_time(tl, k0) - LOOKBACK_END_NS);
		memo.n = traj_after(e->rec, visibility_timeline_time(tl, k1 - 1));
		memo.n = memo.n > memo.lo ? memo.n - memo.lo : 0;
		memo.st = realloc(st, memo.n + 1);
		if (!memo.st) {
			rc = ENG_ENOMEM;
			break;
		}
		st = memo.st;
		for (o = 0; o < tl->nobjects && !rc; o++)
			if (!structural_box(e->rec, o)) { /* walls and floors: nobody turns to see them */
				memset(memo.st, SAMPLE_UNKNOWN, memo.n);
				rc = lost_span(e, tl, &f, o, k0, k1, navigate, &memo);
			}
	}
	free(st);
	free(spans);
	return rc;
}

/* ======================= Gaze target ======================= */

/* Number of objects other than `except` visible at the view's time. */
static int visible_others(const struct scene *s, const struct visibility_view *v, long except)
{
	size_t i;
	int n = 0;

	for (i = 0; i < scene_count(s); i++)
		if ((long)i != except && visibility_test(s, v, i, false, NULL) == VIS_VISIBLE)
			n++;
	return n;
}

/* The gaze-target candidates of fixations [lo, hi), one per target per THIN_NS. */
static int gaze_span(struct enum_ctx *e, const struct gaze_fixations *fx, size_t lo, size_t hi,
		     int64_t *next_ok)
{
	int64_t t0 = recording_t0(e->rec);
	size_t i;
	int rc;

	for (i = 0; i < e->rec->nobjects; i++)
		next_ok[i] = INT64_MIN;
	for (i = lo; i < hi; i++) {
		const struct gaze_fixation *f = &fx->v[i];
		struct gaze_fixation_hit h;
		struct visibility_view v;
		struct pose cam;
		float heading;
		size_t gi;
		struct clip_cand c;

		if (f->fx.duration_ns < FIX_MIN_NS)
			continue;
		rc = gaze_fixation_object(e->scene, fx, i, &h);
		if (rc)
			return rc;
		if (h.object < 0)
			continue;
		cand_init(&c);
		c.T = f->fx.t_start_ns - FIX_LEAD_NS;
		c.target = h.object;
		c.key = (int)h.object;
		c.event_t = f->fx.t_start_ns;
		c.fix_end = f->fx.t_end_ns;
		if (c.T - e->window_ns < t0 || c.T < next_ok[c.target])
			continue;
		if (!camera_at(e->rec, c.T, &cam, &heading))
			continue;
		gi = gaze_sample_near(e->rec, c.T, GAZE_TOL_NS);
		if (gi == SIZE_MAX)
			continue;
		c.gaze_obj = gaze_hit(e->scene, &e->rec->gaze[gi], NULL);
		if (c.gaze_obj == c.target)
			continue;
		rc = visibility_view_at(e->scene, e->rec, c.T, VISIBILITY_MAX_RANGE_M, &v);
		if (rc)
			return rc;
		relate(&c, &cam, heading, scene_box(e->scene, (size_t)c.target)->c);
		if (!isfinite(c.yaw_deg))
			continue;
		c.nrefs = visible_others(e->scene, &v, c.target);
		if (e->metric == METRIC_APPROX && disc_turn_ambiguous(e->dp, c.yaw_deg))
			continue;
		if (e->metric == METRIC_RELATIVE && c.nrefs < 1)
			continue;
		rc = push(e->l, &c);
		if (rc)
			return rc;
		next_ok[c.target] = c.T + THIN_NS;
	}
	return 0;
}

/* Fixation i's span: where its fixation starts, from the recording start. */
static size_t fix_span(const struct enum_ctx *e, const struct gaze_fixation *f)
{
	int64_t d = f->fx.t_start_ns - recording_t0(e->rec);

	return d > 0 ? (size_t)(d / SPAN_NS) : 0;
}

/*
 * Gaze targets: fixations on an object, lazily by span as head turns are
 * (fixations come in time order, so a span's are a run of them).
 */
static int enum_gaze_target(struct enum_ctx *e)
{
	const struct gaze_fixations *fx;
	int64_t *next_ok = NULL;
	size_t *first = NULL, *spans = NULL, nspans, i;
	int rc;

	rc = gaze_fixations_get(e->ctx, &fx);
	if (rc || !fx->n)
		return rc;
	nspans = fix_span(e, &fx->v[fx->n - 1]) + 1;
	next_ok = malloc((e->rec->nobjects + 1) * sizeof(*next_ok));
	first = malloc((nspans + 1) * sizeof(*first));
	spans = span_order(e, nspans, SUBTASK_GAZE_TARGET);
	if (!next_ok || !first || !spans) {
		rc = ENG_ENOMEM;
		goto out;
	}
	/* first[s]: the first fixation of span s or later */
	for (i = 0; i <= nspans; i++)
		first[i] = fx->n;
	for (i = fx->n; i-- > 0;)
		first[fix_span(e, &fx->v[i])] = i;
	for (i = nspans; i-- > 0;)
		if (first[i] > first[i + 1])
			first[i] = first[i + 1];
	for (i = 0; i < nspans && !rc && e->l->n < e->lazy; i++)
		rc = gaze_span(e, fx, first[spans[i]], first[spans[i] + 1], next_ok);
out:
	free(next_ok);
	free(first);
	free(spans);
	return rc;
}

/* ======================= Next interaction ======================= */

static const char *const grasp_verbs[] = { "pick up", "pick", "take", "grab", "lift",
					    "get", NULL };
static const char *const place_verbs[] = { "put down", "put back", "put away", "put", "place",
					    "set down", "set", "hang", "drop", "return", NULL };

/* Whether verb starts with one of the verbs of list (as a whole word). */
static bool verb_is(const char *verb, const char *const *list)
{
	size_t n;
	int i;

	for (i = 0; verb && list[i]; i++) {
		n = strlen(list[i]);
		if (!strncasecmp(verb, list[i], n) && (verb[n] == '\0' || verb[n] == ' '))
			return true;
	}
	return false;
}

/*
 * Whether object obj is in a hand at t: the last action on it that began
 * before t grasps it (and none since puts it down).
 */
static bool held_at(const struct recording *rec, size_t obj, int64_t t)
{
	bool held = false;
	size_t i;

	for (i = 0; i < rec->nactions && rec->actions[i].start_ns < t; i++) {
		const struct rec_action *a = &rec->actions[i];

		if (a->object != (long)obj || !a->verb)
			continue;
		if (verb_is(a->verb, grasp_verbs))
			held = true;
		else if (verb_is(a->verb, place_verbs))
			held = false;
	}
	return held;
}

/*
 * held_at() for many queries: each object's grasping and placing actions
 * in order with the state after each, so that a query is a binary search.
 * Used when the actions are sorted by start (the loaders sort them);
 * held_at() scans them otherwise.
 */
struct held_index {
	size_t *off;   /* per object: its first entry; off[nobjects] = entries */
	size_t *act;   /* entries: action indices, by object then index */
	bool *after;   /* entries: the object is held after that action */
	bool sorted;   /* the actions are sorted by start */
};

static void held_index_free(struct held_index *h)
{
	free(h->off);
	free(h->act);
	free(h->after);
}

static int held_index_make(const struct recording *rec, struct held_index *h)
{
	size_t i, o, *fill = NULL;

	memset(h, 0, sizeof(*h));
	h->sorted = true;
	for (i = 1; i < rec->nactions; i++)
		if (rec->actions[i].start_ns < rec->actions[i - 1].start_ns)
			h->sorted = false;
	h->off = calloc(rec->nobjects + 2, sizeof(*h->off));
	h->act = malloc((rec->nactions + 1) * sizeof(*h->act));
	h->after = malloc((rec->nactions + 1) * sizeof(*h->after));
	fill = calloc(rec->nobjects + 1, sizeof(*fill));
	if (!h->off || !h->act || !h->after || !fill) {
		free(fill);
		held_index_free(h);
		return ENG_ENOMEM;
	}
	for (i = 0; i < rec->nactions; i++) {
		long ob = rec->actions[i].object;

		if (ob >= 0 && (size_t)ob < rec->nobjects && rec->actions[i].verb)
			h->off[ob + 1]++;
	}
	for (o = 0; o < rec->nobjects; o++)
		h->off[o + 1] += h->off[o];
	for (i = 0; i < rec->nactions; i++) {
		const struct rec_action *a = &rec->actions[i];
		size_t at;
		bool held;

		if (a->object < 0 || (size_t)a->object >= rec->nobjects || !a->verb)
			continue;
		at = h->off[a->object] + fill[a->object]++;
		held = at > h->off[a->object] && h->after[at - 1];
		if (verb_is(a->verb, grasp_verbs))
			held = true;
		else if (verb_is(a->verb, place_verbs))
			held = false;
		h->act[at] = i;
		h->after[at] = held;
	}
	free(fill);
	return 0;
}

/* held_at(rec, obj, t) through the index. */
static bool held_fast(const struct recording *rec, const struct held_index *h, size_t obj,
		      int64_t t)
{
	size_t lo, hi;

	if (!h->sorted)
		return held_at(rec, obj, t);
	if (obj >= rec->nobjects)
		return false;
	/* the object's last action starting before t */
	lo = h->off[obj];
	hi = h->off[obj + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rec->actions[h->act[mid]].start_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > h->off[obj] && h->after[lo - 1];
}

static int enum_next_interaction(struct enum_ctx *e)
{
	struct interactions_args a = { INT64_MIN / 2, INT64_MAX / 2, -1, INTERACTIONS_MOVE_M,
				       INTERACTIONS_WINDOW_S };
	struct interactions_result res;
	struct held_index hx;
	int64_t t0 = recording_t0(e->rec), *next_ok = NULL;
	size_t i;
	int rc;

	rc = interactions_find(e->ctx, &a, &res);
	if (rc)
		return rc;
	rc = held_index_make(e->rec, &hx);
	if (rc) {
		interactions_release(&res);
		return rc;
	}
	next_ok = malloc((e->rec->nobjects + 1) * sizeof(*next_ok));
	if (!next_ok) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < e->rec->nobjects; i++)
		next_ok[i] = INT64_MIN;
	for (i = 0; i < res.n; i++) {
		const struct interaction *ev = &res.v[i];
		const struct rec_action *act;
		struct pose cam;
		float heading;
		struct obb b;
		struct clip_cand c;
		bool held;

		/* the verb is the action's label: a motion no action names has none */
		if (ev->action < 0 || structural_box(e->rec, (size_t)ev->obj))
			continue;
		act = &e->rec->actions[ev->action];
		if (!act->verb || !*act->verb)
			continue;
		cand_init(&c);
		/* the interaction begins with its action or its motion, whichever is first */
		c.event_t = act->start_ns < ev->t_ns ? act->start_ns : ev->t_ns;
		c.target = ev->obj;
		c.kind = (int)ev->kind;
		if (ev->has_motion)
			c.move_m = (float)tool__round(hypot(hypot(ev->displacement[0],
								  ev->displacement[1]),
							    ev->displacement[2]), 3);
		c.action = ev->action;
		c.key = (int)c.target;
		c.T = c.event_t - INTERACT_LEAD_NS;
		if (c.T - e->window_ns < t0 || c.T < next_ok[c.target])
			continue;
		/*
		 * An object in hand at T is not picked up again: what comes next
		 * is where it is put, so its place is the object at the end of a
		 * placing action; any other action on a held object is no question.
		 */
		held = held_fast(e->rec, &hx, (size_t)c.target, c.T);
		c.place = verb_is(act->verb, place_verbs);
		if (held != c.place)
			continue;
		c.loc_t = c.place ? act->end_ns : c.event_t;
		if (!camera_at(e->rec, c.T, &cam, &heading))
			continue;
		recording_object_box_at(e->rec, (size_t)c.target, c.loc_t, &b);
		relate(&c, &cam, heading, b.c);
		if (e->metric != METRIC_NONE && !sector_clear(e->dp, c.yaw_deg, c.margin_deg))
			continue;
		if (e->metric == METRIC_APPROX && disc_vertical_ambiguous(e->dp, c.dz_m))
			continue;
		rc = push(e->l, &c);
		if (rc)
			goto out;
		next_ok[c.target] = c.T + THIN_NS;
	}
out:
	free(next_ok);
	held_index_free(&hx);
	interactions_release(&res);
	return rc;
}

/* ======================= Chains ======================= */

/* True when the k actions from first share one goal (the goal the question states). */
static bool same_goal(const struct rec_action *a, const char *g)
{
	return a->goal && !strcmp(a->goal, g);
}

/*
 * The chain question asks which steps remain to finish a goal: the K
 * future actions share one goal, they finish it (the action after them,
 * if any, serves another), and it is under way (the action before them,
 * an observed one, serves it too), so the goal is seen being worked on.
 */
static bool one_goal(const struct recording *rec, size_t first, int k)
{
	const char *g = rec->actions[first].goal;
	size_t end = first + (size_t)k;
	int i;

	if (!g || !*g || first == 0 || !same_goal(&rec->actions[first - 1], g))
		return false;
	for (i = 1; i < k; i++)
		if (!same_goal(&rec->actions[first + (size_t)i], g))
			return false;
	return end >= rec->nactions || !same_goal(&rec->actions[end], g);
}

static int enum_chain_k(struct enum_ctx *e, int k)
{
	struct keysteps_args a = { INT64_MIN / 2, INT64_MAX / 2, (size_t)k,
				   (double)e->window_ns / 1e9, KEYSTEPS_HORIZON_S, KEYSTEPS_LEAD_S };
	struct keysteps_result res;
	struct chain_result *ch = NULL;
	int64_t t0 = recording_t0(e->rec), next_ok = INT64_MIN;
	size_t i;
	int rc;

	rc = keysteps_extract(e->ctx, &a, &res);
	if (rc)
		return rc;
	if (e->metric != METRIC_NONE) {
		ch = malloc(sizeof(*ch));
		if (!ch) {
			keysteps_release(&res);
			return ENG_ENOMEM;
		}
	}
	for (i = 0; i < res.nwindows; i++) {
		const struct keystep_window *w = &res.windows[i];
		struct clip_cand c;

		cand_init(&c);
		c.T = w->T;
		if (w->first_future <= w->first_obs || !one_goal(e->rec, w->first_future, k))
			continue;
		if (c.T - e->window_ns < t0 || c.T < next_ok)
			continue;
		/*
		 * With a metric, a chain whose truth would refuse it as ambiguous
		 * (an edge within the sector margin) is no candidate, like the
		 * other sub-tasks' ambiguous answers: more than half the chain
		 * sessions ran only to be dropped for it.
		 */
		if (ch) {
			rc = chain_build_actions(e->ctx, w->first_future, (size_t)k, ch);
			if (rc == ENG_EINVAL || rc == ENG_ERANGE) {
				rc = 0;
				err_clear();
				continue;
			}
			if (rc)
				break;
			if (chain_ambiguous(ch))
				continue;
		}
		c.k = k;
		c.key = k;
		c.first_obs = w->first_obs;
		c.nobs = w->first_future - w->first_obs;
		c.first_future = w->first_future;
		c.event_t = e->rec->actions[c.first_future].start_ns;
		rc = push(e->l, &c);
		if (rc)
			break;
		next_ok = c.T + THIN_NS;
	}
	free(ch);
	keysteps_release(&res);
	return rc;
}

/*
 * One chain per clip time: of the windows that share a T (K = 3, 4 and 5
 * over the same actions, their truths prefixes of each other), keep one K,
 * chosen by a hash of T so that K is spread evenly and stable.
 */
static int cmp_t_k(const void *pa, const void *pb)
{
	const struct clip_cand *a = pa, *b = pb;

	if (a->T != b->T)
		return a->T < b->T ? -1 : 1;
	return (a->k > b->k) - (a->k < b->k);
}

static void one_chain_per_time(struct clip_list *l)
{
	size_t i = 0, j, out = 0;

	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp_t_k);
	while (i < l->n) {
		size_t n;

		for (j = i; j < l->n && l->v[j].T == l->v[i].T; j++)
			;
		n = j - i;
		l->v[out++] = l->v[i + (size_t)(rng_mix64((uint64_t)l->v[i].T) % n)];
		i = j;
	}
	l->n = out;
}

/* ======================= The cache ======================= */

static int enumerate(struct enum_ctx *e, enum subtask sub, int k)
{
	int rc = 0, kk;

	switch (sub) {
	case SUBTASK_HEAD_TURN: rc = enum_lost_from_view(e, false); break;
	case SUBTASK_NAVIGATE: rc = enum_lost_from_view(e, true); break;
	case SUBTASK_GAZE_TARGET: rc = enum_gaze_target(e); break;
	case SUBTASK_NEXT_INTERACTION: rc = enum_next_interaction(e); break;
	case SUBTASK_CHAIN:
		for (kk = CLIPS_K_MIN; kk <= CLIPS_K_MAX && !rc; kk++)
			if (!k || k == kk)
				rc = enum_chain_k(e, kk);
		if (!rc && !k)
			one_chain_per_time(e->l);
		break;
	default: break;
	}
	if (!rc && e->l->n)
		qsort(e->l->v, e->l->n, sizeof(*e->l->v), cmp_cand);
	return rc;
}

struct make_arg {
	struct tool_ctx *ctx;
	const struct clip_list *proto; /* sub, metric, window, k */
};

static void made_list_free(void *p)
{
	struct clip_list *l = p;

	if (l)
		free(l->v);
	free(l);
}

/* tool_shared_get's maker: one enumeration into a new list (candidates only). */
static int make_list(void *arg, void **data, void (**destroy)(void *data))
{
	const struct make_arg *m = arg;
	struct clip_list *l = calloc(1, sizeof(*l));
	struct enum_ctx e;
	int rc;

	if (!l)
		return ENG_ENOMEM;
	l->sub = m->proto->sub;
	l->metric = m->proto->metric;
	l->window_ns = m->proto->window_ns;
	l->k = m->proto->k;
	memset(&e, 0, sizeof(e));
	e.ctx = m->ctx;
	e.rec = tool_ctx_rec(m->ctx);
	e.dp = tool_ctx_disc(m->ctx);
	e.l = l;
	e.metric = l->metric;
	e.window_ns = l->window_ns;
	/*
	 * Navigation, whose every candidate costs a path plan, gathers what
	 * the caller's sessions can use; head turns and gaze targets keep
	 * LAZY_CANDS, which their key balance draws on (head turns cut to
	 * 992 left the kitchen's head_turn/approx over the audit gate, by the
	 * key prior; gaze targets cut to 1152 took the best blind rule on
	 * docs/answers.md's 40-minute scenes from 21.9% to 26.6% at 5 options
	 * for gaze_target/relative). The chain and next-interaction lists are
	 * enumerated whole.
	 */
	e.lazy = LAZY_CANDS;
	if (l->sub == SUBTASK_NAVIGATE && tool_ctx_list_size(m->ctx))
		e.lazy = tool_ctx_list_size(m->ctx);
	rc = scene_get(m->ctx, &e.scene);
	if (!rc)
		rc = enumerate(&e, l->sub, l->k);
	if (rc) {
		made_list_free(l);
		return rc;
	}
	*data = l;
	*destroy = made_list_free;
	return 0;
}

static int get_list(struct tool_ctx *ctx, enum subtask sub, enum metric metric,
		    int64_t window_ns, int k,
		    struct clip_list **out)
{
	struct clip_cache *c = tool_ctx_slot(ctx, TOOL_SLOT_CLIPS);
	struct clip_list *l, fresh;
	size_t i;
	int rc;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return ENG_ENOMEM;
		rc = tool_ctx_set_slot(ctx, TOOL_SLOT_CLIPS, c, clip_cache_free);
		if (rc) {
			free(c);
			return rc;
		}
	}
	for (i = 0; i < c->n; i++) {
		l = &c->lists[i];
		if (l->sub == sub && l->metric == metric && l->window_ns == window_ns && l->k == k) {
			*out = l;
			return 0;
		}
	}
	memset(&fresh, 0, sizeof(fresh));
	fresh.sub = sub;
	fresh.metric = metric;
	fresh.window_ns = window_ns;
	fresh.k = k;
	{
		struct make_arg m = { ctx, &fresh };
		struct clip_list *made = NULL;
		char key[96];
		bool owned;

		snprintf(key, sizeof(key), "clips/%d/%d/%lld/%d", (int)sub, (int)metric,
			 (long long)window_ns, k);
		rc = tool_shared_get(ctx, key, make_list, &m, (void **)&made, &owned);
		if (rc)
			return rc;
		/* the candidates are read-only from here on: shared, or this list's own */
		fresh.v = made->v;
		fresh.n = made->n;
		fresh.cap = made->cap;
		fresh.borrowed = !owned;
		if (owned)
			free(made);
	}
	if (c->n < MAX_LISTS) {
		l = &c->lists[c->n++];
	} else {
		l = &c->lists[c->next];
		c->next = (c->next + 1) % MAX_LISTS;
		list_release(l);
	}
	*l = fresh;
	*out = l;
	return 0;
}


/* The candidates passing the filters, shuffled by the seed (cached per list). */
/*
 * Stratified order. A plain shuffle hands a group the key values of the
 * recording as they come: one turn class, one verb or one sector can hold
 * most of the keys, and a solver that never sees the video picks that value.
 * The first STRAT_HEAD positions are therefore chosen greedily: each next
 * candidate is the one (among the next STRAT_POOL of the shuffle) whose
 * key-field classes have been picked least so far, ties to the earlier in
 * the shuffle. Up to STRAT_FIELDS fields per sub-task, each hashed into
 * STRAT_BUCKETS classes. The rest keeps the shuffle's order.
 */
#define STRAT_HEAD 512
#define STRAT_POOL 8192
#define STRAT_FIELDS 4
#define STRAT_BUCKETS 64

static unsigned str_class(const char *s)
{
	uint32_t h = 2166136261u;

	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h % STRAT_BUCKETS;
}

static unsigned dir_class(float yaw)
{
	return isfinite(yaw) ? (unsigned)bev_dir_from_yaw(yaw) : BEV_NDIR;
}

/* 15-degree turn bins, -180..180 */
static unsigned yaw_class(float yaw)
{
	if (!isfinite(yaw))
		return 24;
	return (unsigned)fmin(23.0, floor(((double)yaw + 180.0) / 15.0));
}

/* distance bins a factor 1.5 apart from 0.25 m */
static unsigned dist_class(float m)
{
	if (!isfinite(m) || m <= 0.25f)
		return 0;
	return (unsigned)fmin(12.0, 1.0 + floor(log((double)m / 0.25) / log(1.5)));
}

static const char *object_name(const struct recording *rec, long i)
{
	if (i < 0 || (size_t)i >= rec->nobjects)
		return "";
	return rec->objects[i].name ? rec->objects[i].name : rec->objects[i].id;
}

/* The classes of candidate c in each stratification field, in cls; the field count. */
static int strat_classes(const struct recording *rec, const struct clip_list *l,
			 const struct clip_cand *c, unsigned *cls)
{
	const struct rec_action *a;

	switch (l->sub) {
	case SUBTASK_HEAD_TURN:
		cls[0] = yaw_class(c->yaw_deg);
		cls[1] = dir_class(c->yaw_deg);
		cls[2] = str_class(object_name(rec, c->target));
		return 3;
	case SUBTASK_GAZE_TARGET:
		cls[0] = str_class(object_name(rec, c->target));
		cls[1] = dir_class(c->yaw_deg);
		cls[2] = yaw_class(c->yaw_deg);
		return 3;
	case SUBTASK_NAVIGATE:
		cls[0] = dir_class(c->leg_yaw[0]);
		cls[1] = dist_class(c->path_m);
		cls[2] = (unsigned)c->nlegs * BEV_NDIR + dir_class(c->leg_yaw[1]) % BEV_NDIR;
		cls[3] = str_class(object_name(rec, c->target));
		return 4;
	case SUBTASK_NEXT_INTERACTION:
		a = c->action >= 0 && (size_t)c->action < rec->nactions ? &rec->actions[c->action]
									  : NULL;
		cls[0] = str_class(a ? a->verb : NULL);
		cls[1] = dir_class(c->yaw_deg);
		cls[2] = c->dz_m < -0.3f ? 0 : c->dz_m > 0.3f ? 2 : 1;
		cls[3] = str_class(object_name(rec, c->target));
		return 4;
	case SUBTASK_CHAIN:
		cls[0] = (unsigned)c->k;
		cls[1] = str_class(c->first_future < rec->nactions ? rec->actions[c->first_future].goal
								   : NULL);
		return 2;
	default:
		return 0;
	}
}

/* A pool entry of the stratification heap: a lower bound of its cost, and its place. */
struct strat_ent {
	unsigned long cost;
	size_t i; /* position in the shuffle */
};

static bool strat_less(const struct strat_ent *a, const struct strat_ent *b)
{
	return a->cost < b->cost || (a->cost == b->cost && a->i < b->i);
}

static void strat_down(struct strat_ent *h, size_t n, size_t k)
{
	for (;;) {
		size_t m = k, c = 2 * k + 1;
		struct strat_ent t;

		if (c < n && strat_less(&h[c], &h[m]))
			m = c;
		if (c + 1 < n && strat_less(&h[c + 1], &h[m]))
			m = c + 1;
		if (m == k)
			return;
		t = h[k];
		h[k] = h[m];
		h[m] = t;
		k = m;
	}
}

/*
 * The greedy over groups: candidates whose classes agree in every field
 * always cost the same, and of such a group the earliest in the shuffle
 * not yet taken is the one the greedy would take, so each step compares
 * the groups' fronts instead of the candidates (the same picks as the
 * heap below). False, having done nothing, when there are more than
 * STRAT_GROUPS groups.
 */
#define STRAT_GROUPS 1024

static bool strat_by_group(unsigned (*cls)[STRAT_FIELDS], size_t pool, int nf, size_t head,
			   unsigned (*cnt)[STRAT_BUCKETS], const size_t *v, size_t *picked,
			   bool *taken, size_t *np)
{
	uint32_t *key = malloc(pool * sizeof(*key)), gkey[STRAT_GROUPS];
	size_t *gof = malloc(pool * sizeof(*gof)), *mem = malloc(pool * sizeof(*mem));
	size_t off[STRAT_GROUPS + 1], pos[STRAT_GROUPS], ng = 0, i, g, p = 0;
	uint16_t slot[2 * STRAT_GROUPS]; /* open addressing: group + 1, 0 empty */
	bool ok = false;
	int f;

	if (!key || !gof || !mem)
		goto out;
	memset(slot, 0, sizeof(slot));
	for (i = 0; i < pool; i++) {
		size_t at;

		key[i] = 0;
		for (f = 0; f < nf; f++)
			key[i] |= (uint32_t)cls[i][f] << (6 * f);
		at = (size_t)((key[i] * 2654435761u) >> 21) & (2 * STRAT_GROUPS - 1);
		while (slot[at] && gkey[slot[at] - 1] != key[i])
			at = (at + 1) & (2 * STRAT_GROUPS - 1);
		if (!slot[at]) {
			if (ng == STRAT_GROUPS)
				goto out;
			gkey[ng++] = key[i];
			slot[at] = (uint16_t)ng;
		}
		gof[i] = slot[at] - 1u;
	}
	memset(off, 0, sizeof(off));
	for (i = 0; i < pool; i++)
		off[gof[i] + 1]++;
	for (g = 0; g < ng; g++) {
		off[g + 1] += off[g];
		pos[g] = off[g];
	}
	for (i = 0; i < pool; i++)
		mem[pos[gof[i]]++] = i; /* in shuffle order within a group */
	for (g = 0; g < ng; g++)
		pos[g] = off[g];
	while (p < head) {
		unsigned long best_cost = 0;
		size_t best = SIZE_MAX, bg = 0, k;

		for (g = 0; g < ng; g++) {
			unsigned long cost = 0;
			size_t at;

			if (pos[g] == off[g + 1])
				continue;
			at = mem[pos[g]];
			for (f = 0; f < nf; f++)
				cost += cnt[f][cls[at][f]];
			if (best == SIZE_MAX || cost < best_cost || (cost == best_cost && at < best)) {
				best = at;
				best_cost = cost;
				bg = g;
			}
		}
		k = best;
		pos[bg]++;
		picked[p++] = v[k];
		taken[k] = true;
		for (f = 0; f < nf; f++)
			cnt[f][cls[k][f]]++;
	}
	*np = p;
	ok = true;
out:
	free(key);
	free(gof);
	free(mem);
	return ok;
}

/*
 * The greedy: each next position takes the pool candidate of least cost
 * (the picks so far sharing its classes, summed over the fields), ties to
 * the earlier in the shuffle. Costs only grow as picks are made, so a
 * heap of lower bounds gives the same choice as scanning the whole pool
 * each time: the top is recomputed, and taken when its bound still holds
 * (16M operations per order became a few thousand).
 */
static int stratify(const struct recording *rec, const struct clip_list *l, struct clip_order *o)
{
	unsigned (*cnt)[STRAT_BUCKETS] = NULL, (*cls)[STRAT_FIELDS] = NULL;
	size_t pool = o->n < STRAT_POOL ? o->n : STRAT_POOL, head, i, n, p = 0;
	struct strat_ent *h = NULL;
	size_t *picked = NULL;
	bool *taken = NULL;
	int nf = 0, f, rc = 0;

	if (o->n < 3)
		return 0;
	head = STRAT_HEAD < pool - 1 ? STRAT_HEAD : pool - 1;
	cnt = calloc(STRAT_FIELDS, sizeof(*cnt));
	cls = calloc(pool, sizeof(*cls));
	h = malloc(pool * sizeof(*h));
	picked = malloc(o->n * sizeof(*picked));
	taken = calloc(pool, sizeof(*taken));
	if (!cnt || !cls || !h || !picked || !taken) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < pool; i++) {
		nf = strat_classes(rec, l, &l->v[o->v[i]], cls[i]);
		for (f = 0; f < nf; f++)
			cls[i][f] %= STRAT_BUCKETS;
		h[i].cost = 0;
		h[i].i = i;
	}
	n = pool;
	if (strat_by_group(cls, pool, nf, head, cnt, o->v, picked, taken, &p))
		n = 0; /* done: the heap is not needed */
	while (p < head) {
		unsigned long cost = 0;
		size_t k = h[0].i;

		for (f = 0; f < nf; f++)
			cost += cnt[f][cls[k][f]];
		if (cost != h[0].cost) {
			h[0].cost = cost;
			strat_down(h, n, 0);
			continue;
		}
		picked[p++] = o->v[k];
		taken[k] = true;
		for (f = 0; f < nf; f++)
			cnt[f][cls[k][f]]++;
		h[0] = h[--n];
		strat_down(h, n, 0);
	}
	/* the picks first, then the rest of the shuffle in its order */
	for (i = 0; i < o->n; i++)
		if (i >= pool || !taken[i])
			picked[p++] = o->v[i];
	memcpy(o->v, picked, o->n * sizeof(*o->v));
out:
	free(cnt);
	free(cls);
	free(h);
	free(picked);
	free(taken);
	return rc;
}

/* The candidates of l in [t0, t1] (of one target, or all), shuffled by seed, into o->v. */
static void shuffle_into(const struct clip_list *l, uint64_t seed, long target, int64_t t0,
			 int64_t t1, struct clip_order *o)
{
	uint64_t st;
	size_t i, n = 0;

	for (i = 0; i < l->n; i++) {
		const struct clip_cand *c = &l->v[i];

		if ((target >= 0 && c->target != target) || c->T < t0 || c->T > t1)
			continue;
		o->v[n++] = i;
	}
	st = seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(l->sub + 1));
	for (i = n; i > 1; i--) {
		size_t j = (size_t)(rng_next64(&st) % i), tmp = o->v[i - 1];

		o->v[i - 1] = o->v[j];
		o->v[j] = tmp;
	}
	o->n = n;
}

/* A stratified order as the shared store keeps it, with what it was made for. */
struct shared_order {
	enum subtask sub;
	enum metric metric;
	int64_t window_ns;
	int k;
	uint64_t seed;
	int64_t t0, t1;
	size_t *v, n;
};

static void shared_order_free(void *p)
{
	struct shared_order *so = p;

	if (so)
		free(so->v);
	free(so);
}

struct order_make {
	const struct recording *rec;
	const struct clip_list *l;
	const struct shared_order *key;
};

/* tool_shared_get's maker: the stratified order of the key, in a new entry. */
static int order_make_fn(void *arg, void **data, void (**destroy)(void *data))
{
	const struct order_make *m = arg;
	struct shared_order *so = malloc(sizeof(*so));
	struct clip_order o;
	int rc;

	if (!so)
		return ENG_ENOMEM;
	*so = *m->key;
	memset(&o, 0, sizeof(o));
	o.v = malloc((m->l->n ? m->l->n : 1) * sizeof(*o.v));
	if (!o.v) {
		free(so);
		return ENG_ENOMEM;
	}
	shuffle_into(m->l, so->seed, -1, so->t0, so->t1, &o);
	rc = stratify(m->rec, m->l, &o);
	if (rc) {
		free(o.v);
		free(so);
		return rc;
	}
	so->v = o.v;
	so->n = o.n;
	*data = so;
	*destroy = shared_order_free;
	return 0;
}

/*
 * The stratified order of l for seed and [t0, t1] into o, made once per
 * recording (the shared store) and copied: every worker's sessions of a
 * group read the same order, and a stratification costs a heap walk over
 * the list.
 */
static int stratified(struct tool_ctx *ctx, const struct clip_list *l, uint64_t seed,
		      int64_t t0, int64_t t1, struct clip_order *o)
{
	struct shared_order key, *so = NULL;
	struct order_make m;
	char name[64];
	bool owned;
	int rc;

	memset(&key, 0, sizeof(key));
	key.sub = l->sub;
	key.metric = l->metric;
	key.window_ns = l->window_ns;
	key.k = l->k;
	key.seed = seed;
	key.t0 = t0;
	key.t1 = t1;
	snprintf(name, sizeof(name), "clips-order/%016llx",
		 (unsigned long long)hash_fnv1a(HASH_FNV_BASIS, &key,
						offsetof(struct shared_order, v)));
	m.rec = tool_ctx_rec(ctx);
	m.l = l;
	m.key = &key;
	rc = tool_shared_get(ctx, name, order_make_fn, &m, (void **)&so, &owned);
	if (rc)
		return rc;
	if (so->sub != key.sub || so->metric != key.metric || so->window_ns != key.window_ns ||
	    so->k != key.k || so->seed != seed || so->t0 != t0 || so->t1 != t1 || so->n > l->n) {
		/* another order under the same hash: made here instead */
		if (owned)
			shared_order_free(so);
		shuffle_into(l, seed, -1, t0, t1, o);
		return stratify(m.rec, l, o);
	}
	memcpy(o->v, so->v, so->n * sizeof(*o->v));
	o->n = so->n;
	if (owned)
		shared_order_free(so);
	return 0;
}

static int order(struct tool_ctx *ctx, struct clip_list *l, uint64_t seed, long target,
		 int64_t t0, int64_t t1, const struct clip_order **out)
{
	struct clip_order *o;
	unsigned k;
	int rc;

	for (k = 0; k < ORDER_SLOTS; k++) {
		o = &l->ord[k];
		if (o->have && o->seed == seed && o->target == target && o->t0 == t0 && o->t1 == t1) {
			*out = o;
			return 0;
		}
	}
	/*
	 * Stratified orders (no target) and one-target orders (cheap, one per
	 * truth check) take separate halves, so the checks never evict the
	 * orders that cost a stratification.
	 */
	k = (target < 0 ? 0 : ORDER_SLOTS / 2) + l->next_ord[target >= 0];
	l->next_ord[target >= 0] = (l->next_ord[target >= 0] + 1) % (ORDER_SLOTS / 2);
	o = &l->ord[k];
	o->have = false;
	if (!o->v) {
		o->v = malloc((l->n ? l->n : 1) * sizeof(*o->v));
		if (!o->v)
			return ENG_ENOMEM;
	}
	/* one target asked for: its candidates as they come */
	if (target < 0) {
		rc = stratified(ctx, l, seed, t0, t1, o);
		if (rc)
			return rc;
	} else {
		shuffle_into(l, seed, target, t0, t1, o);
	}
	o->have = true;
	o->seed = seed;
	o->target = target;
	o->t0 = t0;
	o->t1 = t1;
	*out = o;
	return 0;
}

/* ======================= Output ======================= */

static cJSON *add_dir_fields(cJSON *o, float yaw, float margin)
{
	if (!isfinite(yaw)) {
		if (!cJSON_AddNullToObject(o, "yaw_deg") || !cJSON_AddNullToObject(o, "direction") ||
		    !cJSON_AddNullToObject(o, "sector_margin_deg"))
			return NULL;
		return o;
	}
	if (!tool__add_num(o, "yaw_deg", yaw, 2) ||
	    !cJSON_AddStringToObject(o, "direction", bev_dir_name(bev_dir_from_yaw(yaw))) ||
	    !tool__add_num(o, "sector_margin_deg", margin, 2))
		return NULL;
	return o;
}

static int add_why(cJSON *why, const struct recording *rec, const struct clip_list *l,
		   const struct clip_cand *c)
{
	int i;

	switch (l->sub) {
	case SUBTASK_HEAD_TURN:
	case SUBTASK_NAVIGATE:
		if (!tool__add_time(why, "last_seen_ns", c->event_t) ||
		    !cJSON_AddStringToObject(why, "at_t", visibility_reason_name(c->reason)) ||
		    !tool__add_num(why, "distance_m", c->distance_m, 3) ||
		    !tool__add_num(why, "bev_distance_m", c->bev_m, 3) ||
		    !add_dir_fields(why, c->yaw_deg, c->margin_deg))
			return ENG_ENOMEM;
		if (l->sub == SUBTASK_HEAD_TURN)
			return 0;
		if (!tool__add_num(why, "path_length_m", c->path_m, 3) ||
		    !cJSON_AddNumberToObject(why, "legs", c->nlegs) ||
		    !cJSON_AddBoolToObject(why, "start_moved", c->start_moved))
			return ENG_ENOMEM;
		for (i = 0; i < 2; i++) {
			cJSON *leg = cJSON_AddObjectToObject(why, i ? "second_leg" : "first_leg");

			if (!leg || !add_dir_fields(leg, c->leg_yaw[i], c->leg_margin[i]))
				return ENG_ENOMEM;
		}
		return 0;
	case SUBTASK_GAZE_TARGET:
		if (!tool__add_time(why, "fixation_start_ns", c->event_t) ||
		    !tool__add_time(why, "fixation_end_ns", c->fix_end) ||
		    !tool__add_num(why, "fixation_ms", (double)(c->fix_end - c->event_t) / 1e6, 1) ||
		    !tool__add_object_ref(why, "gaze_object_at_t", rec, c->gaze_obj) ||
		    !tool__add_num(why, "distance_m", c->distance_m, 3) ||
		    !add_dir_fields(why, c->yaw_deg, c->margin_deg) ||
		    !cJSON_AddNumberToObject(why, "references_visible", c->nrefs))
			return ENG_ENOMEM;
		return 0;
	case SUBTASK_NEXT_INTERACTION: {
		const struct rec_action *a = c->action >= 0 ? &rec->actions[c->action] : NULL;

		if (!cJSON_AddStringToObject(why, "kind", interaction_kind_name((enum interaction_kind)c->kind)) ||
		    !tool__add_str(why, "verb", a ? a->verb : NULL) ||
		    !tool__add_str(why, "hand", a ? tool__hand_name(a->hand) : NULL) ||
		    !(c->action >= 0 ? cJSON_AddNumberToObject(why, "action_index", (double)c->action)
				     : cJSON_AddNullToObject(why, "action_index")) ||
		    !tool__add_num(why, "motion_m", c->move_m, 3) ||
		    !cJSON_AddBoolToObject(why, "place", c->place) ||
		    !tool__add_time(why, "location_t_ns", c->loc_t) ||
		    !tool__add_num(why, "distance_m", c->distance_m, 3) ||
		    !tool__add_vec3(why, "local_m", c->local, 3) ||
		    !tool__add_num(why, "dz_m", c->dz_m, 3) ||
		    !add_dir_fields(why, c->yaw_deg, c->margin_deg))
			return ENG_ENOMEM;
		return 0;
	}
	case SUBTASK_CHAIN: {
		cJSON *obs, *fut;
		size_t j;

		obs = cJSON_AddArrayToObject(why, "observed");
		fut = cJSON_AddArrayToObject(why, "future");
		if (!cJSON_AddNumberToObject(why, "k", c->k) || !obs || !fut ||
		    !tool__add_time(why, "first_observed_ns", rec->actions[c->first_obs].start_ns) ||
		    !tool__add_str(why, "goal", rec->actions[c->first_future].goal))
			return ENG_ENOMEM;
		for (j = 0; j < c->nobs; j++) {
			cJSON *v = cJSON_CreateNumber((double)(c->first_obs + j));

			if (!v)
				return ENG_ENOMEM;
			cJSON_AddItemToArray(obs, v);
		}
		for (j = 0; j < (size_t)c->k; j++) {
			cJSON *v = cJSON_CreateNumber((double)(c->first_future + j));

			if (!v)
				return ENG_ENOMEM;
			cJSON_AddItemToArray(fut, v);
		}
		return 0;
	}
	default:
		return 0;
	}
}

const char *clips_event_name(enum subtask sub, const struct clip_cand *c)
{
	switch (sub) {
	case SUBTASK_HEAD_TURN:
	case SUBTASK_NAVIGATE: return "last_seen";
	case SUBTASK_GAZE_TARGET: return "fixation";
	case SUBTASK_NEXT_INTERACTION: return interaction_kind_name((enum interaction_kind)c->kind);
	default: return "future_actions";
	}
}

int clips_cand_json(struct tool_ctx *ctx, const struct clips_result *r,
		    const struct clip_cand *c, size_t rank, int frames, cJSON **out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct clip_list *l = r->list;
	cJSON *o = cJSON_CreateObject(), *w, *f, *why;
	int64_t start = c->T - l->window_ns;
	int i;

	if (!o)
		return ENG_ENOMEM;
	*out = o;
	if (!cJSON_AddNumberToObject(o, "index", (double)rank) || !tool__add_time(o, "t_ns", c->T))
		return ENG_ENOMEM;
	w = cJSON_AddObjectToObject(o, "window");
	if (!w || !tool__add_time(w, "start_ns", start) || !tool__add_time(w, "end_ns", c->T))
		return ENG_ENOMEM;
	f = cJSON_AddArrayToObject(o, "frames_ns");
	if (!f)
		return ENG_ENOMEM;
	for (i = 0; i < frames; i++) {
		/* frame i of N, uniformly over [T - W, T], the last one at T */
		int64_t ti = start + (int64_t)llround((double)l->window_ns * i / (frames - 1));
		cJSON *v = tool__time_value(ti);

		if (!v)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(f, v);
	}
	if (!tool__add_object_ref(o, "target", rec, c->target) ||
	    !cJSON_AddStringToObject(o, "event", clips_event_name(l->sub, c)) ||
	    !tool__add_time(o, "event_t_ns", c->event_t))
		return ENG_ENOMEM;
	why = cJSON_AddObjectToObject(o, "why");
	if (!why)
		return ENG_ENOMEM;
	return add_why(why, rec, l, c);
}

int clips_sample(struct tool_ctx *ctx, const struct clips_args *a, struct clips_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	int64_t window_ns = (int64_t)llround(a->window_s * 1e9);
	struct clip_list *l;
	const struct clip_order *o = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	out->subtask = a->subtask;
	out->metric = a->metric;
	out->seed = a->seed;
	out->window_ns = window_ns;
	if ((unsigned)a->subtask >= SUBTASK_COUNT)
		return tool__reject(ctx, "/subtask", "unknown sub-task");
	if (a->metric != METRIC_NONE && !subtask_has_metric(a->subtask, a->metric))
		return tool__reject(ctx, "/metric", "%s has only the relative metric",
				    subtask_name(a->subtask));
	if (a->subtask != SUBTASK_CHAIN && a->k)
		return tool__reject(ctx, "/k", "applies only to chain.actions");
	if (a->target >= 0) {
		if (a->subtask == SUBTASK_CHAIN)
			return tool__reject(ctx, "/target", "chain.actions candidates have no target object");
		if ((size_t)a->target >= rec->nobjects)
			return tool__reject(ctx, "/target", "no object with index %ld", a->target);
	}
	if (a->t1 < a->t0)
		return tool__reject(ctx, "/t1", "must be >= t0 (%" PRId64 "), got %" PRId64, a->t0,
				    a->t1);
	rc = get_list(ctx, a->subtask, a->metric, window_ns, a->k, &l);
	if (!rc)
		rc = order(ctx, l, a->seed, a->target, a->t0, a->t1, &o);
	if (rc)
		return rc;
	if (o->n && a->index >= o->n)
		return tool__reject(ctx, "/index", "must be below the candidate count %zu, got %zu",
				    o->n, a->index);
	out->list = l;
	out->order = o->v;
	out->total = o->n;
	out->index = a->index;
	out->n = a->index < o->n ? o->n - a->index : 0;
	if (out->n > a->count)
		out->n = a->count;
	return 0;
}

const struct clip_cand *clips_get(const struct clips_result *r, size_t i)
{
	const struct clip_list *l = r->list;

	return &l->v[r->order[r->index + i]];
}

int clips_write(struct tool_ctx *ctx, const struct clips_result *r, int frames, cJSON *result)
{
	cJSON *arr;
	size_t i;
	int rc;

	if (!cJSON_AddStringToObject(result, "subtask", subtask_name(r->subtask)) ||
	    !tool__add_str(result, "metric", r->metric == METRIC_NONE ? NULL : metric_name(r->metric)) ||
	    !cJSON_AddNumberToObject(result, "seed", (double)r->seed) ||
	    !cJSON_AddNumberToObject(result, "total", (double)r->total) ||
	    !cJSON_AddNumberToObject(result, "index", (double)r->index))
		return ENG_ENOMEM;
	arr = cJSON_AddArrayToObject(result, "candidates");
	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; i < r->n; i++) {
		cJSON *o = NULL;

		rc = clips_cand_json(ctx, r, clips_get(r, i), r->index + i, frames, &o);
		if (o)
			cJSON_AddItemToArray(arr, o);
		if (rc)
			return rc;
	}
	return 0;
}

int tool_sample_clips(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	const char *ms = tool__str(args, "metric");
	int frames = (int)tool__num(args, "frames", CLIPS_FRAMES);
	struct clips_args a;
	struct clips_result r;
	int rc;

	a.subtask = subtask_from_name(tool__str(args, "subtask"));
	a.metric = ms ? metric_from_name(ms) : METRIC_NONE;
	a.index = (size_t)tool__num(args, "index", 0);
	a.count = (size_t)tool__num(args, "count", 1);
	a.seed = (uint64_t)tool__num(args, "seed", 0);
	a.window_s = tool__num(args, "window_s", CLIPS_WINDOW_S);
	a.k = (int)tool__num(args, "k", 0);
	a.t0 = tool__time(args, "t0", INT64_MIN);
	a.t1 = tool__time(args, "t1", INT64_MAX);
	a.target = -1;
	if ((unsigned)a.subtask >= SUBTASK_COUNT)
		return tool__reject(ctx, "/subtask", "unknown sub-task");
	if (a.subtask == SUBTASK_CHAIN && a.metric == METRIC_APPROX)
		return tool__reject(ctx, "/metric", "chain.actions has only the relative metric");
	if (a.subtask != SUBTASK_CHAIN && tool__has(args, "k")) {
		a.k = 0;
		if (!tool__ignored(result, "k", "applies only to chain.actions"))
			return ENG_ENOMEM;
	}
	if (tool__has(args, "target") && a.subtask == SUBTASK_CHAIN) {
		if (!tool__ignored(result, "target", "chain.actions candidates have no target object"))
			return ENG_ENOMEM;
	} else if (tool__has(args, "target")) {
		rc = tool__object_arg(ctx, args, "target", &a.target);
		if (rc)
			return rc;
	}
	rc = clips_sample(ctx, &a, &r);
	if (rc)
		return rc;
	return clips_write(ctx, &r, frames, result);
}

void clips_explain(struct tool_ctx *ctx, enum subtask st, enum metric m, double window_s,
		   char *out, size_t size)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	double span = rec ? (double)(recording_t1(rec) - recording_t0(rec)) / 1e9 : 0;
	const char *after = m == METRIC_NONE ? "" : " (after the ambiguity margins)";
	size_t i, n = 0;

	if (!size)
		return;
	if (!rec) {
		snprintf(out, size, "no recording");
		return;
	}
	if (span < window_s) {
		snprintf(out, size, "recording spans %.2f s; clips need %.0f s", span, window_s);
		return;
	}
	switch (st) {
	case SUBTASK_HEAD_TURN:
	case SUBTASK_NAVIGATE:
		if (!rec->nobjects) {
			snprintf(out, size, "the recording has no objects");
			return;
		}
		snprintf(out, size, "no object leaves the view within %.0f s of being seen%s%s",
			 window_s, st == SUBTASK_NAVIGATE ? " at 1.5 m or more and reachable" : "",
			 after);
		return;
	case SUBTASK_GAZE_TARGET: {
		const struct gaze_fixations *fx;
		struct scene *s;

		if (!rec->ngaze) {
			snprintf(out, size, "the recording has no gaze stream");
			return;
		}
		if (!gaze_fixations_get(ctx, &fx) && !scene_get(ctx, &s))
			for (i = 0; i < fx->n; i++) {
				struct gaze_fixation_hit h;

				n += fx->v[i].fx.duration_ns >= FIX_MIN_NS &&
				     !gaze_fixation_object(s, fx, i, &h) && h.object >= 0;
			}
		if (!n)
			snprintf(out, size, "no fixation of 300 ms or more lands on an object (%zu gaze samples)",
				 rec->ngaze);
		else
			snprintf(out, size, "%zu fixations land on objects, none with a clear clip before it%s",
				 n, after);
		return;
	}
	case SUBTASK_NEXT_INTERACTION:
		for (i = 0; i < rec->nobjects; i++)
			n += rec->objects[i].motion == REC_DYNAMIC && rec->objects[i].pose_count > 1;
		for (i = 0; i < rec->nactions; i++)
			n += rec->actions[i].object >= 0;
		if (!n)
			snprintf(out, size, "no object moves and no action names an object");
		else
			snprintf(out, size, "no interaction has %.0f s of recording before it%s", window_s,
				 after);
		return;
	case SUBTASK_CHAIN:
		if (rec->nactions < CLIPS_K_MIN + 1)
			snprintf(out, size, "the recording has %zu actions; chains need %d or more",
				 rec->nactions, CLIPS_K_MIN + 1);
		else
			snprintf(out, size, "no window has an observed action and %d to %d actions after it",
				 CLIPS_K_MIN, CLIPS_K_MAX);
		return;
	default:
		snprintf(out, size, "unknown sub-task");
	}
}
