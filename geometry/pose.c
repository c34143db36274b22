/* SPDX-License-Identifier: MIT */
/* Rigid poses, interpolation and time lookups. */
#include "pose.h"

#include <math.h>
#include <string.h>

void pose_identity(struct pose *p)
{
	glm_quat_identity(p->q);
	glm_vec3_zero(p->t);
}

void pose_set(struct pose *p, float qx, float qy, float qz, float qw,
	      float tx, float ty, float tz)
{
	p->q[0] = qx;
	p->q[1] = qy;
	p->q[2] = qz;
	p->q[3] = qw;
	p->t[0] = tx;
	p->t[1] = ty;
	p->t[2] = tz;
}

int pose_normalize(struct pose *p)
{
	double x = p->q[0], y = p->q[1], z = p->q[2], w = p->q[3];
	double n = sqrt(x * x + y * y + z * z + w * w);

	if (!isfinite(n) || n < 1e-12)
		return ENG_EINVAL;
	p->q[0] = (float)(x / n);
	p->q[1] = (float)(y / n);
	p->q[2] = (float)(z / n);
	p->q[3] = (float)(w / n);
	return 0;
}

void pose_rotate(const struct pose *p, const vec3 in, vec3 out)
{
	/* v' = v + 2w(u x v) + 2 u x (u x v), u = q.xyz */
	float ux = p->q[0], uy = p->q[1], uz = p->q[2], w = p->q[3];
	float vx = in[0], vy = in[1], vz = in[2];
	float cx = uy * vz - uz * vy;
	float cy = uz * vx - ux * vz;
	float cz = ux * vy - uy * vx;
	float ccx = uy * cz - uz * cy;
	float ccy = uz * cx - ux * cz;
	float ccz = ux * cy - uy * cx;

	out[0] = vx + 2.0f * (w * cx + ccx);
	out[1] = vy + 2.0f * (w * cy + ccy);
	out[2] = vz + 2.0f * (w * cz + ccz);
}

void pose_apply(const struct pose *p, const vec3 in, vec3 out)
{
	vec3 r;

	pose_rotate(p, in, r);
	out[0] = r[0] + p->t[0];
	out[1] = r[1] + p->t[1];
	out[2] = r[2] + p->t[2];
}

static void quat_mul(const float *a, const float *b, float *o)
{
	float ax = a[0], ay = a[1], az = a[2], aw = a[3];
	float bx = b[0], by = b[1], bz = b[2], bw = b[3];

	o[0] = aw * bx + ax * bw + ay * bz - az * by;
	o[1] = aw * by - ax * bz + ay * bw + az * bx;
	o[2] = aw * bz + ax * by - ay * bx + az * bw;
	o[3] = aw * bw - ax * bx - ay * by - az * bz;
}

void pose_mul(const struct pose *a, const struct pose *b, struct pose *out)
{
	struct pose r;

	quat_mul(a->q, b->q, r.q);
	pose_apply(a, b->t, r.t);
	/* cppcheck-suppress uninitvar ; quat_mul and pose_apply wrote r.q and r.t */
	*out = r;
}

void pose_inv(const struct pose *p, struct pose *out)
{
	struct pose r;

	r.q[0] = -p->q[0];
	r.q[1] = -p->q[1];
	r.q[2] = -p->q[2];
	r.q[3] = p->q[3];
	glm_vec3_zero(r.t);
	pose_rotate(&r, p->t, r.t);
	r.t[0] = -r.t[0];
	r.t[1] = -r.t[1];
	r.t[2] = -r.t[2];
	*out = r;
}

void pose_interp(const struct pose *a, const struct pose *b, float alpha,
		 struct pose *out)
{
	double t = alpha < 0.0f ? 0.0 : alpha > 1.0f ? 1.0 : (double)alpha;
	double qa[4], qb[4], d = 0, wa, wb, n = 0;
	int i;

	for (i = 0; i < 4; i++) {
		qa[i] = a->q[i];
		qb[i] = b->q[i];
		d += qa[i] * qb[i];
	}
	if (d < 0) { /* shortest arc */
		for (i = 0; i < 4; i++)
			qb[i] = -qb[i];
		d = -d;
	}
	if (d > 0.9995) { /* nearly equal: nlerp is exact enough */
		wa = 1.0 - t;
		wb = t;
	} else {
		double th = acos(d), s = sin(th);

		wa = sin((1.0 - t) * th) / s;
		wb = sin(t * th) / s;
	}
	for (i = 0; i < 3; i++)
		out->t[i] = (float)((1.0 - t) * (double)a->t[i] + t * (double)b->t[i]);
	for (i = 0; i < 4; i++) {
		qa[i] = wa * qa[i] + wb * qb[i];
		n += qa[i] * qa[i];
	}
	n = sqrt(n);
	for (i = 0; i < 4; i++)
		out->q[i] = (float)(qa[i] / n);
}

size_t time_floor_index(const void *base, size_t n, size_t stride, int64_t t)
{
	const char *b = base;
	size_t lo = 0, hi = n;

	/* first element with time > t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t v = *(const int64_t *)(const void *)(b + mid * stride);

		if (v <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? SIZE_MAX : lo - 1;
}

size_t time_nearest_index(const void *base, size_t n, size_t stride,
			  int64_t t, int64_t tol_ns)
{
	const char *b = base;
	size_t i, best = SIZE_MAX;
	int64_t bd = INT64_MAX;

	if (!n)
		return SIZE_MAX;
	i = time_floor_index(base, n, stride, t);
	for (size_t k = (i == SIZE_MAX ? 0 : i); k < n && k <= (i == SIZE_MAX ? 0 : i + 1); k++) {
		int64_t v = *(const int64_t *)(const void *)(b + k * stride);
		int64_t dd = v > t ? v - t : t - v;

		if (dd < bd) {
			bd = dd;
			best = k;
		}
	}
	return bd <= tol_ns ? best : SIZE_MAX;
}

size_t pose_sample_nearest(const struct pose_sample *s, size_t n, int64_t t)
{
	return time_nearest_index(s, n, sizeof(*s), t, INT64_MAX);
}

/*
 * The interval pose_sample_at() found last in each of a few arrays, per
 * thread: the scene and the visibility scans ask for times a frame or a
 * sample apart, so the next time usually falls in the same interval or
 * one of the next few (the 10 Hz visibility timeline reads 30 Hz samples
 * three or four intervals on), which a few comparisons confirm before any
 * binary search. A hint is only a guess, checked against the array itself
 * (a stale one, even for a freed array's address, just misses).
 */
#define POSE_HINTS 64
/* intervals after the hinted one tried before a binary search */
#define POSE_HINT_AHEAD 4

struct pose_hint {
	const struct pose_sample *s;
	size_t i;
};

static _Thread_local struct pose_hint pose_hints[POSE_HINTS];

/* The last i with s[i].t_ns <= t, for s[0].t_ns < t < s[n - 1].t_ns. */
static size_t floor_hinted(const struct pose_sample *s, size_t n, int64_t t)
{
	struct pose_hint *h = &pose_hints[((uintptr_t)s * 0x9e3779b97f4a7c15ull) >> 58];
	size_t i = h->i;

	if (h->s == s && i + 1 < n && s[i].t_ns <= t) {
		size_t j, end = i + POSE_HINT_AHEAD + 2 < n ? i + POSE_HINT_AHEAD + 2 : n;

		if (t < s[i + 1].t_ns)
			return i;
		for (j = i + 2; j < end; j++)
			if (t < s[j].t_ns) {
				h->i = j - 1;
				return j - 1;
			}
	}
	i = time_floor_index(s, n, sizeof(*s), t);
	h->s = s;
	h->i = i;
	return i;
}

bool pose_same(const struct pose *a, const struct pose *b)
{
	/* bit for bit, member by member (the struct has padding) */
	return !memcmp(a->q, b->q, sizeof(a->q)) && !memcmp(a->t, b->t, sizeof(a->t));
}

int pose_sample_at(const struct pose_sample *s, size_t n, int64_t t,
		   int64_t tol_ns, struct pose *out)
{
	size_t i;
	int64_t t0, t1;

	if (!n)
		return ENG_ERANGE;
	if (t <= s[0].t_ns) {
		if (s[0].t_ns - t > tol_ns)
			return ENG_ERANGE;
		*out = s[0].pose;
		return 0;
	}
	if (t >= s[n - 1].t_ns) {
		if (t - s[n - 1].t_ns > tol_ns)
			return ENG_ERANGE;
		*out = s[n - 1].pose;
		return 0;
	}
	i = floor_hinted(s, n, t);
	t0 = s[i].t_ns;
	t1 = s[i + 1].t_ns;
	/*
	 * An interval of no length, or whose ends hold the same pose (a body
	 * at rest between two motions), holds its first sample's pose: no
	 * interpolation, which would renormalise the quaternion in double.
	 */
	if (t1 == t0 || pose_same(&s[i].pose, &s[i + 1].pose)) {
		*out = s[i].pose;
		return 0;
	}
	pose_interp(&s[i].pose, &s[i + 1].pose,
		    (float)((double)(t - t0) / (double)(t1 - t0)), out);
	return 0;
}
