/* SPDX-License-Identifier: MIT */
/*
 * I-VT fixation detection over gaze rays in one streaming pass: two tight
 * inner loops (fast pairs, then a run of slow ones with its sums kept in
 * registers) and the velocity limits computed 16 pairs at a time by a
 * vectorised copy of chord2() (SSE2, or AVX2 when the CPU has it).
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

/*
 * Limits for a block of FIX_BLOCK pairs: the squared chord limit of each
 * pair's dt, computed as chord2() does, operation for operation, so that
 * every value is bitwise (float)chord2(w * dt): the Taylor branch as a
 * straight loop the compiler vectorizes, then the lanes outside it
 * (x >= 0.25, or rad >= pi) redone one by one.
 */
#define FIX_BLOCK 16

#if defined(__GNUC__)
#define FIX_INLINE static inline __attribute__((always_inline))
#else
#define FIX_INLINE static inline
#endif

FIX_INLINE void limits_body(const double *rad, float *lim)
{
	int k;

	for (k = 0; k < FIX_BLOCK; k++) {
		double x = 0.5 * rad[k], x2 = x * x;
		/* clang-format off */
		double s = x * (1 - x2 * (1.0 / 6) * (1 - x2 * (1.0 / 20) *
			(1 - x2 * (1.0 / 42) * (1 - x2 * (1.0 / 72)))));
		/* clang-format on */

		lim[k] = (float)(4.0 * s * s);
	}
	for (k = 0; k < FIX_BLOCK; k++)
		if (!(0.5 * rad[k] < 0.25))
			lim[k] = (float)chord2(rad[k]);
}

static void limits_sse2(const double *rad, float *lim)
{
	limits_body(rad, lim);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define FIX_AVX2 1
__attribute__((target("avx2"))) static void limits_avx2(const double *rad, float *lim)
{
	limits_body(rad, lim);
}
#else
#define FIX_AVX2 0
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
 * The limits of the pairs (base + k - 1, base + k), k < FIX_BLOCK, read
 * ahead of the detector loop. A block whose pairs all have the dt of the
 * last one computed reuses its limit, so a constant rate costs one
 * chord2() per call.
 */
struct limits {
	const char *tp; /* times */
	size_t ts, n;   /* their stride and count */
	double w;       /* threshold, rad per ns */
	void (*kernel)(const double *rad, float *lim);
	uint64_t last_dt; /* dt of the last limit computed, 0 = none */
	float last_lim;   /* that limit */
	size_t base;      /* first sample of the block */
	_Alignas(64) float lim[FIX_BLOCK];
	_Alignas(64) double rad[FIX_BLOCK];
};

static void refill(struct limits *lb, size_t i)
{
	uint64_t dt[FIX_BLOCK];
	int64_t prev, t;
	bool same = true;
	int k;

	memcpy(&prev, lb->tp + (i - 1) * lb->ts, sizeof(prev));
	for (k = 0; k < FIX_BLOCK; k++) {
		size_t j = i + (size_t)k < lb->n ? i + (size_t)k : lb->n - 1;

		memcpy(&t, lb->tp + j * lb->ts, sizeof(t));
		dt[k] = span(prev, t);
		prev = t;
		same = same && dt[k] == lb->last_dt;
	}
	lb->base = i;
	if (same) {
		for (k = 0; k < FIX_BLOCK; k++)
			lb->lim[k] = lb->last_lim;
		return;
	}
	for (k = 0; k < FIX_BLOCK; k++)
		lb->rad[k] = lb->w * (double)dt[k];
	lb->kernel(lb->rad, lb->lim);
	lb->last_dt = dt[FIX_BLOCK - 1];
	lb->last_lim = lb->lim[FIX_BLOCK - 1];
}

/* Zero origins for an input without them (read with stride 0). */
static const float zero_origin[3] = { 0, 0, 0 };

/*
 * Sets up lb over the times of in for the threshold of p, with the widest
 * limits kernel this CPU runs, and nothing computed yet.
 */
static void limits_init(struct limits *lb, const struct fixation_input *in,
			const struct fixation_params *p)
{
	lb->tp = (const char *)in->t_ns;
	lb->ts = in->t_stride;
	lb->n = in->n;
	lb->w = p->max_velocity_dps * POSE_DEG2RAD * 1e-9; /* rad per ns */
	lb->kernel = limits_sse2;
#if FIX_AVX2
	if (__builtin_cpu_supports("avx2"))
		lb->kernel = limits_avx2;
#endif
	lb->last_dt = 0;
	lb->last_lim = 0;
	lb->base = 0;
}

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
 * squared chord below the limit for its dt. A macro over the locals of
 * detect_runs(), so that they stay in registers.
 */
/* clang-format off */
#define FIX_READ(on_error)                                                    \
	do {                                                                  \
		const float *d_ = (const float *)(const void *)(dp + i * ds); \
		float ex_, ey_, ez_;                                          \
									      \
		FIX_PREFETCH_AT(i);                                           \
		memcpy(&t, tp + i * ts, sizeof(t));                           \
		if (t <= prev_t) {                                            \
			rc = ENG_EINVAL;                                      \
			on_error;                                             \
		}                                                             \
		if (i - lb.base >= FIX_BLOCK)                                 \
			refill(&lb, i);                                       \
		lim = lb.lim[i - lb.base];                                    \
		x = d_[0];                                                    \
		y = d_[1];                                                    \
		z = d_[2];                                                    \
		ex_ = x - px;                                                 \
		ey_ = y - py;                                                 \
		ez_ = z - pz;                                                 \
		slow = ex_ * ex_ + ey_ * ey_ + ez_ * ez_ < lim;               \
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
	float px, py, pz, x = 0, y = 0, z = 0, lim = 0;
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
	limits_init(&lb, in, p);
	memcpy(&prev_t, tp, sizeof(prev_t));
	px = ((const float *)(const void *)dp)[0];
	py = ((const float *)(const void *)dp)[1];
	pz = ((const float *)(const void *)dp)[2];
	i = 1;
	refill(&lb, 1);
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
