/* SPDX-License-Identifier: MIT */
/* Gaze rays against the scene, cached fixations, and the cast_gaze tool. */
#include "gaze.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
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
	free(f->memo);
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
static int detect(const struct recording *rec, struct gaze_fixations *f)
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
	fx = malloc((n / 2 + 1) * sizeof(*fx));
	if (!fx) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 1; i < n && rec->gaze[i].t_ns > rec->gaze[i - 1].t_ns; i++)
		;
	if (i == n) {
		/* strictly increasing already (the native loader's rule): read in place */
		in.t_ns = &rec->gaze[0].t_ns;
		in.t_stride = sizeof(*rec->gaze);
		in.d = rec->gaze[0].d;
		in.d_stride = sizeof(*rec->gaze);
		in.o = rec->gaze[0].o;
		in.o_stride = sizeof(*rec->gaze);
		in.n = n;
	} else {
		t = malloc(n * sizeof(*t));
		d = malloc(n * 3 * sizeof(*d));
		o = malloc(n * 3 * sizeof(*o));
		map = malloc(n * sizeof(*map));
		if (!t || !d || !o || !map) {
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
	}
	rc = fixation_detect(&in, NULL, fx, n / 2 + 1, &nf);
	if (rc)
		goto out;
	f->v = malloc((nf ? nf : 1) * sizeof(*f->v));
	f->memo = calloc(nf ? nf : 1, sizeof(*f->memo));
	if (!f->v || !f->memo) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < nf; i++) {
		struct gaze_fixation *gf = &f->v[i];

		gf->fx = fx[i];
		gf->fx.i_start = map ? map[fx[i].i_start] : fx[i].i_start;
		gf->fx.i_end = map ? map[fx[i].i_end] : fx[i].i_end;
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

/* tool_shared_get's maker: the recording's fixations, detected on the asking context. */
static int fixations_make(void *arg, void **data, void (**destroy)(void *data))
{
	struct tool_ctx *ctx = arg;
	struct gaze_fixations *f = calloc(1, sizeof(*f));
	int rc;

	if (!f)
		return ENG_ENOMEM;
	rc = detect(tool_ctx_rec(ctx), f);
	if (rc) {
		fixations_free(f);
		return rc;
	}
	*data = f;
	*destroy = fixations_free;
	return 0;
}

int gaze_fixation_object(struct scene *s, const struct gaze_fixations *f, size_t i,
			 struct gaze_fixation_hit *out)
{
	const struct fixation *fx = &f->v[i].fx;
	unsigned char st = GAZE_HIT_UNKNOWN;
	struct ray r;
	int k, rc;

	if (atomic_load_explicit(&f->memo[i].state, memory_order_acquire) == GAZE_HIT_KNOWN) {
		*out = f->memo[i].hit;
		return 0;
	}
	for (k = 0; k < 3; k++) {
		r.o[k] = fx->origin[k];
		r.d[k] = fx->dir[k];
	}
	out->object = -1;
	out->hit_m = 0;
	rc = scene_at(s, fx->t_start_ns);
	if (rc)
		return rc;
	scene_cast(s, &r, GAZE_RANGE_M, &out->object, &out->hit_m);
	/* the first to claim it stores it; the same cast by another is dropped */
	if (atomic_compare_exchange_strong_explicit(&f->memo[i].state, &st, GAZE_HIT_STORING,
						    memory_order_acquire, memory_order_relaxed)) {
		f->memo[i].hit = *out;
		atomic_store_explicit(&f->memo[i].state, GAZE_HIT_KNOWN, memory_order_release);
	}
	return 0;
}

/*
 * The fixations, detected once per recording: by the first context that
 * asks when the contexts share a store (the others borrow them), else per
 * context.
 */
int gaze_fixations_get(struct tool_ctx *ctx, const struct gaze_fixations **out)
{
	struct gaze_fixations *f = tool_ctx_slot(ctx, TOOL_SLOT_GAZE);
	int rc = 0;

	if (!f)
		rc = tool_shared_slot(ctx, TOOL_SLOT_GAZE, "gaze-fixations", fixations_make, ctx,
				      fixations_free, (void **)&f);
	if (!rc)
		*out = f;
	return rc;
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
			const struct gaze_fixation *f, const struct gaze_fixation_hit *h)
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
	    !tool__add_object_ref(o, "object", rec, h->object) ||
	    !(h->object >= 0 ? tool__add_num(o, "distance_m", h->hit_m, 3)
			     : cJSON_AddNullToObject(o, "distance_m")))
		return ENG_ENOMEM;
	return 0;
}

void gaze_cast_release(struct gaze_cast_result *r)
{
	free(r->samples);
	free(r->objects);
	memset(r, 0, sizeof(*r));
}

int gaze_cast(struct tool_ctx *ctx, const struct gaze_cast_args *a, struct gaze_cast_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	size_t i, first, step = a->step ? a->step : 1;
	struct obj_count *counts = NULL;
	struct scene *s;
	int rc;

	memset(out, 0, sizeof(*out));
	out->t0 = a->t0;
	out->t1 = a->t1;
	if (a->t1 < a->t0)
		return tool__reject(ctx, "/t1", "must be >= t0 (%" PRId64 "), got %" PRId64, a->t0,
				    a->t1);
	rc = scene_get(ctx, &s);
	if (!rc)
		rc = gaze_fixations_get(ctx, &out->fixations);
	if (rc)
		return rc;
	counts = calloc(rec->nobjects + 1, sizeof(*counts));
	first = time_floor_index(rec->gaze, rec->ngaze, sizeof(*rec->gaze), a->t0 - 1);
	first = first == SIZE_MAX ? 0 : first + 1;
	out->samples = malloc((rec->ngaze - first + 1) / step * sizeof(*out->samples) +
			      sizeof(*out->samples));
	if (!counts || !out->samples) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < rec->nobjects; i++)
		counts[i].obj = (long)i;
	for (i = first; i < rec->ngaze && rec->gaze[i].t_ns <= a->t1; i++) {
		const struct rec_gaze *g = &rec->gaze[i];
		float d;
		long obj = gaze_hit(s, g, &d);

		if (obj >= 0) {
			out->nhits++;
			counts[obj].n++;
		}
		if (out->ntotal++ % step)
			continue;
		out->samples[out->nsamples].t_ns = g->t_ns;
		out->samples[out->nsamples].object = obj;
		out->samples[out->nsamples].distance_m = obj >= 0 ? d : 0;
		out->nsamples++;
	}
	qsort(counts, rec->nobjects, sizeof(*counts), cmp_count);
	out->objects = malloc((rec->nobjects + 1) * sizeof(*out->objects));
	if (!out->objects) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < rec->nobjects && counts[i].n; i++) {
		out->objects[i].object = counts[i].obj;
		out->objects[i].samples = counts[i].n;
		out->nobjects++;
	}
out:
	free(counts);
	if (rc)
		gaze_cast_release(out);
	return rc;
}

int gaze_cast_write(struct tool_ctx *ctx, const struct gaze_cast_result *r, size_t limit,
		    cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	cJSON *arr, *objs, *farr;
	struct scene *s;
	size_t i, nf = 0;
	int rc;

	if (!tool__add_time(result, "t0_ns", r->t0) || !tool__add_time(result, "t1_ns", r->t1) ||
	    !tool__add_num(result, "max_range_m", GAZE_RANGE_M, 1) ||
	    !cJSON_AddNumberToObject(result, "samples_total", (double)r->ntotal) ||
	    !cJSON_AddNumberToObject(result, "samples_hit", (double)r->nhits) ||
	    !cJSON_AddBoolToObject(result, "truncated", r->nsamples > limit))
		return ENG_ENOMEM;
	arr = cJSON_AddArrayToObject(result, "samples");
	if (!arr)
		return ENG_ENOMEM;
	for (i = 0; i < r->nsamples && i < limit; i++) {
		const struct gaze_cast_sample *x = &r->samples[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(arr, o);
		if (!tool__add_time(o, "t_ns", x->t_ns) ||
		    !tool__add_object_ref(o, "object", rec, x->object) ||
		    !(x->object >= 0 ? tool__add_num(o, "distance_m", x->distance_m, 3)
				     : cJSON_AddNullToObject(o, "distance_m")))
			return ENG_ENOMEM;
	}
	objs = cJSON_AddArrayToObject(result, "objects");
	if (!objs)
		return ENG_ENOMEM;
	for (i = 0; i < r->nobjects && i < limit; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(objs, o);
		if (!tool__add_str(o, "id", rec->objects[r->objects[i].object].id) ||
		    !tool__add_str(o, "name", rec->objects[r->objects[i].object].name) ||
		    !cJSON_AddNumberToObject(o, "samples", (double)r->objects[i].samples))
			return ENG_ENOMEM;
	}
	farr = cJSON_AddArrayToObject(result, "fixations");
	if (!farr)
		return ENG_ENOMEM;
	for (i = 0; r->fixations && i < r->fixations->n; i++) {
		const struct gaze_fixation *f = &r->fixations->v[i];
		struct gaze_fixation_hit h;

		if (f->fx.t_end_ns < r->t0 || f->fx.t_start_ns > r->t1)
			continue;
		if (nf++ >= limit)
			continue;
		rc = scene_get(ctx, &s);
		rc = rc ? rc : gaze_fixation_object(s, r->fixations, i, &h);
		rc = rc ? rc : add_fixation(farr, rec, f, &h);
		if (rc)
			return rc;
	}
	if (!cJSON_AddNumberToObject(result, "fixations_total", (double)nf))
		return ENG_ENOMEM;
	return 0;
}

int tool_cast_gaze(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	struct gaze_cast_args a;
	struct gaze_cast_result r;
	size_t limit = (size_t)tool__num(args, "limit", DEFAULT_LIMIT);
	int rc;

	a.t0 = tool__time(args, "t0", 0);
	a.t1 = tool__time(args, "t1", 0);
	a.step = (size_t)tool__num(args, "step", 1);
	rc = gaze_cast(ctx, &a, &r);
	if (rc)
		return rc;
	rc = gaze_cast_write(ctx, &r, limit, result);
	gaze_cast_release(&r);
	return rc;
}
