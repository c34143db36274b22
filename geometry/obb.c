/* SPDX-License-Identifier: MIT */
/* Oriented boxes and ray-box slab tests. */
#include "obb.h"

#include <math.h>

static float dot3(const float *a, const float *b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

void obb_from_local(const struct pose *T_world_obj, const vec3 local_c,
		    const vec3 half, struct obb *out)
{
	static const vec3 e[3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
	int i;

	pose_apply(T_world_obj, local_c, out->c);
	for (i = 0; i < 3; i++) {
		pose_rotate(T_world_obj, e[i], out->ax[i]);
		out->h[i] = fabsf(half[i]);
	}
}

void obb_aabb(const struct obb *b, vec3 lo, vec3 hi)
{
	int i, k;

	for (i = 0; i < 3; i++) {
		float r = 0;

		for (k = 0; k < 3; k++)
			r += fabsf(b->ax[k][i]) * b->h[k];
		lo[i] = b->c[i] - r;
		hi[i] = b->c[i] + r;
	}
}

void obb_corners(const struct obb *b, vec3 out[8])
{
	static const signed char s[8][3] = {
		{ -1, -1, -1 }, { -1, 1, -1 }, { 1, 1, -1 }, { 1, -1, -1 },
		{ -1, -1, 1 },  { -1, 1, 1 },  { 1, 1, 1 },  { 1, -1, 1 },
	};
	int i, k, j;

	for (i = 0; i < 8; i++) {
		for (j = 0; j < 3; j++) {
			out[i][j] = b->c[j];
			for (k = 0; k < 3; k++)
				out[i][j] += (float)s[i][k] * b->h[k] * b->ax[k][j];
		}
	}
}

bool obb_contains(const struct obb *b, const vec3 p)
{
	vec3 d = { p[0] - b->c[0], p[1] - b->c[1], p[2] - b->c[2] };
	int k;

	for (k = 0; k < 3; k++)
		if (fabsf(dot3(d, b->ax[k])) > b->h[k] * (1.0f + 1e-6f) + 1e-7f)
			return false;
	return true;
}

/* Slab test on one axis, shared by the OBB and AABB versions. */
static bool slab(float o, float d, float lo, float hi, float *t0, float *t1)
{
	if (fabsf(d) < 1e-12f)
		return o >= lo && o <= hi;
	{
		float inv = 1.0f / d;
		float a = (lo - o) * inv, b = (hi - o) * inv;

		if (a > b) {
			float tmp = a;

			a = b;
			b = tmp;
		}
		if (a > *t0)
			*t0 = a;
		if (b < *t1)
			*t1 = b;
	}
	return *t0 <= *t1;
}

bool ray_obb(const struct ray *r, const struct obb *b, float tmax, float *t)
{
	vec3 rel = { r->o[0] - b->c[0], r->o[1] - b->c[1], r->o[2] - b->c[2] };
	float t0 = 0.0f, t1 = tmax;
	int k;

	for (k = 0; k < 3; k++) {
		float o = dot3(rel, b->ax[k]);
		float d = dot3(r->d, b->ax[k]);

		if (!slab(o, d, -b->h[k], b->h[k], &t0, &t1))
			return false;
	}
	*t = t0;
	return true;
}

bool ray_aabb(const struct ray *r, const vec3 lo, const vec3 hi, float tmax,
	      float *t)
{
	float t0 = 0.0f, t1 = tmax;
	int k;

	for (k = 0; k < 3; k++)
		if (!slab(r->o[k], r->d[k], lo[k], hi[k], &t0, &t1))
			return false;
	*t = t0;
	return true;
}
