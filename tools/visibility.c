/* SPDX-License-Identifier: MIT */
/*
 * The visibility predicate, the 10 Hz visibility timeline, and the
 * visible_objects tool (every object the camera sees at t, with its
 * bearing, distance and 8-way label).
 */
#include "visibility.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "bev.h"
#include "err.h"
#include "registry.h"


#define DEFAULT_LIMIT 50

/* ======================= The predicate ======================= */

int visibility_view_at(struct scene *s, const struct recording *rec, int64_t t,
		       float max_range_m, struct visibility_view *out)
{
	static const vec3 unit[3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
	int rc, i;

	rc = recording_camera_at(rec, t, &out->T_world_cam);
	if (rc)
		return rc;
	rc = scene_at(s, t);
	if (rc)
		return rc;
	for (i = 0; i < 3; i++)
		pose_rotate(&out->T_world_cam, unit[i], out->axes[i]);
	out->t_ns = t;
	out->cam = rec->camera;
	out->max_range_m = max_range_m;
	return 0;
}

/* Pixel of a camera-frame point with z > 0; false when outside the image. */
static bool project(const struct rec_camera *c, const vec3 p, float *u, float *v)
{
	if (c->model == REC_CAM_FISHEYE) {
		double rho = hypot((double)p[0], (double)p[1]);
		double theta = atan2(rho, (double)p[2]);

		if (rho > 0) {
			*u = (float)((double)c->cx + (double)c->fx * theta * (double)p[0] / rho);
			*v = (float)((double)c->cy + (double)c->fy * theta * (double)p[1] / rho);
		} else {
			*u = c->cx;
			*v = c->cy;
		}
		if (theta > 0.5 * (double)c->fov_deg * POSE_DEG2RAD)
			return false;
	} else {
		*u = c->fx * p[0] / p[2] + c->cx;
		*v = c->fy * p[1] / p[2] + c->cy;
	}
	return *u >= 0 && *u < (float)c->width && *v >= 0 && *v < (float)c->height;
}

enum visibility_reason visibility_test(const struct scene *s,
				       const struct visibility_view *v, size_t obj,
				       bool want_occluder, struct visibility_info *out)
{
	struct visibility_info tmp = { 0 };
	struct visibility_info *info = out ? out : &tmp;
	const float *c = scene_box(s, obj)->c;
	const float *o = v->T_world_cam.t;
	vec3 d;
	struct ray r;
	float dist;
	int i;

	info->occluder = -1;
	info->u = info->v = 0;
	for (i = 0; i < 3; i++)
		d[i] = c[i] - o[i];
	for (i = 0; i < 3; i++)
		info->p_cam[i] = d[0] * v->axes[i][0] + d[1] * v->axes[i][1] +
				 d[2] * v->axes[i][2];
	dist = glm_vec3_norm(d);
	info->distance_m = dist;
	if (!(info->p_cam[2] > 0))
		return info->reason = VIS_BEHIND;
	if (!(dist <= v->max_range_m))
		return info->reason = VIS_OUT_OF_RANGE;
	if (!project(&v->cam, info->p_cam, &info->u, &info->v))
		return info->reason = VIS_OUTSIDE_IMAGE;
	for (i = 0; i < 3; i++) {
		r.o[i] = o[i];
		r.d[i] = d[i] / dist;
	}
	if (scene_occluded(s, &r, dist, (long)obj, c, want_occluder ? &info->occluder : NULL))
		return info->reason = VIS_OCCLUDED;
	return info->reason = VIS_VISIBLE;
}

enum visibility_reason visibility_precheck(const struct scene *s, const struct recording *rec,
					   int64_t t, float max_range_m, size_t obj, int *rc)
{
	static const vec3 unit[3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
	struct pose cam;
	struct obb b;
	vec3 axes[3], d, p;
	float dist, u, v;
	int i;

	*rc = recording_camera_at(rec, t, &cam);
	if (*rc)
		return VIS_VISIBLE;
	scene_box_at(s, obj, t, &b);
	for (i = 0; i < 3; i++)
		pose_rotate(&cam, unit[i], axes[i]);
	for (i = 0; i < 3; i++)
		d[i] = b.c[i] - cam.t[i];
	for (i = 0; i < 3; i++)
		p[i] = d[0] * axes[i][0] + d[1] * axes[i][1] + d[2] * axes[i][2];
	dist = glm_vec3_norm(d);
	if (!(p[2] > 0))
		return VIS_BEHIND;
	if (!(dist <= max_range_m))
		return VIS_OUT_OF_RANGE;
	if (!project(&rec->camera, p, &u, &v))
		return VIS_OUTSIDE_IMAGE;
	return VIS_VISIBLE;
}

const char *visibility_reason_name(enum visibility_reason r)
{
	switch (r) {
	case VIS_VISIBLE: return "visible";
	case VIS_BEHIND: return "behind";
	case VIS_OUT_OF_RANGE: return "out_of_range";
	case VIS_OUTSIDE_IMAGE: return "outside_image";
	case VIS_OCCLUDED: return "occluded";
	default: return "?";
	}
}

/* ======================= The timeline ======================= */

static void timeline_free(void *p)
{
	struct visibility_timeline *tl = p;

	if (!tl)
		return;
	free(tl->bits);
	free(tl->done);
	pthread_mutex_destroy(&tl->lock);
	pthread_cond_destroy(&tl->cond);
	free(tl);
}

/* An empty timeline of the recording: nothing computed yet. */
static int timeline_new(const struct recording *rec, struct visibility_timeline **out)
{
	struct visibility_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return ENG_ENOMEM;
	tl->t0_ns = recording_t0(rec);
	tl->step_ns = SCENE_STEP_NS;
	tl->nframes = (size_t)((recording_t1(rec) - tl->t0_ns) / tl->step_ns) + 1;
	tl->nobjects = rec->nobjects;
	tl->words = (tl->nframes + 63) / 64;
	pthread_mutex_init(&tl->lock, NULL);
	pthread_cond_init(&tl->cond, NULL);
	tl->bits = calloc(tl->nobjects * tl->words + 1, sizeof(*tl->bits));
	tl->chunks = (tl->nframes + VISIBILITY_CHUNK - 1) / VISIBILITY_CHUNK;
	tl->done = calloc(tl->chunks + 1, 1);
	if (!tl->bits || !tl->done) {
		timeline_free(tl);
		return ENG_ENOMEM;
	}
	*out = tl;
	return 0;
}

/* tool_shared_get's maker: the recording's empty timeline. */
static int timeline_make(void *arg, void **data, void (**destroy)(void *data))
{
	struct visibility_timeline *tl;
	int rc = timeline_new(arg, &tl);

	if (rc)
		return rc;
	*data = tl;
	*destroy = timeline_free;
	return 0;
}

/*
 * Computes the frames of chunk c. Chunks of one word are computed by
 * different threads at once: each sets its own bits with an atomic OR.
 */
static int timeline_chunk(struct scene *s, const struct recording *rec,
			  struct visibility_timeline *tl, size_t c)
{
	struct visibility_view v;
	size_t k0 = c * VISIBILITY_CHUNK, k, o;
	size_t end = k0 + VISIBILITY_CHUNK < tl->nframes ? k0 + VISIBILITY_CHUNK : tl->nframes;
	int rc;

	for (k = k0; k < end; k++) {
		rc = visibility_view_at(s, rec, visibility_timeline_time(tl, k),
					VISIBILITY_MAX_RANGE_M, &v);
		if (rc)
			return rc;
		for (o = 0; o < tl->nobjects; o++)
			if (visibility_test(s, &v, o, false, NULL) == VIS_VISIBLE)
				__atomic_fetch_or(&tl->bits[o * tl->words + k / 64],
						  (uint64_t)1 << (k % 64), __ATOMIC_RELAXED);
	}
	return 0;
}

/*
 * The timeline is one per recording when the contexts share a store: its
 * chunks are computed by whichever context needs them first, each by one
 * thread (it claims the chunk under the lock, computes it on its own
 * scene, marks it computed), while the others wait for a chunk being
 * computed.
 */
int visibility_timeline_range(struct tool_ctx *ctx, size_t k0, size_t k1,
			      const struct visibility_timeline **out)
{
	struct visibility_timeline *tl = tool_ctx_slot(ctx, TOOL_SLOT_VISIBILITY);
	struct scene *s;
	size_t c;
	int rc = 0;

	rc = scene_get(ctx, &s);
	if (rc)
		return rc;
	if (!tl) {
		rc = tool_shared_slot(ctx, TOOL_SLOT_VISIBILITY, "visibility-timeline", timeline_make,
				      (void *)(uintptr_t)tool_ctx_rec(ctx), timeline_free, (void **)&tl);
		if (rc)
			return rc;
	}
	if (k1 > tl->nframes)
		k1 = tl->nframes;
	pthread_mutex_lock(&tl->lock);
	for (c = k0 / VISIBILITY_CHUNK; !rc && k0 < k1 && c <= (k1 - 1) / VISIBILITY_CHUNK; c++) {
		while (tl->done[c] == 1)
			pthread_cond_wait(&tl->cond, &tl->lock);
		if (tl->done[c] == 2)
			continue;
		tl->done[c] = 1;
		pthread_mutex_unlock(&tl->lock);
		rc = timeline_chunk(s, tool_ctx_rec(ctx), tl, c);
		pthread_mutex_lock(&tl->lock);
		if (rc) {
			/* its bits may be half set: cleared for the next claimer */
			uint64_t keep = ~((((uint64_t)1 << VISIBILITY_CHUNK) - 1)
					  << (c * VISIBILITY_CHUNK % 64));
			size_t o;

			for (o = 0; o < tl->nobjects; o++)
				__atomic_fetch_and(&tl->bits[o * tl->words + c * VISIBILITY_CHUNK / 64],
						   keep, __ATOMIC_RELAXED);
		}
		tl->done[c] = rc ? 0 : 2;
		pthread_cond_broadcast(&tl->cond);
	}
	pthread_mutex_unlock(&tl->lock);
	if (rc)
		return rc;
	*out = tl;
	return 0;
}

int visibility_timeline_get(struct tool_ctx *ctx,
			    const struct visibility_timeline **out)
{
	return visibility_timeline_range(ctx, 0, SIZE_MAX, out);
}

bool visibility_timeline_visible(const struct visibility_timeline *tl,
				 size_t o, size_t k)
{
	if (o >= tl->nobjects || k >= tl->nframes)
		return false;
	/* relaxed: another chunk of the word may be being set meanwhile */
	return (__atomic_load_n(&tl->bits[o * tl->words + k / 64], __ATOMIC_RELAXED) >> (k % 64)) & 1;
}

int64_t visibility_timeline_time(const struct visibility_timeline *tl, size_t k)
{
	return tl->t0_ns + (int64_t)k * tl->step_ns;
}

/* ======================= visible_objects ======================= */

static int cmp_seen(const void *pa, const void *pb)
{
	const struct visible_object *a = pa, *b = pb;

	if (a->info.distance_m != b->info.distance_m)
		return a->info.distance_m < b->info.distance_m ? -1 : 1;
	return (a->obj > b->obj) - (a->obj < b->obj);
}

void visible_release(struct visible_result *r)
{
	free(r->visible);
	free(r->hidden);
	r->visible = r->hidden = NULL;
	r->nvisible = r->nhidden = 0;
}

int visible_compute(struct tool_ctx *ctx, const struct visible_args *a,
		    struct visible_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	struct visibility_view v;
	struct scene *s;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	out->t = a->t;
	out->max_range_m = a->max_range_m;
	rc = tool__camera(ctx, "t", a->t, &out->cam, &out->heading);
	if (rc)
		return rc;
	rc = scene_get(ctx, &s);
	if (!rc)
		rc = visibility_view_at(s, rec, a->t, a->max_range_m, &v);
	if (rc)
		return rc;
	out->visible = malloc((rec->nobjects + 1) * sizeof(*out->visible));
	out->hidden = malloc((rec->nobjects + 1) * sizeof(*out->hidden));
	if (!out->visible || !out->hidden) {
		visible_release(out);
		return ENG_ENOMEM;
	}
	for (i = 0; i < rec->nobjects; i++) {
		struct visible_object e;

		memset(&e, 0, sizeof(e));
		e.obj = i;
		if (visibility_test(s, &v, i, a->include_hidden, &e.info) == VIS_VISIBLE) {
			memcpy(e.position, scene_box(s, i)->c, sizeof(e.position));
			e.has_yaw = !bev_yaw_to(out->heading, v.T_world_cam.t, e.position, &e.yaw_deg);
			if (e.has_yaw) {
				e.dir = bev_dir_from_yaw(e.yaw_deg);
				e.sector_margin_deg = bev_dir_margin(e.yaw_deg);
			} else {
				e.yaw_deg = NAN;
			}
			out->visible[out->nvisible++] = e;
		} else if (a->include_hidden) {
			out->hidden[out->nhidden++] = e;
		}
	}
	qsort(out->visible, out->nvisible, sizeof(*out->visible), cmp_seen);
	qsort(out->hidden, out->nhidden, sizeof(*out->hidden), cmp_seen);
	return 0;
}

static int add_visible(cJSON *arr, const struct recording *rec,
		       const struct disc_params *dp, const struct visible_object *e)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, o);
	if (!tool__add_str(o, "id", rec->objects[e->obj].id) ||
	    !tool__add_str(o, "name", rec->objects[e->obj].name) ||
	    !tool__add_str(o, "category", rec->objects[e->obj].category) ||
	    !tool__add_num(o, "distance_m", e->info.distance_m, 3) ||
	    !tool__add_vec3(o, "position", e->position, 3))
		return ENG_ENOMEM;
	if (e->has_yaw) {
		char letter[2] = { bev_dir_letter(e->dir), 0 };

		if (!tool__add_num(o, "yaw_deg", e->yaw_deg, 2) ||
		    !cJSON_AddStringToObject(o, "direction", bev_dir_name(e->dir)) ||
		    !cJSON_AddStringToObject(o, "letter", letter) ||
		    !tool__add_num(o, "sector_margin_deg", e->sector_margin_deg, 2) ||
		    !cJSON_AddBoolToObject(o, "ambiguous", e->sector_margin_deg < dp->angle_margin_deg))
			return ENG_ENOMEM;
	} else if (!cJSON_AddNullToObject(o, "yaw_deg") ||
		   !cJSON_AddNullToObject(o, "direction") ||
		   !cJSON_AddNullToObject(o, "letter") ||
		   !cJSON_AddNullToObject(o, "sector_margin_deg") ||
		   !cJSON_AddTrueToObject(o, "ambiguous")) {
		return ENG_ENOMEM;
	}
	{
		cJSON *px = cJSON_AddArrayToObject(o, "pixel");
		cJSON *a, *b;

		if (!px)
			return ENG_ENOMEM;
		a = cJSON_CreateNumber(tool__round(e->info.u, 1));
		b = cJSON_CreateNumber(tool__round(e->info.v, 1));
		if (!a || !b) {
			cJSON_Delete(a);
			cJSON_Delete(b);
			return ENG_ENOMEM;
		}
		cJSON_AddItemToArray(px, a);
		cJSON_AddItemToArray(px, b);
	}
	if (!tool__add_num(o, "depth_m", e->info.p_cam[2], 3))
		return ENG_ENOMEM;
	return 0;
}

static int add_hidden(cJSON *arr, const struct recording *rec, const struct visible_object *e)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, o);
	if (!tool__add_str(o, "id", rec->objects[e->obj].id) ||
	    !tool__add_str(o, "name", rec->objects[e->obj].name) ||
	    !cJSON_AddStringToObject(o, "reason", visibility_reason_name(e->info.reason)) ||
	    !tool__add_num(o, "distance_m", e->info.distance_m, 3) ||
	    !tool__add_object_ref(o, "occluder", rec, e->info.occluder))
		return ENG_ENOMEM;
	return 0;
}

int visible_write(struct tool_ctx *ctx, const struct visible_result *r, size_t limit,
		  bool hidden, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const struct disc_params *dp = tool_ctx_disc(ctx);
	cJSON *c, *arr;
	size_t i;
	int rc;

	if (!tool__add_time(result, "t_ns", r->t))
		return ENG_ENOMEM;
	c = cJSON_AddObjectToObject(result, "camera");
	if (!c ||
	    !tool__add_vec3(c, "position", r->cam.t, 3) ||
	    !tool__add_num(c, "heading_deg", bev_wrap_deg((float)((double)r->heading * POSE_RAD2DEG)), 2) ||
	    !cJSON_AddStringToObject(c, "model", rec->camera.model == REC_CAM_FISHEYE ?
				     "fisheye" : "pinhole") ||
	    !tool__add_num(result, "max_range_m", r->max_range_m, 3) ||
	    !cJSON_AddNumberToObject(result, "total", (double)r->nvisible) ||
	    !cJSON_AddBoolToObject(result, "truncated", r->nvisible > limit))
		return ENG_ENOMEM;
	arr = cJSON_AddArrayToObject(result, "objects");
	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; i < r->nvisible && i < limit; i++) {
		rc = add_visible(arr, rec, dp, &r->visible[i]);
		if (rc)
			return rc;
	}
	if (hidden) {
		arr = cJSON_AddArrayToObject(result, "hidden");
		if (!arr || !cJSON_AddNumberToObject(result, "hidden_total", (double)r->nhidden))
			return ENG_ENOMEM;
		for (i = 0; i < r->nhidden && i < limit; i++) {
			rc = add_hidden(arr, rec, &r->hidden[i]);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int tool_visible_objects(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	struct visible_args a;
	struct visible_result r;
	size_t limit = (size_t)tool__num(args, "limit", DEFAULT_LIMIT);
	int rc;

	a.t = tool__time(args, "t", 0);
	a.max_range_m = (float)tool__num(args, "max_range_m", VISIBILITY_MAX_RANGE_M);
	a.include_hidden = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "include_hidden"));
	rc = visible_compute(ctx, &a, &r);
	if (rc)
		return rc;
	rc = visible_write(ctx, &r, limit, a.include_hidden, result);
	visible_release(&r);
	return rc;
}
