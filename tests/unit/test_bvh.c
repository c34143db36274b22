/* SPDX-License-Identifier: MIT */
/*
 * The BVH ray caster against a brute-force loop over ray_obb on random
 * scenes (fixed seeds), plus hand-computed cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "obb.h"
#include "pose.h"
#include "rng.h"

/* ======================= Helpers ======================= */

static float rng_unitf(uint64_t *s)
{
	return (float)rng_unit(s);
}

static float rng_range(uint64_t *s, float lo, float hi)
{
	return lo + (hi - lo) * rng_unitf(s);
}

static void rng_dir(uint64_t *s, vec3 d)
{
	float n;

	do {
		d[0] = rng_range(s, -1, 1);
		d[1] = rng_range(s, -1, 1);
		d[2] = rng_range(s, -1, 1);
		n = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
	} while (n < 1e-4f || n > 1);
	n = sqrtf(n);
	d[0] /= n;
	d[1] /= n;
	d[2] /= n;
}

static void set_ray(struct ray *r, const float *o, const float *d)
{
	int k;

	for (k = 0; k < 3; k++) {
		r->o[k] = o[k];
		r->d[k] = d[k];
	}
}

/*
 * n random boxes in a cube of side `side`: random sizes, random
 * rotations (axis-aligned when `aligned`), overlapping; every 10th box
 * is an exact copy of an earlier one so that equal distances occur.
 */
static struct obb *random_scene(uint64_t seed, size_t n, float side,
				bool aligned)
{
	struct obb *b = calloc(n ? n : 1, sizeof(*b));
	uint64_t s = seed;
	size_t i;

	assert_non_null(b);
	for (i = 0; i < n; i++) {
		struct pose p;
		vec3 zero = { 0, 0, 0 }, half;
		float q[4], qn;

		if (i >= 10 && i % 10 == 0) {
			b[i] = b[rng_next64(&s) % i];
			continue;
		}
		if (aligned) {
			q[0] = q[1] = q[2] = 0;
			q[3] = 1;
		} else {
			do {
				q[0] = rng_range(&s, -1, 1);
				q[1] = rng_range(&s, -1, 1);
				q[2] = rng_range(&s, -1, 1);
				q[3] = rng_range(&s, -1, 1);
				qn = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] +
				     q[3] * q[3];
			} while (qn < 1e-3f || qn > 1);
			qn = sqrtf(qn);
			q[0] /= qn;
			q[1] /= qn;
			q[2] /= qn;
			q[3] /= qn;
		}
		pose_set(&p, q[0], q[1], q[2], q[3], rng_range(&s, 0, side),
			 rng_range(&s, 0, side), rng_range(&s, 0, side));
		half[0] = rng_range(&s, 0.02f, 0.5f);
		half[1] = rng_range(&s, 0.02f, 0.5f);
		half[2] = rng_range(&s, 0.02f, 0.5f);
		if (aligned) {
			/* exact axes, and centres/sizes on a coarse grid */
			half[0] = roundf(half[0] * 64) / 64;
			half[1] = roundf(half[1] * 64) / 64;
			half[2] = roundf(half[2] * 64) / 64;
			p.t[0] = roundf(p.t[0] * 16) / 16;
			p.t[1] = roundf(p.t[1] * 16) / 16;
			p.t[2] = roundf(p.t[2] * 16) / 16;
		}
		obb_from_local(&p, zero, half, &b[i]);
	}
	return b;
}

/* The reference: every box, nearest entry, lowest index on ties. */
static int32_t brute_cast(const struct obb *b, size_t n, const struct ray *r,
			  float tmax, float *t_out)
{
	int32_t best = -1;
	float best_t = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		float t;

		if (ray_obb(r, &b[i], tmax, &t) && (best < 0 || t < best_t)) {
			best = (int32_t)i;
			best_t = t;
		}
	}
	*t_out = best_t;
	return best;
}

static bool brute_occluded(const struct obb *b, size_t n, const struct ray *r,
			   float tmax, int32_t ignore)
{
	size_t i;
	float t;

	for (i = 0; i < n; i++)
		if ((int32_t)i != ignore && ray_obb(r, &b[i], tmax, &t))
			return true;
	return false;
}

/*
 * The query kernels to compare: every one the CPU runs (SSE2 always,
 * then AVX2 and AVX-512 where present). A hierarchy is built once per
 * kernel and forced to it, so each check runs all of them.
 */
#define NISA 3

struct bvhs {
	struct bvh *v[NISA];
	int n;
};

static void bvhs_build(const struct obb *b, size_t n, struct bvhs *out)
{
	int isa;

	out->n = 0;
	for (isa = BVH_ISA_SSE2; isa <= BVH_ISA_AVX512; isa++) {
		struct bvh *bv = NULL;

		assert_int_equal(bvh_build(b, n, &bv), 0);
		if (bvh__set_isa(bv, isa)) {
			bvh_free(bv);
			continue;
		}
		assert_int_equal(bvh__isa(bv), isa);
		out->v[out->n++] = bv;
	}
	assert_true(out->n >= 1);
	assert_int_equal(bvh__isa(out->v[0]), BVH_ISA_SSE2);
}

static void bvhs_free(struct bvhs *s)
{
	int k;

	for (k = 0; k < s->n; k++)
		bvh_free(s->v[k]);
	s->n = 0;
}

/* Bitwise equality of two distances (so -0 and 0 differ too). */
static bool same_bits(float a, float b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/*
 * Casts r with every kernel and the brute-force loop and asserts the
 * same answer, the distance bitwise; returns the box hit.
 */
static int32_t check_ray(const struct bvhs *bv, const struct obb *b, size_t n,
			 const struct ray *r, float tmax)
{
	float tb;
	int32_t ib = brute_cast(b, n, r, tmax, &tb);
	int k;

	for (k = 0; k < bv->n; k++) {
		struct bvh_hit h;
		bool hit = bvh_cast(bv->v[k], r, tmax, &h);

		if (h.box != ib || (ib >= 0 && !same_bits(h.t, tb)))
			print_error("kernel %d: ray o=(%.9g %.9g %.9g) d=(%.9g %.9g %.9g) "
				    "tmax %g: bvh %d t=%.9g, brute %d t=%.9g\n",
				    bvh__isa(bv->v[k]), (double)r->o[0], (double)r->o[1],
				    (double)r->o[2], (double)r->d[0], (double)r->d[1],
				    (double)r->d[2], (double)tmax, h.box, (double)h.t, ib,
				    (double)tb);
		assert_int_equal(h.box, ib);
		assert_int_equal(hit, ib >= 0);
		if (ib >= 0)
			assert_true(same_bits(h.t, tb));
		else
			assert_true(same_bits(h.t, 0.0f));
	}
	return ib;
}

/* bvh_occluded with every kernel must give want. */
static void check_occluded(const struct bvhs *bv, const struct ray *r,
			   float tmax, int32_t ignore, bool want)
{
	int k;

	for (k = 0; k < bv->n; k++)
		assert_int_equal(bvh_occluded(bv->v[k], r, tmax, ignore), want);
}

/* ======================= Random scenes ======================= */

struct counts {
	size_t rays, hits, inside, grazed, short_range;
};

/*
 * Random rays of several kinds against one scene, each checked against
 * the brute-force loop. Kinds: uniform origins and directions with
 * random ranges; origins inside a box; rays aimed exactly at a box
 * corner or edge midpoint; the same rays with a range shorter than the
 * hit; occlusion queries that ignore the box hit.
 */
static void run_scene(const struct obb *b, size_t n, float side, size_t nrays,
		      uint64_t seed, struct counts *c)
{
	struct bvhs bv;
	uint64_t s = seed;
	size_t i;

	bvhs_build(b, n, &bv);
	assert_int_equal(bvh_count(bv.v[0]), n);
	for (i = 0; i < nrays; i++) {
		struct ray r;
		vec3 o, d, corners[8], tgt;
		float tmax = rng_range(&s, 0.1f, 2.0f * side), tb, len;
		int32_t hit, kind = (int32_t)(i % 4);
		size_t j = rng_next64(&s) % n;
		int k;

		o[0] = rng_range(&s, -0.5f, side + 0.5f);
		o[1] = rng_range(&s, -0.5f, side + 0.5f);
		o[2] = rng_range(&s, -0.5f, side + 0.5f);
		rng_dir(&s, d);
		if (kind == 1) {
			/* start inside box j */
			for (k = 0; k < 3; k++)
				o[k] = b[j].c[k] + 0.5f * rng_range(&s, -1, 1) *
					b[j].h[0] * b[j].ax[0][k];
		} else if (kind == 2 || kind == 3) {
			/* aim at a corner, or at the midpoint of an edge */
			obb_corners(&b[j], corners);
			k = (int)(rng_next64(&s) % 8);
			for (int a = 0; a < 3; a++)
				tgt[a] = kind == 2 ? corners[k][a] :
					0.5f * (corners[k][a] +
						corners[(k + 1) % 4 + (k / 4) * 4][a]);
			for (int a = 0; a < 3; a++)
				d[a] = tgt[a] - o[a];
			len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
			if (len < 1e-3f)
				continue;
			for (int a = 0; a < 3; a++)
				d[a] /= len;
			tmax = 2.0f * side + 1.0f;
			c->grazed++;
		}
		set_ray(&r, o, d);
		hit = check_ray(&bv, b, n, &r, tmax);
		c->rays++;
		if (hit < 0)
			continue;
		c->hits++;
		brute_cast(b, n, &r, tmax, &tb);
		if (tb == 0.0f)
			c->inside++;
		if (tb > 0.0f) {
			/* shorter range than the hit, and exactly the hit */
			check_ray(&bv, b, n, &r, 0.5f * tb);
			check_ray(&bv, b, n, &r, tb);
			c->short_range++;
		}
		/* occlusion: ignoring the first box, up to the hit or beyond */
		check_occluded(&bv, &r, tmax, hit, brute_occluded(b, n, &r, tmax, hit));
		check_occluded(&bv, &r, tb, -1, true);
		check_occluded(&bv, &r, 0.5f * tb, hit,
			       brute_occluded(b, n, &r, 0.5f * tb, hit));
	}
	bvhs_free(&bv);
}

static void scene_case(size_t n, size_t nrays, uint64_t seed)
{
	/* density: about one box per 0.4 m cube, so boxes overlap */
	float side = 0.75f * cbrtf((float)n);
	struct obb *b = random_scene(seed, n, side, false);
	struct counts c = { 0 };

	run_scene(b, n, side, nrays, seed ^ 0x5eed, &c);
	/* every kind occurred, so the comparison covered them */
	assert_true(c.hits > c.rays / 4);
	assert_true(c.inside > 0);
	assert_true(c.grazed > 0);
	assert_true(c.short_range > 0);
	free(b);
}

static void test_random_10(void **state)
{
	(void)state;
	scene_case(10, 4000, 10);
}

static void test_random_100(void **state)
{
	(void)state;
	scene_case(100, 4000, 100);
}

static void test_random_1000(void **state)
{
	(void)state;
	scene_case(1000, 2000, 1000);
}

static void test_random_20000(void **state)
{
	(void)state;
	scene_case(20000, 400, 20000);
}

/*
 * Axis-aligned boxes with axis-aligned rays lying exactly in a face
 * plane (parallel rays touching a face count as hits) or along an edge.
 */
static void test_parallel_on_faces(void **state)
{
	const size_t n = 300;
	float side = 0.75f * cbrtf((float)n);
	struct obb *b = random_scene(77, n, side, true);
	struct bvhs bv;
	uint64_t s = 78;
	size_t i, hits = 0;

	(void)state;
	bvhs_build(b, n, &bv);
	for (i = 0; i < 3000; i++) {
		size_t j = rng_next64(&s) % n;
		int ax = (int)(rng_next64(&s) % 3);     /* face normal axis */
		int dir = (ax + 1 + (int)(rng_next64(&s) % 2)) % 3;
		int other = 3 - ax - dir;
		float sign = (rng_next64(&s) & 1) ? 1.0f : -1.0f;
		vec3 o, d = { 0, 0, 0 };
		struct ray r;
		int32_t hit;

		/* on the face plane of box j, outside it along `dir` */
		o[ax] = b[j].c[ax] + sign * b[j].h[ax];
		o[dir] = b[j].c[dir] - 2.0f * b[j].h[dir] - 0.25f;
		o[other] = b[j].c[other];
		if (i % 3 == 0) /* along an edge of the face */
			o[other] = b[j].c[other] + b[j].h[other];
		d[dir] = 1.0f;
		set_ray(&r, o, d);
		hit = check_ray(&bv, b, n, &r, 2.0f * side);
		/* box j itself is touched, so something is hit */
		assert_true(hit >= 0);
		hits++;
		/* the reverse direction from beyond the box */
		o[dir] = b[j].c[dir] + 2.0f * b[j].h[dir] + 0.25f;
		d[dir] = -1.0f;
		set_ray(&r, o, d);
		assert_true(check_ray(&bv, b, n, &r, 2.0f * side) >= 0);
		/* parallel, just outside the slab: box j is not hit */
		o[ax] = b[j].c[ax] + sign * (b[j].h[ax] + 1.0f / 128);
		set_ray(&r, o, d);
		check_ray(&bv, b, n, &r, 2.0f * side);
	}
	assert_int_equal(hits, 3000);
	bvhs_free(&bv);
	free(b);
}

/* ======================= Hand cases ======================= */

static void unit_box(struct obb *b, float cx, float cy, float cz, float h)
{
	memset(b, 0, sizeof(*b));
	b->c[0] = cx;
	b->c[1] = cy;
	b->c[2] = cz;
	b->ax[0][0] = b->ax[1][1] = b->ax[2][2] = 1;
	b->h[0] = b->h[1] = b->h[2] = h;
}

static void test_hand_cases(void **state)
{
	struct obb b[6];
	struct bvh *bv = NULL;
	struct bvh_hit h;
	struct ray r = { { -5, 0, 0 }, { 1, 0, 0 } };
	int i;

	(void)state;
	/* boxes 0..5 in a row along x at 0, 3, 6, ..., half-size 1 */
	for (i = 0; i < 6; i++)
		unit_box(&b[i], 3.0f * (float)i, 0, 0, 1);
	assert_int_equal(bvh_build(b, 6, &bv), 0);
	assert_true(bvh_cast(bv, &r, 100, &h));
	assert_int_equal(h.box, 0);
	assert_true(h.t == 4.0f); /* face at x = -1 */
	/* range shorter than the hit */
	assert_false(bvh_cast(bv, &r, 3.99f, &h));
	assert_int_equal(h.box, -1);
	/* exactly the range of the hit */
	assert_true(bvh_cast(bv, &r, 4.0f, &h));
	/* inside box 2 (x in [5, 7]): t = 0 */
	r.o[0] = 6.5f;
	assert_true(bvh_cast(bv, &r, 100, &h));
	assert_int_equal(h.box, 2);
	assert_true(h.t == 0.0f);
	/* backwards from inside box 2: box 1 is next, face at x = 4 */
	r.d[0] = -1;
	r.o[0] = 5.5f;
	assert_true(bvh_cast(bv, &r, 100, &h));
	assert_int_equal(h.box, 2);
	r.o[0] = 4.5f; /* in the gap between box 1 (<= 4) and box 2 (>= 5) */
	assert_true(bvh_cast(bv, &r, 100, &h));
	assert_int_equal(h.box, 1);
	assert_true(h.t == 0.5f);
	/* occlusion from x = -5 to the centre of box 3 (x = 9) */
	r.o[0] = -5;
	r.d[0] = 1;
	assert_true(bvh_occluded(bv, &r, 14, 3));
	r.o[0] = 7.5f; /* between box 2 and box 3 */
	assert_false(bvh_occluded(bv, &r, 1.5f, 3));
	assert_true(bvh_occluded(bv, &r, 1.5f, -1));
	/* grazing the top face y = 1 */
	r.o[0] = -5;
	r.o[1] = 1;
	assert_true(bvh_cast(bv, &r, 100, &h));
	assert_int_equal(h.box, 0);
	r.o[1] = 1.0001f;
	assert_false(bvh_cast(bv, &r, 100, &h));
	bvh_free(bv);
}

static void test_ties_lowest_index(void **state)
{
	struct obb b[8];
	struct bvh *bv = NULL;
	struct bvh_hit h;
	struct ray r = { { 0, 0, -10 }, { 0, 0, 1 } };
	int i;

	(void)state;
	for (i = 0; i < 8; i++)
		unit_box(&b[i], 10.0f * (float)i, 0, 0, 1);
	b[5] = b[0];
	b[7] = b[0];
	assert_int_equal(bvh_build(b, 8, &bv), 0);
	assert_true(bvh_cast(bv, &r, 100, &h));
	assert_int_equal(h.box, 0);
	assert_true(h.t == 9.0f);
	assert_true(bvh_occluded(bv, &r, 100, 0)); /* copies 5 and 7 */
	/* move box 0 away and refit: the tie goes to 5 */
	unit_box(&b[0], 0, 50, 0, 1);
	assert_int_equal(bvh_refit(bv, b), 0);
	assert_true(bvh_cast(bv, &r, 100, &h));
	assert_int_equal(h.box, 5);
	assert_int_equal(bvh_rebuild(bv, b), 0);
	assert_true(bvh_cast(bv, &r, 100, &h));
	assert_int_equal(h.box, 5);
	bvh_free(bv);
}

static void test_empty_and_errors(void **state)
{
	struct bvh *bv = NULL;
	struct bvh_hit h = { 7, 7 };
	struct ray r = { { 0, 0, 0 }, { 1, 0, 0 } };
	struct obb b;

	(void)state;
	assert_int_equal(bvh_build(NULL, 0, &bv), 0);
	assert_false(bvh_cast(bv, &r, 10, &h));
	assert_int_equal(h.box, -1);
	assert_false(bvh_occluded(bv, &r, 10, -1));
	bvh_free(bv);
	bvh_free(NULL);
	bv = NULL;
	assert_int_equal(bvh_build(NULL, 3, &bv), ENG_EINVAL);
	unit_box(&b, 0, 0, 0, 1);
	assert_int_equal(bvh_build(&b, 1, NULL), ENG_EINVAL);
	b.c[1] = NAN;
	assert_int_equal(bvh_build(&b, 1, &bv), ENG_EINVAL);
	assert_null(bv);
	unit_box(&b, 0, 0, 0, 1);
	assert_int_equal(bvh_build(&b, 1, &bv), 0);
	b.h[2] = INFINITY;
	assert_int_equal(bvh_refit(bv, &b), ENG_EINVAL);
	assert_int_equal(bvh_rebuild(bv, &b), ENG_EINVAL);
	assert_false(bvh_cast(bv, &r, 10, &h)); /* failed rebuild: no hits */
	unit_box(&b, 0, 0, 0, 1);
	assert_int_equal(bvh_rebuild(bv, &b), 0);
	assert_true(bvh_cast(bv, &r, 10, &h));
	assert_true(h.t == 0.0f);
	/* negative and NaN ranges hit nothing */
	assert_false(bvh_cast(bv, &r, -1, &h));
	assert_false(bvh_cast(bv, &r, NAN, &h));
	bvh_free(bv);
}

/*
 * Moves the boxes (axis a by up to +-dmax, and axis 2 too when both2), then
 * refits (pass 0) or rebuilds (pass 1) every tree in bv, and checks nr
 * random rays against brute force; twice, so both are checked.
 */
static void move_and_check(struct bvhs *bv, struct obb *b, size_t n, float side,
			   int a, bool both2, float dmax, size_t nr, uint64_t *s)
{
	size_t i;
	int pass, k;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			b[i].c[a] += rng_range(s, -dmax, dmax);
			if (both2)
				b[i].c[2] += rng_range(s, -dmax, dmax);
		}
		for (k = 0; k < bv->n; k++) {
			if (pass == 0)
				assert_int_equal(bvh_refit(bv->v[k], b), 0);
			else
				assert_int_equal(bvh_rebuild(bv->v[k], b), 0);
		}
		for (i = 0; i < nr; i++) {
			struct ray r;
			vec3 o, d;

			o[0] = rng_range(s, 0, side);
			o[1] = rng_range(s, 0, side);
			o[2] = rng_range(s, 0, side);
			rng_dir(s, d);
			set_ray(&r, o, d);
			check_ray(bv, b, n, &r, side);
		}
	}
}

/* Refit and rebuild after moving every box agree with brute force. */
static void test_refit_rebuild(void **state)
{
	const size_t n = 500;
	float side = 0.75f * cbrtf((float)n);
	struct obb *b = random_scene(5, n, side, false);
	struct bvhs bv;
	uint64_t s = 6;

	(void)state;
	bvhs_build(b, n, &bv);
	move_and_check(&bv, b, n, side, 0, true, 1.0f, 1000, &s);
	bvhs_free(&bv);
	free(b);
}

/*
 * Long thin sticks at random angles, crossing each other: the build cuts
 * many of them by spatial splits, so one box sits in several leaves with
 * bounds of only its part there. Every kind of ray must still find what
 * the brute-force loop finds, bit for bit, before and after a refit (the
 * copies then bound the whole box) and a rebuild.
 */
static void test_spatial_splits(void **state)
{
	const size_t n = 600;
	float side = 3.0f;
	struct obb *b = random_scene(21, n, side, false);
	struct counts c = { 0 };
	struct bvhs bv;
	struct bvh *one = NULL;
	uint64_t s = 22;
	size_t i, refs;

	(void)state;
	for (i = 0; i < n; i++) {
		b[i].h[0] = 0.6f + b[i].h[0];
		b[i].h[1] = 0.01f + 0.04f * b[i].h[1];
		b[i].h[2] = 0.01f + 0.04f * b[i].h[2];
	}
	assert_int_equal(bvh_build(b, n, &one), 0);
	refs = bvh__refs(one);
	/* copies were made, at most one per box */
	assert_true(refs > n + n / 10);
	assert_true(refs <= 2 * n);
	bvh_free(one);
	/* 64 boxes: no copies */
	assert_int_equal(bvh_build(b, 64, &one), 0);
	assert_int_equal(bvh__refs(one), 64);
	bvh_free(one);
	run_scene(b, n, side, 6000, 23, &c);
	assert_true(c.hits > c.rays / 4);
	assert_true(c.grazed > 0);
	bvhs_build(b, n, &bv);
	move_and_check(&bv, b, n, side, 1, false, 0.3f, 3000, &s);
	bvhs_free(&bv);
	free(b);
}

/*
 * The batch gives the same answers with 1 and 2 threads as bvh_cast,
 * with every kernel.
 */
static void test_batch(void **state)
{
	const size_t n = 2000, nr = 5000;
	float side = 0.75f * cbrtf((float)n);
	struct obb *b = random_scene(9, n, side, false);
	struct ray *r = calloc(nr, sizeof(*r));
	struct bvh_hit *h1 = calloc(nr, sizeof(*h1));
	struct bvh_hit *h2 = calloc(nr, sizeof(*h2));
	struct bvhs bv;
	uint64_t s = 10;
	size_t i, n1, n2, hits;
	int k;

	(void)state;
	assert_non_null(r);
	assert_non_null(h1);
	assert_non_null(h2);
	bvhs_build(b, n, &bv);
	for (i = 0; i < nr; i++) {
		r[i].o[0] = rng_range(&s, 0, side);
		r[i].o[1] = rng_range(&s, 0, side);
		r[i].o[2] = rng_range(&s, 0, side);
		rng_dir(&s, r[i].d);
	}
	for (k = 0; k < bv.n; k++) {
		n1 = bvh_cast_batch(bv.v[k], r, nr, 3.0f, h1, 1);
		n2 = bvh_cast_batch(bv.v[k], r, nr, 3.0f, h2, 2);
		assert_int_equal(n1, n2);
		hits = 0;
		for (i = 0; i < nr; i++) {
			struct bvh_hit h;

			bvh_cast(bv.v[0], &r[i], 3.0f, &h);
			assert_int_equal(h1[i].box, h.box);
			assert_int_equal(h2[i].box, h.box);
			assert_true(same_bits(h1[i].t, h.t) && same_bits(h2[i].t, h.t));
			hits += h.box >= 0;
			if (k == 0 && i % 10 == 0)
				check_ray(&bv, b, n, &r[i], 3.0f);
		}
		assert_int_equal(n1, hits);
	}
	bvhs_free(&bv);
	free(b);
	free(r);
	free(h1);
	free(h2);
}

/* Forcing a kernel: SSE2 always works, nonsense never does. */
static void test_kernels(void **state)
{
	struct obb b;
	struct bvh *bv = NULL;

	(void)state;
	unit_box(&b, 0, 0, 0, 1);
	assert_int_equal(bvh_build(&b, 1, &bv), 0);
	assert_true(bvh__isa(bv) >= BVH_ISA_SSE2 && bvh__isa(bv) <= BVH_ISA_AVX512);
	assert_int_equal(bvh__set_isa(bv, BVH_ISA_SSE2), 0);
	assert_int_equal(bvh__isa(bv), BVH_ISA_SSE2);
	assert_int_equal(bvh__set_isa(bv, -1), ENG_EINVAL);
	assert_int_equal(bvh__set_isa(bv, BVH_ISA_AVX512 + 1), ENG_EINVAL);
	assert_int_equal(bvh__set_isa(NULL, BVH_ISA_SSE2), ENG_EINVAL);
	bvh_free(bv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_cases),
		cmocka_unit_test(test_ties_lowest_index),
		cmocka_unit_test(test_empty_and_errors),
		cmocka_unit_test(test_random_10),
		cmocka_unit_test(test_random_100),
		cmocka_unit_test(test_random_1000),
		cmocka_unit_test(test_random_20000),
		cmocka_unit_test(test_parallel_on_faces),
		cmocka_unit_test(test_refit_rebuild),
		cmocka_unit_test(test_spatial_splits),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_kernels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
