/* SPDX-License-Identifier: MIT */
/* The per-context scene cache: object boxes at a time and the ray casts over them. */
#include "scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "bvh.h"
#include "err.h"
#include "registry.h"

enum group_kind { GROUP_SOLID = 0, GROUP_ENCLOSURE, GROUP_DYNAMIC, GROUP_COUNT };

/* One group of boxes; slot j of the group is object obj[j]. */
struct group {
	size_t n;
	size_t *obj;       /* object index of each member, increasing */
	struct obb *box;   /* member boxes at the current time */
	struct pose *pose; /* dynamic group: the poses box[] was placed from */
	struct bvh *bvh;   /* over box[], NULL for enclosures */
};

struct scene {
	const struct recording *rec; /* borrowed */
	size_t n;                    /* objects */
	struct obb *boxes;           /* every box at the current time */
	uint8_t *kind;               /* enum group_kind of each object */
	int32_t *slot;               /* index of each object in its group */
	struct group g[GROUP_COUNT];
	struct obb *scratch;         /* new dynamic boxes during scene_at */
	struct pose *scratch_pose;   /* and their poses */
	int64_t t;                   /* current time */
};

/* Direction of point queries: any unit vector works, a diagonal avoids parallel slabs. */
static const float point_dir[3] = { 0.57735026f, 0.57735026f, 0.57735026f };

static void copy3(const float *a, float *b)
{
	b[0] = a[0];
	b[1] = a[1];
	b[2] = a[2];
}

/*
 * "Box b holds point p": the ray test at distance 0, the same operation
 * the BVH point queries below make, so the fast and slow paths agree
 * exactly (the boundary counts as inside).
 */
static bool box_holds(const struct obb *b, const vec3 p)
{
	struct ray r = { { 0 }, { 0 } };
	float t;

	copy3(p, r.o);
	copy3(point_dir, r.d);
	return ray_obb(&r, b, 0.0f, &t);
}

/* True when a member of g other than slot `ignore` (-1: none) holds p. */
static bool group_holds(const struct group *g, const vec3 p, int32_t ignore)
{
	size_t j;

	if (g->bvh) {
		struct ray r = { { 0 }, { 0 } };

		copy3(p, r.o);
		copy3(point_dir, r.d);
		return bvh_occluded(g->bvh, &r, 0.0f, ignore);
	}
	for (j = 0; j < g->n; j++)
		if ((int32_t)j != ignore && box_holds(&g->box[j], p))
			return true;
	return false;
}

static bool box_finite(const struct obb *b)
{
	int i, k;

	for (i = 0; i < 3; i++) {
		if (!isfinite(b->c[i]) || !isfinite(b->h[i]))
			return false;
		for (k = 0; k < 3; k++)
			if (!isfinite(b->ax[i][k]))
				return false;
	}
	return true;
}

/* ======================= Construction ======================= */

static void group_release(struct group *g)
{
	free(g->obj);
	free(g->box);
	free(g->pose);
	bvh_free(g->bvh);
	memset(g, 0, sizeof(*g));
}

void scene_free(struct scene *s)
{
	int k;

	if (!s)
		return;
	for (k = 0; k < GROUP_COUNT; k++)
		group_release(&s->g[k]);
	free(s->boxes);
	free(s->kind);
	free(s->slot);
	free(s->scratch);
	free(s->scratch_pose);
	free(s);
}

/*
 * Marks as enclosures the static boxes that hold a camera position on
 * the SCENE_STEP_NS grid or the centre of another object. A BVH over all
 * static boxes answers "does any box hold this point" first; only points
 * that some box holds pay for a loop over the boxes.
 */
static int find_enclosures(struct scene *s, const size_t *stat, size_t ns)
{
	const struct recording *rec = s->rec;
	struct obb *sb = NULL;
	struct bvh *b = NULL;
	int32_t *self = NULL;
	int64_t t0 = recording_t0(rec), t1 = recording_t1(rec), t;
	size_t i, j;
	int rc = 0;

	if (!ns)
		return 0;
	sb = malloc(ns * sizeof(*sb));
	self = malloc(s->n * sizeof(*self));
	if (!sb || !self) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < s->n; i++)
		self[i] = -1;
	for (j = 0; j < ns; j++) {
		sb[j] = s->boxes[stat[j]];
		self[stat[j]] = (int32_t)j;
	}
	rc = bvh_build(sb, ns, &b);
	if (rc)
		goto out;
	for (t = t0;; t += SCENE_STEP_NS) {
		struct pose cam;
		struct ray r = { { 0 }, { 0 } };

		if (t > t1)
			t = t1;
		if (!recording_camera_at(rec, t, &cam)) {
			glm_vec3_copy(cam.t, r.o);
			copy3(point_dir, r.d);
			if (bvh_occluded(b, &r, 0.0f, -1))
				for (j = 0; j < ns; j++)
					if (box_holds(&sb[j], cam.t))
						s->kind[stat[j]] = GROUP_ENCLOSURE;
		}
		if (t >= t1)
			break;
	}
	for (i = 0; i < s->n; i++) {
		struct ray r = { { 0 }, { 0 } };

		glm_vec3_copy(s->boxes[i].c, r.o);
		copy3(point_dir, r.d);
		if (!bvh_occluded(b, &r, 0.0f, self[i]))
			continue;
		for (j = 0; j < ns; j++)
			if (stat[j] != i && box_holds(&sb[j], s->boxes[i].c))
				s->kind[stat[j]] = GROUP_ENCLOSURE;
	}
out:
	bvh_free(b);
	free(sb);
	free(self);
	return rc;
}

static int group_fill(struct scene *s, int k)
{
	struct group *g = &s->g[k];
	size_t i, m = 0;

	for (i = 0; i < s->n; i++)
		if (s->kind[i] == k)
			m++;
	g->n = m;
	g->obj = malloc((m ? m : 1) * sizeof(*g->obj));
	g->box = malloc((m ? m : 1) * sizeof(*g->box));
	g->pose = malloc((m ? m : 1) * sizeof(*g->pose));
	if (!g->obj || !g->box || !g->pose)
		return ENG_ENOMEM;
	m = 0;
	for (i = 0; i < s->n; i++) {
		if (s->kind[i] != k)
			continue;
		g->obj[m] = i;
		g->box[m] = s->boxes[i];
		/* the pose scene_make placed boxes[i] from, at the recording start */
		recording_object_pose_at(s->rec, i, s->t, &g->pose[m]);
		s->slot[i] = (int32_t)m;
		m++;
	}
	if (k == GROUP_ENCLOSURE)
		return 0;
	return bvh_build(g->box, g->n, &g->bvh);
}

/*
 * A scene with its boxes at the recording start. With `kinds` (a scene
 * of the same recording made them), its groups are those; else each box
 * is classified here, which scans the camera path of the whole recording
 * (find_enclosures).
 */
static int scene_make(const struct recording *rec, const unsigned char *kinds,
		      struct scene **out)
{
	struct scene *s = calloc(1, sizeof(*s));
	size_t *stat = NULL, ns = 0, i;
	int64_t t0 = recording_t0(rec);
	int rc = 0, k;

	if (!s)
		return ENG_ENOMEM;
	s->rec = rec;
	s->n = rec->nobjects;
	s->t = t0;
	s->boxes = malloc((s->n ? s->n : 1) * sizeof(*s->boxes));
	s->scratch = malloc((s->n ? s->n : 1) * sizeof(*s->scratch));
	s->scratch_pose = malloc((s->n ? s->n : 1) * sizeof(*s->scratch_pose));
	s->kind = calloc(s->n ? s->n : 1, 1);
	s->slot = calloc(s->n ? s->n : 1, sizeof(*s->slot));
	stat = malloc((s->n ? s->n : 1) * sizeof(*stat));
	if (!s->boxes || !s->scratch || !s->scratch_pose || !s->kind || !s->slot || !stat) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < s->n; i++) {
		recording_object_box_at(rec, i, t0, &s->boxes[i]);
		if (!box_finite(&s->boxes[i])) {
			rc = err_set(ENG_EINVAL, "object '%s': its box is not finite",
				     rec->objects[i].id);
			goto out;
		}
		if (kinds) {
			s->kind[i] = kinds[i];
		} else if (rec->objects[i].motion == REC_DYNAMIC && rec->objects[i].pose_count) {
			s->kind[i] = GROUP_DYNAMIC;
		} else {
			s->kind[i] = GROUP_SOLID;
			stat[ns++] = i;
		}
	}
	if (!kinds)
		rc = find_enclosures(s, stat, ns);
	for (k = 0; !rc && k < GROUP_COUNT; k++)
		rc = group_fill(s, k);
out:
	free(stat);
	if (rc) {
		scene_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int scene_new(const struct recording *rec, struct scene **out)
{
	return scene_make(rec, NULL, out);
}

static void scene_destroy(void *p)
{
	scene_free(p);
}

/* tool_shared_get's maker: a scene of the recording, whose groups the others copy. */
static int proto_make(void *arg, void **data, void (**destroy)(void *data))
{
	struct scene *s;
	int rc = scene_new(arg, &s);

	if (rc)
		return rc;
	*data = s;
	*destroy = scene_destroy;
	return 0;
}

/*
 * Contexts that share a store classify the boxes once per recording: the
 * first scene made (the store keeps it, untouched, as the prototype) scans
 * the camera path of the whole recording for enclosures, the others copy
 * its groups. Without a store the scene made is the context's own.
 */
int scene_get(struct tool_ctx *ctx, struct scene **out)
{
	struct scene *s = tool_ctx_slot(ctx, TOOL_SLOT_SCENE), *proto = NULL;
	bool owned = false;
	int rc;

	if (s) {
		*out = s;
		return 0;
	}
	rc = tool_shared_get(ctx, "scene-prototype", proto_make,
			     (void *)(uintptr_t)tool_ctx_rec(ctx), (void **)&proto, &owned);
	if (rc)
		return rc;
	if (owned)
		s = proto;
	else
		rc = scene_make(tool_ctx_rec(ctx), proto->kind, &s);
	if (rc)
		return rc;
	rc = tool_ctx_set_slot(ctx, TOOL_SLOT_SCENE, s, scene_destroy);
	if (rc) {
		scene_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* ======================= Time ======================= */

int scene_at(struct scene *s, int64_t t)
{
	struct group *g = &s->g[GROUP_DYNAMIC];
	bool moved = false;
	size_t j;

	if (t == s->t)
		return 0;
	for (j = 0; j < g->n; j++) {
		const struct rec_object *o = &s->rec->objects[g->obj[j]];
		struct pose *p = &s->scratch_pose[j];

		recording_object_pose_at(s->rec, g->obj[j], t, p);
		/* the same pose places the same box (most objects rest most of the time) */
		if (pose_same(p, &g->pose[j])) {
			s->scratch[j] = g->box[j];
			continue;
		}
		obb_from_local(p, o->local_c, o->half, &s->scratch[j]);
		if (!box_finite(&s->scratch[j]))
			return err_set(ENG_EINVAL, "object '%s': its box is not finite at %lld ns",
				       o->id, (long long)t);
		/* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): floats only; -0 != 0 just rebuilds */
		if (!moved && memcmp(&s->scratch[j], &g->box[j], sizeof(struct obb)))
			moved = true;
	}
	s->t = t;
	if (!moved)
		return 0;
	for (j = 0; j < g->n; j++) {
		g->box[j] = s->scratch[j];
		g->pose[j] = s->scratch_pose[j];
		s->boxes[g->obj[j]] = s->scratch[j];
	}
	/* a refit keeps the answers exact; only its speed depends on the motion */
	return bvh_refit(g->bvh, g->box);
}

void scene_box_at(const struct scene *s, size_t i, int64_t t, struct obb *out)
{
	/* scene_at takes a dynamic object's box from the recording; the others never move */
	if (s->kind[i] == GROUP_DYNAMIC && t != s->t)
		recording_object_box_at(s->rec, i, t, out);
	else
		*out = s->boxes[i];
}

int64_t scene_time(const struct scene *s)
{
	return s->t;
}

size_t scene_count(const struct scene *s)
{
	return s->n;
}

const struct obb *scene_box(const struct scene *s, size_t i)
{
	return &s->boxes[i];
}

const struct obb *scene_boxes(const struct scene *s)
{
	return s->boxes;
}

bool scene_is_enclosure(const struct scene *s, size_t i)
{
	return i < s->n && s->kind[i] == GROUP_ENCLOSURE;
}

/* ======================= Queries ======================= */

/* Keeps the nearer of two hits, the lower object index on a tie. */
static void consider(long obj, float t, long *best, float *best_t)
{
	if (*best < 0 || t < *best_t || (t == *best_t && obj < *best)) {
		*best = obj;
		*best_t = t;
	}
}

static void group_cast(const struct group *g, const struct ray *r, float tmax,
		       long *best, float *best_t)
{
	float lim = *best >= 0 ? *best_t : tmax, t;
	size_t j;

	if (!g->n)
		return;
	if (g->bvh && !group_holds(g, r->o, -1)) {
		struct bvh_hit h;

		if (bvh_cast(g->bvh, r, lim, &h))
			consider((long)g->obj[h.box], h.t, best, best_t);
		return;
	}
	for (j = 0; j < g->n; j++) {
		if (box_holds(&g->box[j], r->o))
			continue;
		if (ray_obb(r, &g->box[j], lim, &t))
			consider((long)g->obj[j], t, best, best_t);
	}
}

bool scene_cast(const struct scene *s, const struct ray *r, float tmax,
		long *obj, float *t)
{
	long best = -1;
	float best_t = 0;
	int k;

	if (tmax >= 0)
		for (k = 0; k < GROUP_COUNT; k++)
			group_cast(&s->g[k], r, tmax, &best, &best_t);
	if (obj)
		*obj = best;
	if (t)
		*t = best >= 0 ? best_t : 0.0f;
	return best >= 0;
}

static bool group_occluded(const struct group *g, const struct ray *r, float tmax,
			   int32_t tslot, const vec3 p)
{
	size_t j;
	float t;

	if (!g->n)
		return false;
	if (g->bvh && !group_holds(g, r->o, -1) && !group_holds(g, p, tslot))
		return bvh_occluded(g->bvh, r, tmax, tslot);
	for (j = 0; j < g->n; j++) {
		if ((int32_t)j == tslot || box_holds(&g->box[j], r->o) ||
		    box_holds(&g->box[j], p))
			continue;
		if (ray_obb(r, &g->box[j], tmax, &t))
			return true;
	}
	return false;
}

/* The nearest occluder by a loop over every box (for reports, not for speed). */
static long nearest_occluder(const struct scene *s, const struct ray *r,
			     float tmax, long target, const vec3 p)
{
	long best = -1;
	float best_t = 0, t;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct obb *b = &s->boxes[i];

		if ((long)i == target || box_holds(b, r->o) || box_holds(b, p))
			continue;
		if (ray_obb(r, b, tmax, &t))
			consider((long)i, t, &best, &best_t);
	}
	return best;
}

bool scene_occluded(const struct scene *s, const struct ray *r, float tmax,
		    long target, const vec3 p, long *by)
{
	bool occ = false;
	int k;

	if (by)
		*by = -1;
	if (!(tmax >= 0))
		return false;
	for (k = 0; k < GROUP_COUNT && !occ; k++) {
		int32_t tslot = -1;

		if (target >= 0 && (size_t)target < s->n && s->kind[target] == k)
			tslot = s->slot[target];
		occ = group_occluded(&s->g[k], r, tmax, tslot, p);
	}
	if (occ && by)
		*by = nearest_occluder(s, r, tmax, target, p);
	return occ;
}
