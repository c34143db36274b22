/* SPDX-License-Identifier: MIT */
/* Gaze rays against the scene, cached fixations, and the cast_gaze tool. */
#include "gaze.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "registry.h"

#define DEFAULT_LIMIT 100

static void fixations_free(void *p)
{
	struct gaze_fixations *f = p;

	if (!f)
		return;
	free(f->v);
	free(f);
}

long gaze_hit(struct scene *s, const struct rec_gaze *g, float *t)
{
	struct ray r;
	long obj = -1;
	int i;

	if (t)
		*t = 0;
	if (scene_at(s, g->t_ns))
		return -1;
	for (i = 0; i < 3; i++) {
		r.o[i] = g->o[i];
		r.d[i] = g->d[i];
	}
	scene_cast(s, &r, GAZE_RANGE_M, &obj, t);
	return obj;
}

size_t gaze_sample_near(const struct recording *rec, int64_t t, int64_t tol_ns)
{
	return time_nearest_index(rec->gaze, rec->ngaze, sizeof(*rec->gaze), t, tol_ns);
}

/* Detects the fixations over the gaze samples with strictly increasing times. */
static int detect(const struct recording *rec, struct scene *s, struct gaze_fixations *f)
{
	size_t n = rec->ngaze, m = 0, i, nf = 0;
	int64_t *t = NULL;
	float *d = NULL, *o = NULL;
	size_t *map = NULL;
	struct fixation *fx = NULL;
	struct fixation_input in;
	int rc = 0;

	if (!n)
		return 0;
	t = malloc(n * sizeof(*t));
	d = malloc(n * 3 * sizeof(*d));
	o = malloc(n * 3 * sizeof(*o));
	map = malloc(n * sizeof(*map));
	fx = malloc((n / 2 + 1) * sizeof(*fx));
	if (!t || !d || !o || !map || !fx) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct rec_gaze *g = &rec->gaze[i];

		if (m && g->t_ns <= t[m - 1])
			continue;
		t[m] = g->t_ns;
		memcpy(d + 3 * m, g->d, 3 * sizeof(float));
		memcpy(o + 3 * m, g->o, 3 * sizeof(float));
		map[m++] = i;
	}
	in.t_ns = t;
	in.t_stride = sizeof(*t);
	in.d = d;
	in.d_stride = 3 * sizeof(float);
	in.o = o;
	in.o_stride = 3 * sizeof(float);
	in.n = m;
	rc = fixation_detect(&in, NULL, fx, n / 2 + 1, &nf);
	if (rc)
		goto out;
	f->v = malloc((nf ? nf : 1) * sizeof(*f->v));
	if (!f->v) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < nf; i++) {
		struct gaze_fixation *gf = &f->v[i];
		struct ray r;
		int k;

		gf->fx = fx[i];
		gf->fx.i_start = map[fx[i].i_start];
		gf->fx.i_end = map[fx[i].i_end];
		for (k = 0; k < 3; k++) {
			r.o[k] = fx[i].origin[k];
			r.d[k] = fx[i].dir[k];
		}
		gf->object = -1;
		rc = scene_at(s, fx[i].t_start_ns);
		if (rc)
			goto out;
		scene_cast(s, &r, GAZE_RANGE_M, &gf->object, &gf->hit_m);
	}
	f->n = nf;
out:
	free(t);
	free(d);
	free(o);
	free(map);
	free(fx);
	return rc;
}

int gaze_fixations_get(struct tool_ctx *ctx, const struct gaze_fixations **out)
{
	struct gaze_fixations *f = tool_ctx_slot(ctx, TOOL_SLOT_GAZE);
	struct scene *s;
	int rc;

	if (f) {
		*out = f;
		return 0;
	}
	rc = scene_get(ctx, &s);
	if (rc)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return ENG_ENOMEM;
	rc = detect(tool_ctx_rec(ctx), s, f);
	if (!rc)
		rc = tool_ctx_set_slot(ctx, TOOL_SLOT_GAZE, f, fixations_free);
	if (rc) {
		fixations_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

/* ======================= cast_gaze ======================= */

struct obj_count {
	long obj;
	size_t n;
};

static int cmp_count(const void *pa, const void *pb)
{
	const struct obj_count *a = pa, *b = pb;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return (a->obj > b->obj) - (a->obj < b->obj);
}

static int add_fixation(cJSON *arr, const struct recording *rec,
			const struct gaze_fixation *f)
{
	cJSON *o = cJSON_CreateObject();
	vec3 dir = { f->fx.dir[0], f->fx.dir[1], f->fx.dir[2] };

	if (!o)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, o);
	if (!tool__add_time(o, "start_ns", f->fx.t_start_ns) ||
	    !tool__add_time(o, "end_ns", f->fx.t_end_ns) ||
	    !tool__add_num(o, "duration_ms", (double)f->fx.duration_ns / 1e6, 1) ||
	    !cJSON_AddNumberToObject(o, "samples", (double)f->fx.nsamples) ||
	    !tool__add_vec3(o, "direction", dir, 4) ||
	    !tool__add_object_ref(o, "object", rec, f->object) ||
	    !(f->object >= 0 ? tool__add_num(o, "distance_m", f->hit_m, 3)
			     : cJSON_AddNullToObject(o, "distance_m")))
		return ENG_ENOMEM;
	return 0;
}

int tool_cast_gaze(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	int64_t t0 = tool__time(args, "t0", 0), t1 = tool__time(args, "t1", 0);
	size_t step = (size_t)tool__num(args, "step", 1);
	size_t limit = (size_t)tool__num(args, "limit", DEFAULT_LIMIT);
	const struct gaze_fixations *fx;
	struct obj_count *counts = NULL;
	size_t i, first, total = 0, hits = 0, listed = 0, nf = 0, k;
	struct scene *s;
	cJSON *arr, *objs, *farr;
	int rc;

	if (t1 < t0)
		return tool__reject(ctx, "/t1", "must be >= t0 (%" PRId64 "), got %" PRId64, t0, t1);
	rc = scene_get(ctx, &s);
	if (!rc)
		rc = gaze_fixations_get(ctx, &fx);
	if (rc)
		return rc;
	counts = calloc(rec->nobjects + 1, sizeof(*counts));
	if (!counts)
		return ENG_ENOMEM;
	for (i = 0; i < rec->nobjects; i++)
		counts[i].obj = (long)i;

	arr = cJSON_CreateArray();
	if (!arr) {
		rc = ENG_ENOMEM;
		goto out;
	}
	first = time_floor_index(rec->gaze, rec->ngaze, sizeof(*rec->gaze), t0 - 1);
	first = first == SIZE_MAX ? 0 : first + 1;
	for (i = first; i < rec->ngaze && rec->gaze[i].t_ns <= t1; i++) {
		const struct rec_gaze *g = &rec->gaze[i];
		float d;
		long obj = gaze_hit(s, g, &d);
		cJSON *o;

		if (obj >= 0) {
			hits++;
			counts[obj].n++;
		}
		if (total++ % step || listed >= limit)
			continue;
		listed++;
		o = cJSON_CreateObject();
		if (!o) {
			rc = ENG_ENOMEM;
			goto out;
		}
		cJSON_AddItemToArray(arr, o);
		if (!tool__add_time(o, "t_ns", g->t_ns) || !tool__add_object_ref(o, "object", rec, obj) ||
		    !(obj >= 0 ? tool__add_num(o, "distance_m", d, 3)
			       : cJSON_AddNullToObject(o, "distance_m"))) {
			rc = ENG_ENOMEM;
			goto out;
		}
	}
	if (!tool__add_time(result, "t0_ns", t0) || !tool__add_time(result, "t1_ns", t1) ||
	    !tool__add_num(result, "max_range_m", GAZE_RANGE_M, 1) ||
	    !cJSON_AddNumberToObject(result, "samples_total", (double)total) ||
	    !cJSON_AddNumberToObject(result, "samples_hit", (double)hits) ||
	    !cJSON_AddBoolToObject(result, "truncated", (total + step - 1) / step > listed)) {
		rc = ENG_ENOMEM;
		goto out;
	}
	cJSON_AddItemToObject(result, "samples", arr);
	arr = NULL;

	qsort(counts, rec->nobjects, sizeof(*counts), cmp_count);
	objs = cJSON_AddArrayToObject(result, "objects");
	if (!objs) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < rec->nobjects && counts[i].n && i < limit; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o) {
			rc = ENG_ENOMEM;
			goto out;
		}
		cJSON_AddItemToArray(objs, o);
		if (!tool__add_str(o, "id", rec->objects[counts[i].obj].id) ||
		    !tool__add_str(o, "name", rec->objects[counts[i].obj].name) ||
		    !cJSON_AddNumberToObject(o, "samples", (double)counts[i].n)) {
			rc = ENG_ENOMEM;
			goto out;
		}
	}

	farr = cJSON_AddArrayToObject(result, "fixations");
	if (!farr) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (k = 0; k < fx->n; k++) {
		const struct gaze_fixation *f = &fx->v[k];

		if (f->fx.t_end_ns < t0 || f->fx.t_start_ns > t1)
			continue;
		if (nf++ >= limit)
			continue;
		rc = add_fixation(farr, rec, f);
		if (rc)
			goto out;
	}
	if (!cJSON_AddNumberToObject(result, "fixations_total", (double)nf))
		rc = ENG_ENOMEM;
out:
	cJSON_Delete(arr);
	free(counts);
	return rc;
}
