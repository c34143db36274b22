/* SPDX-License-Identifier: MIT */
/*
 * I-VT fixation detection over gaze rays in one streaming pass: two tight
 * inner loops (fast pairs, then a run of slow ones with its sums kept in
 * registers), each pair's velocity decided by a bracket of dts whose
 * limits are known, the exact limit computed only for the rare pair the
 * bracket cannot decide.
 */
#include "fixation.h"

#include <math.h>
#include <string.h>

#include "errcode.h"

#define FIX_PREFETCH 64 /* samples read ahead */

#if defined(__GNUC__)
/* ~2.5 KB ahead: +20-100% once the samples are out of cache */
#define FIX_PREFETCH_AT(i) \
	__builtin_prefetch(dp + ((i) + FIX_PREFETCH < n ? (i) + FIX_PREFETCH : (i)) * ds)
#else
#define FIX_PREFETCH_AT(i) ((void)0)
#endif

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
		/* clang-format off */
		s = x * (1 - x2 * (1.0 / 6) * (1 - x2 * (1.0 / 20) *
			(1 - x2 * (1.0 / 42) * (1 - x2 * (1.0 / 72)))));
		/* clang-format on */
	} else {
		s = sin(x);
	}
	return 4.0 * s * s;
}

#if defined(__GNUC__)
#define FIX_INLINE static inline __attribute__((always_inline))
#define FIX_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define FIX_INLINE static inline
#define FIX_UNLIKELY(x) (x)
#endif

/* A candidate or pending fixation while streaming. */
struct cand {
	size_t a, b;  /* first and last sample */
	size_t count; /* samples summed */
	double sd[3]; /* sum of directions */
	double so[3]; /* sum of origins */
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
	return *(const int64_t *)(const void *)((const char *)in->t_ns + i * in->t_stride);
}

/* b - a for b >= a, without signed overflow. */
static uint64_t span(int64_t a, int64_t b)
{
	return (uint64_t)b - (uint64_t)a;
}

static void mean_dir(const struct cand *c, double m[3])
{
	double len = sqrt(c->sd[0] * c->sd[0] + c->sd[1] * c->sd[1] + c->sd[2] * c->sd[2]);
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
static void take(struct sink *s, struct cand *pend, bool *have, const struct cand *c,
		 double merge_c2)
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
	return isfinite(p->max_velocity_dps) && p->max_velocity_dps > 0 && p->merge_gap_ns >= 0 &&
	       isfinite(p->merge_angle_deg) && p->merge_angle_deg >= 0 && p->min_duration_ns >= 0 &&
	       (!p->bvh || p->hit_range_m >= 0);
}

/*
 * The velocity limit of a pair is the squared chord (float)chord2(w * dt)
 * of its dt, which grows with dt. The detector keeps a bracket of dts
 * [dlo, dhi] and the limits of its ends, widened by two float steps
 * (more than any rounding of chord2 can make it go backwards), so that
 * a pair whose dt lies in the bracket is slow when its squared chord is
 * below llo and fast when it is at or above lhi, without computing its
 * limit; only a pair in between, or one whose dt falls outside the
 * bracket, computes it (limit_exact), and the bracket then widens to
 * take that dt in while it stays within 1/8 of its low end, or starts
 * again from it. A constant rate makes the bracket one dt wide with no
 * pair in between; jittered times (+-20 us at 1 kHz) a few percent wide,
 * with almost no squared chord that close to its limit.
 */
struct limits {
	double w;         /* threshold, rad per ns */
	uint64_t dlo, dhi; /* the bracket of dts, ns */
	float llo, lhi;   /* the limits of its ends, two float steps out */
};

static float limit_of(const struct limits *lb, uint64_t dt)
{
	return (float)chord2(lb->w * (double)dt);
}

static float steps_down(float x)
{
	return nextafterf(nextafterf(x, -INFINITY), -INFINITY);
}

static float steps_up(float x)
{
	return nextafterf(nextafterf(x, INFINITY), INFINITY);
}

/* Starts the bracket at the single dt. */
static void limits_reset(struct limits *lb, uint64_t dt)
{
	float l = limit_of(lb, dt);

	lb->dlo = lb->dhi = dt;
	lb->llo = steps_down(l);
	lb->lhi = steps_up(l);
}

/*
 * The exact answer for a pair of dt with squared chord e2, for the pairs
 * the bracket cannot decide; takes dt into the bracket.
 */
static bool limit_exact(struct limits *lb, uint64_t dt, float e2)
{
	float l = limit_of(lb, dt);

	if (dt < lb->dlo) {
		if (lb->dhi - dt <= dt / 8) {
			lb->dlo = dt;
			lb->llo = steps_down(l);
		} else {
			limits_reset(lb, dt);
		}
	} else if (dt > lb->dhi) {
		if (dt - lb->dlo <= lb->dlo / 8) {
			lb->dhi = dt;
			lb->lhi = steps_up(l);
		} else {
			limits_reset(lb, dt);
		}
	}
	return e2 < l;
}

/* Zero origins for an input without them (read with stride 0). */
static const float zero_origin[3] = { 0, 0, 0 };

/* An empty output array of cap entries at out, for the samples of in. */
static void sink_init(struct sink *s, const struct fixation_params *p,
		      const struct fixation_input *in, struct fixation *out, size_t cap)
{
	s->p = p;
	s->in = in;
	s->out = out;
	s->cap = cap;
	s->n = 0;
	s->full = false;
}

/*
 * Reads sample i into t, x, y, z (stopping with ENG_EINVAL when its time
 * does not increase) and tells whether the pair (i - 1, i) is slow: its
 * squared chord below the limit for its dt, decided by the bracket of
 * struct limits where it can. A macro over the locals of detect_runs(),
 * so that they stay in registers.
 */
/* clang-format off */
#define FIX_READ(on_error)                                                    \
	do {                                                                  \
		const float *d_ = (const float *)(const void *)(dp + i * ds); \
		float ex_, ey_, ez_, e2_;                                     \
		uint64_t dt_;                                                 \
									      \
		FIX_PREFETCH_AT(i);                                           \
		memcpy(&t, tp + i * ts, sizeof(t));                           \
		if (t <= prev_t) {                                            \
			rc = ENG_EINVAL;                                      \
			on_error;                                             \
		}                                                             \
		dt_ = span(prev_t, t);                                        \
		x = d_[0];                                                    \
		y = d_[1];                                                    \
		z = d_[2];                                                    \
		ex_ = x - px;                                                 \
		ey_ = y - py;                                                 \
		ez_ = z - pz;                                                 \
		e2_ = ex_ * ex_ + ey_ * ey_ + ez_ * ez_;                      \
		slow = e2_ < lb.llo;                                          \
		if (FIX_UNLIKELY(dt_ - lb.dlo > lb.dhi - lb.dlo ||            \
				 (!slow && e2_ < lb.lhi)))                    \
			slow = limit_exact(&lb, dt_, e2_);                    \
	} while (0)
/* clang-format on */

/*
 * The detector's pass over in->n >= 2 samples, in two alternating inner
 * loops: over fast pairs until a slow one starts a run, then over the
 * run's slow pairs until a fast one ends it. The run's sums of directions
 * and origins (both in double, in sample order, as emit() and take()
 * expect) stay in registers for the whole run; nothing else happens per
 * sample. The limit on the squared chord is recomputed only when dt
 * changes. Each run goes to take() with *pend and *have, the candidate
 * still pending at the end is left there. Returns 0 or ENG_EINVAL (times
 * that do not increase). Always inlined into fixation_detect(), the hot
 * loop as it was before the split.
 */
FIX_INLINE int detect_runs(struct sink *s, const struct fixation_input *in,
			   const struct fixation_params *p, struct cand *pend, bool *have)
{
	struct cand run;
	struct limits lb;
	const char *tp, *dp, *op;
	size_t ts, ds, os, n, i, a;
	double merge_c2;
	int64_t prev_t, t = 0;
	float px, py, pz, x = 0, y = 0, z = 0;
	int rc = 0;

	merge_c2 = chord2(p->merge_angle_deg * (M_PI / 180.0));
	memset(&run, 0, sizeof(run));
	n = in->n;
	tp = (const char *)in->t_ns;
	ts = in->t_stride;
	dp = (const char *)in->d;
	ds = in->d_stride;
	op = in->o ? (const char *)in->o : (const char *)zero_origin;
	os = in->o ? in->o_stride : 0;
	lb.w = p->max_velocity_dps * POSE_DEG2RAD * 1e-9; /* rad per ns */
	memcpy(&prev_t, tp, sizeof(prev_t));
	px = ((const float *)(const void *)dp)[0];
	py = ((const float *)(const void *)dp)[1];
	pz = ((const float *)(const void *)dp)[2];
	i = 1;
	memcpy(&t, tp + ts, sizeof(t));
	limits_reset(&lb, span(prev_t, t));
	for (;;) {
		double sx, sy, sz, ox, oy, oz;
		const float *o;
		size_t count;
		bool slow = false;

		/* fast pairs, up to the first slow one */
		for (; i < n; i++) {
			FIX_READ(return rc);
			if (slow)
				break;
			prev_t = t;
			px = x;
			py = y;
			pz = z;
		}
		if (i >= n)
			return rc;
		/* a run from sample a = i - 1: its first pair is (a, i) */
		a = i - 1;
		o = (const float *)(const void *)(op + a * os);
		sx = (double)px;
		sy = (double)py;
		sz = (double)pz;
		ox = 0.0 + (double)o[0];
		oy = 0.0 + (double)o[1];
		oz = 0.0 + (double)o[2];
		count = 1;
		for (;;) {
			o = (const float *)(const void *)(op + i * os);
			count++;
			sx += (double)x;
			sy += (double)y;
			sz += (double)z;
			ox += (double)o[0];
			oy += (double)o[1];
			oz += (double)o[2];
			prev_t = t;
			px = x;
			py = y;
			pz = z;
			if (++i >= n)
				break;
			FIX_READ(goto run_end);
			if (!slow)
				break;
		}
run_end:
		/* the run ends at sample i - 1 */
		run.a = a;
		run.b = i - 1;
		run.count = count;
		run.sd[0] = sx;
		run.sd[1] = sy;
		run.sd[2] = sz;
		run.so[0] = ox;
		run.so[1] = oy;
		run.so[2] = oz;
		take(s, pend, have, &run, merge_c2);
		if (i >= n || rc)
			return rc;
		/* the fast pair (i - 1, i): go on from sample i */
		prev_t = t;
		px = x;
		py = y;
		pz = z;
		i++;
	}
}

#undef FIX_READ

/*
 * The detector: checks the arguments, runs detect_runs() over the samples
 * and emits the candidate still pending at the end.
 */
int fixation_detect(const struct fixation_input *in, const struct fixation_params *p,
		    struct fixation *out, size_t cap, size_t *nout)
{
	struct fixation_params defaults;
	struct sink s;
	struct cand pend;
	bool have = false;
	int rc = 0;

	if (!in || !nout || (!out && cap > 0) || (in->n > 0 && (!in->t_ns || !in->d)))
		return ENG_EINVAL;
	*nout = 0;
	if (!p) {
		fixation_params_init(&defaults);
		p = &defaults;
	}
	if (!params_ok(p))
		return ENG_EINVAL;
	sink_init(&s, p, in, out, cap);
	if (in->n < 2)
		goto out;
	rc = detect_runs(&s, in, p, &pend, &have);
	if (have)
		emit(&s, &pend);
out:
	*nout = s.n;
	if (!rc && s.full)
		rc = ENG_ETOOBIG;
	return rc;
}
