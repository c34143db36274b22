/* SPDX-License-Identifier: MIT */
/* Geometry kernels against hand-computed values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "bev.h"
#include "discretise.h"
#include "obb.h"
#include "pose.h"

#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* rotation of angle a (rad) about +Z */
static void rotz(struct pose *p, double a, float tx, float ty, float tz)
{
	pose_set(p, 0, 0, (float)sin(a / 2), (float)cos(a / 2), tx, ty, tz);
}

static void test_pose_apply_and_inverse(void **state)
{
	struct pose p, inv, id;
	vec3 v = { 1, 0, 0 }, out;

	(void)state;
	rotz(&p, M_PI / 2, 1, 2, 3);
	pose_apply(&p, v, out); /* R_z(90) (1,0,0) = (0,1,0), + t */
	NEAR(out[0], 1, 1e-6);
	NEAR(out[1], 3, 1e-6);
	NEAR(out[2], 3, 1e-6);
	pose_inv(&p, &inv);
	pose_mul(&p, &inv, &id);
	NEAR(id.t[0], 0, 1e-6);
	NEAR(id.t[1], 0, 1e-6);
	NEAR(fabs(id.q[3]), 1, 1e-6);
}

static void test_pose_interp_slerp(void **state)
{
	struct pose a, b, m;
	vec3 v = { 1, 0, 0 }, out;

	(void)state;
	rotz(&a, 0, 0, 0, 0);
	rotz(&b, M_PI / 2, 2, 0, 0);
	pose_interp(&a, &b, 0.5f, &m);
	NEAR(m.t[0], 1, 1e-6);
	pose_rotate(&m, v, out); /* 45 degrees */
	NEAR(out[0], M_SQRT1_2, 1e-6);
	NEAR(out[1], M_SQRT1_2, 1e-6);
	/* the shortest arc is taken even when b's quaternion is negated */
	b.q[2] = -b.q[2];
	b.q[3] = -b.q[3];
	b.q[2] = -b.q[2];
	pose_interp(&a, &b, 0.5f, &m);
	pose_rotate(&m, v, out);
	NEAR(out[0], M_SQRT1_2, 1e-6);
}

static void test_pose_normalize(void **state)
{
	struct pose p;

	(void)state;
	pose_set(&p, 0, 0, 0, 2, 0, 0, 0);
	assert_int_equal(pose_normalize(&p), 0);
	NEAR(p.q[3], 1, 1e-7);
	pose_set(&p, 0, 0, 0, 0, 0, 0, 0);
	assert_int_equal(pose_normalize(&p), ENG_EINVAL);
	pose_set(&p, NAN, 0, 0, 1, 0, 0, 0);
	assert_int_equal(pose_normalize(&p), ENG_EINVAL);
}

/*
 * pose_sample_at's interval hints change nothing: on an array with
 * repeated and uneven timestamps, times asked in order, backwards, at
 * random, in jumps of several intervals forward (which the hint looks
 * ahead for) and alternating between two arrays give bit for bit the pose
 * of the interval a binary search finds, interpolated by pose_interp.
 */
static void test_pose_sample_hinted(void **state)
{
	enum { N = 400 };
	static struct pose_sample a[N], b[N];
	uint64_t st = 7;
	int64_t t = 0, fwd = 0;
	int i, q;

	(void)state;
	for (i = 0; i < N; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		t += (int64_t)((st >> 40) % 5) * 1000; /* steps of 0..4 us: repeats too */
		a[i].t_ns = b[i].t_ns = t;
		pose_set(&a[i].pose, 0, 0, (float)sin(i * 0.1), (float)cos(i * 0.1), (float)i, 0, 0);
		pose_set(&b[i].pose, (float)sin(i * 0.2), 0, 0, (float)cos(i * 0.2), 0, (float)i, 0);
	}
	for (q = 0; q < 30000; q++) {
		const struct pose_sample *s = q % 3 == 2 ? b : a;
		int64_t tq;
		struct pose got, want;
		size_t k;

		st = st * 6364136223846793005ull + 1442695040888963407ull;
		if (q < 5000) {
			tq = a[0].t_ns + (int64_t)q * (t / 5000);          /* forward */
		} else if (q < 10000) {
			tq = t - (int64_t)(q - 5000) * (t / 5000);         /* backward */
		} else if (q < 20000) {
			tq = (int64_t)((st >> 20) % (uint64_t)(t + 1));    /* anywhere */
		} else {
			/* forward by 0 to 6 mean intervals, from the start again at the end */
			fwd += (t / N) * (int64_t)((st >> 50) % 7);
			if (fwd > t)
				fwd = a[0].t_ns;
			tq = fwd;
		}
		assert_int_equal(pose_sample_at(s, N, tq, INT64_MAX / 2, &got), 0);
		if (tq <= s[0].t_ns || tq >= s[N - 1].t_ns)
			continue;
		k = time_floor_index(s, N, sizeof(*s), tq);
		if (s[k + 1].t_ns == s[k].t_ns)
			want = s[k].pose;
		else
			pose_interp(&s[k].pose, &s[k + 1].pose,
				    (float)((double)(tq - s[k].t_ns) /
					    (double)(s[k + 1].t_ns - s[k].t_ns)), &want);
		assert_memory_equal(got.q, want.q, sizeof(got.q));
		assert_memory_equal(got.t, want.t, sizeof(got.t));
	}
}

static void test_pose_sample_at(void **state)
{
	struct pose_sample s[3];
	struct pose out;

	(void)state;
	rotz(&s[0].pose, 0, 0, 0, 0);
	rotz(&s[1].pose, 0, 1, 0, 0);
	rotz(&s[2].pose, 0, 3, 0, 0);
	s[0].t_ns = 0;
	s[1].t_ns = 100;
	s[2].t_ns = 200;
	assert_int_equal(pose_sample_at(s, 3, 150, 0, &out), 0);
	NEAR(out.t[0], 2, 1e-6);
	assert_int_equal(pose_sample_at(s, 3, 201, 0, &out), ENG_ERANGE);
	assert_int_equal(pose_sample_at(s, 3, 205, 10, &out), 0);
	NEAR(out.t[0], 3, 1e-6);
	assert_int_equal(pose_sample_at(s, 0, 0, 0, &out), ENG_ERANGE);
	/*
	 * A body at rest between two motions: both ends hold the same pose,
	 * which comes back bit for bit at any time between them. The float
	 * quaternion's norm is not 1 in double, so interpolating would
	 * renormalise it (with this machine's arithmetic, this one moves by an
	 * ulp that way).
	 */
	pose_set(&s[1].pose, 0.1f, 0.2f, 0.3f, 0.9273618f, 1.5f, -2.25f, 0.875f);
	s[2].pose = s[1].pose;
	assert_int_equal(pose_sample_at(s, 3, 150, 0, &out), 0);
	assert_true(pose_same(&out, &s[1].pose));
	assert_memory_equal(out.q, s[1].pose.q, sizeof(out.q));
	/* bit for bit: -0 is another pose than 0 (the box is rebuilt, no harm) */
	s[1].pose.t[2] = 0.0f;
	s[2].pose.t[2] = -0.0f;
	assert_false(pose_same(&s[1].pose, &s[2].pose));
	/* nearest join with tolerance */
	assert_int_equal(time_nearest_index(s, 3, sizeof(s[0]), 140, 50), 1);
	assert_int_equal(time_nearest_index(s, 3, sizeof(s[0]), 160, 50), 2);
	assert_true(time_nearest_index(s, 3, sizeof(s[0]), 350, 50) == SIZE_MAX);
	assert_true(time_nearest_index(s, 3, sizeof(s[0]), -40, 50) == 0);
}

/* camera looking along world +X: OpenCV +Z forward -> world +X, +Y down -> -Z */
static void camera_facing(struct pose *p, double yaw)
{
	/* R = Rz(yaw) * R0, with R0 mapping cam z->x, cam x->-y, cam y->-z */
	struct pose r0, rz;

	/* R0 as a quaternion: rotation matrix [[0,0,1],[-1,0,0],[0,-1,0]] */
	pose_set(&r0, -0.5f, 0.5f, -0.5f, 0.5f, 0, 0, 0);
	rotz(&rz, yaw, 0, 0, 0);
	pose_mul(&rz, &r0, p);
}

static void test_bev_heading_and_yaw(void **state)
{
	struct pose cam;
	float h, yaw;
	vec3 from = { 0, 0, 1.6f }, left = { 0, 2, 0 }, fr = { 1, -1, 5 },
	     back = { -1, -0.0001f, 0 };

	(void)state;
	camera_facing(&cam, 0);
	assert_int_equal(bev_heading(&cam, &h), 0);
	NEAR(h, 0, 1e-6);
	assert_int_equal(bev_yaw_to(h, from, left, &yaw), 0);
	NEAR(yaw, 90, 1e-4);
	assert_int_equal(bev_dir_from_yaw(yaw), BEV_LEFT);
	assert_int_equal(bev_yaw_to(h, from, fr, &yaw), 0);
	NEAR(yaw, -45, 1e-4);
	assert_int_equal(bev_dir_from_yaw(yaw), BEV_FRONT_RIGHT);
	/* wrap-around near 180: a point behind and slightly right */
	assert_int_equal(bev_yaw_to(h, from, back, &yaw), 0);
	NEAR(yaw, -179.9943, 1e-3);
	assert_int_equal(bev_dir_from_yaw(yaw), BEV_BACK);
	/* heading 170 deg, target at world angle -170 deg: yaw +20 */
	camera_facing(&cam, 170 * M_PI / 180);
	assert_int_equal(bev_heading(&cam, &h), 0);
	{
		vec3 t = { (float)cos(-170 * M_PI / 180), (float)sin(-170 * M_PI / 180), 0 };
		vec3 o = { 0, 0, 0 };

		assert_int_equal(bev_yaw_to(h, o, t, &yaw), 0);
		NEAR(yaw, 20, 1e-3);
	}
	assert_int_equal(bev_yaw_to(h, from, from, &yaw), ENG_ERANGE);
}

static void test_bev_sectors(void **state)
{
	(void)state;
	assert_int_equal(bev_dir_from_yaw(22.4f), BEV_FRONT);
	assert_int_equal(bev_dir_from_yaw(22.6f), BEV_FRONT_LEFT);
	assert_int_equal(bev_dir_from_yaw(-22.6f), BEV_FRONT_RIGHT);
	assert_int_equal(bev_dir_from_yaw(157.4f), BEV_BACK_LEFT);
	assert_int_equal(bev_dir_from_yaw(157.6f), BEV_BACK);
	assert_int_equal(bev_dir_from_yaw(180.0f), BEV_BACK);
	assert_int_equal(bev_dir_from_yaw(-180.0f), BEV_BACK);
	assert_int_equal(bev_dir_from_yaw(-112.6f), BEV_BACK_RIGHT);
	assert_int_equal(bev_dir_from_yaw(-90.0f), BEV_RIGHT);
	NEAR(bev_dir_margin(0), 22.5, 1e-5);
	NEAR(bev_dir_margin(20), 2.5, 1e-5);
	NEAR(bev_dir_margin(-70), 2.5, 1e-5);
	NEAR(bev_dir_margin(179), 21.5, 1e-5);
	NEAR(bev_wrap_deg(190), -170, 1e-5);
	NEAR(bev_wrap_deg(-180), 180, 1e-5);
	assert_int_equal(bev_dir_letter(BEV_RIGHT), 'A');
	assert_int_equal(bev_dir_letter(BEV_LEFT), 'B');
	assert_int_equal(bev_dir_letter(BEV_FRONT), 'C');
	assert_int_equal(bev_dir_letter(BEV_BACK), 'D');
	assert_int_equal(bev_dir_letter(BEV_FRONT_RIGHT), 'E');
	assert_int_equal(bev_dir_letter(BEV_FRONT_LEFT), 'F');
	assert_int_equal(bev_dir_letter(BEV_BACK_LEFT), 'G');
	assert_int_equal(bev_dir_letter(BEV_BACK_RIGHT), 'H');
	assert_int_equal(bev_dir_from_letter('g'), BEV_BACK_LEFT);
	assert_int_equal(bev_dir_mirror(BEV_FRONT_LEFT), BEV_FRONT_RIGHT);
	assert_int_equal(bev_dir_mirror(BEV_BACK), BEV_BACK);
	assert_int_equal(bev_dir_from_name("back-right"), BEV_BACK_RIGHT);
}

static void test_bev_local(void **state)
{
	vec3 d = { 0, 1, -0.5f }, out;

	(void)state;
	bev_local((float)(M_PI / 2), d, out); /* heading +Y: d is straight ahead */
	NEAR(out[0], 1, 1e-6);
	NEAR(out[1], 0, 1e-6);
	NEAR(out[2], -0.5, 1e-6);
}

static void test_discretise(void **state)
{
	struct disc_params p;

	(void)state;
	disc_defaults(&p);
	NEAR(disc_angle(&p, 93), 95, 1e-5);
	NEAR(disc_angle(&p, -37.4f), 35, 1e-5);
	NEAR(disc_distance(&p, 3.24f), 3.2, 1e-5);
	NEAR(disc_distance(&p, 6.3f), 6.5, 1e-5);
	assert_int_equal(disc_turn_class(&p, 10), DISC_TURN_FORWARD);
	assert_int_equal(disc_turn_class(&p, -95), DISC_TURN_RIGHT);
	assert_int_equal(disc_turn_class(&p, 170), DISC_TURN_AROUND);
	assert_true(disc_turn_ambiguous(&p, 17));
	assert_false(disc_turn_ambiguous(&p, 25));
	assert_int_equal(disc_vertical(&p, -0.6f), -1);
	assert_true(disc_vertical_ambiguous(&p, 0.32f));
	assert_int_equal(disc_proximity(&p, 0.5f), DISC_NEAR);
	assert_int_equal(disc_proximity(&p, 2.5f), DISC_FAR);
	assert_true(disc_proximity_ambiguous(&p, 1.03f));
}

static void test_ray_obb(void **state)
{
	struct obb b;
	struct pose p;
	vec3 c = { 0, 0, 0 }, h = { 1, 1, 1 };
	struct ray r = { { -5, 0, 0 }, { 1, 0, 0 } };
	float t;

	(void)state;
	rotz(&p, M_PI / 4, 0, 0, 0);
	obb_from_local(&p, c, h, &b);
	assert_true(ray_obb(&r, &b, 100, &t));
	NEAR(t, 5 - M_SQRT2, 1e-5); /* rotated 45 deg: the corner faces the ray */
	assert_false(ray_obb(&r, &b, 3, &t)); /* beyond max range */
	r.o[0] = 0; /* starts inside */
	assert_true(ray_obb(&r, &b, 100, &t));
	NEAR(t, 0, 1e-7);
	/* parallel to a face of an axis-aligned box, on and off the slab */
	pose_identity(&p);
	obb_from_local(&p, c, h, &b);
	{
		struct ray q = { { -5, 1, 0 }, { 1, 0, 0 } };
		struct ray q2 = { { -5, 1.001f, 0 }, { 1, 0, 0 } };

		assert_true(ray_obb(&q, &b, 100, &t));
		NEAR(t, 4, 1e-6);
		assert_false(ray_obb(&q2, &b, 100, &t));
	}
	{
		vec3 lo, hi;

		obb_aabb(&b, lo, hi);
		NEAR(lo[0], -1, 1e-6);
		NEAR(hi[2], 1, 1e-6);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pose_apply_and_inverse),
		cmocka_unit_test(test_pose_interp_slerp),
		cmocka_unit_test(test_pose_sample_hinted),
		cmocka_unit_test(test_pose_normalize),
		cmocka_unit_test(test_pose_sample_at),
		cmocka_unit_test(test_bev_heading_and_yaw),
		cmocka_unit_test(test_bev_sectors),
		cmocka_unit_test(test_bev_local),
		cmocka_unit_test(test_discretise),
		cmocka_unit_test(test_ray_obb),
	};

	return cmocka_run_group_tests_name("geometry", tests, NULL, NULL);
}
