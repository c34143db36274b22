/* SPDX-License-Identifier: MIT */
/* I-VT fixation detection over gaze rays in one streaming pass. */
#include "fixation.h"

#include <math.h>
#include <string.h>

#include "errcode.h"

#define FIX_PREFETCH 64 /* samples read ahead */

void fixation_params_init(struct fixation_params *p)
{
	p->max_velocity_dps = 30.0;
	p->merge_gap_ns = 75000000;
	p->merge_angle_deg = 1.0;
	p->min_duration_ns = 100000000;
	p->bvh = NULL;
	p->hit_range_m = 6.0f;
}

/*
 * The squared chord |a - b|^2 = 2 - 2 cos(angle) of two unit vectors an
 * angle `rad` apart: the cos comparison written so that it keeps its
 * precision for the tiny angles between samples at 1 kHz (where cos is
 * within a few float steps of 1). Angles of pi or more give 4, which no
 * pair of unit vectors exceeds.
 */
static inline double chord2(double rad)
{
	double x, x2, s;

	if (rad >= M_PI)
		return 4.0;
	x = 0.5 * rad;
	if (x < 0.25) {
		/* sin x, Taylor to x^9: relative error below 1e-13 */
		x2 = x * x;
		s = x * (1 - x2 * (1.0 / 6) * (1 - x2 * (1.0 / 20) *
			(1 - x2 * (1.0 / 42) * (1 - x2 * (1.0 / 72)))));
	} else {
		s = sin(x);
	}
	return 4.0 * s * s;
}

/* A candidate or pending fixation while streaming. */
struct cand {
	size_t a, b;     /* first and last sample */
	size_t count;    /* samples summed */
	double sd[3];    /* sum of directions */
	double so[3];    /* sum of origins */
};

/* Writer state for the output array. */
struct sink {
	const struct fixation_params *p;
	const struct fixation_input *in;
	struct fixation *out;
	size_t cap, n;
	bool full;
};

static int64_t time_at(const struct fixation_input *in, size_t i)
{
	return *(const int64_t *)(const void *)((const char *)in->t_ns +
						 i * in->t_stride);
}

/* b - a for b >= a, without signed overflow. */
static uint64_t span(int64_t a, int64_t b)
{
	return (uint64_t)b - (uint64_t)a;
}

/* Sums the origins of samples c->a..c->b into c->so (zero without o). */
static void sum_origins(const struct fixation_input *in, struct cand *c)
{
	size_t j;
	int k;

	for (k = 0; k < 3; k++)
		c->so[k] = 0;
	if (!in->o)
		return;
	for (j = c->a; j <= c->b; j++) {
		const float *o = (const float *)(const void *)
			((const char *)in->o + j * in->o_stride);

		for (k = 0; k < 3; k++)
			c->so[k] += (double)o[k];
	}
}

static void mean_dir(const struct cand *c, double m[3])
{
	double len = sqrt(c->sd[0] * c->sd[0] + c->sd[1] * c->sd[1] +
			  c->sd[2] * c->sd[2]);
	int k;

	for (k = 0; k < 3; k++)
		m[k] = len > 0 ? c->sd[k] / len : 0;
}

/* Emits c if long enough. */
static void emit(struct sink *s, const struct cand *c)
{
	const struct fixation_params *p = s->p;
	int64_t t0 = time_at(s->in, c->a), t1 = time_at(s->in, c->b);
	struct fixation *f;
	double m[3];
	int k;

	if (span(t0, t1) < (uint64_t)p->min_duration_ns)
		return;
	if (s->n >= s->cap) {
		s->full = true;
		return;
	}
	f = &s->out[s->n++];
	memset(f, 0, sizeof(*f));
	f->t_start_ns = t0;
	f->t_end_ns = t1;
	f->duration_ns = (int64_t)span(t0, t1);
	f->i_start = c->a;
	f->i_end = c->b;
	f->nsamples = c->count;
	mean_dir(c, m);
	for (k = 0; k < 3; k++) {
		f->dir[k] = (float)m[k];
		f->origin[k] = (float)(c->so[k] / (double)c->count);
	}
	f->box = -1;
	if (p->bvh) {
		struct ray r;
		struct bvh_hit h;

		for (k = 0; k < 3; k++) {
			r.o[k] = f->origin[k];
			r.d[k] = f->dir[k];
		}
		bvh_cast(p->bvh, &r, p->hit_range_m, &h);
		f->box = h.box;
		f->hit_t = h.t;
	}
}

/* Merges the new candidate c into *pend or flushes *pend and keeps c. */
static void take(struct sink *s, struct cand *pend, bool *have,
		 const struct cand *c, double merge_c2)
{
	if (*have) {
		uint64_t gap = span(time_at(s->in, pend->b), time_at(s->in, c->a));
		double m0[3], m1[3], e = 0;
		int k;

		mean_dir(pend, m0);
		mean_dir(c, m1);
		for (k = 0; k < 3; k++)
			e += (m0[k] - m1[k]) * (m0[k] - m1[k]);
		if (gap < (uint64_t)s->p->merge_gap_ns && e < merge_c2) {
			pend->b = c->b;
			pend->count += c->count;
			for (k = 0; k < 3; k++) {
				pend->sd[k] += c->sd[k];
				pend->so[k] += c->so[k];
			}
			return;
		}
		emit(s, pend);
	}
	*pend = *c;
	*have = true;
}

static bool params_ok(const struct fixation_params *p)
{
	return isfinite(p->max_velocity_dps) && p->max_velocity_dps > 0 &&
	       p->merge_gap_ns >= 0 && isfinite(p->merge_angle_deg) &&
	       p->merge_angle_deg >= 0 && p->min_duration_ns >= 0 &&
	       (!p->bvh || p->hit_range_m >= 0);
}

int fixation_detect(const struct fixation_input *in,
		    const struct fixation_params *p, struct fixation *out,
		    size_t cap, size_t *nout)
{
	struct fixation_params defaults;
	struct sink s;
	struct cand run, pend;
	bool in_run = false, have = false;
	const char *tp, *dp;
	double w, merge_c2;
	int64_t prev_t;
	uint64_t last_dt = 0;
	float px, py, pz, lim = 0;
	size_t i;
	int rc = 0;

	if (!in || !nout || (!out && cap > 0) || (in->n > 0 && (!in->t_ns ||
						       !in->d)))
		return ENG_EINVAL;
	*nout = 0;
	if (!p) {
		fixation_params_init(&defaults);
		p = &defaults;
	}
	if (!params_ok(p))
		return ENG_EINVAL;
	s.p = p;
	s.in = in;
	s.out = out;
	s.cap = cap;
	s.n = 0;
	s.full = false;
	if (in->n < 2)
		goto out;
	w = p->max_velocity_dps * POSE_DEG2RAD * 1e-9; /* rad per ns */
	merge_c2 = chord2(p->merge_angle_deg * (M_PI / 180.0));
	memset(&run, 0, sizeof(run));
	tp = (const char *)in->t_ns;
	dp = (const char *)in->d;
	memcpy(&prev_t, tp, sizeof(prev_t));
	px = ((const float *)(const void *)dp)[0];
	py = ((const float *)(const void *)dp)[1];
	pz = ((const float *)(const void *)dp)[2];
	for (i = 1; i < in->n; i++) {
		const float *d = (const float *)(const void *)(dp +
							      i * in->d_stride);
		int64_t t;
		uint64_t dt;
		float x = d[0], y = d[1], z = d[2], ex, ey, ez;

#if defined(__GNUC__)
		/* ~2.5 KB ahead: +20-100% once the samples are out of cache */
		__builtin_prefetch(dp + (i + FIX_PREFETCH < in->n ?
					 i + FIX_PREFETCH : i) * in->d_stride);
#endif
		memcpy(&t, tp + i * in->t_stride, sizeof(t));
		if (t <= prev_t) {
			rc = ENG_EINVAL;
			break;
		}
		dt = span(prev_t, t);
		if (dt != last_dt) {
			lim = (float)chord2(w * (double)dt);
			last_dt = dt;
		}
		ex = x - px;
		ey = y - py;
		ez = z - pz;
		if (ex * ex + ey * ey + ez * ez < lim) {
			/* a slow pair (i-1, i) */
			if (!in_run) {
				run.a = i - 1;
				run.count = 1;
				run.sd[0] = px;
				run.sd[1] = py;
				run.sd[2] = pz;
				in_run = true;
			}
			run.count++;
			run.sd[0] += (double)x;
			run.sd[1] += (double)y;
			run.sd[2] += (double)z;
		} else if (in_run) {
			run.b = i - 1;
			in_run = false;
			sum_origins(in, &run);
			take(&s, &pend, &have, &run, merge_c2);
		}
		prev_t = t;
		px = x;
		py = y;
		pz = z;
	}
	if (in_run) {
		run.b = i - 1;
		sum_origins(in, &run);
		take(&s, &pend, &have, &run, merge_c2);
	}
	if (have)
		emit(&s, &pend);
out:
	*nout = s.n;
	if (!rc && s.full)
		rc = ENG_ETOOBIG;
	return rc;
}
